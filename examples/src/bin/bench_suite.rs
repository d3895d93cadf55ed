//! The benchmark suite behind `cargo xtask bench`: each workload's compile time (a fresh
//! `jit`: trace, transform, compile, first run) and steady-state time (median of repeated
//! calls), in one dtype, printed as one JSON object per line. `benches/jax_suite.py` runs the
//! same workloads in JAX; `xtask bench --compare-jax` puts both in one table.
//!
//! `bench_suite --dtype f32|f64 [--quick] [--only ode|conv|mlx|gpu]` (threads: whatever the process may use; xtask pins
//! the one-thread runs with `taskset`).

use quabla::ad::{grad, hessian, hvp, jacfwd, value_and_grad};
use quabla::lax::{conv_general_dilated, fori_loop, scan, ConvOptions, Padding};
use quabla::ode::Gradient;
use quabla::optim::{adam, apply_updates};
use quabla::test_util::rosenbrock;
use quabla::{jit, vmap, Array, Axes, DType, Result};
use quabla_examples::ode_workloads::{
    lotka_volterra_sum, robertson_readout, LV_BOUNDS, LV_PARAMS, LV_SPANS,
};
use quabla_examples::pinn;
use quabla_examples::solver_problems::{
    cg_loss, cg_solve, grid_values, mlp_params, neural_ode, neural_ode_at_speed,
    neural_ode_checkpointed,
};
use std::time::Instant;

struct Run {
    name: String,
    dtype: DType,
    compile_ms: f64,
    steady_ms: f64,
    /// A throughput figure where the workload has one (GB/s, GFLOP/s).
    rate: Option<(f64, &'static str)>,
}

/// Times `f` on `args`: the first call of a fresh jit, then the median of `reps` calls.
fn time<F>(f: F, args: &[Array], reps: usize) -> Result<(f64, f64)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let j = jit(f);
    let t = Instant::now();
    let out = j.call(args)?;
    block(&out)?;
    let compile = t.elapsed().as_secs_f64() * 1e3;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        let out = j.call(args)?;
        block(&out)?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok((compile, times[times.len() / 2]))
}

/// Waits for the results without copying them, as JAX's `block_until_ready`.
fn block(out: &[Array]) -> Result<()> {
    out.iter().try_for_each(Array::block_until_ready)
}

fn data(shape: &[usize], scale: f64, dtype: DType) -> Result<Array> {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|i| ((i as f64) * 0.618).sin() * scale).collect();
    Array::from_slice(&v, shape)?.astype(dtype)
}

/// One Adam step of the PINN at `n` collocation points with the Laplacian written as
/// `formulation` (the Hessian's diagonal, or jvp of grad) says.
fn pinn_step(n: usize, formulation: Laplacian, dtype: DType, reps: usize) -> Result<Run> {
    let (inner, bnd) = pinn::points(n);
    let xs = Array::from_slice(&inner, &[n, 2])?.astype(dtype)?;
    let xb = Array::from_slice(&bnd, &[256, 2])?.astype(dtype)?;
    let params = pinn::init(0, dtype)?;
    let opt = adam(1e-3);
    let state = opt.init(&params)?;
    let (np, ns) = (params.len(), state.len());
    let step = move |a: &[Array]| -> Result<Vec<Array>> {
        let (p, s, pts) = (&a[..np], &a[np..np + ns], &a[np + ns..]);
        let vg = value_and_grad(formulation.loss(), &(0..np).collect::<Vec<_>>(), false);
        let mut args = p.to_vec();
        args.extend_from_slice(pts);
        let r = vg(&args)?;
        let (u, s) = opt.update(&r[1..], s, p)?;
        let mut out = apply_updates(p, &u)?;
        out.extend(s);
        out.push(r[0].clone());
        Ok(out)
    };
    let mut args = params;
    args.extend(state);
    args.push(xs);
    args.push(xb);
    let (c, s) = time(step, &args, reps)?;
    Ok(Run {
        name: format!("pinn_step{}_n{n}", formulation.row_suffix()),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: None,
    })
}

