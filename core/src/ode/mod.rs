//! ODE integration with JAX's `odeint` signature: explicit Runge-Kutta pairs (dopri5, tsit5)
//! with PI step-size control, fixed-step rk4, and the L-stable rosenbrock23 for stiff
//! problems; states at the requested times come from dense output, so those times do not
//! force steps. Gradients go through the solver (a bounded while loop with checkpointed
//! segments; forward and reverse) or, as an option, through the continuous adjoint method.

mod adjoint;
mod driver;
mod stepper;
// The coefficients keep the digits their sources publish.
#[allow(clippy::excessive_precision)]
mod tableau;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::trace::trace_function_capturing;
use driver::{integrate, Looping, Settings};
use quabla_abi::TensorType;

/// A user's vector field `(y, t, args) -> dy/dt`.
pub type VectorField<'a> = &'a dyn Fn(&[Array], &Array, &[Array]) -> Result<Vec<Array>>;

/// A vector field `(y, t) -> dy/dt` over a list of arrays.
pub(crate) type Field<'a> = &'a dyn Fn(&[Array], &Array) -> Result<Vec<Array>>;

/// The integration method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// Dormand-Prince 5(4), adaptive (the default, as `jax.experimental.ode.odeint`).
    #[default]
    Dopri5,
    /// Tsitouras 5(4), adaptive.
    Tsit5,
    /// Classical fourth-order Runge-Kutta with a fixed step `dt0` (default: one step per
    /// interval between requested times); steps land on every requested time.
    Rk4,
    /// Shampine's L-stable Rosenbrock 2(3) for stiff problems: a dense Jacobian from
    /// forward-mode AD and one LU factorization of `W = I - h·d·J` per step (O(n³)).
    Rosenbrock23,
}

impl Method {
    fn is_adaptive(self) -> bool {
        self != Method::Rk4
    }

    /// Order of the error estimate's lower-order solution (sets the controller exponent).
    fn error_order(self) -> u32 {
        match self {
            Method::Rosenbrock23 => 2,
            Method::Dopri5 | Method::Tsit5 | Method::Rk4 => 4,
        }
    }
}

/// How derivatives of the solution are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Gradient {
    /// Through the solver's own operations (a `bounded_while_loop` bounded by `max_steps +
    /// len(t)`: the solve costs the steps taken; its gradient recomputes them as
    /// [`OdeOptions::checkpoints`] says): forward and reverse mode, to any order; the
    /// derivative of the discrete solution.
    #[default]
    Direct,
    /// Reverse mode by the continuous adjoint method (as `jax.experimental.ode`): an
    /// augmented ODE solved backwards; memory independent of the number of steps, forward
    /// mode unsupported.
    Adjoint,
    /// A `while_loop` with the exact number of iterations: the cheapest solve, forward-mode
    /// derivatives only.
    ForwardOnly,
}

/// Options of [`odeint`]; the defaults are JAX's tolerances.
#[derive(Clone, Debug)]
pub struct OdeOptions {
    pub method: Method,
    /// Relative tolerance of the local error (default 1.4e-8).
    pub rtol: f64,
    /// Absolute tolerance of the local error (default 1.4e-8).
    pub atol: f64,
    /// Steps (accepted or rejected) allowed over the whole interval (default 4096); the
    /// requested times the steps taken reached are filled, those beyond the last come back
    /// as NaN, and `stats.reached` (false) and `stats.steps == max_steps` say so.
    pub max_steps: usize,
    /// [`Gradient::Direct`]'s reverse-mode memory budget: the solver states its bounded loop
    /// may keep ([`crate::lax::BoundedWhileOptions::checkpoints`]; unset: about
    /// `2 sqrt(max_steps + len(t))`, with which a solve of up to `sqrt(max_steps + len(t))`
    /// iterations recomputes nothing). `max_steps + len(t)` or more keeps every iteration's
    /// state. Solutions, forward-mode derivatives and gradients do not depend on it.
    pub checkpoints: Option<usize>,
    /// First step (adaptive methods; default: Hairer's estimate) or the fixed step (rk4).
    pub dt0: Option<f64>,
    pub gradient: Gradient,
    /// Record the end time of every accepted step in [`OdeStats::step_times`] (as diffrax's
    /// `SaveAt(steps=True)` for the times). A diagnostic of the step-size controller; not
    /// with [`Gradient::Adjoint`].
    pub save_step_times: bool,
    /// Fail with an error, instead of returning NaN at the times not reached, when
    /// `max_steps` runs out first (as diffrax's `throw`). The check reads the result, so it
    /// needs a concrete one: inside `jit`, `grad` or `vmap` the solve is traced and `throw`
    /// is refused; test [`OdeStats::reached`] there.
    pub throw: bool,
}

