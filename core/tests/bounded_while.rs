//! `lax::bounded_while_loop`: values at trip counts 0, 1, data-dependent and the bound
//! itself; derivatives in both modes to second order against finite differences
//! (`check_grads`), and against the same trips written as a fixed-length `scan`; `vmap` with
//! different trip counts per element; nesting, `cond` and custom rules in the body; the
//! error that points plain `while` loops here.

mod common;

use common::cpu;
use quabla::ad::{grad, jvp};
use quabla::lax::{
    bounded_while_loop, bounded_while_loop_with, cond, scan, while_loop, BoundedWhileOptions,
    CheckpointSchedule,
};
use quabla::test_util::check_grads;
use quabla::{custom_vjp, vmap, Array, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

/// `c <- c a + sin(c)` while `c < limit`, at most `max_steps` trips; returns `c`.
fn grow(a: &[Array], limit: f64, max_steps: usize) -> Result<Vec<Array>> {
    let rate = a[1].clone();
    let body = move |c: &[Array]| Ok(vec![(&(&c[0] * &rate)? + &c[0].sin()?)?]);
    let keep = move |c: &[Array]| Ok(vec![c[0].lt(limit)?]);
    bounded_while_loop(&keep, &body, &a[..1], max_steps)
}

/// The same update as a fixed `trips`-step scan.
fn grow_scanned(a: &[Array], trips: usize) -> Result<Vec<Array>> {
    let rate = a[1].clone();
    let step = move |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        Ok((vec![(&(&c[0] * &rate)? + &c[0].sin()?)?], vec![]))
    };
    Ok(scan(&step, &a[..1], &[], Some(trips), false, 1)?.0)
}

/// Trips `grow` takes from `x` at `rate` (a plain loop on the host).
fn trips(x: f64, rate: f64, limit: f64, max_steps: usize) -> usize {
    let (mut c, mut k) = (x, 0);
    while c < limit && k < max_steps {
        c = c * rate + c.sin();
        k += 1;
    }
    k
}

#[test]
fn values_at_every_kind_of_trip_count() {
    let rate = f64s(&[1.1], &[]);
    for (x, limit, bound) in [
        (5.0, 1.0, 50),  // 0 trips: the predicate is false at once
        (0.5, 1.0, 50),  // 1 trip
        (0.3, 40.0, 50), // data-dependent
        (0.3, 1e9, 7),   // the bound stops it
        (0.3, 1e9, 1),
        (0.3, 1e9, 0),
    ] {
        let out = grow(&[f64s(&[x], &[]), rate.clone()], limit, bound).unwrap();
        let k = trips(x, 1.1, limit, bound);
        let want = grow_scanned(&[f64s(&[x], &[]), rate.clone()], k).unwrap();
        assert_eq!(
            vals(&out[0]),
            vals(&want[0]),
            "x {x}, limit {limit}, bound {bound}: {k} trips"
        );
    }
}

#[test]
fn gradients_match_finite_differences_to_second_order() {
    let f = |a: &[Array]| grow(a, 40.0, 64);
    for x in [0.3, 0.9, 2.0] {
        check_grads(&f, &[f64s(&[x], &[]), f64s(&[1.1], &[])], 2, None)
            .unwrap_or_else(|e| panic!("x {x}: {e}"));
    }
}

#[test]
fn gradients_match_the_same_trips_as_a_scan() {
    for (x, bound) in [(0.3, 64), (0.3, 5), (0.9, 1000)] {
        let k = trips(x, 1.1, 40.0, bound);
        let args = [f64s(&[x], &[]), f64s(&[1.1], &[])];
        let g = grad(|a: &[Array]| grow(a, 40.0, bound), &[0, 1])(&args).unwrap();
        let s = grad(|a: &[Array]| grow_scanned(a, k), &[0, 1])(&args).unwrap();
        for (p, q) in g.iter().zip(&s) {
            let (p, q) = (vals(p)[0], vals(q)[0]);
            assert!(
                (p - q).abs() <= 1e-12 * q.abs(),
                "x {x}, {k} trips: {p} vs {q}"
            );
        }
        let (_, t) = jvp(
            |a: &[Array]| grow(a, 40.0, bound),
            &args,
            &[f64s(&[1.0], &[]), f64s(&[0.0], &[])],
        )
        .unwrap();
        assert!((vals(&t[0])[0] - vals(&g[0])[0]).abs() <= 1e-12 * vals(&g[0])[0].abs());
    }
}

