//! Loop benchmarks (issue: control flow): a 10,000-iteration `fori_loop` with a scalar body
//! and a 10,000-step `scan` of a 64-dim tanh RNN cell, forward and gradient; `compile` is a
//! fresh `jit` (trace, transform, compile, first run), `steady` a call of the compiled loop.
//!
//! Run: `cargo bench -p quabla --bench loops`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use quabla::ad::grad;
use quabla::lax::{fori_loop, scan};
use quabla::{jit, Array, Axes, Result};

fn fori(a: &[Array]) -> Result<Vec<Array>> {
    let body = |_: &Array, c: &[Array]| Ok(vec![(&(&c[0] * 0.999)? + &a[1])?]);
    fori_loop(0, 10_000, &body, &a[..1])
}

fn rnn(a: &[Array]) -> Result<Vec<Array>> {
    let (w, u) = (&a[0], &a[1]);
    let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        let h = (w.matmul(&c[0])? + &u.matmul(&x[0])?)?.tanh()?;
        Ok((vec![h], vec![]))
    };
    let (h, _) = scan(&step, &a[2..3], &a[3..4], None, false, 1)?;
    Ok(vec![h[0].sum(Axes::All, false)?])
}

fn data(shape: &[usize], scale: f32) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((i as f32) * 0.618).sin() * scale).collect();
    Array::from_slice(&v, shape).unwrap()
}

fn bench(c: &mut Criterion) {
    quabla::runtime::register_static("cpu", quabla_cpu::backend_module);
    let mut g = c.benchmark_group("loops");
    g.sample_size(10);
    let args = [data(&[], 1.0), data(&[], 0.001)];
    g.bench_function("fori_10k_scalar/compile", |b| {
        b.iter_batched(
            || jit(fori),
            |f| f.call(&args).unwrap(),
            BatchSize::PerIteration,
        )
    });
    let f = jit(fori);
    f.call(&args).unwrap();
    g.bench_function("fori_10k_scalar/steady", |b| {
        b.iter(|| f.call(&args).unwrap())
    });
    let gf = jit(grad(fori, &[0, 1]));
    gf.call(&args).unwrap();
    g.bench_function("fori_10k_scalar_grad/steady", |b| {
        b.iter(|| gf.call(&args).unwrap())
    });

    let rargs = [
        data(&[64, 64], 0.1),
        data(&[64, 8], 0.1),
        data(&[64], 0.0),
        data(&[10_000, 8], 1.0),
    ];
    g.bench_function("scan_10k_rnn64/compile", |b| {
        b.iter_batched(
            || jit(rnn),
            |f| f.call(&rargs).unwrap(),
            BatchSize::PerIteration,
        )
    });
    let r = jit(rnn);
    r.call(&rargs).unwrap();
    g.bench_function("scan_10k_rnn64/steady", |b| {
        b.iter(|| r.call(&rargs).unwrap())
    });
    let rg = jit(grad(rnn, &[0, 1]));
    rg.call(&rargs).unwrap();
    g.bench_function("scan_10k_rnn64_grad/steady", |b| {
        b.iter(|| rg.call(&rargs).unwrap())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
