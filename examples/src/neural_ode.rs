//! A neural ODE learns the Lotka-Volterra vector field from one observed trajectory: the
//! model `dy/dt = MLP(y)` (2 -> 32 -> 32 -> 2, tanh) is integrated by `odeint` (dopri5) and
//! fitted to the observations with Adam, gradients by the continuous adjoint method. The
//! observations come from the true system `u' = 1.5u - uv, v' = uv - 3v` (tight-tolerance
//! solve); the report compares the learned field's trajectory with them, inside the fitted
//! window and beyond it.

use quabla::ode::{odeint, Gradient, OdeOptions};
use quabla::optim::{adam, Trainer};
use quabla::{default_device, Array, Axes, Result};

/// Observation times: [0, 4] in 0.1 steps; `t_extrapolate` continues to 6.
pub fn times(end: f64) -> Vec<f64> {
    (0..=((end * 10.0).round() as usize))
        .map(|i| i as f64 * 0.1)
        .collect()
}

fn lotka_volterra(y: &[Array], _t: &Array, _a: &[Array]) -> Result<Vec<Array>> {
    let (u, v) = (y[0].slice(&[0], &[1], &[1])?, y[0].slice(&[1], &[2], &[1])?);
    let du = (&(&u * 1.5)? - &(&u * &v)?)?;
    let dv = (&(&u * &v)? - &(&v * 3.0)?)?;
    Ok(vec![Array::concatenate(&[&du, &dv], 0)?])
}

/// The true trajectory from (1, 1) at `t`: `[len(t), 2]`.
pub fn observations(t: &[f64]) -> Result<Array> {
    let dev = default_device()?;
    let y0 = Array::from_slice_on(&dev, &[1.0f64, 1.0], &[2])?;
    let ts = Array::from_slice_on(&dev, t, &[t.len()])?;
    let opts = OdeOptions {
        rtol: 1e-10,
        atol: 1e-10,
        gradient: Gradient::ForwardOnly,
        ..Default::default()
    };
    Ok(odeint(&lotka_volterra, &[y0], &ts, &[], &opts)?
        .ys
        .remove(0))
}

/// MLP 2 -> 32 -> 32 -> 2 (tanh) parameters, Glorot-scaled deterministic draws.
pub fn init_params() -> Result<Vec<Array>> {
    let dev = default_device()?;
    let layer = |i: usize, o: usize, s: f64| -> Result<Vec<Array>> {
        let scale = (6.0 / (i + o) as f64).sqrt();
        let w: Vec<f64> = (0..i * o)
            .map(|k| ((k as f64 * 0.618_034 + s).fract() * 2.0 - 1.0) * scale)
            .collect();
        Ok(vec![
            Array::from_slice_on(&dev, &w, &[i, o])?,
            Array::from_slice_on(&dev, &vec![0.0f64; o], &[o])?,
        ])
    };
    // A small last layer: the initial field is near zero, so early solves are cheap and the
    // first gradients are informative.
    let mut p = [layer(2, 32, 0.1)?, layer(32, 32, 0.4)?, layer(32, 2, 0.7)?].concat();
    p[4] = (&p[4] * 0.1)?;
    Ok(p)
}

fn field(y: &[Array], _t: &Array, p: &[Array]) -> Result<Vec<Array>> {
    let h = (&y[0].matmul(&p[0])? + &p[1])?.tanh()?;
    let h = (&h.matmul(&p[2])? + &p[3])?.tanh()?;
    Ok(vec![(&h.matmul(&p[4])? + &p[5])?])
}

/// The model's trajectory from `y0` at `t` (`[len(t), 2]`).
pub fn predict(params: &[Array], y0: &Array, t: &Array, gradient: Gradient) -> Result<Array> {
    let opts = OdeOptions {
        rtol: 1e-6,
        atol: 1e-6,
        gradient,
        ..Default::default()
    };
    Ok(odeint(&field, std::slice::from_ref(y0), t, params, &opts)?
        .ys
        .remove(0))
}