#[test]
fn vmap_runs_each_element_for_its_own_trips() {
    let xs = [0.3, 5.0, 0.9, 2.0];
    let f = |a: &[Array]| grow(a, 40.0, 64);
    let batched =
        vmap(f, &[Some(0), None], &[Some(0)])(&[f64s(&xs, &[4]), f64s(&[1.1], &[])]).unwrap();
    let g = vmap(|a: &[Array]| grad(f, &[0])(a), &[Some(0), None], &[Some(0)])(&[
        f64s(&xs, &[4]),
        f64s(&[1.1], &[]),
    ])
    .unwrap();
    for (i, x) in xs.iter().enumerate() {
        let args = [f64s(&[*x], &[]), f64s(&[1.1], &[])];
        assert_eq!(
            vals(&batched[0])[i],
            vals(&f(&args).unwrap()[0])[0],
            "x {x}"
        );
        let one = vals(&grad(f, &[0])(&args).unwrap()[0])[0];
        assert!(
            (vals(&g[0])[i] - one).abs() <= 1e-12 * one.abs().max(1.0),
            "x {x}"
        );
    }
    // And grad of the vmapped loop.
    let total = |a: &[Array]| -> Result<Vec<Array>> {
        let out = vmap(f, &[Some(0), None], &[Some(0)])(a)?;
        Ok(vec![out[0].sum(quabla::Axes::All, false)?])
    };
    let gr = grad(total, &[1])(&[f64s(&xs, &[4]), f64s(&[1.1], &[])]).unwrap();
    let sum: f64 = xs
        .iter()
        .map(|x| vals(&grad(f, &[1])(&[f64s(&[*x], &[]), f64s(&[1.1], &[])]).unwrap()[0])[0])
        .sum();
    assert!((vals(&gr[0])[0] - sum).abs() <= 1e-12 * sum.abs());
}

/// Outer loop `c <- update(c, s)` while `c < 12`, where `s` comes from an inner bounded loop
/// (`d <- 1.5 d` from `c + 0.5` while `d < 3`) and a `cond` (`d / 2` or `log d`).
fn nested(a: &[Array], update: fn(&Array, &Array) -> Result<Array>) -> Result<Vec<Array>> {
    let body = move |c: &[Array]| -> Result<Vec<Array>> {
        let inner = bounded_while_loop(
            &|d: &[Array]| Ok(vec![d[0].lt(3.0)?]),
            &|d: &[Array]| Ok(vec![(&d[0] * 1.5)?]),
            &[(&c[0] + 0.5)?],
            10,
        )?;
        let s = cond(
            &inner[0].gt(4.0)?,
            &|v: &[Array]| Ok(vec![(&v[0] * 0.5)?]),
            &|v: &[Array]| Ok(vec![v[0].log()?]),
            &inner,
        )?;
        Ok(vec![update(&c[0], &s[0])?])
    };
    bounded_while_loop(&|c: &[Array]| Ok(vec![c[0].lt(12.0)?]), &body, a, 20)
}

#[test]
fn nested_loops_conds_and_custom_rules_compose() {
    let x = [f64s(&[0.2], &[])];
    // Without custom rules, against finite differences to second order.
    let plain = |a: &[Array]| nested(a, |c, s| c + s);
    assert!(vals(&plain(&x).unwrap()[0])[0] >= 12.0);
    check_grads(&plain, &x, 2, None).unwrap();
    // A custom_vjp that doubles the cotangent through `s` at every trip gives the gradient
    // of the program whose value is `c + s` but whose derivative is that of `c + 2 s`.
    let custom = |a: &[Array]| {
        nested(a, |c, s| {
            let doubled = custom_vjp(
                |x: &[Array]| Ok(vec![x[0].clone()]),
                |x: &[Array]| Ok((vec![x[0].clone()], vec![])),
                |_: &[Array], ct: &[Array]| Ok(vec![(&ct[0] * 2.0)?]),
            )(std::slice::from_ref(s))?;
            c + &doubled[0]
        })
    };
    let twice = |a: &[Array]| nested(a, |c, s| c + &(&(s * 2.0)? - &s.stop_gradient()?)?);
    let g = vals(&grad(custom, &[0])(&x).unwrap()[0])[0];
    let want = vals(&grad(twice, &[0])(&x).unwrap()[0])[0];
    assert!((g - want).abs() <= 1e-12 * want.abs(), "{g} vs {want}");
}