/// How the PINN's Laplacian is differentiated.
#[derive(Clone, Copy)]
enum Laplacian {
    /// `vmap(hessian)`, its diagonal read.
    Hessian,
    /// `vmap` of jvp of grad along each axis: JAX's fastest formulation.
    JvpOfGrad,
}

impl Laplacian {
    fn loss(self) -> fn(&[Array]) -> Result<Vec<Array>> {
        match self {
            Laplacian::Hessian => pinn::loss,
            Laplacian::JvpOfGrad => pinn::loss_jvp_of_grad,
        }
    }

    /// The row name's infix (`jax_suite.py` names its rows the same way).
    fn row_suffix(self) -> &'static str {
        match self {
            Laplacian::Hessian => "",
            Laplacian::JvpOfGrad => "_jvp_grad",
        }
    }
}

/// One elementwise op over 1e6 elements: what a single jitted op costs, call path included.
fn single_ops(dtype: DType, reps: usize) -> Result<Vec<Run>> {
    let n = 1_000_000;
    let x = data(&[n], 1.0, dtype)?;
    let y = data(&[n], 0.5, dtype)?;
    let size = if dtype == DType::F32 { 4.0 } else { 8.0 };
    let mut out = Vec::new();
    let mul = |a: &[Array]| Ok(vec![(&a[0] * &a[1])?]);
    let (c, s) = time(mul, &[x.clone(), y], reps)?;
    out.push(("mul_1e6", c, s, 3.0));
    let tanh = |a: &[Array]| Ok(vec![a[0].tanh()?]);
    let (c, s) = time(tanh, std::slice::from_ref(&x), reps)?;
    out.push(("tanh_1e6", c, s, 2.0));
    let exp = |a: &[Array]| Ok(vec![a[0].exp()?]);
    let (c, s) = time(exp, std::slice::from_ref(&x), reps)?;
    out.push(("exp_1e6", c, s, 2.0));
    Ok(out
        .into_iter()
        .map(|(name, c, s, arrays)| Run {
            name: name.into(),
            dtype,
            compile_ms: c,
            steady_ms: s,
            rate: Some((arrays * n as f64 * size / (s * 1e-3) / 1e9, "GB/s")),
        })
        .collect())
}

/// The gradient of a 32-128-128-1 tanh MLP's mean squared error over a batch of 1024.
fn mlp_batch_grad(dtype: DType, reps: usize) -> Result<Run> {
    let (b, sizes) = (1024, [(32, 128), (128, 128), (128, 1)]);
    let loss = |a: &[Array]| -> Result<Vec<Array>> {
        let (x, y) = (&a[6], &a[7]);
        let mut h = x.clone();
        for l in 0..3 {
            h = (h.matmul(&a[2 * l])? + &a[2 * l + 1])?;
            if l < 2 {
                h = h.tanh()?;
            }
        }
        let r = (&h.reshape(&[-1])? - y)?;
        Ok(vec![(&r * &r)?.mean(Axes::All, false)?])
    };
    let mut args = Vec::new();
    for (k, (fan_in, fan_out)) in sizes.into_iter().enumerate() {
        let scale = 1.0 / (fan_in as f64).sqrt();
        args.push(data(&[fan_in, fan_out], scale, dtype)?);
        args.push(data(&[fan_out], 0.1 * (k + 1) as f64, dtype)?);
    }
    args.push(data(&[b, 32], 1.0, dtype)?);
    args.push(data(&[b], 1.0, dtype)?);
    let (c, s) = time(grad(loss, &[0, 1, 2, 3, 4, 5]), &args, reps)?;
    Ok(Run {
        name: "mlp_batch_grad_b1024".into(),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: None,
    })
}

/// 50 elementwise ops over `n` elements (named by its power of ten, `..._1e6`).
fn elementwise_chain(n: usize, dtype: DType, reps: usize) -> Result<Run> {
    let chain = |a: &[Array]| -> Result<Vec<Array>> {
        let mut y = a[0].clone();
        for i in 0..50 {
            y = match i % 5 {
                0 => y.sin()?,
                1 => (&y * 1.0001)?,
                2 => (&y + 0.5)?,
                3 => y.tanh()?,
                _ => (&y - 0.25)?,
            };
        }
        Ok(vec![y])
    };
    let (c, s) = time(chain, &[data(&[n], 1.0, dtype)?], reps)?;
    let bytes = 2.0 * n as f64 * if dtype == DType::F32 { 4.0 } else { 8.0 };
    Ok(Run {
        name: format!("elementwise_chain50_1e{}", (n as f64).log10().round()),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: Some((bytes / (s * 1e-3) / 1e9, "GB/s")),
    })
}

