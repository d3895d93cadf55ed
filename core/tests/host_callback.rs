//! `host_callback`: host functions called from eager code, jitted programs, loops, gradients
//! and vmap, with JAX's rules (pure calls have no derivative; effectful ones see the primal
//! values, once per batch element under vmap) and typed errors for every failure.

mod common;

use common::cpu;
use quabla::ad::{grad, value_and_grad};
use quabla::lax::fori_loop;
use quabla::{host_callback, jit, vmap, Array, HostCallbackOptions, HostFn, VmapMethod};
use quabla_abi::{HostArray, HostView, TensorType};
use std::sync::{Arc, Mutex};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn values(h: &HostView<'_>) -> Vec<f64> {
    h.to_array().to_vec::<f64>().unwrap()
}

/// A host function that records every argument it sees and returns `3 x + 1` (a pure one)
/// or nothing (an effectful one).
fn recorder(log: &Arc<Mutex<Vec<Vec<f64>>>>, returns: bool) -> Arc<HostFn> {
    let log = log.clone();
    Arc::new(move |args: &[HostView<'_>], _: &[TensorType]| {
        let v = values(&args[0]);
        log.lock().unwrap().push(v.clone());
        if !returns {
            return Ok(vec![]);
        }
        let out: Vec<f64> = v.iter().map(|x| 3.0 * x + 1.0).collect();
        Ok(vec![
            HostArray::from_slice(args[0].ty.shape.clone(), &out).map_err(|e| e.to_string())?
        ])
    })
}

fn opts(effectful: bool, vmap: VmapMethod) -> HostCallbackOptions {
    HostCallbackOptions {
        effectful,
        vmap,
        name: if effectful {
            "debug.callback"
        } else {
            "pure_callback"
        }
        .into(),
    }
}

fn like(a: &Array) -> Vec<TensorType> {
    vec![a.tensor_type().clone()]
}

#[test]
fn pure_calls_run_eagerly_and_in_jitted_programs() {
    let log = Arc::new(Mutex::new(vec![]));
    let f = recorder(&log, true);
    let x = f64s(&[1.0, -2.0], &[2]);
    let eager = host_callback(
        f.clone(),
        std::slice::from_ref(&x),
        &like(&x),
        opts(false, VmapMethod::Refuse),
    )
    .unwrap();
    assert_eq!(eager[0].to_vec::<f64>().unwrap(), vec![4.0, -5.0]);
    let g = f.clone();
    let j = jit(move |a: &[Array]| {
        let y = host_callback(
            g.clone(),
            &[a[0].sin()?],
            &like(&a[0]),
            opts(false, VmapMethod::Refuse),
        )?;
        Ok(vec![(&y[0] * 2.0)?])
    });
    for _ in 0..2 {
        let out = j.call(std::slice::from_ref(&x)).unwrap();
        let want: Vec<f64> = [1.0f64, -2.0]
            .iter()
            .map(|v| 2.0 * (3.0 * v.sin() + 1.0))
            .collect();
        assert_eq!(out[0].to_vec::<f64>().unwrap(), want);
    }
    // Once eagerly, once per jitted call (the trace does not call it).
    assert_eq!(log.lock().unwrap().len(), 3);
}

#[test]
fn effectful_calls_run_in_order_in_loops_even_with_no_result_used() {
    let log = Arc::new(Mutex::new(vec![]));
    let f = recorder(&log, false);
    let j = jit(move |a: &[Array]| {
        let body = |i: &Array, c: &[Array]| {
            let v = (&c[0] + &i.astype(quabla::DType::F64)?)?;
            host_callback(
                f.clone(),
                std::slice::from_ref(&v),
                &[],
                opts(true, VmapMethod::Sequential),
            )?;
            Ok(vec![v])
        };
        fori_loop(0, 3, &body, &[a[0].clone()])
    });
    let out = j.call(&[f64s(&[10.0], &[])]).unwrap();
    assert_eq!(out[0].to_vec::<f64>().unwrap(), vec![13.0]);
    assert_eq!(
        *log.lock().unwrap(),
        vec![vec![10.0], vec![11.0], vec![13.0]]
    );
    // A call whose program has no other use for its argument still runs.
    let log2 = Arc::new(Mutex::new(vec![]));
    let g = recorder(&log2, false);
    let k = jit(move |a: &[Array]| {
        host_callback(
            g.clone(),
            &[a[0].exp()?],
            &[],
            opts(true, VmapMethod::Sequential),
        )?;
        Ok(vec![(&a[0] * 2.0)?])
    });
    k.call(&[f64s(&[0.0], &[])]).unwrap();
    assert_eq!(*log2.lock().unwrap(), vec![vec![1.0]]);
    // An effect without arguments inside a traced loop body runs on every trip.
    let trips = Arc::new(Mutex::new(0usize));
    let t = trips.clone();
    let tick: Arc<HostFn> = Arc::new(move |_: &[HostView<'_>], _: &[TensorType]| {
        *t.lock().unwrap() += 1;
        Ok(vec![])
    });
    let m = jit(move |a: &[Array]| {
        let body = |_: &Array, c: &[Array]| {
            host_callback(tick.clone(), &[], &[], opts(true, VmapMethod::Sequential))?;
            Ok(vec![(&c[0] + 1.0)?])
        };
        fori_loop(0, 4, &body, &[a[0].clone()])
    });
    m.call(&[f64s(&[0.0], &[])]).unwrap();
    m.call(&[f64s(&[0.0], &[])]).unwrap();
    assert_eq!(*trips.lock().unwrap(), 8);
}

