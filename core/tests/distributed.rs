//! Data parallelism over the MPI collectives plugin. Each test starts `mpirun` with this test
//! binary as every rank (`QUABLA_MPI_RANK=1` marks a rank), so the same function is the
//! launcher outside MPI and the rank body inside. Needs the plugin built with MPI (`cargo
//! xtask test` does, and sets `QUABLA_REQUIRE_MPI` so that these cannot skip); without
//! `mpirun` they skip with a message.

mod common;

use common::{built_library, cpu, values};
use quabla::distributed::{self, ReduceOp};
use quabla::optim::{adam, Trainer};
use quabla::{Array, Axes, Error, ErrorCode, Result};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const RANK_VAR: &str = "QUABLA_MPI_RANK";

fn in_rank() -> bool {
    std::env::var_os(RANK_VAR).is_some()
}

/// Starts `np` ranks of this binary running `test` (killed after `limit`); `None` when there
/// is no `mpirun` (and `QUABLA_REQUIRE_MPI` is unset). Returns (exit success, output).
fn launch(
    np: usize,
    test: &str,
    mca: &[(&str, &str)],
    env: &[(&str, &str)],
    limit: Duration,
) -> Option<(bool, String)> {
    let has_mpirun = Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_mpirun {
        assert!(
            std::env::var_os("QUABLA_REQUIRE_MPI").is_none(),
            "QUABLA_REQUIRE_MPI is set but there is no mpirun"
        );
        eprintln!("skipped: no mpirun (install OpenMPI: `cargo xtask mpi`)");
        return None;
    }
    let exe = std::env::current_exe().expect("a test binary knows its path");
    let mut c = Command::new("mpirun");
    // Root in containers, more ranks than cores on CI, no shared-memory copy mechanism that
    // needs ptrace: none of it matters to the results.
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "-np",
        &np.to_string(),
    ])
    .args(["--mca", "btl_vader_single_copy_mechanism", "none"]);
    for (k, v) in mca {
        c.args(["--mca", k, v]);
    }
    c.arg(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(RANK_VAR, "1")
        .env("QUABLA_PLUGIN_PATH", built_library("quabla_mpi"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("mpirun starts");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("mpirun can be waited on") {
            let out = child.wait_with_output().expect("mpirun's output");
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            // A plugin built without MPI (a plain `cargo test`, no `--features
            // quabla-mpi/mpi`) says so on every rank: nothing to test, unless MPI is required.
            if text.contains("built without MPI")
                && std::env::var_os("QUABLA_REQUIRE_MPI").is_none()
            {
                eprintln!("skipped: the MPI plugin was built without MPI (`cargo xtask mpi`)");
                return None;
            }
            return Some((status.success(), text));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("mpirun's output");
            panic!(
                "mpirun of `{test}` still running after {limit:?} (a hang):\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The PINN-free training problem: an MLP 1-16-1 (tanh) fitting sin(3x) on 64 points.
const N: usize = 64;
const H: usize = 16;

fn mlp_loss(a: &[Array]) -> Result<Vec<Array>> {
    let (w1, b1, w2, b2, x, y) = (&a[0], &a[1], &a[2], &a[3], &a[4], &a[5]);
    let h = (&x.matmul(w1)? + b1)?.tanh()?;
    let d = (&(&h.matmul(w2)? + b2)? - y)?;
    Ok(vec![(&d * &d)?.mean(Axes::All, false)?])
}

fn initial_params() -> Vec<Array> {
    let dev = cpu();
    vec![
        Array::from_slice_on(&dev, &values(H, 1), &[1, H]).unwrap(),
        Array::from_slice_on(&dev, &values(H, 2), &[H]).unwrap(),
        Array::from_slice_on(&dev, &values(H, 3), &[H, 1]).unwrap(),
        Array::from_slice_on(&dev, &[0.1f32], &[1]).unwrap(),
    ]
}

/// Rows `lo..hi` of the data set.
fn data(lo: usize, hi: usize) -> [Array; 2] {
    let xs: Vec<f32> = (lo..hi)
        .map(|i| -1.0 + 2.0 * i as f32 / (N - 1) as f32)
        .collect();
    let ys: Vec<f32> = xs.iter().map(|x| (3.0 * x).sin()).collect();
    let dev = cpu();
    [
        Array::from_slice_on(&dev, &xs, &[hi - lo, 1]).unwrap(),
        Array::from_slice_on(&dev, &ys, &[hi - lo, 1]).unwrap(),
    ]
}

/// How far data-parallel parameters may be from the full-batch run's. The two differ only
/// in how the batch mean is rounded (the mean of per-rank means instead of one mean over 64
/// rows: a few f32 ulps of each gradient per step); Adam divides every update by the root of
/// its second moment, so such a relative gradient error moves each update by about as much
/// relative to the learning rate (1e-2), and 200 steps add at most 200 of them: a few 1e-6
/// (measured: 1.2e-6). That needs every gradient component to be well above rounding (the
/// biases start random, so no symmetry zeroes one): Adam's first steps take each
/// component's sign, which a component zero up to rounding would take from the rounding.
/// 2e-5 absolute plus 2e-5 relative leaves a margin without admitting any real error (a
/// gradient averaged wrongly, e.g. summed, moves parameters by 1e-2 or more).
const TOLERANCE: f32 = 2e-5;

#[test]
fn two_rank_training_equals_the_full_batch_run() {
    if !in_rank() {
        if let Some((ok, out)) = launch(
            2,
            "two_rank_training_equals_the_full_batch_run",
            &[],
            &[],
            Duration::from_secs(300),
        ) {
            assert!(ok, "a rank failed:\n{out}");
            assert_eq!(out.matches("RANK_OK").count(), 2, "{out}");
            eprintln!("{out}");
        }
        return;
    }
    let comm = distributed::initialize().unwrap();
    let (r, n) = (comm.rank(), comm.world_size());
    assert_eq!(n, 2);
    let shard = data(r * N / n, (r + 1) * N / n);
    let mut dp =
        Trainer::data_parallel(mlp_loss, initial_params(), adam(1e-2), comm.clone()).unwrap();
    let full = data(0, N);
    let mut single = Trainer::new(mlp_loss, initial_params(), adam(1e-2)).unwrap();
    let first_loss = {
        single.step(&full).unwrap();
        dp.step(&shard).unwrap();
        (single.loss().unwrap(), dp.loss().unwrap())
    };
    // The reported loss is the global mean: the full batch's, to f32 rounding.
    assert!(
        (first_loss.0 - first_loss.1).abs() <= 1e-6 * first_loss.0.abs(),
        "{first_loss:?}"
    );
    for _ in 1..200 {
        single.step(&full).unwrap();
        dp.step(&shard).unwrap();
    }
    let mut worst = 0.0f32;
    for (a, b) in dp.params().iter().zip(single.params()) {
        for (x, y) in a
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .zip(b.to_vec::<f32>().unwrap())
        {
            let err = (x - y).abs();
            assert!(
                err <= TOLERANCE * (1.0 + y.abs()),
                "rank {r}: {x} vs full batch {y}"
            );
            worst = worst.max(err);
        }
    }
    // Replicas stay identical bit for bit: every rank reduced the same bytes in rank order.
    for p in dp.params() {
        let g = comm.all_gather(p).unwrap().to_vec::<f32>().unwrap();
        let (a, b) = g.split_at(g.len() / 2);
        assert!(
            a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "replicas differ"
        );
    }
    println!(
        "RANK_OK {r}: loss {:.3e} -> {:.3e}, largest difference from the full batch {worst:.2e}",
        first_loss.0,
        dp.loss().unwrap()
    );
}

/// `tree::Trainer::data_parallel` over a parameter tuple and a batch pair is the flat
/// data-parallel trainer: the same bits on every rank after 50 steps.
#[test]
fn tree_data_parallel_training_is_the_flat_one() {
    if !in_rank() {
        if let Some((ok, out)) = launch(
            2,
            "tree_data_parallel_training_is_the_flat_one",
            &[],
            &[],
            Duration::from_secs(300),
        ) {
            assert!(ok, "a rank failed:\n{out}");
            assert_eq!(out.matches("RANK_OK").count(), 2, "{out}");
            eprintln!("{out}");
        }
        return;
    }
    type Params = ((Array, Array), (Array, Array));
    let comm = distributed::initialize().unwrap();
    let (r, n) = (comm.rank(), comm.world_size());
    let [x, y] = data(r * N / n, (r + 1) * N / n);
    let tree_loss = |p: &Params, (x, y): &(Array, Array)| -> Result<Array> {
        let ((w1, b1), (w2, b2)) = p;
        let args = [w1, b1, w2, b2, x, y].map(Clone::clone);
        Ok(mlp_loss(&args)?.remove(0))
    };
    let flat = initial_params();
    let params: Params = (
        (flat[0].clone(), flat[1].clone()),
        (flat[2].clone(), flat[3].clone()),
    );
    let mut by_tree =
        quabla::tree::Trainer::data_parallel(tree_loss, params, adam(1e-2), comm.clone()).unwrap();
    let mut by_slice = Trainer::data_parallel(mlp_loss, flat, adam(1e-2), comm.clone()).unwrap();
    let batch = (x.clone(), y.clone());
    for _ in 0..50 {
        by_tree.step(&batch).unwrap();
        by_slice.step(&[x.clone(), y.clone()]).unwrap();
    }
    assert_eq!(
        by_tree.loss().unwrap().to_bits(),
        by_slice.loss().unwrap().to_bits()
    );
    let ((w1, b1), (w2, b2)) = by_tree.params().unwrap();
    for (a, b) in [w1, b1, w2, b2].iter().zip(by_slice.params()) {
        let (a, b) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
        assert!(
            a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()),
            "rank {r}: {a:?} vs {b:?}"
        );
    }
    println!("RANK_OK {r}: loss {:.3e}", by_tree.loss().unwrap());
}

/// Every rank reduces the same values, so each collective has an exact expected result.
#[test]
fn collectives_on_three_ranks_follow_their_definitions() {
    if !in_rank() {
        if let Some((ok, out)) = launch(
            3,
            "collectives_on_three_ranks_follow_their_definitions",
            &[],
            &[],
            Duration::from_secs(180),
        ) {
            assert!(ok, "a rank failed:\n{out}");
            assert_eq!(out.matches("RANK_OK").count(), 3, "{out}");
        }
        return;
    }
    let comm = distributed::initialize().unwrap();
    let (r, n) = (comm.rank(), comm.world_size());
    let dev = cpu();
    // Rank r holds [r, 10 + r, ...] as f64 and i32; sums and gathers are known in closed form.
    let mine: Vec<f64> = (0..6).map(|i| (10 * i + r) as f64).collect();
    let x = Array::from_slice_on(&dev, &mine, &[6]).unwrap();
    let sum = comm
        .all_reduce(&x, ReduceOp::Sum)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    let want: Vec<f64> = (0..6)
        .map(|i| (0..n).map(|k| (10 * i + k) as f64).sum())
        .collect();
    assert_eq!(sum, want);
    let max = comm
        .all_reduce(&x, ReduceOp::Max)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(
        max,
        (0..6).map(|i| (10 * i + n - 1) as f64).collect::<Vec<_>>()
    );
    let gathered = comm.all_gather(&x).unwrap();
    assert_eq!(gathered.shape(), &[n, 6]);
    let ints = Array::from_slice_on(&dev, &[r as i32 * 7], &[1]).unwrap();
    assert_eq!(
        comm.broadcast(&ints, 2).unwrap().to_vec::<i32>().unwrap(),
        [14]
    );
    let rows = Array::from_slice_on(&dev, &vec![1.0f32; 3 * n], &[3 * n]).unwrap();
    let part = comm.reduce_scatter(&rows, ReduceOp::Sum).unwrap();
    assert_eq!(part.to_vec::<f32>().unwrap(), vec![n as f32; 3]);
    // Misuse is a typed error on every rank, before any rank blocks.
    let odd = Array::from_slice_on(&dev, &[1.0f32; 4], &[4]).unwrap();
    let e = comm.reduce_scatter(&odd, ReduceOp::Sum).unwrap_err();
    assert!(e.to_string().contains("divisible by 3"), "{e}");
    let e = comm.all_reduce(&ints, ReduceOp::Mean).unwrap_err();
    assert!(e.to_string().contains("floating dtype"), "{e}");
    println!("RANK_OK {r}");
}

/// A rank that dies mid-training makes the others fail with a typed error within the
/// collective timeout instead of hanging.
#[test]
fn a_dead_rank_is_a_typed_error_not_a_hang() {
    if !in_rank() {
        let env = [("QUABLA_COLLECTIVE_TIMEOUT", "10")];
        // By default mpirun kills the whole job when a rank dies (no hang either); told not
        // to, the survivors must end on their own, with a typed error. mpirun itself fails
        // (a rank died); what matters is what rank 0 said, and that it said it in time.
        let mca = [("orte_abort_on_non_zero_status", "0")];
        if let Some((_, out)) = launch(
            2,
            "a_dead_rank_is_a_typed_error_not_a_hang",
            &mca,
            &env,
            Duration::from_secs(120),
        ) {
            assert!(
                out.contains("TYPED_ERROR"),
                "rank 0 reported no typed error:\n{out}"
            );
            eprintln!("{out}");
        }
        return;
    }
    let comm = distributed::initialize().unwrap();
    let shard = data(comm.rank() * N / 2, (comm.rank() + 1) * N / 2);
    let mut dp =
        Trainer::data_parallel(mlp_loss, initial_params(), adam(1e-2), comm.clone()).unwrap();
    for step in 0..5 {
        if comm.rank() == 1 && step == 3 {
            // A crash: no destructors, no exit handlers, no MPI_Finalize.
            std::process::abort();
        }
        let start = Instant::now();
        match dp.step(&shard) {
            Ok(()) => {}
            Err(Error::Backend { code, message, .. }) => {
                assert!(
                    matches!(code, ErrorCode::Unavailable | ErrorCode::DeadlineExceeded),
                    "{code:?}: {message}"
                );
                assert!(start.elapsed() < Duration::from_secs(60));
                println!(
                    "TYPED_ERROR {code:?} after {:.1} s: {message}",
                    start.elapsed().as_secs_f64()
                );
                // The communicator is broken; leave without waiting for the dead peer.
                std::process::exit(0);
            }
            Err(e) => panic!("an untyped failure: {e}"),
        }
    }
    panic!("rank {} finished although rank 1 died", comm.rank());
}

/// NCCL on a lent GPU (`backends/cuda/gpu-check.sh` sets `QUABLA_TEST_NCCL=1`): a world of
/// one on the CUDA plugin's device, every collective against the values computed on the CPU.
/// Elsewhere it skips: CI has no GPU (the library-absent path is the NCCL crate's own test).
#[test]
fn nccl_world_of_one_on_the_gpu_matches_the_cpu() {
    if std::env::var_os("QUABLA_TEST_NCCL").is_none() {
        eprintln!("skipped: QUABLA_TEST_NCCL is unset (needs a GPU, NCCL and the CUDA plugin)");
        return;
    }
    let registry = quabla::runtime::Registry::global();
    registry.add_search_path(&built_library("quabla_cuda"));
    registry.add_search_path(&built_library("quabla_nccl"));
    let gpu = quabla::device("cuda").unwrap();
    let comm = distributed::initialize_with(&distributed::Options {
        platform: "nccl".into(),
        world_size: 1,
        ..Default::default()
    })
    .unwrap();
    let v = values(1000, 9);
    let x = Array::from_slice_on(&gpu, &v, &[1000]).unwrap();
    for op in [ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min] {
        let r = comm.all_reduce(&x, op).unwrap();
        assert_eq!(r.device().platform(), "cuda");
        assert_eq!(
            r.to_vec::<f32>().unwrap(),
            v,
            "{op:?} over one rank is the identity"
        );
    }
    let g = comm.all_gather(&x).unwrap();
    assert_eq!(g.shape(), &[1, 1000]);
    assert_eq!(comm.broadcast(&x, 0).unwrap().to_vec::<f32>().unwrap(), v);
    println!("NCCL world of one: every collective matches");
}