/// Mean squared trajectory error over the observations `weights` selects;
/// `a = params ++ [y0, t, observations, weights]`.
pub fn loss(a: &[Array]) -> Result<Vec<Array>> {
    let n = a.len() - 4;
    let pred = predict(&a[..n], &a[n], &a[n + 1], Gradient::Adjoint)?;
    let d = (&pred - &a[n + 2])?;
    let w = &a[n + 3];
    Ok(vec![
        (&(&(&d * &d)?.sum(Axes::Some(&[1]), false)? * w)?.sum(Axes::All, false)?
            / &w.sum(Axes::All, false)?)?,
    ])
}

/// The curriculum: observations up to `t_end(k)`, which grows from 1 to the whole window over
/// the first 60% of the steps (fitting a long oscillating trajectory at once tends to stall).
fn window(k: usize, steps: usize, t: &[f64]) -> Vec<f64> {
    let frac = (k as f64 / (0.6 * steps as f64)).min(1.0);
    let end = 1.0 + frac * (t[t.len() - 1] - 1.0);
    t.iter()
        .map(|&x| if x <= end + 1e-9 { 1.0 } else { 0.0 })
        .collect()
}

/// What a fit reached.
pub struct Report {
    /// The loss over the whole window at the initial and at the fitted parameters.
    pub first_loss: f64,
    pub final_loss: f64,
    /// Largest |prediction - truth| on the fitted window [0, 4].
    pub fit_error: f64,
    /// Largest |prediction - truth| on [4, 6], beyond the data.
    pub extrapolation_error: f64,
    pub params: Vec<Array>,
}

/// Fits the neural ODE with `steps` Adam steps at learning rate `lr`, calling `progress`
/// with (step, loss) every `every` steps.
pub fn fit(
    steps: usize,
    lr: f64,
    every: usize,
    progress: &mut dyn FnMut(usize, f64),
) -> Result<Report> {
    let dev = default_device()?;
    let t_fit = times(4.0);
    let data = observations(&t_fit)?;
    let ts = Array::from_slice_on(&dev, &t_fit, &[t_fit.len()])?;
    let y0 = Array::from_slice_on(&dev, &[1.0f64, 1.0], &[2])?;
    let all = Array::from_slice_on(&dev, &vec![1.0f64; t_fit.len()], &[t_fit.len()])?;
    let full_loss = |p: &[Array]| -> Result<f64> {
        let mut a = p.to_vec();
        a.extend([y0.clone(), ts.clone(), data.clone(), all.clone()]);
        loss(&a)?[0].item::<f64>()
    };
    let init = init_params()?;
    let first = full_loss(&init)?;
    let mut trainer = Trainer::new(loss, init, adam(lr))?;
    for k in 0..steps {
        let w = Array::from_slice_on(&dev, &window(k, steps, &t_fit), &[t_fit.len()])?;
        trainer.step(&[y0.clone(), ts.clone(), data.clone(), w])?;
        if (k + 1) % every.max(1) == 0 || k + 1 == steps {
            progress(k + 1, trainer.loss()?);
        }
    }
    let params = trainer.params().to_vec();
    let final_loss = full_loss(&params)?;
    let t_all = times(6.0);
    let truth = observations(&t_all)?.to_vec::<f64>()?;
    let tt = Array::from_slice_on(&dev, &t_all, &[t_all.len()])?;
    let pred = predict(&params, &y0, &tt, Gradient::ForwardOnly)?.to_vec::<f64>()?;
    let split = 2 * t_fit.len();
    let max_err =
        |r: std::ops::Range<usize>| r.map(|i| (pred[i] - truth[i]).abs()).fold(0.0, f64::max);
    Ok(Report {
        first_loss: first,
        final_loss,
        fit_error: max_err(0..split),
        extrapolation_error: max_err(split..pred.len()),
        params,
    })
}