#[test]
fn effectful_calls_see_primal_values_under_grad_and_pure_calls_refuse_it() {
    let log = Arc::new(Mutex::new(vec![]));
    let f = recorder(&log, false);
    let loss = move |a: &[Array]| {
        host_callback(
            f.clone(),
            std::slice::from_ref(&a[0]),
            &[],
            opts(true, VmapMethod::Sequential),
        )?;
        Ok(vec![(&a[0] * &a[0])?.sum(quabla::Axes::All, false)?])
    };
    let j = jit(move |a: &[Array]| value_and_grad(&loss, &[0], false)(a));
    let out = j.call(&[f64s(&[1.5, 2.0], &[2])]).unwrap();
    assert_eq!(out[1].to_vec::<f64>().unwrap(), vec![3.0, 4.0]);
    // The primal value, seen once, as JAX's debug callbacks.
    assert_eq!(*log.lock().unwrap(), vec![vec![1.5, 2.0]]);
    let p = recorder(&Arc::new(Mutex::new(vec![])), true);
    let pure = move |a: &[Array]| {
        let y = host_callback(
            p.clone(),
            std::slice::from_ref(&a[0]),
            &like(&a[0]),
            opts(false, VmapMethod::Refuse),
        )?;
        Ok(vec![y[0].sum(quabla::Axes::All, false)?])
    };
    let x = f64s(&[1.0], &[1]);
    let e = jit(move |a: &[Array]| grad(&pure, &[0])(a))
        .call(&[x])
        .unwrap_err();
    assert!(e.to_string().contains("no derivative"), "{e}");
}

#[test]
fn vmap_methods_as_jax() {
    let x = f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let run = |method: VmapMethod, log: &Arc<Mutex<Vec<Vec<f64>>>>| {
        let f = recorder(log, true);
        let body = move |a: &[Array]| {
            host_callback(
                f.clone(),
                std::slice::from_ref(&a[0]),
                &like(&a[0]),
                opts(false, method),
            )
        };
        let v = vmap(body, &[Some(0)], &[Some(0)]);
        jit(move |a: &[Array]| v(a)).call(std::slice::from_ref(&x))
    };
    let want: Vec<f64> = (1..=6).map(|v| 3.0 * v as f64 + 1.0).collect();
    // Sequential: one call per row; expand_dims and broadcast_all: one call with the batch.
    for (method, calls) in [
        (VmapMethod::Sequential, 2),
        (VmapMethod::ExpandDims, 1),
        (VmapMethod::BroadcastAll, 1),
    ] {
        let log = Arc::new(Mutex::new(vec![]));
        let out = run(method, &log).unwrap();
        assert_eq!(out[0].to_vec::<f64>().unwrap(), want, "{method:?}");
        assert_eq!(log.lock().unwrap().len(), calls, "{method:?}");
    }
    let e = run(VmapMethod::Refuse, &Arc::new(Mutex::new(vec![]))).unwrap_err();
    assert!(e.to_string().contains("vmap_method"), "{e}");
}

#[test]
fn failures_are_typed_errors_and_loops_stop() {
    let calls = Arc::new(Mutex::new(0usize));
    let c = calls.clone();
    let failing: Arc<HostFn> = Arc::new(move |_: &[HostView<'_>], _: &[TensorType]| {
        *c.lock().unwrap() += 1;
        Err("the callback raised ValueError: bad input".to_string())
    });
    let j = jit(move |a: &[Array]| {
        let f = failing.clone();
        let body = move |_: &Array, carry: &[Array]| {
            let r = host_callback(
                f.clone(),
                &[carry[0].clone()],
                &like(&carry[0]),
                opts(false, VmapMethod::Refuse),
            )?;
            Ok(vec![r[0].clone()])
        };
        fori_loop(0, 1000, &body, &[a[0].clone()])
    });
    let e = j.call(&[f64s(&[1.0], &[])]).unwrap_err();
    assert!(e.to_string().contains("bad input"), "{e}");
    // The loop stopped at the first failure.
    assert_eq!(*calls.lock().unwrap(), 1);
    // A result of the wrong type is refused, naming both types.
    let wrong: Arc<HostFn> = Arc::new(|_: &[HostView<'_>], _: &[TensorType]| {
        Ok(vec![HostArray::from_f32(vec![1], &[1.0])])
    });
    let k = jit(move |a: &[Array]| {
        host_callback(
            wrong.clone(),
            &[a[0].clone()],
            &like(&a[0]),
            opts(false, VmapMethod::Refuse),
        )
    });
    let e = k.call(&[f64s(&[1.0], &[1])]).unwrap_err();
    assert!(
        e.to_string().contains("f32[1]") && e.to_string().contains("f64[1]"),
        "{e}"
    );
}
