//! The PINN main job: the 2D Poisson problem -(u_xx + u_yy) = 2 pi^2 sin(pi x) sin(pi y) on
//! [0, 1]^2 with u = 0 on the boundary, solved by an MLP 2 -> 64 -> 64 -> 64 -> 1 (tanh)
//! trained with Adam (lr 1e-3) in f32. The Laplacian is forward-over-reverse AD per
//! collocation point (`vmap` of `hessian`). Prints progress, the final loss and the
//! relative L2 error against sin(pi x) sin(pi y) on a 101 x 101 grid, and writes
//! `out/pinn_poisson.png`: the prediction and the pointwise error on the unit square (axes,
//! colour bars, the error's maximum in its title) and the training loss on a log scale.
//!
//! `--lbfgs K` refines with K L-BFGS steps after Adam (strong Wolfe line search).
//! `--device NAME` trains on that platform's device (e.g. `mlx`, with its plugin on
//! `QUABLA_PLUGIN_PATH`) instead of the default one.
//! `--data-parallel`, started under `mpirun -np R` (with the MPI plugin on
//! `QUABLA_PLUGIN_PATH`), gives each rank 1/R of the collocation and boundary points and
//! averages the gradients across ranks: every rank takes the full batch's Adam step. Rank 0
//! prints and writes the figure.
//!
//! `cargo run --release -p quabla-examples --bin pinn_poisson -- [--steps 2000] [--n 1024]
//! [--lbfgs 0] [--device cpu] [--data-parallel]` (with the CPU plugin on QUABLA_PLUGIN_PATH; `cargo xtask main` does both).