fn matmul(n: usize, dtype: DType, reps: usize) -> Result<Run> {
    let mm = |a: &[Array]| Ok(vec![a[0].matmul(&a[1])?]);
    let args = [data(&[n, n], 1.0, dtype)?, data(&[n, n], 0.5, dtype)?];
    let (c, s) = time(mm, &args, reps)?;
    Ok(Run {
        name: format!("matmul_{n}"),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: Some((2.0 * (n as f64).powi(3) / (s * 1e-3) / 1e9, "GFLOP/s")),
    })
}

/// `a x = b` for an `n x n` SPD `a` (`x xᵀ / n + I`) through its Cholesky factor and two
/// triangular solves, summed: the factorization rows (`scipy.linalg.cho_solve` in JAX).
fn cholesky_solve(n: usize, dtype: DType, reps: usize) -> Result<Run> {
    cholesky_solve_batch(&[], n, dtype, reps)
}

/// `cholesky_solve` of `batch` matrices at once (a stiff solver's Newton systems, one per
/// trajectory of an ensemble), named `cholesky_solve_batch<B>_n<n>`.
fn cholesky_solve_batch(batch: &[usize], n: usize, dtype: DType, reps: usize) -> Result<Run> {
    let dims = |tail: &[usize]| [batch, tail].concat();
    let x = data(&dims(&[n, n]), 1.0, dtype)?;
    let r = batch.len();
    let a = ((&x.matmul(&x.transpose(&dims_swap(r))?)? / n as f64)? + &Array::eye(n, dtype)?)?;
    let solve = |v: &[Array]| -> Result<Vec<Array>> {
        let c = quabla::linalg::cholesky(&v[0])?;
        Ok(vec![
            quabla::linalg::cho_solve(&c, true, &v[1])?.sum(Axes::All, false)?
        ])
    };
    let (c, s) = time(solve, &[a, data(&dims(&[n, 8]), 1.0, dtype)?], reps)?;
    Ok(Run {
        name: match batch {
            [] => format!("cholesky_solve_{n}"),
            b => format!("cholesky_solve_batch{}_n{n}", b.iter().product::<usize>()),
        },
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: None,
    })
}

/// A batch of `batch` small symmetric (`x xᵀ / n + I`, as `cholesky_solve_batch`'s)
/// matrices' eigh and `n x n` SVD, `sum(w) + sum(|v|) + sum(s) + sum(|u|)`: the small
/// factorizations a GPU plugin runs as its own kernels, a block per matrix.
fn eigh_svd_batch(batch: usize, n: usize, dtype: DType, reps: usize) -> Result<Run> {
    let x = data(&[batch, n, n], 1.0, dtype)?;
    let a = ((&x.matmul(&x.transpose(&dims_swap(1))?)? / n as f64)? + &Array::eye(n, dtype)?)?;
    let both = |v: &[Array]| -> Result<Vec<Array>> {
        let (w, e) = quabla::linalg::eigh(&v[0])?;
        let quabla::linalg::Svd { u, s, .. } = quabla::linalg::svd(&v[1], false)?;
        let parts = [w, e.abs()?, s, u.abs()?];
        let mut total = parts[0].sum(Axes::All, false)?;
        for p in &parts[1..] {
            total = (&total + &p.sum(Axes::All, false)?)?;
        }
        Ok(vec![total])
    };
    let (c, s) = time(both, &[a, x], reps)?;
    Ok(Run {
        name: format!("eigh_svd_batch{batch}_n{n}"),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: None,
    })
}

