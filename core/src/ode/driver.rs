//! The integration loop: adaptive (or fixed) steps interleaved with dense-output
//! evaluations at the requested times. Forward-only solves run a `while_loop` whose
//! iteration takes a step and then fills, in a loop of its own, every output the step
//! reached. Solves differentiated through the solver run a `bounded_while_loop` bounded by
//! `max_steps + len(t)` whose iteration either takes a step or fills the next output (its
//! reverse mode has no inner loops to transpose), with checkpointed segments. Both cost the
//! iterations the solve takes.

use super::stepper::{self, Step};
use super::tableau::{DOPRI5, RK4, TSIT5};
use super::{Field, Method};
use crate::array::Array;
use crate::error::Result;
use crate::ops::control_flow::{bounded_while_loop_with, cond, while_loop, BoundedWhileOptions};
use crate::ops::Axes;
use quabla_abi::DType;

/// How the loop is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Looping {
    /// A plain `while`: forward mode only.
    While,
    /// A bounded `while` (`lax::bounded_while_loop`): reverse mode too.
    Bounded,
}

/// What the loop needs besides the state.
pub(crate) struct Settings {
    pub method: Method,
    pub rtol: f64,
    pub atol: f64,
    pub max_steps: usize,
    /// The bounded loop's checkpoints ([`crate::lax::BoundedWhileOptions::checkpoints`]).
    pub checkpoints: Option<usize>,
    pub dt0: Option<f64>,
    pub save_step_times: bool,
}

const SAFETY: f64 = 0.9;
const FAC_MIN: f64 = 0.2;
const FAC_MAX: f64 = 10.0;
/// The PI controller's weight on the previous error (Hairer's DOPRI5 uses 0.04).
const BETA: f64 = 0.04;

/// The loop state (flattened into the carry in this order).
#[derive(Clone)]
struct Carry {
    y: Vec<Array>,
    f: Vec<Array>,
    /// The last step's start and dense output: `y_prev + θp1 + θ²p2 + θ³p3 + θ⁴p4`.
    y_prev: Vec<Array>,
    poly: [Vec<Array>; 4],
    ys: Vec<Array>,
    t: Array,
    t_prev: Array,
    dt: Array,
    err_prev: Array,
    i: Array,
    steps: Array,
    accepted: Array,
    rejected: Array,
    /// With `save_step_times`: the end time of every accepted step so far, NaN beyond.
    step_times: Option<Array>,
}

impl Carry {
    fn flat(self) -> Vec<Array> {
        let [p1, p2, p3, p4] = self.poly;
        let mut v = [self.y, self.f, self.y_prev, p1, p2, p3, p4, self.ys].concat();
        v.extend([
            self.t,
            self.t_prev,
            self.dt,
            self.err_prev,
            self.i,
            self.steps,
            self.accepted,
            self.rejected,
        ]);
        v.extend(self.step_times);
        v
    }

    fn from(c: &[Array], ny: usize) -> Carry {
        let part = |k: usize| c[k * ny..(k + 1) * ny].to_vec();
        let s = &c[8 * ny..];
        Carry {
            y: part(0),
            f: part(1),
            y_prev: part(2),
            poly: [part(3), part(4), part(5), part(6)],
            ys: part(7),
            t: s[0].clone(),
            t_prev: s[1].clone(),
            dt: s[2].clone(),
            err_prev: s[3].clone(),
            i: s[4].clone(),
            steps: s[5].clone(),
            accepted: s[6].clone(),
            rejected: s[7].clone(),
            step_times: s.get(8).cloned(),
        }
    }
}