#[test]
fn plain_while_reverse_mode_points_to_the_bound() {
    let f = |a: &[Array]| {
        while_loop(
            &|c: &[Array]| Ok(vec![c[0].lt(10.0)?]),
            &|c: &[Array]| Ok(vec![(&c[0] * 2.0)?]),
            a,
        )
    };
    let err = grad(f, &[0])(&[f64s(&[1.0], &[])]).unwrap_err().to_string();
    assert!(
        err.contains("bounded_while_loop") && err.contains("max_steps"),
        "{err}"
    );
}

/// Carries `(i, c)`: `i <- i + 1`, `c <- c x` while `i < 5` (bound 16); returns both.
fn power_with_counter(x: &Array) -> Result<Vec<Array>> {
    let rate = x.clone();
    let body = move |c: &[Array]| Ok(vec![(&c[0] + 1.0)?, (&c[1] * &rate)?]);
    let keep = |c: &[Array]| Ok(vec![c[0].lt(5.0)?]);
    let init = [x.zeros_like()?, x.ones_like()?];
    bounded_while_loop(&keep, &body, &init, 16)
}

#[test]
fn reverse_mode_with_loop_results_whose_tangents_are_unused() {
    // The loop's differentiable result `c` is dropped, or only the counter is read: the
    // reverse pass must not need (or leak NaN from) the unused tangents, whatever part of
    // the loop the known/unknown split keeps.
    let x = f64s(&[1.5], &[]);
    let scaled_by_count = |a: &[Array]| Ok(vec![(&a[0] * &power_with_counter(&a[0])?[0])?]);
    let count_only = |a: &[Array]| Ok(vec![power_with_counter(&a[0])?.remove(0)]);
    let power_only = |a: &[Array]| Ok(vec![power_with_counter(&a[0])?.remove(1)]);
    let g = |f: &dyn Fn(&[Array]) -> Result<Vec<Array>>| {
        vals(&grad(f, &[0])(std::slice::from_ref(&x)).unwrap()[0])[0]
    };
    assert_eq!(g(&scaled_by_count), 5.0);
    assert_eq!(g(&count_only), 0.0);
    let want = 5.0 * 1.5f64.powi(4);
    let got = g(&power_only);
    assert!((got - want).abs() <= 1e-14 * want, "{got} vs {want}");
    // The same under vmap: every element takes five trips.
    let xs = f64s(&[0.5, 1.0, 2.0], &[3]);
    let per_element = vmap(grad(scaled_by_count, &[0]), &[Some(0)], &[Some(0)]);
    assert_eq!(vals(&per_element(&[xs]).unwrap()[0]), vec![5.0; 3]);
}

#[test]
fn values_and_forward_mode_give_the_plain_while_loops_bits() {
    for x in [0.3, 0.9, 2.0, 50.0] {
        // At rate 1.5 the update has no fixed point below 40, so the plain loop ends.
        let args = [f64s(&[x], &[]), f64s(&[1.5], &[])];
        let plain = |a: &[Array]| {
            let rate = a[1].clone();
            while_loop(
                &|c: &[Array]| Ok(vec![c[0].lt(40.0)?]),
                &move |c: &[Array]| Ok(vec![(&(&c[0] * &rate)? + &c[0].sin()?)?]),
                &a[..1],
            )
        };
        let tangents = [f64s(&[1.0], &[]), f64s(&[0.5], &[])];
        let (vb, tb) = jvp(|a: &[Array]| grow(a, 40.0, 1000), &args, &tangents).unwrap();
        let (vp, tp) = jvp(plain, &args, &tangents).unwrap();
        assert_eq!(vals(&vb[0]), vals(&vp[0]), "x {x}");
        assert_eq!(vals(&tb[0]), vals(&tp[0]), "x {x}");
    }
}

/// Bytes the reverse-mode scans of `grad(f)` keep for the backward pass (summed over the
/// nested loops' backward passes, each built once: one node of each level runs at a time).
fn tape_of(f: impl Fn(&[Array]) -> Result<Vec<Array>> + 'static) -> usize {
    let x = f64s(&[0.5; 16], &[16]);
    quabla::lax::take_scan_tape_bytes();
    quabla::make_program(grad(f, &[0]), &[x]).unwrap();
    quabla::lax::take_scan_tape_bytes()
}

