//! L-BFGS with a line search satisfying the strong Wolfe conditions (as `optax.lbfgs` with
//! its zoom line search, and scipy's `minimize(method="L-BFGS-B")` without bounds).
//!
//! Everything is traced array code: the two-loop recursion is unrolled over the memory, the
//! history is a ring buffer updated with dynamic slices, and the line search (bracketing then
//! zoom, Nocedal & Wright algorithms 3.5 and 3.6, with safeguarded quadratic interpolation) is
//! a `while_loop`. So a step runs eagerly, inside `jit`, and on any backend.
//!
//! The parameters are handled as one flat vector (all parameters must share one float dtype).

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::control_flow::while_loop;
use crate::ops::zeros_typed;
use crate::{DType, TensorType};
use quabla_abi::qir::DotDims;

/// L-BFGS settings.
#[derive(Clone, Debug)]
pub struct Lbfgs {
    /// History pairs kept (optax and scipy default to 10).
    pub memory: usize,
    /// Function evaluations one line search may make.
    pub max_linesearch_steps: usize,
    /// Sufficient decrease (Armijo) constant.
    pub c1: f64,
    /// Curvature constant of the strong Wolfe condition.
    pub c2: f64,
    /// The largest step the bracketing phase tries.
    pub max_step: f64,
}

impl Default for Lbfgs {
    fn default() -> Self {
        Lbfgs {
            memory: 10,
            max_linesearch_steps: 20,
            c1: 1e-4,
            c2: 0.9,
            max_step: 1e3,
        }
    }
}

/// The outcome of one [`Lbfgs::step`].
pub struct LbfgsStep {
    /// The parameters after the step.
    pub params: Vec<Array>,
    /// The optimizer state after the step.
    pub state: Vec<Array>,
    /// The loss at the new parameters.
    pub value: Array,
    /// The step length the line search accepted (0 when it found no decrease; the history is
    /// then cleared, so the next step restarts from steepest descent).
    pub step_size: Array,
    /// Loss-and-gradient evaluations the line search made.
    pub evaluations: Array,
}

fn flat(params: &[Array]) -> Result<Array> {
    let dtype = params
        .first()
        .ok_or_else(|| Error::Value("lbfgs needs at least one parameter".into()))?
        .dtype();
    if !dtype.is_float() || params.iter().any(|p| p.dtype() != dtype) {
        return Err(crate::Error::dtype(
            "lbfgs: all parameters must share one float dtype",
        ));
    }
    let parts: Vec<Array> = params
        .iter()
        .map(|p| p.reshape(&[-1]))
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = parts.iter().collect();
    Array::concatenate(&refs, 0)
}

fn unflat(x: &Array, like: &[Array]) -> Result<Vec<Array>> {
    let mut out = Vec::with_capacity(like.len());
    let mut start = 0;
    for p in like {
        let n = p.size();
        let shape: Vec<isize> = p.shape().iter().map(|&d| d as isize).collect();
        out.push(x.slice(&[start], &[start + n], &[1])?.reshape(&shape)?);
        start += n;
    }
    Ok(out)
}

fn vdot(a: &Array, b: &Array) -> Result<Array> {
    a.dot_general(
        b,
        DotDims {
            lhs_batch: vec![],
            rhs_batch: vec![],
            lhs_contract: vec![0],
            rhs_contract: vec![0],
        },
    )
}

/// Row `i` (a traced i32 scalar) of an `m x n` history.
fn row(h: &Array, i: &Array) -> Result<Array> {
    let zero = (i * 0)?;
    h.dynamic_slice(&[i, &zero], &[1, h.shape()[1]])?
        .reshape(&[-1])
}