/// Root mean square over every element of every leaf, with derivative 0 at the zero vector.
///
/// The norm has no derivative there, and `sqrt`'s rule (JAX's: `0.5 / sqrt(0) = inf`) turns a
/// zero cotangent into `0 * inf = NaN`. The controller meets exactly that: a step whose error
/// estimate is exactly 0 (a field constant over the step, or f32 steps so short that every
/// stage agrees, as JAX's default tolerances of 1.4e-8 make them) is clamped by
/// `max(ratio, 1e-10)`, whose cotangent into `ratio` is 0. Taking 0, the smallest subgradient,
/// is what `optax.safe_norm` does below its floor; elsewhere this is the plain norm.
fn rms(v: &[Array]) -> Result<Array> {
    rms_of(v.iter().map(|x| Ok(x.clone())))
}

/// [`rms`] of leaves made one at a time: each leaf's square sum is traced right after the
/// leaf, so the loop IR fuses making and summing it into one pass.
fn rms_of(leaves: impl Iterator<Item = Result<Array>>) -> Result<Array> {
    let mut n = 0;
    let mut total: Option<Array> = None;
    for x in leaves {
        let x = x?;
        n += x.size();
        let s = (&x * &x)?.sum(Axes::All, false)?;
        total = Some(match total {
            Some(t) => (&t + &s)?,
            None => s,
        });
    }
    let mean = match total {
        Some(t) => (t / n.max(1) as f64)?,
        None => return Err(crate::Error::Value("odeint needs a non-empty state".into())),
    };
    // Both sides of a select are differentiated: the root of the zero side is taken at 1.
    let positive = mean.gt(0.0)?;
    let safe = positive.select(&mean, &mean.full_like(1.0)?)?;
    positive.select(&safe.sqrt()?, &mean.zeros_like()?)
}

/// Entry `i` of the 1-D times.
fn time_at(t: &Array, i: &Array) -> Result<Array> {
    t.dynamic_slice(&[i], &[1])?.reshape(&[])
}

/// The scaled error `rms(err / (atol + rtol·max(|y|, |y_new|)))`.
fn error_ratio(err: &[Array], y: &[Array], y_new: &[Array], s: &Settings) -> Result<Array> {
    rms_of(err.iter().zip(y.iter().zip(y_new)).map(|(e, (a, b))| {
        let tol = (&(a.abs()?.maximum(&b.abs()?)? * s.rtol)? + s.atol)?;
        e / &tol
    }))
}

/// Hairer's starting step size (as `jax.experimental.ode` and scipy).
fn initial_step(
    field: Field,
    y0: &[Array],
    f0: &[Array],
    t0: &Array,
    s: &Settings,
    order: f64,
) -> Result<Array> {
    let scale: Vec<Array> = y0
        .iter()
        .map(|y| &(y.abs()? * s.rtol)? + s.atol)
        .collect::<Result<_>>()?;
    let div =
        |v: &[Array]| -> Result<Vec<Array>> { v.iter().zip(&scale).map(|(a, b)| a / b).collect() };
    let d0 = rms(&div(y0)?)?;
    let d1 = rms(&div(f0)?)?;
    let tiny = d0.lt(1e-5)?.bitwise_or(&d1.lt(1e-5)?)?;
    // The unselected quotient is differentiated too: never divide by a zero `d1` there.
    let safe_d1 = tiny.select(&d1.full_like(1.0)?, &d1)?;
    let h0 = tiny.select(&d0.full_like(1e-6)?, &(&(&d0 / &safe_d1)? * 0.01)?)?;
    let y1: Vec<Array> = y0
        .iter()
        .zip(f0)
        .map(|(y, f)| y + &(f * &h0)?)
        .collect::<Result<_>>()?;
    let f1 = field(&y1, &(t0 + &h0)?)?;
    let df: Vec<Array> = f1
        .iter()
        .zip(f0)
        .map(|(a, b)| a - b)
        .collect::<Result<_>>()?;
    let d2 = (&rms(&div(&df)?)? / &h0)?;
    let dm = d1.maximum(&d2)?;
    let flat = dm.le(1e-15)?;
    let safe_dm = flat.select(&dm.full_like(1.0)?, &dm)?;
    let h1 = flat.select(
        &(&h0 * 1e-3)?.maximum(1e-6)?,
        &(&dm.full_like(0.01)? / &safe_dm)?.pow(&dm.full_like(1.0 / (order + 1.0))?)?,
    )?;
    (&h0 * 100.0)?.minimum(&h1)
}