impl Default for OdeOptions {
    fn default() -> Self {
        OdeOptions {
            method: Method::Dopri5,
            rtol: 1.4e-8,
            atol: 1.4e-8,
            max_steps: 4096,
            checkpoints: None,
            dt0: None,
            gradient: Gradient::Direct,
            save_step_times: false,
            throw: false,
        }
    }
}

/// Setters, so options read as one expression:
/// `OdeOptions::default().rtol(1e-10).atol(1e-10)`.
///
/// ```
/// use quabla::ode::{Gradient, Method, OdeOptions};
/// let opts = OdeOptions::default().method(Method::Tsit5).rtol(1e-9).gradient(Gradient::Adjoint);
/// assert_eq!((opts.rtol, opts.atol, opts.max_steps), (1e-9, 1.4e-8, 4096));
/// ```
impl OdeOptions {
    /// Sets [`OdeOptions::method`].
    ///
    /// ```
    /// let opts = quabla::ode::OdeOptions::default().method(quabla::ode::Method::Rosenbrock23);
    /// ```
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// Sets [`OdeOptions::rtol`].
    ///
    /// ```
    /// let opts = quabla::ode::OdeOptions::default().rtol(1e-10);
    /// ```
    pub fn rtol(mut self, rtol: f64) -> Self {
        self.rtol = rtol;
        self
    }

    /// Sets [`OdeOptions::atol`].
    ///
    /// ```
    /// let opts = quabla::ode::OdeOptions::default().atol(1e-12);
    /// ```
    pub fn atol(mut self, atol: f64) -> Self {
        self.atol = atol;
        self
    }

    /// Sets [`OdeOptions::max_steps`].
    ///
    /// ```
    /// let opts = quabla::ode::OdeOptions::default().max_steps(100_000);
    /// ```
    pub fn max_steps(mut self, max_steps: usize) -> Self {
        self.max_steps = max_steps;
        self
    }

    /// Sets [`OdeOptions::checkpoints`].
    ///
    /// ```
    /// let opts = quabla::ode::OdeOptions::default().checkpoints(16);
    /// ```
    pub fn checkpoints(mut self, checkpoints: usize) -> Self {
        self.checkpoints = Some(checkpoints);
        self
    }

    /// Sets [`OdeOptions::dt0`].
    ///
    /// ```
    /// let opts = quabla::ode::OdeOptions::default().method(quabla::ode::Method::Rk4).dt0(0.01);
    /// ```
    pub fn dt0(mut self, dt0: f64) -> Self {
        self.dt0 = Some(dt0);
        self
    }

    /// Sets [`OdeOptions::gradient`].
    ///
    /// ```
    /// let opts = quabla::ode::OdeOptions::default().gradient(quabla::ode::Gradient::Adjoint);
    /// ```
    pub fn gradient(mut self, gradient: Gradient) -> Self {
        self.gradient = gradient;
        self
    }

    /// Sets [`OdeOptions::save_step_times`].
    ///
    /// ```
    /// let opts = quabla::ode::OdeOptions::default().save_step_times(true);
    /// ```
    pub fn save_step_times(mut self, save: bool) -> Self {
        self.save_step_times = save;
        self
    }

