//! Solver benchmarks (issue: scientific numerics), each a compiled (`jit`) steady-state call
//! of the workloads in `quabla_examples::solver_problems`:
//! - `cg_laplacian_256`: matrix-free CG on the 5-point -Δ of a 256x256 grid (65,536
//!   unknowns) to a relative residual of 1e-8 (f64), and the gradient of `Σ w·x` with
//!   respect to `b` (one more, transposed, CG solve);
//! - `neural_ode`: an MLP 8->64->64->8 tanh vector field, dopri5 on t in [0, 5] (11 saved
//!   times) at rtol = atol = 1e-6 in f64: the forward solve, and the gradient of `Σ y(t)²`
//!   with respect to the MLP parameters by the adjoint method and through the solver;
//! - `robertson_rosenbrock23`: the stiff Robertson problem on [0, 1000] at rtol 1e-6,
//!   atol 1e-10.
//!
//! `benches/scipy_solvers.py` runs the same problems with scipy for comparison.
//! Run: `cargo bench -p quabla-examples --bench solvers`.

use criterion::{criterion_group, criterion_main, Criterion};
use quabla::ad::grad;
use quabla::ode::{odeint, Gradient, Method, OdeOptions};
use quabla::test_util::robertson;
use quabla::{jit, Array, Axes, DType};
use quabla_examples::solver_problems::{
    cg_loss, cg_solve, grid_values, laplacian, mlp_params, neural_ode,
};

fn bench(c: &mut Criterion) {
    quabla::runtime::register_static("cpu", quabla_cpu::backend_module);
    let mut g = c.benchmark_group("solvers");
    g.sample_size(10);

    let b = grid_values(0.0137, DType::F64).unwrap();
    let w = grid_values(0.071, DType::F64).unwrap();
    let solve = jit(|a: &[Array]| {
        let (x, info) = cg_solve(&a[0])?;
        Ok(vec![x, info])
    });
    let out = solve.call(std::slice::from_ref(&b)).expect("cg runs");
    let r = (&laplacian(&out[..1]).unwrap()[0] - &b).unwrap();
    let norm2 = |x: &Array| {
        (x * x)
            .unwrap()
            .sum(Axes::All, false)
            .unwrap()
            .item::<f64>()
            .unwrap()
    };
    eprintln!(
        "cg_laplacian_256: info {} relative residual {:.2e}",
        out[1].item::<i32>().unwrap(),
        (norm2(&r) / norm2(&b)).sqrt()
    );
    g.bench_function("cg_laplacian_256/solve", |bch| {
        bch.iter(|| solve.call(std::slice::from_ref(&b)).unwrap())
    });
    let dloss = jit(grad(cg_loss, &[0]));
    g.bench_function("cg_laplacian_256/grad_b", |bch| {
        bch.iter(|| dloss.call(&[b.clone(), w.clone()]).unwrap())
    });

    let params = mlp_params(DType::F64).unwrap();
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