/// The last step's dense output at `to` (the step's start while no step has been taken).
fn interpolate(c: &Carry, to: &Array) -> Result<Vec<Array>> {
    let h = (&c.t - &c.t_prev)?;
    let zero_h = h.eq(0.0)?;
    let safe_h = zero_h.select(&h.full_like(1.0)?, &h)?;
    let th = zero_h.select(&h.zeros_like()?, &(&(to - &c.t_prev)? / &safe_h)?)?;
    (0..c.y.len())
        .map(|k| {
            let mut acc = (&c.poly[3][k] * &th)?;
            for q in (0..3).rev() {
                acc = (&(&acc + &c.poly[q][k])? * &th)?;
            }
            &c.y_prev[k] + &acc
        })
        .collect()
}

/// Whether the next requested time is reached (clamped to the last once all are filled).
fn due(c: &Carry, t: &Array) -> Result<Array> {
    time_at(t, &c.i)?.le(&c.t)
}

/// Fills the next requested time's row of the outputs from the dense output.
fn emit_next(c: &mut Carry, t: &Array) -> Result<()> {
    let to = time_at(t, &c.i)?;
    let values = interpolate(c, &to)?;
    // Not `c.i.zeros_like()`: under `vmap` that zero would be batched with `i`.
    let zero_i = t.filled_beside(&[], 0, DType::I32)?;
    for (buf, v) in c.ys.iter_mut().zip(values) {
        let mut one = vec![1isize];
        one.extend(v.shape().iter().map(|&d| d as isize));
        let mut starts = vec![c.i.clone()];
        starts.extend(vec![zero_i.clone(); v.ndim()]);
        let refs: Vec<&Array> = starts.iter().collect();
        *buf = buf.dynamic_update_slice(&v.reshape(&one)?, &refs)?;
    }
    c.i = (&c.i + 1)?;
    Ok(())
}

/// Fills every requested time the last step reached, in a loop of its own that carries only
/// the outputs and their index.
fn emit_due(c: &mut Carry, t: &Array, n_out: usize) -> Result<()> {
    let ny = c.ys.len();
    let mut init = c.ys.clone();
    init.push(c.i.clone());
    let at = |o: &[Array]| -> Carry {
        let mut here = c.clone();
        here.ys = o[..ny].to_vec();
        here.i = o[ny].clone();
        here
    };
    let more = |o: &[Array]| -> Result<Vec<Array>> {
        let here = at(o);
        Ok(vec![here
            .i
            .lt(n_out as i32)?
            .bitwise_and(&due(&here, t)?)?])
    };
    let fill = |o: &[Array]| -> Result<Vec<Array>> {
        let mut here = at(o);
        emit_next(&mut here, t)?;
        here.ys.push(here.i);
        Ok(here.ys)
    };
    let mut out = while_loop(&more, &fill, &init)?;
    c.i = out
        .pop()
        .ok_or_else(|| crate::Error::internal("the output loop lost its index"))?;
    c.ys = out;
    Ok(())
}

/// What a solve returns: the states at every requested time, the counts `(steps,
/// accepted, rejected, requested times reached)`, and with `save_step_times` the accepted
/// steps' end times.
pub(crate) type Integrated = (Vec<Array>, [Array; 4], Option<Array>);