/// The gradient of `sum(table[idx] * w)` in a `vocab x 64` table from `n` lookups (the
/// gather's transpose: a scatter-add of `n` rows, the CUDA plugin's by sorted keys).
fn embedding_grad(vocab: usize, n: usize, dtype: DType, reps: usize) -> Result<Run> {
    let idx: Vec<i32> = (0..n).map(|k| (k * 7919 % vocab) as i32).collect();
    let args = [
        data(&[vocab, 64], 1.0, dtype)?,
        Array::from_slice(&idx, &[n])?,
        data(&[n, 64], 0.5, dtype)?,
    ];
    let loss = |a: &[Array]| -> Result<Vec<Array>> {
        let rows = a[0].take(&a[1], 0)?;
        Ok(vec![(&rows * &a[2])?.sum(Axes::All, false)?])
    };
    let (c, s) = time(grad(loss, &[0]), &args, reps)?;
    Ok(Run {
        name: format!("embedding_grad_v{vocab}_n{n}_d64"),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: None,
    })
}

/// A sort of `n` elements (the CUDA plugin's merge sort past 256).
fn sort_row(n: usize, dtype: DType, reps: usize) -> Result<Run> {
    let sorted = |a: &[Array]| -> Result<Vec<Array>> { Ok(vec![a[0].sort(0, false)?]) };
    let (c, s) = time(sorted, &[data(&[n], 1.0, dtype)?], reps)?;
    Ok(Run {
        name: format!("sort_{n}"),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: None,
    })
}

/// A scan of `steps` steps over a state of `n` elements (`h <- 0.999 h + 0.001 sin h`)
/// storing every state (its `ys`, `steps x n`), their sum: what a stored trajectory costs
/// where the state is too large for the loop to run as one block.
fn scan_trajectory(steps: usize, n: usize, dtype: DType, reps: usize) -> Result<Run> {
    let trajectory = move |a: &[Array]| -> Result<Vec<Array>> {
        let step = |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            let h = (&(&c[0] * 0.999)? + &(&c[0].sin()? * 0.001)?)?;
            Ok((vec![h.clone()], vec![h]))
        };
        let (_, ys) = scan(&step, &a[..1], &[], Some(steps), false, 1)?;
        Ok(vec![ys[0].sum(Axes::All, false)?])
    };
    let (c, s) = time(trajectory, &[data(&[n], 1.0, dtype)?], reps)?;
    Ok(run(format!("scan_trajectory_{steps}x{n}"), dtype, c, s))
}

/// The axes of a rank `r + 2` array with its last two swapped.
fn dims_swap(r: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..r + 2).collect();
    p.swap(r, r + 1);
    p
}

/// A 3x3 `SAME` convolution of a 64-channel 128x128 image (NCHW, OIHW), forward, and the
/// gradient of the sum of its squares in both operands.
fn conv_rows(dtype: DType, reps: usize) -> Result<Vec<Run>> {
    let conv = |a: &[Array]| -> Result<Array> {
        let mut o = ConvOptions::new(2);
        o.padding = Padding::Same;
        conv_general_dilated(&a[0], &a[1], &o)
    };
    let args = [
        data(&[1, 64, 128, 128], 1.0, dtype)?,
        data(&[64, 64, 3, 3], 1.0 / 24.0, dtype)?,
    ];
    let flops = 2.0 * 64.0 * 64.0 * 9.0 * 128.0 * 128.0;
    let (c, s) = time(|a: &[Array]| Ok(vec![conv(a)?]), &args, reps)?;
    let forward = Run {
        name: "conv2d_3x3_c64_128x128".into(),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: Some((flops / (s * 1e-3) / 1e9, "GFLOP/s")),
    };
    let loss = move |a: &[Array]| -> Result<Vec<Array>> {
        let y = conv(a)?;
        Ok(vec![(&y * &y)?.sum(Axes::All, false)?])
    };
    let (c, s) = time(grad(loss, &[0, 1]), &args, reps)?;
    let backward = Run {
        name: "conv2d_3x3_c64_128x128_grad".into(),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: Some((3.0 * flops / (s * 1e-3) / 1e9, "GFLOP/s")),
    };
    Ok(vec![forward, backward])
}

