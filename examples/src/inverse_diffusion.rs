//! An inverse problem: recover the diffusion coefficient `D` of the heat equation
//! `u_t = D u_xx` on [0, 1] (u = 0 at both ends) from observations of `u`. The forward model
//! discretizes space by second differences on 31 interior points (method of lines) and
//! integrates in time with `odeint` (rosenbrock23: the semi-discrete system is stiff); `D`
//! is found by L-BFGS on `log D`, gradients through the solver. The observations are the
//! exact solution of the continuous problem, `e^{-Dπ²t} sin πx + ½ e^{-9Dπ²t} sin 3πx` with
//! `D = 0.1`, so the recovered value differs from 0.1 only by the discretization error.

use quabla::ode::{odeint, Gradient, Method, OdeOptions};
use quabla::optim::Lbfgs;
use quabla::{default_device, jit, Array, Axes, Result};
use std::f64::consts::PI;

/// Interior grid points.
pub const POINTS: usize = 31;
/// The coefficient that generated the observations.
pub const TRUE_D: f64 = 0.1;
const OBS_TIMES: [f64; 5] = [0.0, 0.1, 0.25, 0.5, 1.0];

fn grid() -> Vec<f64> {
    (1..=POINTS)
        .map(|i| i as f64 / (POINTS + 1) as f64)
        .collect()
}

fn exact(x: f64, t: f64, d: f64) -> f64 {
    (-d * PI * PI * t).exp() * (PI * x).sin()
        + 0.5 * (-9.0 * d * PI * PI * t).exp() * (3.0 * PI * x).sin()
}

/// `D·u_xx` by second differences with zero boundary values.
fn heat(u: &[Array], _t: &Array, a: &[Array]) -> Result<Vec<Array>> {
    let h = 1.0 / (POINTS + 1) as f64;
    let p = u[0].pad(0.0, &[1], &[1], &[0])?;
    let left = p.slice(&[0], &[POINTS], &[1])?;
    let right = p.slice(&[2], &[POINTS + 2], &[1])?;
    let lap = (&(&(&left + &right)? - &(&u[0] * 2.0)?)? / (h * h))?;
    Ok(vec![(&lap * &a[0])?])
}

/// The model's observations for `log D`: `u` at the observation times, `[5, POINTS]`.
pub fn simulate(log_d: &Array) -> Result<Array> {
    let dev = log_d.device().clone();
    let x = grid();
    let u0: Vec<f64> = x.iter().map(|&x| exact(x, 0.0, TRUE_D)).collect();
    let u0 = Array::from_slice_on(&dev, &u0, &[POINTS])?;
    let t = Array::from_slice_on(&dev, &OBS_TIMES, &[OBS_TIMES.len()])?;
    let opts = OdeOptions {
        method: Method::Rosenbrock23,
        rtol: 1e-6,
        atol: 1e-8,
        gradient: Gradient::Direct,
        max_steps: 1024,
        ..Default::default()
    };
    Ok(odeint(&heat, &[u0], &t, &[log_d.exp()?], &opts)?
        .ys
        .remove(0))
}

/// The observations: the continuous problem's exact solution at the grid points.
pub fn observations() -> Vec<f64> {
    let x = grid();
    OBS_TIMES
        .iter()
        .flat_map(|&t| x.iter().map(move |&x| exact(x, t, TRUE_D)))
        .collect()
}

/// The result of a recovery.
pub struct Recovery {
    pub d: f64,
    pub loss: f64,
    pub iterations: usize,
}

/// Recovers `D` from `d0` with at most `iterations` L-BFGS steps (stopping when the step
/// no longer changes `D`), calling `progress(k, D, loss)`.
pub fn recover(
    d0: f64,
    iterations: usize,
    progress: &mut dyn FnMut(usize, f64, f64),
) -> Result<Recovery> {
    let dev = default_device()?;
    let obs = Array::from_slice_on(&dev, &observations(), &[OBS_TIMES.len(), POINTS])?;
    let opt = Lbfgs::default();
    let o = opt.clone();
    let step = jit(move |a: &[Array]| {
        let f = |q: &[Array]| -> Result<Array> {
            let d = (&simulate(&q[0])? - &a[5])?;
            (&d * &d)?.mean(Axes::All, false)
        };
        let s = o.step(&f, &a[..1], &a[1..5])?;
        let mut out = s.params;
        out.extend(s.state);
        out.push(s.value);
        Ok(out)
    });
    let p0 = Array::from_slice_on(&dev, &[d0.ln()], &[])?;
    let mut args: Vec<Array> = vec![p0.clone()];
    args.extend(opt.init(&[p0])?);
    args.push(obs.clone());
    let (mut d, mut loss, mut done) = (d0, f64::NAN, 0);
    for k in 0..iterations {
        let mut out = step.call(&args)?;
        loss = out
            .pop()
            .expect("the step returns its loss")
            .item::<f64>()?;
        let next = out[0].item::<f64>()?.exp();
        done = k + 1;
        progress(done, next, loss);
        let converged = (next - d).abs() <= 1e-12 * d;
        d = next;
        out.push(obs.clone());
        args = out;
        if converged {
            break;
        }
    }
    Ok(Recovery {
        d,
        loss,
        iterations: done,
    })
}
