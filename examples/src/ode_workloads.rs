//! The ODE rows of the benchmark suite (`bench_suite`; twins in `benches/jax_ode_rows.py`):
//! Lotka-Volterra at about 5, 50 and 500 dopri5 steps under two bounds (`max_steps` 4,096
//! and 65,536), so cost can be read against the steps taken and the bound; the stiff
//! Robertson problem by rosenbrock23 (against diffrax's Kvaerno5); the neural ODE of
//! [`crate::solver_problems`] with a ten times faster field.

use quabla::ode::{odeint, Gradient, Method, OdeOptions};
use quabla::{Array, Axes, Result};

/// Lotka-Volterra's `(a, b, c, d)`.
pub const LV_PARAMS: [f64; 4] = [1.5, 1.0, 3.0, 1.0];
/// Lotka-Volterra's initial state.
pub const LV_Y0: [f64; 2] = [1.2, 0.8];
/// Final times of about 5, 50 and 500 dopri5 steps at rtol = atol = 1e-6, with the step
/// count that names the row.
pub const LV_SPANS: [(f64, &str); 3] = [(0.5, "5"), (5.0, "50"), (50.0, "500")];
/// The two bounds each Lotka-Volterra solve runs under.
pub const LV_BOUNDS: [usize; 2] = [4096, 65536];
/// Robertson's rate constants `(k1, k2, k3)`.
pub const ROBERTSON_RATES: [f64; 3] = [0.04, 1e4, 3e7];
/// The end of the Robertson solve.
pub const ROBERTSON_END: f64 = 100.0;

fn lotka_volterra(y: &[Array], _t: &Array, p: &[Array]) -> Result<Vec<Array>> {
    let part = |a: &Array, i: usize| a.slice(&[i], &[i + 1], &[1]);
    let (u, v) = (part(&y[0], 0)?, part(&y[0], 1)?);
    let (a, b, c, d) = (
        part(&p[0], 0)?,
        part(&p[0], 1)?,
        part(&p[0], 2)?,
        part(&p[0], 3)?,
    );
    let uv = (&u * &v)?;
    let du = (&(&a * &u)? - &(&b * &uv)?)?;
    let dv = (&(&d * &uv)? - &(&c * &v)?)?;
    Ok(vec![Array::concatenate(&[&du, &dv], 0)?])
}

/// `Σ y(t_end)` of Lotka-Volterra with parameters `p` (dopri5, rtol = atol = 1e-6).
///
/// ```no_run
/// # use quabla::{Array, ode::Gradient};
/// # use quabla_examples::ode_workloads::{lotka_volterra_sum, LV_PARAMS};
/// let p = Array::from_slice(&LV_PARAMS, &[4]).unwrap();
/// let s = lotka_volterra_sum(&p, 5.0, 4096, Gradient::Direct).unwrap();
/// ```
pub fn lotka_volterra_sum(
    p: &Array,
    t_end: f64,
    max_steps: usize,
    gradient: Gradient,
) -> Result<Array> {
    let d = p.dtype();
    let t = Array::from_slice_on(p.device(), &[0.0, t_end], &[2])?.astype(d)?;
    let y0 = Array::from_slice_on(p.device(), &LV_Y0, &[2])?.astype(d)?;
    let opts = OdeOptions {
        rtol: 1e-6,
        atol: 1e-6,
        max_steps,
        gradient,
        ..Default::default()
    };
    let sol = odeint(&lotka_volterra, &[y0], &t, std::slice::from_ref(p), &opts)?;
    sol.ys[0]
        .slice(&[1, 0], &[2, 2], &[1, 1])?
        .sum(Axes::All, false)
}

fn robertson(y: &[Array], _t: &Array, k: &[Array]) -> Result<Vec<Array>> {
    let part = |a: &Array, i: usize| a.slice(&[i], &[i + 1], &[1]);
    let (y1, y2, y3) = (part(&y[0], 0)?, part(&y[0], 1)?, part(&y[0], 2)?);
    let (k1, k2, k3) = (part(&k[0], 0)?, part(&k[0], 1)?, part(&k[0], 2)?);
    let a = (&(&(&k2 * &y2)? * &y3)? - &(&k1 * &y1)?)?;
    let c = (&(&k3 * &y2)? * &y2)?;
    let b = (&a.neg()? - &c)?;
    Ok(vec![Array::concatenate(&[&a, &b, &c], 0)?])
}

/// `y1(T) + 1e4 y2(T)` of the Robertson problem on `[0, ROBERTSON_END]` with rate
/// constants `s * ROBERTSON_RATES` (rosenbrock23, rtol 1e-6, atol 1e-10, direct gradient).
///
/// ```no_run
/// # use quabla::Array;
/// # use quabla_examples::ode_workloads::robertson_readout;
/// let s = Array::from_slice(&[1.0f64, 1.0, 1.0], &[3]).unwrap();
/// let r = robertson_readout(&s).unwrap();
/// ```
pub fn robertson_readout(s: &Array) -> Result<Array> {
    let (dev, d) = (s.device(), s.dtype());
    let k = (s * &Array::from_slice_on(dev, &ROBERTSON_RATES, &[3])?.astype(d)?)?;
    let t = Array::from_slice_on(dev, &[0.0, ROBERTSON_END], &[2])?.astype(d)?;
    let y0 = Array::from_slice_on(dev, &[1.0, 0.0, 0.0], &[3])?.astype(d)?;
    let opts = OdeOptions {
        method: Method::Rosenbrock23,
        rtol: 1e-6,
        atol: 1e-10,
        ..Default::default()
    };
    let y = odeint(&robertson, &[y0], &t, &[k], &opts)?.ys.remove(0);
    let y1 = y.slice(&[1, 0], &[2, 1], &[1, 1])?;
    let y2 = y.slice(&[1, 1], &[2, 2], &[1, 1])?;
    (&y1 + &(&y2 * 1e4)?)?.sum(Axes::All, false)
}