/// Per-example gradients of a 2-64-64-64-1 MLP's squared error over a batch of 1024.
fn per_example_grads(dtype: DType, reps: usize) -> Result<Run> {
    let b = 1024;
    let np = pinn::NUM_PARAMS;
    let f = move |a: &[Array]| -> Result<Vec<Array>> {
        let (p, x, y) = (&a[..np], &a[np], &a[np + 1]);
        let idx: Vec<usize> = (0..np).collect();
        // The gradient w.r.t. the (shared) parameters for one example.
        let g = |e: &[Array]| -> Result<Vec<Array>> {
            let loss = |q: &[Array]| -> Result<Vec<Array>> {
                let r = (&pinn::mlp(q, &e[0].reshape(&[1, 2])?)?.reshape(&[])? - &e[1])?;
                Ok(vec![(&r * &r)?])
            };
            grad(loss, &idx)(p)
        };
        let batched = vmap(g, &[Some(0), Some(0)], &[]);
        // Bound first: a temporary in the tail expression would outlive `g`'s captures.
        #[allow(clippy::let_and_return)]
        let out = batched(&[x.clone(), y.clone()]);
        out
    };
    let mut args = pinn::init(1, dtype)?;
    args.push(data(&[b, 2], 1.0, dtype)?);
    args.push(data(&[b], 1.0, dtype)?);
    let (c, s) = time(f, &args, reps)?;
    Ok(Run {
        name: "per_example_grads_mlp_b1024".into(),
        dtype,
        compile_ms: c,
        steady_ms: s,
        rate: None,
    })
}

/// A 64-unit tanh RNN scanned over 10,000 inputs of 8, its final state summed.
fn rnn(a: &[Array]) -> Result<Vec<Array>> {
    let (w, u) = (&a[0], &a[1]);
    let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        let h = (w.matmul(&c[0])? + &u.matmul(&x[0])?)?.tanh()?;
        Ok((vec![h], vec![]))
    };
    let (h, _) = scan(&step, &a[2..3], &a[3..4], None, false, 1)?;
    Ok(vec![h[0].sum(Axes::All, false)?])
}

fn rnn_args(dtype: DType) -> Result<[Array; 4]> {
    Ok([
        data(&[64, 64], 0.1, dtype)?,
        data(&[64, 8], 0.1, dtype)?,
        data(&[64], 0.0, dtype)?,
        data(&[10_000, 8], 1.0, dtype)?,
    ])
}

fn loops(dtype: DType, reps: usize) -> Result<Vec<Run>> {
    let fori = |a: &[Array]| -> Result<Vec<Array>> {
        let body = |_: &Array, c: &[Array]| Ok(vec![(&(&c[0] * 0.999)? + &a[1])?]);
        fori_loop(0, 10_000, &body, &a[..1])
    };
    let fargs = [data(&[], 1.0, dtype)?, data(&[], 0.001, dtype)?];
    let rargs = rnn_args(dtype)?;
    let mut out = Vec::new();
    for (name, (c, s)) in [
        ("fori_10k_scalar", time(fori, &fargs, reps)?),
        (
            "fori_10k_scalar_grad",
            time(grad(fori, &[0, 1]), &fargs, reps)?,
        ),
        ("scan_10k_rnn64", time(rnn, &rargs, reps)?),
        (
            "scan_10k_rnn64_grad",
            time(grad(rnn, &[0, 1]), &rargs, reps.min(5))?,
        ),
    ] {
        out.push(Run {
            name: name.into(),
            dtype,
            compile_ms: c,
            steady_ms: s,
            rate: None,
        });
    }
    Ok(out)
}

fn second_order(dtype: DType, reps: usize) -> Result<Vec<Run>> {
    let h = hessian(rosenbrock, &[0]);
    let (c1, s1) = time(h, &[data(&[100], 1.0, dtype)?], reps)?;
    let hv = |a: &[Array]| hvp(rosenbrock, &a[..1], &a[1..]);
    let (c2, s2) = time(
        hv,
        &[data(&[1000], 1.0, dtype)?, data(&[1000], 0.3, dtype)?],
        reps,
    )?;
    Ok(vec![
        Run {
            name: "hessian_rosenbrock_n100".into(),
            dtype,
            compile_ms: c1,
            steady_ms: s1,
            rate: None,
        },
        Run {
            name: "hvp_rosenbrock_n1000".into(),
            dtype,
            compile_ms: c2,
            steady_ms: s2,
            rate: None,
        },
    ])
}