    /// Sets [`OdeOptions::throw`].
    ///
    /// ```
    /// let opts = quabla::ode::OdeOptions::default().throw(true);
    /// ```
    pub fn throw(mut self, throw: bool) -> Self {
        self.throw = throw;
        self
    }
}

/// Step counts of a solve (i32 scalars; batched under `vmap`).
#[derive(Clone)]
pub struct OdeStats {
    /// Steps attempted.
    pub steps: Array,
    pub accepted: Array,
    pub rejected: Array,
    /// With [`OdeOptions::save_step_times`]: a 1-D array of `max_steps` entries, the end
    /// times of the accepted steps in order, then NaN.
    pub step_times: Option<Array>,
    /// Whether the solve reached every requested time (a bool scalar). `false`: `max_steps`
    /// ran out first, and the states at the times not reached are NaN.
    pub reached: Array,
}

/// The states at the requested times (each leaf with a leading time axis) and the counts.
#[derive(Clone)]
pub struct OdeSolution {
    pub ys: Vec<Array>,
    pub stats: OdeStats,
}

/// Integrates `dy/dt = func(y, t, args)` from `y(t[0]) = y0` and returns `y` at every time
/// in `t` (strictly increasing), as `jax.experimental.ode.odeint`. `y0` is a list of float
/// arrays sharing `t`'s dtype; `func` may close over traced values, which are
/// differentiated like `args`. Derivatives with respect to `y0`, `t` and `args` follow
/// [`OdeOptions::gradient`]; everything batches under `vmap`.
///
/// ```no_run
/// # use quabla::{ode::{odeint, OdeOptions}, Array};
/// // y' = -k y, y(0) = 1.
/// let y0 = Array::from_slice(&[1.0f64], &[1])?;
/// let t = Array::from_slice(&[0.0f64, 0.5, 1.0], &[3])?;
/// let k = Array::from_slice(&[2.0f64], &[])?;
/// let decay = |y: &[Array], _t: &Array, a: &[Array]| Ok(vec![(&y[0] * &a[0])?.neg()?]);
/// let sol = odeint(&decay, &[y0], &t, &[k], &OdeOptions::default())?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn odeint(
    func: VectorField,
    y0: &[Array],
    t: &Array,
    args: &[Array],
    opts: &OdeOptions,
) -> Result<OdeSolution> {
    check_inputs(y0, t, opts)?;
    let ny = y0.len();
    let mut types: Vec<TensorType> = y0.iter().map(|y| y.tensor_type().clone()).collect();
    types.push(TensorType::scalar(t.dtype()));
    types.extend(args.iter().map(|a| a.tensor_type().clone()));
    let (fp, caps) = trace_function_capturing(t.device(), &types, |a: &[Array]| {
        func(&a[..ny], &a[ny], &a[ny + 1..])
    })?;
    let y_types = &types[..ny];
    if fp.output_types()[..] != *y_types {
        return Err(Error::Shape(format!(
            "odeint: func must return derivatives shaped like y {}, got {}",
            crate::ops::show_types(y_types),
            crate::ops::show_types(&fp.output_types())
        )));
    }
    let params: Vec<Array> = args.iter().chain(&caps).cloned().collect();
    let settings = Settings {
        method: opts.method,
        rtol: opts.rtol,
        atol: opts.atol,
        max_steps: opts.max_steps,
        checkpoints: opts.checkpoints,
        dt0: opts.dt0,
        save_step_times: opts.save_step_times,
    };
    let (ys, [steps, accepted, rejected, times_reached], step_times) = match opts.gradient {
        Gradient::Adjoint => {
            let (ys, stats) = adjoint::solve(std::sync::Arc::new(fp), y0, t, &params, settings)?;
            (ys, stats, None)
        }
        g => {
            let field = |y: &[Array], tt: &Array| {
                crate::eval::eval_program(&fp, &[y, std::slice::from_ref(tt), &params].concat())
            };
            let looping = if g == Gradient::Direct {
                Looping::Bounded
            } else {
                Looping::While
            };
            integrate(&field, y0, t, &settings, looping)?
        }
    };
    let reached = times_reached.ge(t.shape()[0] as i32)?;
    if opts.throw {
        check_reached(&reached, t, opts)?;
    }
    Ok(OdeSolution {
        ys,
        stats: OdeStats {
            steps,
            accepted,
            rejected,
            step_times,
            reached,
        },
    })
}