use quabla::optim::{adam, Lbfgs, Trainer};
use quabla::{default_device, device, distributed, jit, Array, DType, Error, Result};
use quabla_examples::arg;
use quabla_examples::figure::{write_figure, Field, LossCurve};
use quabla_examples::pinn::{self, init, mlp, points};
use std::f64::consts::PI;
use std::time::Instant;

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let (steps, n, lbfgs_steps) = (
        arg("--steps", 2000usize),
        arg("--n", 1024usize),
        arg("--lbfgs", 0usize),
    );
    let platform = arg("--device", String::new());
    let data_parallel = std::env::args().any(|a| a == "--data-parallel");
    let comm = if data_parallel {
        if lbfgs_steps > 0 {
            return Err(Error::value(
                "--lbfgs runs its line search inside one compiled program, where gradients \
                 cannot be averaged across ranks; leave it out with --data-parallel",
            )
            .into());
        }
        Some(distributed::initialize()?)
    } else {
        None
    };
    let (rank, ranks) = comm.as_ref().map_or((0, 1), |c| (c.rank(), c.world_size()));
    // Rank 0 speaks for the job.
    let say = |line: String| {
        if rank == 0 {
            println!("{line}");
        }
    };
    let dev = if platform.is_empty() {
        default_device()?
    } else {
        device(&platform)?
    };
    // Arrays are made on the default device; the training data and parameters move once.
    let on_dev = |a: Array| -> Result<Array> {
        if a.device().platform() == dev.platform() {
            Ok(a)
        } else {
            Array::from_host_on(&dev, &a.to_host()?)
        }
    };
    say(format!("PINN Poisson on `{}`: {n} collocation points, 256 boundary points, {steps} Adam steps (f32){}", dev.platform(),
        if ranks > 1 { format!(", data-parallel on {ranks} ranks") } else { String::new() }));
    let (inner, bnd) = points(n);
    let xs = on_dev(Array::from_slice(&inner, &[n, 2])?)?;
    let xb = on_dev(Array::from_slice(&bnd, &[256, 2])?)?;
    let shard = |a: &Array| -> Result<Array> {
        let rows = a.shape()[0];
        if !rows.is_multiple_of(ranks) {
            return Err(Error::value(format!(
                "{rows} points do not split evenly among {ranks} ranks; pick --n (and a rank \
                 count dividing 256) so that they do"
            )));
        }
        let k = rows / ranks;
        a.slice(&[rank * k, 0], &[(rank + 1) * k, 2], &[1, 1])
    };
    let params = init(0, DType::F32)?
        .into_iter()
        .map(on_dev)
        .collect::<Result<Vec<_>>>()?;
    let np = params.len();

    let loss = std::sync::Arc::new(pinn::loss);
    // One compiled program per step (loss, gradient, Adam update); the parameters and the
    // optimizer state stay on the device between steps.
    let adam_loss = loss.clone();
    let mut trainer = match &comm {
        Some(c) => Trainer::data_parallel(
            move |a: &[Array]| adam_loss(a),
            params,
            adam(1e-3),
            c.clone(),
        )?,
        None => Trainer::new(move |a: &[Array]| adam_loss(a), params, adam(1e-3))?,
    };
    let batch = if comm.is_some() {
        [shard(&xs)?, shard(&xb)?]
    } else {
        [xs, xb]
    };
    let start = Instant::now();
    // The loss every 10 steps (each read waits for the step), for the figure.
    let mut adam_losses: Vec<(usize, f64)> = Vec::new();
    for k in 0..steps {
        trainer.step(&batch)?;
        if k % 10 == 0 || k + 1 == steps {
            adam_losses.push((k + 1, trainer.loss()?));
        }
        if k == 0 || (k + 1) % 200 == 0 || k + 1 == steps {
            let rate = (k + 1) as f64 / start.elapsed().as_secs_f64();
            say(format!(
                "step {:>5}  loss {:.6e}  {rate:.1} steps/s",
                k + 1,
                trainer.loss()?
            ));
        }
    }
    let mut last = trainer.loss()?;
    let mut p = trainer.params().to_vec();
    let mut lbfgs_losses: Vec<(usize, f64)> = Vec::new();
    if lbfgs_steps > 0 {
        // One compiled L-BFGS step: parameters, optimizer state and the points in, the same
        // out (plus the loss); its line search is a while loop inside the program.
        let opt = Lbfgs::default();
        let o = opt.clone();
        let step = jit(move |a: &[Array]| {
            let (params, state, pts) = (&a[..np], &a[np..np + 4], &a[np + 4..]);
            let f = |q: &[Array]| -> Result<Array> {
                let mut v = q.to_vec();
                v.extend_from_slice(pts);
                Ok(loss(&v)?.remove(0))
            };
            let s = o.step(&f, params, state)?;
            let mut out = s.params;
            out.extend(s.state);
            out.push(s.value);
            Ok(out)
        });
        let mut args: Vec<Array> = p.iter().cloned().chain(opt.init(&p)?).collect();
        args.extend_from_slice(&batch);
        let t = Instant::now();
        for k in 0..lbfgs_steps {
            let mut out = step.call(&args)?;
            let value = out.pop().expect("the step returns its loss");
            last = value.item::<f32>()? as f64;
            lbfgs_losses.push((steps + k + 1, last));
            if k == 0 || (k + 1) % 100 == 0 || k + 1 == lbfgs_steps {
                let rate = (k + 1) as f64 / t.elapsed().as_secs_f64();
                println!("lbfgs {:>5}  loss {last:.6e}  {rate:.1} steps/s", k + 1);
            }
            out.extend_from_slice(&batch);
            args = out;
        }
        p = args[..np].to_vec();
    }
    // Relative L2 error on a 101 x 101 grid.
    let g: Vec<f32> = (0..101 * 101)
        .flat_map(|i| [(i / 101) as f32 / 100.0, (i % 101) as f32 / 100.0])
        .collect();
    let pred = mlp(&p, &on_dev(Array::from_slice(&g, &[101 * 101, 2])?)?)?.to_vec::<f32>()?;
    let (mut num, mut den) = (0.0f64, 0.0f64);
    let mut err = Vec::with_capacity(pred.len());
    for (i, u) in pred.iter().enumerate() {
        let (x, y) = (g[2 * i] as f64, g[2 * i + 1] as f64);
        let exact = (PI * x).sin() * (PI * y).sin();
        num += (*u as f64 - exact).powi(2);
        den += exact * exact;
        err.push((*u as f64 - exact).abs());
    }
    if rank != 0 {
        return Ok(());
    }
    std::fs::create_dir_all("out")?;
    let u: Vec<f64> = pred.iter().map(|&v| v as f64).collect();
    let max_err = err.iter().copied().fold(0.0f64, f64::max);
    let mut curves = vec![LossCurve {
        label: "Adam",
        points: &adam_losses,
    }];
    if !lbfgs_losses.is_empty() {
        curves.push(LossCurve {
            label: "L-BFGS",
            points: &lbfgs_losses,
        });
    }
    let prediction = Field {
        title: "Prediction u(x, y)".into(),
        values: &u,
        side: 101,
        magnitude: false,
    };
    let error = Field {
        title: format!("Pointwise error |u - u*| (max {max_err:.2e})"),
        values: &err,
        side: 101,
        magnitude: true,
    };
    write_figure("out/pinn_poisson.png", [&prediction, &error], &curves)?;
    println!(
        "final loss {last:.6e}; relative L2 error {:.3e}; {:.1} s",
        (num / den).sqrt(),
        start.elapsed().as_secs_f64()
    );
    println!("wrote out/pinn_poisson.png (prediction | pointwise error | training loss)");
    Ok(())
}