/// `n` trips of a 16-float update, as a bounded loop (bound `n`) and as a scan.
fn tapes(n: usize) -> (usize, usize) {
    let step = |c: &Array| -> Result<Array> { (c * 1.0001)?.sin() };
    let bounded = move |a: &[Array]| -> Result<Vec<Array>> {
        let keep = |c: &[Array]| Ok(vec![c[0].sum(quabla::Axes::All, false)?.lt(1e9)?]);
        let body = |c: &[Array]| Ok(vec![step(&c[0])?]);
        let out = bounded_while_loop(&keep, &body, a, n)?;
        Ok(vec![out[0].sum(quabla::Axes::All, false)?])
    };
    let scanned = move |a: &[Array]| -> Result<Vec<Array>> {
        let body = |c: &[Array], _: &[Array]| Ok((vec![step(&c[0])?], vec![]));
        let out = scan(&body, a, &[], Some(n), false, 1)?.0;
        Ok(vec![out[0].sum(quabla::Axes::All, false)?])
    };
    (tape_of(bounded), tape_of(scanned))
}

/// Carries reverse mode keeps for a bound `n` and a budget of `k` (default: unset): every
/// trip's; under two levels the carry every `stride` trips (one more row when the stride
/// does not divide `n - 1`) and a segment's; under the binomial schedule the budget.
fn kept_carries(n: usize, k: Option<usize>) -> usize {
    let opts = BoundedWhileOptions {
        max_steps: n,
        checkpoints: k,
    };
    match opts.schedule() {
        CheckpointSchedule::EveryTrip => n,
        CheckpointSchedule::TwoLevel { stride } => (n - 1).div_ceil(stride) + 1 + stride,
        CheckpointSchedule::Binomial { snapshots } => snapshots,
    }
}

#[test]
fn reverse_mode_storage_is_two_sqrt_bound_carries() {
    let sizes = [64usize, 1024, 16384];
    let (bounded, scanned): (Vec<usize>, Vec<usize>) = sizes.iter().map(|&n| tapes(n)).unzip();
    println!("tape bytes at n = {sizes:?}: bounded while {bounded:?}; scan {scanned:?}");
    // The scan stores every step (its default under 256 MiB): 16x the steps, 16x the bytes.
    assert_eq!(scanned[2], 16 * scanned[1]);
    // The bounded loop keeps sqrt(n) checkpoints and a segment of sqrt(n) carries.
    let carry = 16 * 8;
    for (b, n) in bounded.iter().zip(sizes) {
        assert_eq!(*b, kept_carries(n, None) * carry, "n = {n}: {bounded:?}");
        assert!(
            *b <= 2 * ((n as f64).sqrt() as usize + 2) * carry,
            "n = {n}"
        );
    }
    assert!(bounded[2] <= 4 * bounded[1] + carry, "{bounded:?}");
    assert!(bounded[2] * 60 < scanned[2], "{bounded:?} vs {scanned:?}");
}

/// Tape bytes of `grad` through `n` trips of a 16-float update bounded by `n`, keeping
/// `checkpoints` carries.
fn tape_with(n: usize, checkpoints: usize) -> usize {
    tape_of(move |a: &[Array]| {
        let keep = |c: &[Array]| Ok(vec![c[0].sum(quabla::Axes::All, false)?.lt(1e9)?]);
        let body = |c: &[Array]| Ok(vec![(&c[0] * 1.0001)?.sin()?]);
        let opts = BoundedWhileOptions {
            max_steps: n,
            checkpoints: Some(checkpoints),
        };
        let out = bounded_while_loop_with(&keep, &body, a, &opts)?;
        Ok(vec![out[0].sum(quabla::Axes::All, false)?])
    })
}

#[test]
fn the_checkpoint_budget_bounds_the_memory() {
    let n = 4096;
    let ks = [1usize, 30, 40, 64, 129, 500, 4096];
    let bytes: Vec<usize> = ks.iter().map(|&k| tape_with(n, k)).collect();
    println!("tape bytes at n = {n}, checkpoints {ks:?}: {bytes:?}");
    let carry = 16 * 8;
    for (b, k) in bytes.iter().zip(ks) {
        assert_eq!(
            *b,
            kept_carries(n, Some(k)) * carry,
            "checkpoints {k}: {bytes:?}"
        );
        // Within the budget, whatever it is.
        assert!(*b <= k * carry, "checkpoints {k}: {bytes:?}");
    }
    // As many checkpoints as trips keeps every carry, as a scan's full tape (a carry a trip).
    assert_eq!(bytes[6], n * carry);
    // A bigger budget never keeps less.
    assert!(bytes.windows(2).all(|w| w[0] <= w[1]), "{bytes:?}");
}