/// Integrates `y' = field(y, t)` from `t[0]`, returning the states at every `t` (each leaf
/// stacked along a new leading axis; NaN where `max_steps` ran out first) and the counts.
pub(crate) fn integrate(
    field: Field,
    y0: &[Array],
    t: &Array,
    s: &Settings,
    looping: Looping,
) -> Result<Integrated> {
    let ny = y0.len();
    let n_out = t.shape()[0];
    let t0 = t.slice(&[0], &[1], &[1])?.reshape(&[])?;
    let t_end = t.slice(&[n_out - 1], &[n_out], &[1])?.reshape(&[])?;
    let f0 = field(y0, &t0)?;
    let adaptive = s.method.is_adaptive();
    let order = s.method.error_order() as f64;
    let dt = match (s.dt0, adaptive) {
        (Some(d), _) => t0.full_like(d)?,
        (None, true) => initial_step(field, y0, &f0, &t0, s, order)?,
        (None, false) => t0.full_like(f64::INFINITY)?,
    };
    let zero_i = t0.filled_beside(&[], 0, DType::I32)?;
    let ys: Vec<Array> = y0
        .iter()
        .map(|y| {
            let mut shape = vec![n_out];
            shape.extend_from_slice(y.shape());
            let starts = vec![zero_i.clone(); shape.len()];
            let refs: Vec<&Array> = starts.iter().collect();
            let mut one = vec![1isize];
            one.extend(y.shape().iter().map(|&d| d as isize));
            y.filled_beside(&shape, f64::NAN, y.dtype())?
                .dynamic_update_slice(&y.reshape(&one)?, &refs)
        })
        .collect::<Result<_>>()?;
    let zeros: Vec<Array> = y0.iter().map(Array::zeros_like).collect::<Result<_>>()?;
    let init = Carry {
        y: y0.to_vec(),
        poly: [zeros.clone(), zeros.clone(), zeros.clone(), zeros],
        f: f0,
        y_prev: y0.to_vec(),
        ys,
        t: t0.clone(),
        t_prev: t0.clone(),
        dt,
        err_prev: t0.full_like(1.0)?,
        i: (&zero_i + 1)?,
        steps: zero_i.clone(),
        accepted: zero_i.clone(),
        rejected: zero_i.clone(),
        step_times: s
            .save_step_times
            .then(|| t0.filled_beside(&[s.max_steps], f64::NAN, t0.dtype()))
            .transpose()?,
    }
    .flat();
    // Outputs the steps taken have reached are filled even after the last step `max_steps`
    // allows: nothing computed is dropped.
    let keep_going = |c: &[Array]| -> Result<Vec<Array>> {
        let c = Carry::from(c, ny);
        let more = c.steps.lt(s.max_steps as i32)?.bitwise_or(&due(&c, t)?)?;
        Ok(vec![c.i.lt(n_out as i32)?.bitwise_and(&more)?])
    };
    let emit = |c: &[Array]| -> Result<Vec<Array>> {
        let mut c = Carry::from(c, ny);
        emit_next(&mut c, t)?;
        Ok(c.flat())
    };
    let step = |c: &[Array]| -> Result<Vec<Array>> {
        let mut c = Carry::from(c, ny);
        // Adaptive steps stop at the last time (dense output covers the others); fixed
        // steps land on every requested time.
        let target = if adaptive {
            t_end.clone()
        } else {
            time_at(t, &c.i)?
        };
        let room = (&target - &c.t)?;
        let clipped = c.dt.ge(&room)?;
        let h = clipped.select(&room, &c.dt)?;
        let Step { y, f, err, poly } = match s.method {
            Method::Rosenbrock23 => stepper::rosenbrock23(field, &c.y, &c.f, &c.t, &h)?,
            Method::Dopri5 => stepper::explicit(&DOPRI5, field, &c.y, &c.f, &c.t, &h)?,
            Method::Tsit5 => stepper::explicit(&TSIT5, field, &c.y, &c.f, &c.t, &h)?,
            Method::Rk4 => stepper::explicit(&RK4, field, &c.y, &c.f, &c.t, &h)?,
        };
        let t_new = clipped.select(&target, &(&c.t + &h)?)?;
        let (accept, dt_next, err_next) = match err {
            None => (
                h.full_like(true)?.astype(DType::Bool)?,
                c.dt.clone(),
                c.err_prev.clone(),
            ),
            Some(err) => {
                let ratio = error_ratio(&err, &c.y, &y, s)?;
                let accept = ratio.le(1.0)?;
                let expo = 1.0 / (order + 1.0);
                let safe_ratio = ratio.maximum(1e-10)?;
                // PI control on acceptance; after a rejection only shrink.
                let pi = (&(&safe_ratio.pow(&ratio.full_like(-(expo - 0.75 * BETA))?)?
                    * &c.err_prev.pow(&ratio.full_like(BETA)?)?)?
                    * SAFETY)?;
                let shrink = (&safe_ratio.pow(&ratio.full_like(-expo)?)? * SAFETY)?;
                let fac = accept.select(&pi.minimum(FAC_MAX)?, &shrink.minimum(1.0)?)?;
                let fac = fac.maximum(FAC_MIN)?;
                let fac = ratio.is_finite()?.select(&fac, &fac.full_like(FAC_MIN)?)?;
                let err_next = accept.select(&ratio.maximum(1e-4)?, &c.err_prev)?;
                (accept, (&h * &fac)?, err_next)
            }
        };
        let pick =
            |new: &Array, old: &Array| accept.broadcast_in_dim(new.shape(), &[])?.select(new, old);
        // Leaf by leaf, so each leaf's selects fuse into one pass.
        let [p1, p2, p3, p4] = poly;
        let news = [&c.y, &p1, &p2, &p3, &p4, &y, &f];
        let olds = [
            &c.y_prev, &c.poly[0], &c.poly[1], &c.poly[2], &c.poly[3], &c.y, &c.f,
        ];
        let mut picked: [Vec<Array>; 7] = Default::default();
        for leaf in 0..ny {
            for (k, (new, old)) in news.iter().zip(olds).enumerate() {
                picked[k].push(pick(&new[leaf], &old[leaf])?);
            }
        }
        let [y_prev, q1, q2, q3, q4, y_next, f_next] = picked;
        c.y_prev = y_prev;
        c.poly = [q1, q2, q3, q4];
        c.t_prev = pick(&c.t, &c.t_prev)?;
        c.y = y_next;
        c.f = f_next;
        c.t = pick(&t_new, &c.t)?;
        c.dt = dt_next;
        c.err_prev = err_next;
        if let Some(times) = &c.step_times {
            let written = times.dynamic_update_slice(&c.t.reshape(&[1])?, &[&c.accepted])?;
            c.step_times = Some(pick(&written, times)?);
        }
        let one = accept.astype(DType::I32)?;
        c.steps = (&c.steps + 1)?;
        c.accepted = (&c.accepted + &one)?;
        c.rejected = (&c.rejected + &(&one.neg()? + 1)?)?;
        Ok(c.flat())
    };
    let out = match looping {
        // A step, then every output it reached. A `cond` choosing between the two would
        // copy the whole carry (every stage and the output buffer) on each trip, which
        // dominates for large states such as the adjoint's parameter cotangents.
        Looping::While => {
            let iteration = |c: &[Array]| -> Result<Vec<Array>> {
                let mut c = Carry::from(&step(c)?, ny);
                emit_due(&mut c, t, n_out)?;
                Ok(c.flat())
            };
            while_loop(&keep_going, &iteration, &init)?
        }
        // Reverse-differentiable (a plain inner `while` is not), and the solve still costs
        // the iterations it takes.
        Looping::Bounded => {
            let iteration = |c: &[Array]| -> Result<Vec<Array>> {
                let due = due(&Carry::from(c, ny), t)?;
                cond(&due, &emit, &step, c)
            };
            let opts = BoundedWhileOptions {
                max_steps: s.max_steps + n_out,
                checkpoints: s.checkpoints,
            };
            bounded_while_loop_with(&keep_going, &iteration, &init, &opts)?
        }
    };
    let c = Carry::from(&out, ny);
    Ok((c.ys, [c.steps, c.accepted, c.rejected, c.i], c.step_times))
}