/// CG on the 256x256 Laplacian and its gradient in `b`.
fn solvers(dtype: DType, reps: usize) -> Result<Vec<Run>> {
    let (b, w) = (grid_values(0.0137, dtype)?, grid_values(0.071, dtype)?);
    let solve = |a: &[Array]| Ok(vec![cg_solve(&a[0])?.0]);
    let r = reps.min(3);
    let (c1, s1) = time(solve, std::slice::from_ref(&b), r)?;
    let (c2, s2) = time(grad(cg_loss, &[0]), &[b, w], r)?;
    Ok(vec![
        run("cg_laplacian256".into(), dtype, c1, s1),
        run("cg_laplacian256_grad_b".into(), dtype, c2, s2),
    ])
}

fn run(name: String, dtype: DType, compile_ms: f64, steady_ms: f64) -> Run {
    Run {
        name,
        dtype,
        compile_ms,
        steady_ms,
        rate: None,
    }
}

/// The ODE rows (`quabla_examples::ode_workloads`): the neural ODE forward, its adjoint and
/// direct gradients, at speed 1 and 10; in f64, Lotka-Volterra forward and direct gradient
/// at about 5, 50 and 500 steps under two bounds, and Robertson by rosenbrock23.
/// `odeint`'s `checkpoints` values with rows of their own (`benches/jax_ode_rows.py` lists
/// the same).
const NEURAL_ODE_CHECKPOINTS: [usize; 4] = [4, 8, 64, 4107];

