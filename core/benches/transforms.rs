//! Transformation benchmarks (issue: transformations): the Hessian and an HVP of the
//! 1000-dimensional Rosenbrock function, and per-example gradients of an MLP
//! 32 -> 128 -> 128 -> 1 over a batch of 1024 with `vmap(grad)`. Each is measured twice:
//! `compile` is tracing + transforming + compiling + the first run (a fresh `jit`);
//! `steady` is a call of the compiled program.
//!
//! Run: `cargo bench -p quabla --bench transforms`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use quabla::ad::{grad, hessian, hvp};
use quabla::test_util::rosenbrock;
use quabla::{jit, vmap, Array, Axes, Result};
use std::sync::Arc;

fn cpu() -> Arc<quabla::Device> {
    quabla::runtime::register_static("cpu", quabla_cpu::backend_module);
    quabla::device("cpu").expect("the CPU backend loads")
}

fn mlp_loss(a: &[Array]) -> Result<Vec<Array>> {
    let (w1, w2, w3, x, y) = (&a[0], &a[1], &a[2], &a[3], &a[4]);
    let h = x.matmul(w1)?.tanh()?;
    let h = h.matmul(w2)?.tanh()?;
    let d = (h.matmul(w3)? - y)?;
    Ok(vec![(&d * &d)?.sum(Axes::All, false)?])
}

fn data(dev: &Arc<quabla::Device>, shape: &[usize], scale: f32, seed: u32) -> Array {
    let n: usize = shape.iter().product();
    let mut s = seed;
    let v: Vec<f32> = (0..n)
        .map(|_| {
            s = s.wrapping_mul(1664525).wrapping_add(1013904223);
            ((s >> 8) as f32 / (1 << 24) as f32 - 0.5) * scale
        })
        .collect();
    Array::from_slice_on(dev, &v, shape).unwrap()
}

fn bench(c: &mut Criterion) {
    let dev = cpu();
    let n = 1000;
    let xs: Vec<f64> = (0..n)
        .map(|i| 1.0 + 0.5 * ((i as f64) * 0.7).sin())
        .collect();
    let x = Array::from_slice_on(&dev, &xs, &[n]).unwrap();
    let v = Array::from_slice_on(&dev, &vec![0.5f64; n], &[n]).unwrap();
    let mut g = c.benchmark_group("rosenbrock_1000");
    g.sample_size(10);
    g.bench_function("hessian/compile", |b| {
        b.iter_batched(
            || jit(hessian(rosenbrock, &[0])),
            |h| h.call(std::slice::from_ref(&x)).unwrap(),
            BatchSize::PerIteration,
        )
    });
    let h = jit(hessian(rosenbrock, &[0]));
    h.call(std::slice::from_ref(&x)).unwrap();
    g.bench_function("hessian/steady", |b| {
        b.iter(|| h.call(std::slice::from_ref(&x)).unwrap())
    });
    let hv = |a: &[Array]| hvp(rosenbrock, &a[..1], &a[1..]);
    g.bench_function("hvp/compile", |b| {
        b.iter_batched(
            || jit(hv),
            |f| f.call(&[x.clone(), v.clone()]).unwrap(),
            BatchSize::PerIteration,
        )
    });
    let f = jit(hv);
    f.call(&[x.clone(), v.clone()]).unwrap();
    g.bench_function("hvp/steady", |b| {
        b.iter(|| f.call(&[x.clone(), v.clone()]).unwrap())
    });
    g.finish();

    let params = [
        data(&dev, &[32, 128], 0.3, 1),
        data(&dev, &[128, 128], 0.15, 2),
        data(&dev, &[128, 1], 0.15, 3),
    ];
    let batch = [
        data(&dev, &[1024, 32], 2.0, 4),
        data(&dev, &[1024, 1], 2.0, 5),
    ];
    let args: Vec<Array> = params.iter().chain(&batch).cloned().collect();
    let per_example = || {
        vmap(
            grad(mlp_loss, &[0, 1, 2]),
            &[None, None, None, Some(0), Some(0)],
            &[],
        )
    };
    let mut g = c.benchmark_group("per_example_grads_mlp_1024");
    g.sample_size(10);
    g.bench_function("compile", |b| {
        b.iter_batched(
            || jit(per_example()),
            |f| f.call(&args).unwrap(),
            BatchSize::PerIteration,
        )
    });
    let f = jit(per_example());
    f.call(&args).unwrap();
    g.bench_function("steady", |b| b.iter(|| f.call(&args).unwrap()));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
