//! The data-parallel PINN step (issue 23's bench): one Adam step of the PINN at `--n`
//! collocation points (jvp-of-grad Laplacian, f32), sharded over the ranks of `mpirun`, timed
//! in its three parts: loss and gradient on this rank's shard (one compiled program), the
//! average across ranks (the collective), and the Adam update (one compiled program). Rank 0
//! prints one JSON object per line; `cargo xtask bench --data-parallel` runs it on 1 and 2
//! ranks beside JAX's single-process step.
//!
//! `mpirun -np 2 target/release/bench_data_parallel [--n 16384] [--reps 10]` (with the CPU
//! and MPI plugins on `QUABLA_PLUGIN_PATH`).

use quabla::ad::value_and_grad;
use quabla::distributed::{self, ReduceOp};
use quabla::optim::{adam, apply_updates};
use quabla::{jit, Array, DType, Result};
use quabla_examples::arg;
use quabla_examples::pinn;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<()> {
    let (n, reps) = (arg("--n", 16384usize), arg("--reps", 10usize));
    let comm = distributed::initialize()?;
    let (rank, ranks) = (comm.rank(), comm.world_size());
    let (inner, bnd) = pinn::points(n);
    let k = n / ranks;
    let xs = Array::from_slice(&inner[2 * rank * k..2 * (rank + 1) * k], &[k, 2])?;
    let b = 256 / ranks;
    let xb = Array::from_slice(&bnd[2 * rank * b..2 * (rank + 1) * b], &[b, 2])?;
    let params = pinn::init(0, DType::F32)?;
    let np = params.len();
    let opt = adam(1e-3);
    let mut state = opt.init(&params)?;
    let ns = state.len();
    let grad = jit(value_and_grad(
        pinn::loss_jvp_of_grad,
        &(0..np).collect::<Vec<_>>(),
        false,
    ));
    let update = jit(move |a: &[Array]| {
        let (p, rest) = a.split_at(np);
        let (s, g) = rest.split_at(ns);
        let (u, s) = opt.update(g, s, p)?;
        let mut out = apply_updates(p, &u)?;
        out.extend(s);
        Ok(out)
    });
    let mut p = params;
    let (mut t_grad, mut t_coll, mut t_update, mut t_step) = (vec![], vec![], vec![], vec![]);
    for rep in 0..=reps {
        let t0 = Instant::now();
        let mut args = p.clone();
        args.push(xs.clone());
        args.push(xb.clone());
        let local = grad.call(&args)?;
        local.iter().try_for_each(Array::block_until_ready)?;
        let t1 = Instant::now();
        let mut avg = comm.all_reduce_many(&local, ReduceOp::Mean)?;
        let t2 = Instant::now();
        let grads = avg.split_off(1);
        let mut a = p.clone();
        a.extend(state);
        a.extend(grads);
        let mut out = update.call(&a)?;
        out.iter().try_for_each(Array::block_until_ready)?;
        let t3 = Instant::now();
        state = out.split_off(np);
        p = out;
        // The first repetition compiles both programs.
        if rep > 0 {
            t_grad.push((t1 - t0).as_secs_f64() * 1e3);
            t_coll.push((t2 - t1).as_secs_f64() * 1e3);
            t_update.push((t3 - t2).as_secs_f64() * 1e3);
            t_step.push((t3 - t0).as_secs_f64() * 1e3);
        }
    }
    if rank == 0 {
        let threads = std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "all".into());
        println!(
            "{{\"system\": \"quabla\", \"name\": \"dp_pinn_step_jvp_grad_n{n}\", \"ranks\": {ranks}, \
             \"threads_per_rank\": \"{threads}\", \"step_ms\": {:.3}, \"grad_ms\": {:.3}, \
             \"collective_ms\": {:.3}, \"update_ms\": {:.3}}}",
            median(t_step),
            median(t_grad),
            median(t_coll),
            median(t_update)
        );
    }
    Ok(())
}
