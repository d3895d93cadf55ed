//! The work a bounded loop does, counted by the interpreter (`quabla_cpu::stats`), not
//! timed: a loop that needs 5 trips runs its body 5 times forward whatever its bound, and a
//! twice 5 in reverse mode, and 5 in forward mode (primal and tangent in one loop); odeint's direct mode evaluates the field as often
//! as its steps need. A test binary of its own: it sets `QUABLA_CPU_JIT=0` for the whole
//! process, so every loop runs in the interpreter, which counts (native code does not).

mod common;

use common::cpu;
use quabla::ad::{grad, jvp};
use quabla::lax::{bounded_while_loop_with, cond, scan, BoundedWhileOptions, CheckpointSchedule};
use quabla::ode::{odeint, OdeOptions};
use quabla::{jit, Array, Axes, Result};
use quabla_abi::qir::UnaryOp;
use quabla_cpu::stats::unary_runs;

/// How many `sin` nodes the interpreter ran during `f`.
fn sines(f: impl FnOnce()) -> u64 {
    let before = unary_runs(UnaryOp::Sin);
    f();
    unary_runs(UnaryOp::Sin) - before
}

/// `c <- c + 0.25 (1 + 0.01 sin c)` while `c < limit`: 5 trips from 0 to 1.2. The body's
/// `sin` is the only one in the program.
fn creep_to(
    a: &[Array],
    max_steps: usize,
    checkpoints: Option<usize>,
    limit: f64,
) -> Result<Vec<Array>> {
    let keep = move |c: &[Array]| Ok(vec![c[0].lt(limit)?]);
    let body = |c: &[Array]| {
        let wobble = (&(&c[0].sin()? * 0.01)? + 1.0)?;
        Ok(vec![(&c[0] + &(&wobble * 0.25)?)?])
    };
    let opts = BoundedWhileOptions {
        max_steps,
        checkpoints,
    };
    let out = bounded_while_loop_with(&keep, &body, a, &opts)?;
    Ok(vec![(&out[0] * &out[0])?])
}

fn creep(a: &[Array], max_steps: usize, checkpoints: Option<usize>) -> Result<Vec<Array>> {
    creep_to(a, max_steps, checkpoints, 1.2)
}

fn trips_to(limit: f64) -> u64 {
    let (mut c, mut k) = (0.0f64, 0);
    while c < limit {
        c += 0.25 * (1.0 + 0.01 * c.sin());
        k += 1;
    }
    k
}

fn both_passes(max_steps: usize, checkpoints: Option<usize>) -> (u64, u64) {
    both_passes_to(max_steps, checkpoints, 1.2)
}

fn both_passes_to(max_steps: usize, checkpoints: Option<usize>, limit: f64) -> (u64, u64) {
    let x = Array::from_slice_on(&cpu(), &[0.0f64], &[]).unwrap();
    let forward = jit(move |a: &[Array]| creep_to(a, max_steps, checkpoints, limit));
    forward.compile_for(std::slice::from_ref(&x)).unwrap();
    let fwd = sines(|| {
        forward.call(std::slice::from_ref(&x)).unwrap();
    });
    let backward = jit(grad(
        move |a: &[Array]| creep_to(a, max_steps, checkpoints, limit),
        &[0],
    ));
    backward.compile_for(std::slice::from_ref(&x)).unwrap();
    let bwd = sines(|| {
        backward.call(std::slice::from_ref(&x)).unwrap();
    });
    (fwd, bwd)
}

/// `sin` runs of the jitted forward-mode derivative of `creep`, and of a `scan` of `length`
/// steps and a `cond` whose taken branch holds the only `sin`.
fn forward_mode(max_steps: usize, length: usize) -> (u64, u64, u64) {
    let x = Array::from_slice_on(&cpu(), &[0.0f64], &[]).unwrap();
    let one = Array::from_slice_on(&cpu(), &[1.0f64], &[]).unwrap();
    let run = |f: &dyn Fn(&[Array]) -> Result<Vec<Array>>| {
        let (x, one) = (x.clone(), one.clone());
        let d = jit(move |a: &[Array]| {
            let (mut p, t) = jvp(f, a, std::slice::from_ref(&one))?;
            p.extend(t);
            Ok(p)
        });
        d.compile_for(std::slice::from_ref(&x)).unwrap();
        sines(|| {
            d.call(std::slice::from_ref(&x)).unwrap();
        })
    };
    let bounded = run(&move |a: &[Array]| creep(a, max_steps, None));
    let scanned = run(&move |a: &[Array]| {
        let step = |c: &[Array], _x: &[Array]| Ok((vec![(&c[0].sin()? + 0.5)?], vec![]));
        Ok(scan(&step, a, &[], Some(length), false, 1)?.0)
    });
    let branched = run(&|a: &[Array]| {
        cond(
            &a[0].lt(1.0)?,
            // The tangent needs `exp(sin x)`: a separate tangent branch would run `sin` again.
            &|v: &[Array]| Ok(vec![v[0].sin()?.exp()?]),
            &|v: &[Array]| Ok(vec![v[0].cos()?]),
            a,
        )
    });
    (bounded, scanned, branched)
}

