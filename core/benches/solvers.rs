//! Solver benchmarks (issue: scientific numerics), each a compiled (`jit`) steady-state call:
//! - `cg_laplacian_256`: matrix-free CG on the 5-point -Δ of a 256x256 grid (65,536
//!   unknowns, Dirichlet boundary) to a relative residual of 1e-8, and the gradient of
//!   `Σ w·x` with respect to `b` (one more, transposed, CG solve);
//! - `neural_ode`: an MLP 8->64->64->8 tanh vector field, dopri5 on t in [0, 5] (11 saved
//!   times) at rtol = atol = 1e-6 in f64: the forward solve, and the gradient of `Σ y(t)²`
//!   with respect to the MLP parameters by the adjoint method and through the solver;
//! - `robertson_rosenbrock23`: the stiff Robertson problem on [0, 1000] at rtol 1e-6,
//!   atol 1e-10.
//!
//! `benches/scipy_solvers.py` runs the same problems with scipy for comparison.
//! Run: `cargo bench -p quabla --bench solvers`.

use criterion::{criterion_group, criterion_main, Criterion};
use quabla::ad::grad;
use quabla::linalg::{self, SolveOptions};
use quabla::ode::{odeint, Gradient, Method, OdeOptions};
use quabla::{jit, Array, Axes, Result};

const N: usize = 256;

fn laplacian(v: &[Array]) -> Result<Vec<Array>> {
    let u = &v[0];
    let p = u.pad(0.0, &[1, 1], &[1, 1], &[0, 0])?;
    let sh = |i: usize, j: usize| p.slice(&[i, j], &[i + N, j + N], &[1, 1]);
    let nb = (&(&sh(0, 1)? + &sh(2, 1)?)? + &(&sh(1, 0)? + &sh(1, 2)?)?)?;
    Ok(vec![(&(u * 4.0)? - &nb)?])
}

fn cg_solve(b: &Array) -> Result<(Array, Array)> {
    let opts = SolveOptions {
        tol: 1e-8,
        maxiter: Some(10_000),
        ..Default::default()
    };
    let (x, info) = linalg::cg(&laplacian, std::slice::from_ref(b), None, None, &opts)?;
    Ok((x[0].clone(), info))
}

fn grid(seed: f64) -> Array {
    let v: Vec<f64> = (0..N * N).map(|i| ((i as f64) * seed).sin()).collect();
    Array::from_slice(&v, &[N, N]).unwrap()
}

/// MLP 8->64->64->8 tanh parameters in a fixed pseudo-random draw.
fn mlp_params() -> Vec<Array> {
    let layer = |i: usize, o: usize, s: f64| {
        let w: Vec<f64> = (0..i * o)
            .map(|k| ((k as f64 + s) * 0.7371).sin() / (i as f64).sqrt())
            .collect();
        let b: Vec<f64> = (0..o)
            .map(|k| ((k as f64 + s) * 1.31).cos() * 0.1)
            .collect();
        vec![
            Array::from_slice(&w, &[i, o]).unwrap(),
            Array::from_slice(&b, &[o]).unwrap(),
        ]
    };
    [layer(8, 64, 1.0), layer(64, 64, 2.0), layer(64, 8, 3.0)].concat()
}

fn mlp_field(y: &[Array], _t: &Array, p: &[Array]) -> Result<Vec<Array>> {
    let h = (&y[0].matmul(&p[0])? + &p[1])?.tanh()?;
    let h = (&h.matmul(&p[2])? + &p[3])?.tanh()?;
    Ok(vec![(&h.matmul(&p[4])? + &p[5])?])
}

fn neural_ode(a: &[Array], gradient: Gradient) -> Result<Array> {
    let t: Vec<f64> = (0..11).map(|i| i as f64 * 0.5).collect();
    let t = Array::from_slice_on(a[0].device(), &t, &[11])?;
    let y0 = Array::from_slice_on(
        a[0].device(),
        &[0.5f64, -0.25, 0.15, 0.4, -0.5, 0.1, 0.0, 0.3],
        &[8],
    )?;
    let opts = OdeOptions {
        rtol: 1e-6,
        atol: 1e-6,
        gradient,
        ..Default::default()
    };
    let sol = odeint(&mlp_field, &[y0], &t, a, &opts)?;
    (&sol.ys[0] * &sol.ys[0])?.sum(Axes::All, false)
}

