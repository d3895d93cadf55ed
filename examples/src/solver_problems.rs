//! The solver workloads shared by the criterion bench (`examples/benches/solvers.rs`) and the
//! benchmark suite (`bench_suite`, with twins in `benches/jax_suite.py` and
//! `benches/scipy_solvers.py`): CG on the 5-point Laplacian of a 256x256 grid, and a neural
//! ODE with an MLP 8 -> 64 -> 64 -> 8 tanh vector field.

use quabla::linalg::{self, SolveOptions};
use quabla::ode::{odeint, Gradient, OdeOptions};
use quabla::{Array, Axes, DType, Result};

/// The grid side of the CG problem.
pub const GRID: usize = 256;

/// `-Δ` by the 5-point stencil with zero Dirichlet boundary, on a `GRID x GRID` array.
pub fn laplacian(v: &[Array]) -> Result<Vec<Array>> {
    let u = &v[0];
    let p = u.pad(0.0, &[1, 1], &[1, 1], &[0, 0])?;
    let sh = |i: usize, j: usize| p.slice(&[i, j], &[i + GRID, j + GRID], &[1, 1]);
    let nb = (&(&sh(0, 1)? + &sh(2, 1)?)? + &(&sh(1, 0)? + &sh(1, 2)?)?)?;
    Ok(vec![(&(u * 4.0)? - &nb)?])
}

/// The CG tolerance: 1e-8 relative in f64; 1e-5 in f32 (1e-8 is below its precision).
pub fn cg_tol(dtype: DType) -> f64 {
    if dtype == DType::F32 {
        1e-5
    } else {
        1e-8
    }
}

/// `x` and `info` of CG on the Laplacian.
pub fn cg_solve(b: &Array) -> Result<(Array, Array)> {
    let opts = SolveOptions {
        tol: cg_tol(b.dtype()),
        maxiter: Some(10_000),
        ..Default::default()
    };
    let (x, info) = linalg::cg(&laplacian, std::slice::from_ref(b), None, None, &opts)?;
    Ok((x[0].clone(), info))
}

/// `Σ w·x(b)`: its gradient in `b` is one transposed CG solve.
pub fn cg_loss(a: &[Array]) -> Result<Vec<Array>> {
    let (x, _) = cg_solve(&a[0])?;
    Ok(vec![(&x * &a[1])?.sum(Axes::All, false)?])
}

/// A deterministic right-hand side (or weights) on the grid.
pub fn grid_values(seed: f64, dtype: DType) -> Result<Array> {
    let v: Vec<f64> = (0..GRID * GRID)
        .map(|i| ((i as f64) * seed).sin())
        .collect();
    Array::from_slice(&v, &[GRID, GRID])?.astype(dtype)
}

/// MLP 8 -> 64 -> 64 -> 8 tanh parameters, a fixed deterministic draw.
pub fn mlp_params(dtype: DType) -> Result<Vec<Array>> {
    let layer = |i: usize, o: usize, s: f64| -> Result<Vec<Array>> {
        let w: Vec<f64> = (0..i * o)
            .map(|k| ((k as f64 + s) * 0.7371).sin() / (i as f64).sqrt())
            .collect();
        let b: Vec<f64> = (0..o)
            .map(|k| ((k as f64 + s) * 1.31).cos() * 0.1)
            .collect();
        Ok(vec![
            Array::from_slice(&w, &[i, o])?.astype(dtype)?,
            Array::from_slice(&b, &[o])?.astype(dtype)?,
        ])
    };
    Ok([layer(8, 64, 1.0)?, layer(64, 64, 2.0)?, layer(64, 8, 3.0)?].concat())
}

fn mlp_field(y: &[Array], _t: &Array, p: &[Array]) -> Result<Vec<Array>> {
    let h = (&y[0].matmul(&p[0])? + &p[1])?.tanh()?;
    let h = (&h.matmul(&p[2])? + &p[3])?.tanh()?;
    Ok(vec![(&h.matmul(&p[4])? + &p[5])?])
}

/// `Σ y(t)²` over 11 times in [0, 5] (dopri5, rtol = atol = 1e-6); `a` = the MLP parameters.
pub fn neural_ode(a: &[Array], gradient: Gradient) -> Result<Array> {
    neural_ode_at_speed(a, gradient, 1.0)
}

/// [`neural_ode`] with the field scaled by `speed` (10: a stiffer solve of more steps).
pub fn neural_ode_at_speed(a: &[Array], gradient: Gradient, speed: f64) -> Result<Array> {
    neural_ode_solve(a, gradient, speed, None)
}

/// [`neural_ode_at_speed`] at speed 1 by the direct gradient keeping `checkpoints` solver
/// states ([`OdeOptions::checkpoints`]).
pub fn neural_ode_checkpointed(a: &[Array], checkpoints: usize) -> Result<Array> {
    neural_ode_solve(a, Gradient::Direct, 1.0, Some(checkpoints))
}

fn neural_ode_solve(
    a: &[Array],
    gradient: Gradient,
    speed: f64,
    checkpoints: Option<usize>,
) -> Result<Array> {
    let d = a[0].dtype();
    let t: Vec<f64> = (0..11).map(|i| i as f64 * 0.5).collect();
    let t = Array::from_slice_on(a[0].device(), &t, &[11])?.astype(d)?;
    let y0 = [0.5f64, -0.25, 0.15, 0.4, -0.5, 0.1, 0.0, 0.3];
    let y0 = Array::from_slice_on(a[0].device(), &y0, &[8])?.astype(d)?;
    let opts = OdeOptions {
        rtol: 1e-6,
        atol: 1e-6,
        gradient,
        checkpoints,
        ..Default::default()
    };
    let field = |y: &[Array], t: &Array, p: &[Array]| -> Result<Vec<Array>> {
        let dy = mlp_field(y, t, p)?.remove(0);
        Ok(vec![if speed == 1.0 { dy } else { (&dy * speed)? }])
    };
    let sol = odeint(&field, &[y0], &t, a, &opts)?;
    (&sol.ys[0] * &sol.ys[0])?.sum(Axes::All, false)
}
