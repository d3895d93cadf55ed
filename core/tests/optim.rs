//! Optimizers against an independent scalar re-implementation of optax's rules, fed the same
//! gradients: the trajectories must agree bit for bit in f64.

mod common;

use common::cpu;
use quabla::ad::grad;
use quabla::optim::*;
use quabla::{jit, Array, Axes, Result};

fn f64s(v: &[f64]) -> Array {
    Array::from_slice_on(&cpu(), v, &[v.len()]).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

/// A badly scaled quadratic: sum(w (p - t)^2).
fn loss(a: &[Array]) -> Result<Vec<Array>> {
    let w = Array::from_slice_on(a[0].device(), &[1.0f64, 10.0, 0.1, 3.0], &[4])?;
    let t = Array::from_slice_on(a[0].device(), &[0.5f64, -1.0, 2.0, 0.0], &[4])?;
    let d = (&a[0] - &t)?;
    Ok(vec![(&(&d * &d)? * &w)?.sum(Axes::All, false)?])
}

/// Runs `opt` for `steps` steps; returns the gradients used and the parameter trajectory.
fn run(opt: &Optimizer, steps: usize) -> (Vec<Vec<f64>>, Vec<Vec<f64>>) {
    let g = grad(loss, &[0]);
    let mut params = vec![f64s(&[1.0, 1.0, -1.0, 0.3])];
    let mut state = opt.init(&params).unwrap();
    let (mut gs, mut ps) = (vec![], vec![]);
    for _ in 0..steps {
        let gr = g(&params).unwrap();
        gs.push(vals(&gr[0]));
        let (u, s) = opt.update(&gr, &state, &params).unwrap();
        params = apply_updates(&params, &u).unwrap();
        state = s;
        ps.push(vals(&params[0]));
    }
    (gs, ps)
}

/// optax's adam/adamw in scalar f64, in optax's order of operations.
fn adam_reference(
    gs: &[Vec<f64>],
    p0: &[f64],
    lr: &dyn Fn(usize) -> f64,
    wd: f64,
) -> Vec<Vec<f64>> {
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
    let n = p0.len();
    let (mut p, mut mu, mut nu) = (p0.to_vec(), vec![0.0; n], vec![0.0; n]);
    let mut out = vec![];
    for (step, g) in gs.iter().enumerate() {
        let c = (step + 1) as f64;
        for i in 0..n {
            mu[i] = g[i] * (1.0 - b1) + mu[i] * b1;
            nu[i] = g[i] * g[i] * (1.0 - b2) + nu[i] * b2;
            let m_hat = mu[i] / (-b1.powf(c) + 1.0);
            let v_hat = nu[i] / (-b2.powf(c) + 1.0);
            let mut u = m_hat / ((v_hat + 0.0).sqrt() + eps);
            u += p[i] * wd;
            u *= -lr(step);
            p[i] += u;
        }
        out.push(p.clone());
    }
    out
}

#[test]
fn adam_matches_optax_rule_bit_for_bit() {
    let (gs, ps) = run(&adam(1e-2), 120);
    let want = adam_reference(&gs, &[1.0, 1.0, -1.0, 0.3], &|_| 1e-2, 0.0);
    assert_eq!(ps, want);
    // It optimises: the loss drops.
    assert!(
        vals(&loss(&[f64s(&ps[119])]).unwrap()[0])[0]
            < vals(&loss(&[f64s(&[1.0, 1.0, -1.0, 0.3])]).unwrap()[0])[0] / 2.0
    );
}

#[test]
fn adamw_with_a_schedule_matches_optax_rule_bit_for_bit() {
    let sched = exponential_decay(2e-2, 10, 0.5, false);
    let (gs, ps) = run(&adamw(LearningRate::Schedule(sched), 1e-2), 100);
    let want = adam_reference(
        &gs,
        &[1.0, 1.0, -1.0, 0.3],
        &|s| 2e-2 * 0.5f64.powf(s as f64 / 10.0),
        1e-2,
    );
    assert_eq!(ps, want);
}

#[test]
fn sgd_momentum_nesterov_rmsprop_and_clipping_follow_optax() {
    // SGD with Nesterov momentum: t = g + m t; u = -lr (g + m t).
    let (gs, ps) = run(&sgd(0.01, Some(0.9), true), 30);
    let mut p = vec![1.0, 1.0, -1.0, 0.3];
    let mut t = [0.0; 4];
    for (k, g) in gs.iter().enumerate() {
        for i in 0..4 {
            t[i] = g[i] + t[i] * 0.9;
            p[i] += (g[i] + t[i] * 0.9) * -0.01;
        }
        assert_eq!(ps[k], p);
    }
    // RMSProp: nu = (1 - d) g^2 + d nu; u = -lr g / sqrt(nu + eps).
    let (gs, ps) = run(&rmsprop(0.01, 0.9, 1e-8), 30);
    let mut p = vec![1.0, 1.0, -1.0, 0.3];
    let mut nu = [0.0; 4];
    for (k, g) in gs.iter().enumerate() {
        for i in 0..4 {
            nu[i] = g[i] * g[i] * (1.0 - 0.9) + nu[i] * 0.9;
            p[i] += g[i] * (1.0 / (nu[i] + 1e-8).sqrt()) * -0.01;
        }
        for (a, b) in ps[k].iter().zip(&p) {
            assert!((a - b).abs() <= 1e-15 * b.abs().max(1.0), "{a} vs {b}");
        }
    }
    // Global-norm clipping rescales every leaf by max_norm / norm when the norm is larger.
    let clip = clip_by_global_norm(1.0);
    let g = vec![f64s(&[3.0, 4.0]), f64s(&[0.0, 12.0])];
    let (u, _) = (clip.update)(&g, &[], &[]).unwrap();
    assert_eq!(vals(&u[0]), vec![3.0 / 13.0, 4.0 / 13.0]);
    assert_eq!(vals(&u[1]), vec![0.0, 12.0 / 13.0]);
    let small = vec![f64s(&[0.3, 0.4])];
    assert_eq!(
        vals(&(clip.update)(&small, &[], &[]).unwrap().0[0]),
        vec![0.3, 0.4]
    );
}

#[test]
fn schedules_match_their_formulas() {
    let at = |s: &Schedule, c: i32| {
        vals(
            &s(
                &Array::from_slice_on(&cpu(), &[c], &[]).unwrap(),
                quabla::DType::F64,
            )
            .unwrap(),
        )[0]
    };
    let pi = std::f64::consts::PI;
    assert_eq!(at(&constant(0.3), 7), 0.3);
    assert_eq!(at(&exponential_decay(1.0, 10, 0.5, true), 25), 0.25);
    assert_eq!(
        at(&exponential_decay(1.0, 10, 0.5, false), 5),
        0.5f64.powf(0.5)
    );
    let c = cosine_decay(2.0, 100, 0.1);
    assert!((at(&c, 25) - 2.0 * (0.9 * 0.5 * (1.0 + (pi * 0.25).cos()) + 0.1)).abs() < 1e-15);
    assert!((at(&c, 500) - 0.2).abs() < 1e-15);
    let w = warmup_cosine_decay(0.0, 1.0, 10, 110, 0.1);
    assert!((at(&w, 5) - 0.5).abs() < 1e-15);
    assert!((at(&w, 10) - 1.0).abs() < 1e-15);
    assert!((at(&w, 60) - (0.9 * 0.5 * (1.0 + (pi * 0.5).cos()) + 0.1)).abs() < 1e-15);
    let pc = piecewise_constant(1.0, vec![(10, 0.5), (20, 0.1)]);
    assert_eq!([at(&pc, 9), at(&pc, 10), at(&pc, 25)], [1.0, 0.5, 0.05]);
}

#[test]
fn f32_parameters_keep_f32_state_and_a_jitted_step_equals_the_eager_one() {
    let opt = adamw(1e-3, 1e-4);
    let params = vec![Array::from_slice_on(&cpu(), &[0.5f32, -0.25, 2.0], &[3]).unwrap()];
    let state = opt.init(&params).unwrap();
    assert!(state
        .iter()
        .skip(1)
        .all(|s| s.dtype() == quabla::DType::F32));
    let grads = vec![Array::from_slice_on(&cpu(), &[0.1f32, -3.0, 0.02], &[3]).unwrap()];
    let o2 = opt.clone();
    let n = state.len();
    let step = jit(move |a: &[Array]| {
        let (u, s) = (o2.update)(&a[..1], &a[2..2 + n], &a[1..2])?;
        let mut out = apply_updates(&a[1..2], &u)?;
        out.extend(s);
        Ok(out)
    });
    let mut args = grads.clone();
    args.extend(params.clone());
    args.extend(state.clone());
    let jitted = step.call(&args).unwrap();
    let (u, s) = opt.update(&grads, &state, &params).unwrap();
    let eager = apply_updates(&params, &u).unwrap();
    assert_eq!(
        jitted[0]
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>(),
        eager[0]
            .to_vec::<f32>()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect::<Vec<_>>()
    );
    assert_eq!(jitted.len(), 1 + s.len());
}

/// The quadratic with its target and weights passed as the batch.
fn batch_loss(a: &[Array]) -> Result<Vec<Array>> {
    let d = (&a[0] - &a[1])?;
    Ok(vec![(&(&d * &d)? * &a[2])?.sum(Axes::All, false)?])
}

#[test]
fn trainer_keeps_state_on_device_and_matches_the_manual_loop() {
    let p0 = f64s(&[1.0, 1.0, -1.0, 0.3]);
    let batch = [f64s(&[0.5, -1.0, 2.0, 0.0]), f64s(&[1.0, 10.0, 0.1, 3.0])];
    let mut t = Trainer::new(batch_loss, vec![p0.clone()], adam(1e-2)).unwrap();
    assert!(t.loss().is_err(), "no loss before the first step");
    t.run(50, &batch, false).unwrap();
    assert_eq!(t.steps(), 50);
    // The same 50 steps by hand, eagerly.
    let opt = adam(1e-2);
    let g = grad(batch_loss, &[0]);
    let mut params = vec![p0];
    let mut state = opt.init(&params).unwrap();
    for _ in 0..50 {
        let mut args = params.clone();
        args.extend(batch.iter().cloned());
        let (u, s) = opt.update(&g(&args).unwrap(), &state, &params).unwrap();
        params = apply_updates(&params, &u).unwrap();
        state = s;
    }
    assert_eq!(vals(&t.params()[0]), vals(&params[0]));
    // The loss is read back on request: the value before the last update, below the start.
    let initial = batch_loss(&[
        f64s(&[1.0, 1.0, -1.0, 0.3]),
        batch[0].clone(),
        batch[1].clone(),
    ])
    .unwrap()[0]
        .item::<f64>()
        .unwrap();
    assert!(
        t.loss().unwrap() < 0.9 * initial,
        "{} vs {initial}",
        t.loss().unwrap()
    );
    // A bad batch is refused before anything is donated: the state survives.
    let p_before = vals(&t.params()[0]);
    assert!(t.step(&[f64s(&[1.0, 2.0]), batch[1].clone()]).is_err());
    assert_eq!(vals(&t.params()[0]), p_before);
    assert_eq!(t.steps(), 50);
    t.step(&batch).unwrap();
    assert_eq!(t.steps(), 51);
    assert_eq!(
        t.params_to_host().unwrap()[0].to_vec::<f64>().unwrap(),
        vals(&t.params()[0])
    );
}

/// The parameters as three leaves ([2], [1], [1]): every optimizer's state is laid out per
/// leaf, and an elementwise rule must give each leaf what it gives the same entries of one
/// flat parameter, bit for bit.
#[test]
fn every_optimizer_handles_several_leaves_as_one_flat_parameter() {
    let split = |p: &Array| -> Vec<Array> {
        vec![
            p.slice(&[0], &[2], &[1]).unwrap(),
            p.slice(&[2], &[3], &[1]).unwrap(),
            p.slice(&[3], &[4], &[1]).unwrap(),
        ]
    };
    let leaf_loss = |a: &[Array]| -> Result<Vec<Array>> {
        let refs: Vec<&Array> = a.iter().collect();
        loss(&[Array::concatenate(&refs, 0)?])
    };
    let optimizers: Vec<(&str, Optimizer)> = vec![
        ("adam", adam(1e-2)),
        ("adamw", adamw(1e-2, 1e-2)),
        ("sgd", sgd(0.01, Some(0.9), true)),
        ("rmsprop", rmsprop(0.01, 0.9, 1e-8)),
        (
            "chain",
            chain(vec![
                scale_by_adam(0.9, 0.999, 1e-8, 0.0),
                trace(0.5, false),
                scale(-0.01),
            ]),
        ),
    ];
    for (name, opt) in optimizers {
        let (_, flat) = run(&opt, 15);
        let g = grad(leaf_loss, &[0, 1, 2]);
        let mut params = split(&f64s(&[1.0, 1.0, -1.0, 0.3]));
        let mut state = opt.init(&params).unwrap();
        for (k, want) in flat.iter().enumerate() {
            let (u, s) = opt.update(&g(&params).unwrap(), &state, &params).unwrap();
            params = apply_updates(&params, &u).unwrap();
            state = s;
            let got: Vec<f64> = params.iter().flat_map(vals).collect();
            assert_eq!(&got, want, "{name}, step {k}");
        }
    }
}