fn ode_rows(dtype: DType, reps: usize) -> Result<Vec<Run>> {
    let mut rows = Vec::new();
    let params = mlp_params(dtype)?;
    let all: Vec<usize> = (0..params.len()).collect();
    for (speed, tag) in [(1.0, ""), (10.0, "_x10")] {
        let forward = move |a: &[Array]| -> Result<Vec<Array>> {
            Ok(vec![neural_ode_at_speed(a, Gradient::ForwardOnly, speed)?])
        };
        let (c, s) = time(forward, &params, reps)?;
        rows.push(run(format!("neural_ode_mlp64{tag}"), dtype, c, s));
        if speed == 1.0 {
            let adjoint = |a: &[Array]| Ok(vec![neural_ode(a, Gradient::Adjoint)?]);
            let (c, s) = time(grad(adjoint, &all), &params, reps)?;
            rows.push(run("neural_ode_mlp64_grad_adjoint".into(), dtype, c, s));
        }
        let direct = move |a: &[Array]| -> Result<Vec<Array>> {
            Ok(vec![neural_ode_at_speed(a, Gradient::Direct, speed)?])
        };
        let (c, s) = time(grad(direct, &all), &params, reps)?;
        rows.push(run(
            format!("neural_ode_mlp64{tag}_grad_direct_vs_diffrax"),
            dtype,
            c,
            s,
        ));
    }
    // The direct gradient's memory/recomputation knob: 4, 8 or 64 solver states kept (the
    // binomial schedule; the default keeps about 130, two levels of 65), and 4,107 =
    // max_steps + len(t) (every iteration's state kept).
    for k in NEURAL_ODE_CHECKPOINTS {
        let direct =
            move |a: &[Array]| -> Result<Vec<Array>> { Ok(vec![neural_ode_checkpointed(a, k)?]) };
        let (c, s) = time(grad(direct, &all), &params, reps)?;
        let name = format!("neural_ode_mlp64_grad_direct_checkpoints{k}_vs_diffrax");
        rows.push(run(name, dtype, c, s));
    }
    if dtype != DType::F64 {
        return Ok(rows);
    }
    let lv = Array::from_slice(&LV_PARAMS, &[4])?;
    for (t_end, steps) in LV_SPANS {
        for bound in LV_BOUNDS {
            let name = format!("lv_{steps}steps_max{bound}");
            let solve = move |a: &[Array]| -> Result<Vec<Array>> {
                Ok(vec![lotka_volterra_sum(
                    &a[0],
                    t_end,
                    bound,
                    Gradient::Direct,
                )?])
            };
            let (c, s) = time(solve, std::slice::from_ref(&lv), reps)?;
            rows.push(run(name.clone(), dtype, c, s));
            let (c, s) = time(grad(solve, &[0]), std::slice::from_ref(&lv), reps)?;
            rows.push(run(format!("{name}_grad_vs_diffrax"), dtype, c, s));
        }
        // Forward mode: the Jacobian of the end state's sum by columns.
        let solve = move |a: &[Array]| -> Result<Vec<Array>> {
            Ok(vec![lotka_volterra_sum(
                &a[0],
                t_end,
                4096,
                Gradient::Direct,
            )?])
        };
        let (c, s) = time(jacfwd(solve, &[0]), std::slice::from_ref(&lv), reps)?;
        let name = format!("lv_{steps}steps_jacfwd_vs_diffrax_forward");
        rows.push(run(name, dtype, c, s));
    }
    let rates = Array::from_slice(&[1.0f64, 1.0, 1.0], &[3])?;
    let robertson = |a: &[Array]| -> Result<Vec<Array>> { Ok(vec![robertson_readout(&a[0])?]) };
    let (c, s) = time(robertson, std::slice::from_ref(&rates), reps)?;
    rows.push(run(
        "robertson_rosenbrock23_vs_kvaerno5".into(),
        dtype,
        c,
        s,
    ));
    let (c, s) = time(grad(robertson, &[0]), std::slice::from_ref(&rates), reps)?;
    rows.push(run(
        "robertson_rosenbrock23_grad_vs_kvaerno5".into(),
        dtype,
        c,
        s,
    ));
    Ok(rows)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let dtype = match args
        .iter()
        .position(|a| a == "--dtype")
        .and_then(|i| args.get(i + 1))
    {
        Some(d) if d == "f64" => DType::F64,
        _ => DType::F32,
    };
    let quick = args.iter().any(|a| a == "--quick");
    let only_ode = args.windows(2).any(|w| w[0] == "--only" && w[1] == "ode");
    let only_conv = args.windows(2).any(|w| w[0] == "--only" && w[1] == "conv");
    let only_mlx = args.windows(2).any(|w| w[0] == "--only" && w[1] == "mlx");
    let reps = if quick { 3 } else { 15 };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut runs = Vec::new();
    if only_ode {
        runs.extend(ode_rows(dtype, reps)?);
        print_rows(runs, threads);
        return Ok(());
    }
    if only_mlx {
        // The MLX plugin's rows (`benches/mlx_suite.py` is their anchor), on the default
        // device: xtask selects the plugin with QUABLA_PLATFORMS.
        runs.push(pinn_step(1024, Laplacian::JvpOfGrad, dtype, reps)?);
        runs.push(elementwise_chain(1_000_000, dtype, reps)?);
        runs.push(matmul(1024, dtype, reps)?);
        print_rows(runs, threads);
        return Ok(());
    }
    if args.windows(2).any(|w| w[0] == "--only" && w[1] == "gpu") {
        return gpu_rows(dtype, threads);
    }
    if only_conv {
        runs.extend(conv_rows(dtype, reps)?);
        print_rows(runs, threads);
        return Ok(());
    }
    for formulation in [Laplacian::Hessian, Laplacian::JvpOfGrad] {
        runs.push(pinn_step(1024, formulation, dtype, reps)?);
        if !quick {
            runs.push(pinn_step(16384, formulation, dtype, 3)?);
        }
    }
    runs.extend(single_ops(dtype, reps)?);
    runs.push(elementwise_chain(1_000_000, dtype, reps)?);
    runs.push(matmul(1024, dtype, reps)?);
    runs.extend(conv_rows(dtype, reps)?);
    runs.push(per_example_grads(dtype, reps)?);
    runs.push(mlp_batch_grad(dtype, reps)?);
    runs.extend(loops(dtype, reps)?);
    runs.extend(second_order(dtype, reps)?);
    runs.extend(solvers(dtype, reps)?);
    runs.extend(ode_rows(dtype, reps)?);
    print_rows(runs, threads);
    Ok(())
}

/// A set of rows measured in one dtype with a repetition count.
type RowsOf = fn(DType, usize) -> Result<Vec<Run>>;