/// `n` trips of `x <- sin(1.0001 x)` (16 floats) that also write each trip's `x` into row
/// `i` of an `[n, 16]` output buffer, as a solver fills its outputs, keeping `checkpoints`
/// carries; returns `Σ w·buffer + Σ x` for weights `w = a[1]`.
fn with_output_buffer(a: &[Array], n: usize, checkpoints: usize) -> Result<Vec<Array>> {
    let init = [
        Array::from_slice_on(a[0].device(), &[0i32], &[])?,
        a[0].clone(),
        Array::from_slice_on(a[0].device(), &vec![0.0f64; n * 16], &[n, 16])?,
    ];
    let keep = move |c: &[Array]| Ok(vec![c[0].lt(n as i32)?]);
    let body = |c: &[Array]| -> Result<Vec<Array>> {
        let x = (&c[1] * 1.0001)?.sin()?;
        let zero = c[0].zeros_like()?;
        let buf = c[2].dynamic_update_slice(&x.expand_dims(0)?, &[&c[0], &zero])?;
        Ok(vec![(&c[0] + 1)?, x, buf])
    };
    let opts = BoundedWhileOptions {
        max_steps: n,
        checkpoints: Some(checkpoints),
    };
    let out = bounded_while_loop_with(&keep, &body, &init, &opts)?;
    let weighted = (&out[2] * &a[1])?.sum(quabla::Axes::All, false)?;
    Ok(vec![(&weighted + &out[1].sum(quabla::Axes::All, false)?)?])
}

#[test]
fn checkpoints_leave_out_carries_the_loop_only_writes() {
    let n = 64;
    let x = f64s(
        &(0..16).map(|i| 0.1 * i as f64 - 0.7).collect::<Vec<_>>(),
        &[16],
    );
    let w: Vec<f64> = (0..n * 16).map(|i| ((i as f64) * 0.37).sin()).collect();
    let w = f64s(&w, &[n, 16]);
    // The buffer is a loop result, but no trip's residuals read it: the checkpoints keep
    // the counter (the row a trip's cotangent reads) and `x` alone, whatever the budget.
    let carry = 4 + 16 * 8;
    for k in [4, 16, n] {
        let w = w.clone();
        quabla::lax::take_scan_tape_bytes();
        let f = move |a: &[Array]| with_output_buffer(&[a[0].clone(), w.clone()], n, k);
        quabla::make_program(grad(f, &[0]), std::slice::from_ref(&x)).unwrap();
        let bytes = quabla::lax::take_scan_tape_bytes();
        assert_eq!(bytes, kept_carries(n, Some(k)) * carry, "checkpoints {k}");
    }
    // The gradient reaches `x` through the buffer's rows: against central differences,
    // and the same bits whichever carries were kept.
    let f = |k: usize| {
        let w = w.clone();
        move |a: &[Array]| with_output_buffer(&[a[0].clone(), w.clone()], n, k)
    };
    check_grads(&f(4), std::slice::from_ref(&x), 1, None).unwrap();
    let g = |k: usize| vals(&grad(f(k), &[0])(std::slice::from_ref(&x)).unwrap()[0]);
    let every = g(n);
    for k in [1, 4, 16] {
        assert_eq!(g(k), every, "checkpoints {k}");
    }
}