/// `dy/dt = -y - sin(y) / 10` on [0, 1] by dopri5: the field's `sin` counts its
/// evaluations. Returns the `sin` runs of the solve and of its gradient, and the steps.
fn ode_work(max_steps: usize) -> (u64, u64, i32) {
    let field = |y: &[Array], _t: &Array, _: &[Array]| -> Result<Vec<Array>> {
        Ok(vec![(&y[0] + &(&y[0].sin()? * 0.1)?)?.neg()?])
    };
    let solve = move |a: &[Array]| -> Result<Vec<Array>> {
        let t = Array::from_slice_on(a[0].device(), &[0.0f64, 1.0], &[2])?;
        let opts = OdeOptions {
            rtol: 1e-6,
            atol: 1e-6,
            max_steps,
            ..Default::default()
        };
        let sol = odeint(&field, a, &t, &[], &opts)?;
        Ok(vec![sol.ys[0].sum(Axes::All, false)?, sol.stats.steps])
    };
    let y0 = Array::from_slice_on(&cpu(), &[1.0f64, 2.0], &[2]).unwrap();
    let forward = jit(solve);
    forward.compile_for(std::slice::from_ref(&y0)).unwrap();
    let mut steps = 0;
    let fwd = sines(|| {
        steps = forward.call(std::slice::from_ref(&y0)).unwrap()[1]
            .item::<i32>()
            .unwrap();
    });
    let loss = move |a: &[Array]| Ok(vec![solve(a)?.remove(0)]);
    let backward = jit(grad(loss, &[0]));
    backward.compile_for(std::slice::from_ref(&y0)).unwrap();
    let bwd = sines(|| {
        backward.call(std::slice::from_ref(&y0)).unwrap();
    });
    (fwd, bwd, steps)
}

#[test]
fn loops_do_the_work_of_the_trips_they_take() {
    // The only test in this binary, so no other test sees the variable change.
    std::env::set_var("QUABLA_CPU_JIT", "0");
    let n = trips_to(1.2);
    assert_eq!(n, 5);
    let bounds = [64usize, 4096, 65536];
    let runs: Vec<(u64, u64)> = bounds.iter().map(|&b| both_passes(b, None)).collect();
    println!(
        "bounded loop of {n} trips, sin runs (forward, gradient) at bounds {bounds:?}: {runs:?}"
    );
    for (b, (fwd, bwd)) in bounds.iter().zip(&runs) {
        // Forward: the body runs once a trip, and never for a skipped one.
        assert_eq!(*fwd, n, "bound {b}");
        // Reverse: the forward pass, and the pass that rebuilds the checkpoints; the 5
        // trips fit in one segment (sqrt(bound) trips), which is kept whole, so nothing
        // is recomputed. The residuals (`cos`) hold no `sin`.
        assert_eq!(*bwd, 2 * n, "bound {b}");
    }
    // Forward mode runs the primal computation once: one loop carries primal and tangent.
    for b in bounds {
        let (bounded, scanned, branched) = forward_mode(b, 7);
        println!("jvp at bound {b}: sin runs (bounded loop, scan of 7, cond) {bounded}, {scanned}, {branched}");
        assert_eq!(
            (bounded, scanned, branched),
            (n, 7, 1),
            "forward mode, bound {b}"
        );
    }
    // A budget of every trip: the forward pass and the pass keeping every carry.
    assert_eq!(both_passes(4096, Some(4096)), (n, 2 * n));
    // Budgets below two levels follow the binomial schedule: the forward pass, a pass
    // counting the trips, and Griewank's least recomputation for `k` carries,
    // `t m - C(k + t, t - 1)` with `t` the least such that `C(k + t, t) >= m`.
    let binomial = |s: u64, t: u64| (1..=t).fold(1u64, |b, i| b * (s + i) / i);
    let least = |m: u64, k: u64| {
        let t = (0..).find(|&t| binomial(k, t) >= m).unwrap();
        if t == 0 {
            0
        } else {
            t * m - binomial(k + 1, t - 1)
        }
    };
    for (limit, k) in [
        (1.2, 40usize),
        (1.2, 1),
        (1.2, 2),
        (7.5, 1),
        (7.5, 2),
        (7.5, 3),
        (7.5, 5),
    ] {
        let m = trips_to(limit);
        let opts = BoundedWhileOptions {
            max_steps: 4096,
            checkpoints: Some(k),
        };
        assert_eq!(
            opts.schedule(),
            CheckpointSchedule::Binomial { snapshots: k }
        );
        let (fwd, bwd) = both_passes_to(4096, Some(k), limit);
        println!("{m} trips, checkpoints {k}: sin runs (forward, gradient) {fwd}, {bwd}");
        assert_eq!(fwd, m, "checkpoints {k}");
        assert_eq!(
            bwd,
            2 * m + least(m, k as u64),
            "{m} trips, checkpoints {k}"
        );
    }
    assert_eq!(trips_to(7.5), 30);
    let odes: Vec<(u64, u64, i32)> = [4096, 65536].iter().map(|&b| ode_work(b)).collect();
    println!("dopri5 solve, sin runs (solve, gradient, steps) at max_steps 4096, 65536: {odes:?}");
    let (fwd, bwd, steps) = odes[0];
    assert_eq!(odes[1].2, steps);
    assert_eq!(odes[1].0, fwd, "the bound changes the solve's work");
    // Six new stages a step (the first stage reuses the last), plus the first evaluation
    // and the initial step's trial.
    assert_eq!(fwd, 6 * steps as u64 + 2, "{steps} steps");
    // Reverse: the solve, and the pass that rebuilds the checkpoints over the loop's steps
    // (six stages each; the evaluations before the loop are not repeated). The solve fits
    // in one segment, kept whole, so nothing else is recomputed, at either bound.
    assert_eq!(bwd, fwd + 6 * steps as u64, "{odes:?}");
    assert_eq!(
        odes[1].1, bwd,
        "the bound changes the gradient's work: {odes:?}"
    );
}