/// The accelerator rows (`jax_suite.py --only gpu` names its rows the same),
/// on the default device (xtask or the caller selects the plugin with QUABLA_PLATFORMS),
/// each printed as soon as it is measured so that a run cut short still reports.
fn gpu_rows(dtype: DType, threads: usize) -> Result<()> {
    let reps = 5;
    let rows: [(&str, RowsOf); 13] = [
        ("pinn_step_jvp_grad_n1024", |d, r| {
            Ok(vec![pinn_step(1024, Laplacian::JvpOfGrad, d, r)?])
        }),
        ("pinn_step_jvp_grad_n16384", |d, r| {
            Ok(vec![pinn_step(16384, Laplacian::JvpOfGrad, d, r)?])
        }),
        ("matmul_4096", |d, r| Ok(vec![matmul(4096, d, r)?])),
        ("cholesky_solve_2048", |d, r| {
            Ok(vec![cholesky_solve(2048, d, r)?])
        }),
        ("elementwise_chain50_1e7", |d, r| {
            Ok(vec![elementwise_chain(10_000_000, d, r)?])
        }),
        ("scan_10k_rnn64", |d, r| {
            let (c, s) = time(rnn, &rnn_args(d)?, r)?;
            Ok(vec![run("scan_10k_rnn64".into(), d, c, s)])
        }),
        ("neural_ode_mlp64", |d, r| {
            let params = mlp_params(d)?;
            let forward = |a: &[Array]| -> Result<Vec<Array>> {
                Ok(vec![neural_ode_at_speed(a, Gradient::ForwardOnly, 1.0)?])
            };
            let (c, s) = time(forward, &params, r)?;
            Ok(vec![run("neural_ode_mlp64".into(), d, c, s)])
        }),
        ("neural_ode_mlp64_grad_direct_vs_diffrax", |d, r| {
            let params = mlp_params(d)?;
            let all: Vec<usize> = (0..params.len()).collect();
            let direct = |a: &[Array]| -> Result<Vec<Array>> {
                Ok(vec![neural_ode_at_speed(a, Gradient::Direct, 1.0)?])
            };
            let (c, s) = time(grad(direct, &all), &params, r)?;
            Ok(vec![run(
                "neural_ode_mlp64_grad_direct_vs_diffrax".into(),
                d,
                c,
                s,
            )])
        }),
        // Rows beyond the list last, so that a run cut short keeps those.
        ("cholesky_solve_batch4096_n16", |d, r| {
            Ok(vec![cholesky_solve_batch(&[4096], 16, d, r)?])
        }),
        ("eigh_svd_batch4096_n16", |d, r| {
            Ok(vec![eigh_svd_batch(4096, 16, d, r)?])
        }),
        ("embedding_grad_v10000_n100000_d64", |d, r| {
            Ok(vec![embedding_grad(10_000, 100_000, d, r)?])
        }),
        ("sort_1000000", |d, r| Ok(vec![sort_row(1_000_000, d, r)?])),
        ("scan_trajectory_1000x65536", |d, r| {
            Ok(vec![scan_trajectory(1000, 65_536, d, r)?])
        }),
    ];
    // QUABLA_BENCH_ROWS (substrings of the rows' names, the names they print, `|` between
    // alternatives, as jax_suite.py matches them) picks rows, to spend a short GPU loan on the ones that changed.
    let only = std::env::var("QUABLA_BENCH_ROWS").unwrap_or_default();
    for (name, row) in rows {
        if !only.split('|').any(|o| name.contains(o)) {
            continue;
        }
        // One failing row is reported and the rest still run.
        match row(dtype, reps) {
            Ok(runs) => print_rows(runs, threads),
            Err(e) => eprintln!("bench row `{name}` failed: {e}"),
        }
    }
    Ok(())
}

fn print_rows(runs: Vec<Run>, threads: usize) {
    for r in runs {
        let rate = r
            .rate
            .map(|(v, u)| format!(", \"rate\": {v:.3}, \"rate_unit\": \"{u}\""))
            .unwrap_or_default();
        println!(
            "{{\"system\": \"quabla\", \"name\": \"{}\", \"dtype\": \"{}\", \"threads\": {threads}, \"compile_ms\": {:.3}, \"steady_ms\": {:.4}{rate}}}",
            r.name,
            r.dtype.name(),
            r.compile_ms,
            r.steady_ms
        );
    }
}