impl Lbfgs {
    /// The state for `params`: `[S (m x n), Y (m x n), rho (m), count (i32)]`, empty history.
    ///
    /// ```no_run
    /// # use quabla::{optim::Lbfgs, Array};
    /// let state = Lbfgs::default().init(&[Array::from_slice(&[0.0f64; 4], &[4])?])?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn init(&self, params: &[Array]) -> Result<Vec<Array>> {
        if self.memory == 0 {
            return Err(crate::Error::value("lbfgs: memory must be at least 1"));
        }
        let x = flat(params)?;
        let (m, n, d) = (self.memory, x.size(), x.dtype());
        Ok(vec![
            zeros_typed(&x, &TensorType::new(d, vec![m, n]))?,
            zeros_typed(&x, &TensorType::new(d, vec![m, n]))?,
            zeros_typed(&x, &TensorType::new(d, vec![m]))?,
            zeros_typed(&x, &TensorType::scalar(DType::I32))?,
        ])
    }

    /// The search direction `-H g` by the two-loop recursion over the ring buffer (entries not
    /// yet written have `rho = 0` and drop out).
    fn direction(&self, state: &[Array], g: &Array) -> Result<Array> {
        let (s_hist, y_hist, rho, count) = (&state[0], &state[1], &state[2], &state[3]);
        let m = self.memory as i32;
        // Newest first: slot (count - 1 - i) mod m, kept non-negative.
        let slot = |i: i32| -> Result<Array> { ((count - (1 + i))? + m * 1024)?.rem(m) };
        let mut q = g.clone();
        let mut alphas = Vec::with_capacity(self.memory);
        for i in 0..m {
            let k = slot(i)?;
            let (s, y) = (row(s_hist, &k)?, row(y_hist, &k)?);
            let r = rho.dynamic_slice(&[&k], &[1])?.reshape(&[])?;
            let a = (&r * &vdot(&s, &q)?)?;
            q = (&q - &(&y * &a)?)?;
            alphas.push((k, s, y, r, a));
        }
        // Initial scaling s'y / y'y from the newest pair (1 without history).
        let (_, s0, y0, _, _) = &alphas[0];
        let yy = vdot(y0, y0)?;
        let have = count.gt(0)?.bitwise_and(&yy.gt(0.0)?)?;
        let safe_yy = have.select(&yy, 1.0)?;
        let gamma = have.select(&(&vdot(s0, y0)? / &safe_yy)?, 1.0)?;
        let mut r = (&q * &gamma)?;
        for (_, s, y, rh, a) in alphas.iter().rev() {
            let b = (rh * &vdot(y, &r)?)?;
            r = (&r + &(s * &(a - &b)?)?)?;
        }
        r.neg()
    }

    /// One L-BFGS step on `loss` (a scalar function of the parameters) from `params`.
    ///
    /// ```no_run
    /// # use quabla::{optim::Lbfgs, Array, Axes};
    /// let opt = Lbfgs::default();
    /// let mut params = vec![Array::from_slice(&[-1.2f64, 1.0], &[2]).unwrap()];
    /// let mut state = opt.init(&params).unwrap();
    /// let rosen = |p: &[Array]| -> quabla::Result<Array> {
    ///     let (x, y) = (p[0].slice(&[0], &[1], &[1])?, p[0].slice(&[1], &[2], &[1])?);
    ///     let a = (&y - &(&x * &x)?)?;
    ///     ((&(&a * &a)? * 100.0)? + &(&(&x - 1.0)? * &(&x - 1.0)?)?)?.sum(Axes::All, false)
    /// };
    /// for _ in 0..50 {
    ///     let s = opt.step(&rosen, &params, &state).unwrap();
    ///     (params, state) = (s.params, s.state);
    /// }
    /// ```
    pub fn step<F>(&self, loss: &F, params: &[Array], state: &[Array]) -> Result<LbfgsStep>
    where
        F: Fn(&[Array]) -> Result<Array>,
    {
        if state.len() != 4 {
            return Err(crate::Error::value(
                "lbfgs: the state must come from Lbfgs::init",
            ));
        }
        let x0 = flat(params)?;
        let value_and_grad_at = |x: &Array| -> Result<(Array, Array)> {
            let vg = crate::ad::value_and_grad(
                |a: &[Array]| Ok(vec![loss(&unflat(&a[0], params)?)?]),
                &[0],
                false,
            );
            let mut r = vg(std::slice::from_ref(x))?;
            let g = r
                .pop()
                .ok_or_else(|| Error::Internal("lbfgs: no gradient".into()))?;
            let f = r
                .pop()
                .ok_or_else(|| Error::Internal("lbfgs: no value".into()))?;
            Ok((f, g))
        };
        let (f0, g0) = value_and_grad_at(&x0)?;
        if f0.ndim() != 0 {
            return Err(crate::Error::shape("lbfgs: the loss must be a scalar"));
        }
        // A direction that is not a descent direction (bad curvature pairs) falls back to -g.
        let d = self.direction(state, &g0)?;
        let descent = vdot(&g0, &d)?.lt(0.0)?;
        let d = descent.select(&d, &g0.neg()?)?;
        let dphi0 = vdot(&g0, &d)?;
        // The first step of a fresh history is scaled to a unit change (1 / |g|, at most 1).
        let gnorm = vdot(&g0, &g0)?.sqrt()?;
        let first = state[3].eq(0)?;
        let a1 = first.select(&(&gnorm.full_like(1.0)? / &gnorm.maximum(1.0)?)?, 1.0)?;
        let (alpha, f1, g1, evals) =
            self.line_search(&value_and_grad_at, &x0, &d, &f0, &g0, &dphi0, &a1)?;
        let x1 = (&x0 + &(&d * &alpha)?)?;
        let state = self.remember(state, &(&d * &alpha)?, &(&g1 - &g0)?, &alpha)?;
        Ok(LbfgsStep {
            params: unflat(&x1, params)?,
            state,
            value: f1,
            step_size: alpha,
            evaluations: evals,
        })
    }

    /// The history after a step `s` with gradient change `y`: the pair goes into the ring
    /// buffer when its curvature `s'y` is positive; a failed line search clears the history.
    fn remember(&self, state: &[Array], s: &Array, y: &Array, alpha: &Array) -> Result<Vec<Array>> {
        let (s_hist, y_hist, rho, count) = (&state[0], &state[1], &state[2], &state[3]);
        let sy = vdot(s, y)?;
        let ok = sy.gt(&(&(&vdot(s, s)?.sqrt()? * &vdot(y, y)?.sqrt()?)? * 1e-10)?)?;
        let slot = count.rem(self.memory as i32)?;
        let zero = (&slot * 0)?;
        let put = |h: &Array, v: &Array| -> Result<Array> {
            let updated = h.dynamic_update_slice(&v.reshape(&[1, -1])?, &[&slot, &zero])?;
            ok.select(&updated, h)
        };
        let r = ok.select(&(&sy.full_like(1.0)? / &ok.select(&sy, 1.0)?)?, 0.0)?;
        let rho1 = ok.select(&rho.dynamic_update_slice(&r.reshape(&[1])?, &[&slot])?, rho)?;
        let count1 = ok.select(&(count + 1)?, count)?;
        // No decrease found: start again from steepest descent.
        let failed = alpha.eq(0.0)?;
        let clear = |h: &Array| -> Result<Array> { failed.select(&h.zeros_like()?, h) };
        Ok(vec![
            clear(&put(s_hist, s)?)?,
            clear(&put(y_hist, y)?)?,
            clear(&rho1)?,
            failed.select(&count.zeros_like()?, &count1)?,
        ])
    }

    /// Strong Wolfe line search along `d` from `x0`: bracketing, then zoom. Returns the step,
    /// the value and gradient there, and the evaluations made. Of the points tried, the best
    /// one satisfying sufficient decrease is returned when the search runs out of steps.
    #[allow(clippy::too_many_arguments)]
    fn line_search<V>(
        &self,
        value_and_grad_at: &V,
        x0: &Array,
        d: &Array,
        f0: &Array,
        g0: &Array,
        dphi0: &Array,
        a1: &Array,
    ) -> Result<(Array, Array, Array, Array)>
    where
        V: Fn(&Array) -> Result<(Array, Array)>,
    {
        let (c1, c2, amax) = (self.c1, self.c2, self.max_step);
        let zero = f0.zeros_like()?;
        let i0 = zeros_typed(f0, &TensorType::scalar(DType::I32))?;
        // carry: i, stage (0 bracket, 1 zoom, 2 done), a_prev, f_prev, dp_prev, a_lo, f_lo,
        // dp_lo, a_hi, f_hi, a_cur, a_best, f_best, g_best
        let init = vec![
            i0.clone(),
            i0.clone(),
            zero.clone(),
            f0.clone(),
            dphi0.clone(),
            zero.clone(),
            f0.clone(),
            dphi0.clone(),
            zero.clone(),
            f0.clone(),
            a1.clone(),
            zero.clone(),
            f0.clone(),
            g0.clone(),
        ];
        let max_steps = self.max_linesearch_steps as i32;
        let cond = |c: &[Array]| -> Result<Vec<Array>> {
            Ok(vec![c[1].ne(2)?.bitwise_and(&c[0].lt(max_steps)?)?])
        };
        let body = |c: &[Array]| -> Result<Vec<Array>> {
            let (i, stage) = (&c[0], &c[1]);
            let (a_prev, f_prev, dp_prev) = (&c[2], &c[3], &c[4]);
            let (a_lo, f_lo, dp_lo, a_hi, f_hi) = (&c[5], &c[6], &c[7], &c[8], &c[9]);
            let (a, a_best, f_best, g_best) = (&c[10], &c[11], &c[12], &c[13]);
            let (f, g) = value_and_grad_at(&(x0 + &(d * a)?)?)?;
            let dp = vdot(&g, d)?;
            let armijo_fail = f
                .gt(&(f0 + &(&(a * dphi0)? * c1)?)?)?
                .bitwise_or(&f.ne(&f)?)?;
            let curvature_ok = dp.abs()?.le(&(dphi0 * -c2)?)?;
            let bracketing = stage.eq(0)?;
            // Bracketing phase (N&W 3.5).
            let up = armijo_fail.bitwise_or(&i.gt(0)?.bitwise_and(&f.ge(f_prev)?)?)?;
            let b_done = up.logical_not()?.bitwise_and(&curvature_ok)?;
            let down = up
                .logical_not()?
                .bitwise_and(&curvature_ok.logical_not()?)?
                .bitwise_and(&dp.ge(0.0)?)?;
            let b_zoom = up.bitwise_or(&down)?;
            // Zoom phase (N&W 3.6): the trial replaces hi, or becomes lo.
            let z_hi = armijo_fail.bitwise_or(&f.ge(f_lo)?)?;
            let z_done = z_hi.logical_not()?.bitwise_and(&curvature_ok)?;
            let flip = z_hi
                .logical_not()?
                .bitwise_and(&(&dp * &(a_hi - a_lo)?)?.ge(0.0)?)?;
            let pick = |p: &Array, x: &Array, y: &Array| p.select(x, y);
            // New bracket [lo, hi] in either phase.
            let (nlo_a, nlo_f, nlo_dp, nhi_a, nhi_f) = {
                // bracketing: up -> (prev, cur); down -> (cur, prev)
                let bl_a = pick(&up, a_prev, a)?;
                let bl_f = pick(&up, f_prev, &f)?;
                let bl_dp = pick(&up, dp_prev, &dp)?;
                let bh_a = pick(&up, a, a_prev)?;
                let bh_f = pick(&up, &f, f_prev)?;
                // zoom: z_hi -> hi = cur; else (flip -> hi = lo), lo = cur
                let zl_a = pick(&z_hi, a_lo, a)?;
                let zl_f = pick(&z_hi, f_lo, &f)?;
                let zl_dp = pick(&z_hi, dp_lo, &dp)?;
                let zh_a = pick(&z_hi, a, &pick(&flip, a_lo, a_hi)?)?;
                let zh_f = pick(&z_hi, &f, &pick(&flip, f_lo, f_hi)?)?;
                (
                    pick(&bracketing, &bl_a, &zl_a)?,
                    pick(&bracketing, &bl_f, &zl_f)?,
                    pick(&bracketing, &bl_dp, &zl_dp)?,
                    pick(&bracketing, &bh_a, &zh_a)?,
                    pick(&bracketing, &bh_f, &zh_f)?,
                )
            };
            let done = pick(&bracketing, &b_done, &z_done)?;
            let zooming = pick(&bracketing, &b_zoom, &done.logical_not()?)?;
            // Next trial: in zoom, the minimiser of the quadratic through (lo, f_lo, dp_lo)
            // and (hi, f_hi), kept 10% inside the bracket (else the midpoint).
            let delta = (&nhi_a - &nlo_a)?;
            let denom = (&(&(&nhi_f - &nlo_f)? - &(&nlo_dp * &delta)?)? * 2.0)?;
            let safe = denom.gt(0.0)?;
            let q =
                (&nlo_a - &(&(&nlo_dp * &(&delta * &delta)?)? / &safe.select(&denom, 1.0)?)?)?;
            let lo_end = nlo_a.minimum(&nhi_a)?;
            let hi_end = nlo_a.maximum(&nhi_a)?;
            let margin = (&delta.abs()? * 0.1)?;
            let inside = q
                .ge(&(&lo_end + &margin)?)?
                .bitwise_and(&q.le(&(&hi_end - &margin)?)?)?
                .bitwise_and(&safe)?;
            let mid = (&(&nlo_a + &nhi_a)? * 0.5)?;
            let zoom_next = inside.select(&q, &mid)?;
            let extrapolate = (a * 2.0)?.minimum(amax)?;
            let next = pick(&zooming, &zoom_next, &extrapolate)?;
            // The best point with sufficient decrease so far (the accepted one when done).
            let better = armijo_fail
                .logical_not()?
                .bitwise_and(&f.lt(f_best)?.bitwise_or(&done)?)?;
            let two = stage.full_like(2)?;
            let one = stage.full_like(1)?;
            let new_stage = done.select(&two, &zooming.select(&one, stage)?)?;
            Ok(vec![
                (i + 1)?,
                new_stage,
                a.clone(),
                f.clone(),
                dp.clone(),
                nlo_a,
                nlo_f,
                nlo_dp,
                nhi_a,
                nhi_f,
                next,
                pick(&better, a, a_best)?,
                pick(&better, &f, f_best)?,
                pick(&better, &g, g_best)?,
            ])
        };
        let out = while_loop(&cond, &body, &init)?;
        Ok((
            out[11].clone(),
            out[12].clone(),
            out[13].clone(),
            out[0].clone(),
        ))
    }
}