fn robertson(y: &[Array], _t: &Array, _a: &[Array]) -> Result<Vec<Array>> {
    let p = |i: usize| y[0].slice(&[i], &[i + 1], &[1]);
    let (y1, y2, y3) = (p(0)?, p(1)?, p(2)?);
    let a = (&(&y1 * -0.04)? + &(&(&y2 * &y3)? * 1e4)?)?;
    let c = (&(&y2 * &y2)? * 3e7)?;
    let b = (&a.neg()? - &c)?;
    Ok(vec![Array::concatenate(&[&a, &b, &c], 0)?])
}

fn bench(c: &mut Criterion) {
    quabla::runtime::register_static("cpu", quabla_cpu::backend_module);
    let mut g = c.benchmark_group("solvers");
    g.sample_size(10);

    let b = grid(0.0137);
    let w = grid(0.071);
    let solve = jit(|a: &[Array]| {
        let (x, info) = cg_solve(&a[0])?;
        Ok(vec![x, info])
    });
    let out = solve.call(std::slice::from_ref(&b)).expect("cg runs");
    let lap = laplacian(&[out[0].clone()]).unwrap().remove(0);
    let r = (&lap - &b).unwrap();
    let rel = ((&r * &r)
        .unwrap()
        .sum(Axes::All, false)
        .unwrap()
        .item::<f64>()
        .unwrap()
        / (&b * &b)
            .unwrap()
            .sum(Axes::All, false)
            .unwrap()
            .item::<f64>()
            .unwrap())
    .sqrt();
    eprintln!(
        "cg_laplacian_256: info {} relative residual {rel:.2e}",
        out[1].item::<i32>().unwrap()
    );
    g.bench_function("cg_laplacian_256/solve", |bch| {
        bch.iter(|| solve.call(std::slice::from_ref(&b)).unwrap())
    });
    let loss = |a: &[Array]| -> Result<Vec<Array>> {
        let (x, _) = cg_solve(&a[0])?;
        Ok(vec![(&x * &a[1])?.sum(Axes::All, false)?])
    };
    let dloss = jit(grad(loss, &[0]));
    g.bench_function("cg_laplacian_256/grad_b", |bch| {
        bch.iter(|| dloss.call(&[b.clone(), w.clone()]).unwrap())
    });

    let params = mlp_params();
    let forward = jit(|a: &[Array]| Ok(vec![neural_ode(a, Gradient::ForwardOnly)?]));
    g.bench_function("neural_ode/forward", |bch| {
        bch.iter(|| forward.call(&params).unwrap())
    });
    let all: Vec<usize> = (0..params.len()).collect();
    let adjoint = jit(grad(
        |a: &[Array]| Ok(vec![neural_ode(a, Gradient::Adjoint)?]),
        &all,
    ));
    g.bench_function("neural_ode/grad_adjoint", |bch| {
        bch.iter(|| adjoint.call(&params).unwrap())
    });
    let direct = jit(grad(
        |a: &[Array]| Ok(vec![neural_ode(a, Gradient::Direct)?]),
        &all,
    ));
    g.bench_function("neural_ode/grad_direct", |bch| {
        bch.iter(|| direct.call(&params).unwrap())
    });

    let stiff = jit(|a: &[Array]| {
        let opts = OdeOptions {
            method: Method::Rosenbrock23,
            rtol: 1e-6,
            atol: 1e-10,
            gradient: Gradient::ForwardOnly,
            ..Default::default()
        };
        let sol = odeint(&robertson, &a[..1], &a[1], &[], &opts)?;
        Ok(vec![sol.ys[0].clone(), sol.stats.steps])
    });
    let y0 = Array::from_slice(&[1.0f64, 0.0, 0.0], &[3]).unwrap();
    let ts = Array::from_slice(&[0.0f64, 1000.0], &[2]).unwrap();
    let o = stiff.call(&[y0.clone(), ts.clone()]).unwrap();
    eprintln!(
        "robertson: {} steps, y(1000) = {:?}",
        o[1].item::<i32>().unwrap(),
        o[0].to_vec::<f64>().unwrap()
    );
    g.bench_function("robertson_rosenbrock23", |bch| {
        bch.iter(|| stiff.call(&[y0.clone(), ts.clone()]).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