/// [`OdeOptions::throw`]'s check: an error when the solve stopped short of the last time.
fn check_reached(reached: &Array, t: &Array, opts: &OdeOptions) -> Result<()> {
    if reached.is_traced() {
        return Err(Error::Value(
            "odeint: throw needs a concrete result to check, and this solve is traced (inside \
             jit, grad or vmap); solve without throw there and test OdeStats::reached"
                .into(),
        ));
    }
    if reached.item::<bool>()? {
        return Ok(());
    }
    let last = t.astype(quabla_abi::DType::F64)?.to_vec::<f64>()?;
    Err(Error::Value(format!(
        "odeint: max_steps = {} ran out before the last requested time t = {}, so the states at \
         the times not reached are NaN; raise max_steps, loosen rtol/atol, or use \
         Method::Rosenbrock23 if the problem is stiff",
        opts.max_steps,
        last.last().copied().unwrap_or(f64::NAN)
    )))
}

fn check_inputs(y0: &[Array], t: &Array, opts: &OdeOptions) -> Result<()> {
    if y0.is_empty() {
        return Err(Error::Value("odeint needs an initial state y0".into()));
    }
    if t.ndim() != 1 || t.shape()[0] == 0 || !t.dtype().is_float() {
        return Err(Error::DType(format!(
            "odeint: t must be a non-empty 1-D float array of times, got {}",
            t.tensor_type()
        )));
    }
    if let Some(bad) = y0.iter().find(|y| y.dtype() != t.dtype()) {
        return Err(Error::DType(format!(
            "odeint: every part of y0 must have t's dtype {}, got {}; convert with astype",
            t.dtype(),
            bad.tensor_type()
        )));
    }
    if !(opts.rtol >= 0.0 && opts.atol >= 0.0 && opts.rtol + opts.atol > 0.0) {
        return Err(Error::Value(format!(
            "odeint: rtol and atol must be non-negative and not both zero, got {} and {}",
            opts.rtol, opts.atol
        )));
    }
    if opts.save_step_times && opts.gradient == Gradient::Adjoint {
        return Err(Error::Value(
            "odeint: save_step_times is not available with Gradient::Adjoint; solve with \
             Gradient::ForwardOnly or Direct to inspect the steps"
                .into(),
        ));
    }
    if opts.max_steps == 0 || opts.max_steps > i32::MAX as usize / 2 {
        return Err(Error::Value(
            "odeint: max_steps must be between 1 and 2^30".into(),
        ));
    }
    if opts.checkpoints == Some(0) {
        return Err(Error::Value(
            "odeint: checkpoints must be at least 1 (the solver states the direct gradient \
             keeps); leave it unset for sqrt(max_steps + len(t))"
                .into(),
        ));
    }
    if let Some(d) = opts.dt0 {
        if !(d > 0.0 && d.is_finite()) {
            return Err(Error::Value(format!(
                "odeint: dt0 must be a positive finite step, got {d}"
            )));
        }
    }
    if !t.is_traced() {
        let ts = t.astype(quabla_abi::DType::F64)?.to_vec::<f64>()?;
        if let Some(w) = ts
            .windows(2)
            .position(|w| w[1].partial_cmp(&w[0]) != Some(std::cmp::Ordering::Greater))
        {
            return Err(Error::Value(format!(
                "odeint: t must be strictly increasing; t[{}] = {} is followed by {}",
                w,
                ts[w],
                ts[w + 1]
            )));
        }
    }
    Ok(())
}