#[test]
fn every_checkpoint_count_gives_the_same_values_and_gradients() {
    let x = f64s(&[0.3], &[]);
    let rate = f64s(&[1.1], &[]);
    let run = |k: usize| {
        let f = move |a: &[Array]| -> Result<Vec<Array>> {
            let rate = a[1].clone();
            let body = move |c: &[Array]| Ok(vec![(&(&c[0] * &rate)? + &c[0].sin()?)?]);
            let keep = |c: &[Array]| Ok(vec![c[0].lt(40.0)?]);
            let opts = BoundedWhileOptions {
                max_steps: 50,
                checkpoints: Some(k),
            };
            bounded_while_loop_with(&keep, &body, &a[..1], &opts)
        };
        let args = [x.clone(), rate.clone()];
        let v = vals(&f(&args).unwrap()[0]);
        let g = grad(f, &[0, 1])(&args).unwrap();
        (v, vals(&g[0]), vals(&g[1]))
    };
    // 16: segments of 9 trips, the earlier ones recomputed.
    let base = run(16);
    let n = trips(0.3, 1.1, 40.0, 50);
    // The binomial schedule below two levels (budgets up to 7: one carry recomputes every
    // trip from the start), one segment of 21 at 25, every carry at 50 and more.
    assert!(n > 21, "{n} trips");
    for k in [1, 2, 3, 7, 25, 50, 1000] {
        let (v, g0, g1) = run(k);
        // Values are the same trips whatever the schedule: bit for bit.
        assert_eq!(v, base.0, "checkpoints {k}");
        // The gradient transposes the same trips in the same order, whichever were kept
        // and whichever recomputed: bit for bit too.
        assert_eq!((&g0, &g1), (&base.1, &base.2), "checkpoints {k}");
        let opts = BoundedWhileOptions {
            max_steps: 50,
            checkpoints: Some(k),
        };
        println!("checkpoints {k}: {:?}", opts.schedule());
    }
    let bad = BoundedWhileOptions {
        max_steps: 50,
        checkpoints: Some(0),
    };
    let keep = |c: &[Array]| Ok(vec![c[0].lt(1.0)?]);
    let body = |c: &[Array]| Ok(vec![c[0].clone()]);
    let err = bounded_while_loop_with(&keep, &body, &[x], &bad).unwrap_err();
    assert!(
        err.to_string().contains("checkpoints must be at least 1"),
        "{err}"
    );
}

/// `grow` keeping at most `k` carries for reverse mode.
fn grow_keeping(a: &[Array], k: usize) -> Result<Vec<Array>> {
    let rate = a[1].clone();
    let body = move |c: &[Array]| Ok(vec![(&(&c[0] * &rate)? + &c[0].sin()?)?]);
    let keep = |c: &[Array]| Ok(vec![c[0].lt(40.0)?]);
    let opts = BoundedWhileOptions {
        max_steps: 64,
        checkpoints: Some(k),
    };
    bounded_while_loop_with(&keep, &body, &a[..1], &opts)
}

#[test]
fn the_binomial_schedule_composes_to_second_order_and_under_vmap() {
    for k in [1, 2, 3] {
        let opts = BoundedWhileOptions {
            max_steps: 64,
            checkpoints: Some(k),
        };
        assert_eq!(
            opts.schedule(),
            CheckpointSchedule::Binomial { snapshots: k }
        );
        let f = move |a: &[Array]| grow_keeping(a, k);
        for x in [0.3, 2.0] {
            check_grads(&f, &[f64s(&[x], &[]), f64s(&[1.1], &[])], 2, None)
                .unwrap_or_else(|e| panic!("x {x}, {k} carries: {e}"));
        }
        // Per element under vmap: each element's own trips, the unbatched gradient's bits.
        let xs = [0.3, 5.0, 0.9, 2.0];
        let g = vmap(
            |a: &[Array]| grad(f, &[0, 1])(a),
            &[Some(0), None],
            &[Some(0), Some(0)],
        )(&[f64s(&xs, &[4]), f64s(&[1.1], &[])])
        .unwrap();
        for (i, x) in xs.iter().enumerate() {
            let one = grad(f, &[0, 1])(&[f64s(&[*x], &[]), f64s(&[1.1], &[])]).unwrap();
            assert_eq!(vals(&g[0])[i], vals(&one[0])[0], "x {x}, {k} carries");
            assert_eq!(vals(&g[1])[i], vals(&one[1])[0], "x {x}, {k} carries");
        }
    }
}

#[test]
fn the_primitive_round_trips_through_the_text_and_binary_forms() {
    let args = [f64s(&[0.3], &[]), f64s(&[1.1], &[])];
    for p in [
        quabla::make_program(|a: &[Array]| grow(a, 40.0, 64), &args).unwrap(),
        quabla::make_program(grad(|a: &[Array]| grow(a, 40.0, 64), &[0, 1]), &args).unwrap(),
    ] {
        assert!(p.op_names().contains(&"bounded_while"), "{}", p.to_text());
        let text = p.to_text();
        assert!(text.contains("max_steps=64"), "{text}");
        let back = quabla_abi::qir::Program::parse(&text).unwrap();
        assert_eq!(back, p);
        let bytes = quabla_abi::qir::encode(&p, quabla_abi::qir::QIR_VERSION).unwrap();
        assert_eq!(quabla_abi::qir::decode(&bytes).unwrap(), p);
    }
}
