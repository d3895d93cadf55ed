//! `quabla::nn`: the layers' shapes and equinox's initialisation bounds, the network against
//! a plain Rust evaluation of the same weights, the activations' values and JAX's derivatives
//! at their kinks, gradients through an `Mlp` against central differences, and the errors.

mod common;

use common::cpu;
use quabla::nn::{Activation, Linear, Mlp};
use quabla::tree::{self, Tree};
use quabla::{random, Array, Axes, DType, Error, Result};

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

fn arr(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn net(act: Activation) -> Mlp {
    let key = random::key_on(&cpu(), 7).unwrap();
    Mlp::new(&key, &[3, 16, 8, 2], act, DType::F64).unwrap()
}

#[test]
fn layers_have_their_shapes_and_equinoxs_bounds() {
    let m = net(Activation::Tanh);
    let shapes: Vec<(Vec<usize>, Vec<usize>)> = m
        .layers
        .iter()
        .map(|l| (l.weight.shape().to_vec(), l.bias.shape().to_vec()))
        .collect();
    assert_eq!(
        shapes,
        [
            (vec![3, 16], vec![16]),
            (vec![16, 8], vec![8]),
            (vec![8, 2], vec![2])
        ]
    );
    for l in &m.layers {
        let lim = 1.0 / (l.weight.shape()[0] as f64).sqrt();
        for v in [vals(&l.weight), vals(&l.bias)] {
            assert!(v.iter().all(|x| x.abs() < lim), "inside ±{lim}");
        }
        let w = vals(&l.weight);
        let (lo, hi) = w
            .iter()
            .fold((0.0f64, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
        assert!(
            lo < -0.6 * lim && hi > 0.6 * lim,
            "{lo} {hi} spread over ±{lim}"
        );
    }
    // Each layer has its own key: no two layers start alike.
    assert_ne!(vals(&m.layers[1].bias)[..2], vals(&m.layers[2].bias)[..2]);
    // Six leaves: a weight and a bias per layer, input first.
    assert_eq!(m.leaves().len(), 6);
    assert_eq!(m.activation, Activation::Tanh);
}

/// The network by hand: rows times weights plus bias, tanh between layers.
fn by_hand(m: &Mlp, x: &[f64], rows: usize) -> Vec<f64> {
    let mut h = x.to_vec();
    for (i, l) in m.layers.iter().enumerate() {
        let (fi, fo) = (l.weight.shape()[0], l.weight.shape()[1]);
        let (w, b) = (vals(&l.weight), vals(&l.bias));
        let mut out = vec![0.0; rows * fo];
        for r in 0..rows {
            for o in 0..fo {
                let s: f64 = (0..fi).map(|k| h[r * fi + k] * w[k * fo + o]).sum::<f64>() + b[o];
                out[r * fo + o] = if i + 1 < m.layers.len() { s.tanh() } else { s };
            }
        }
        h = out;
    }
    h
}

#[test]
fn the_network_is_its_layers_composed() {
    let m = net(Activation::Tanh);
    let x: Vec<f64> = (0..12).map(|i| (i as f64 * 0.37).sin()).collect();
    let got = vals(&m.apply(&arr(&x, &[4, 3])).unwrap());
    for (g, w) in got.iter().zip(by_hand(&m, &x, 4)) {
        assert!((g - w).abs() < 1e-13, "{g} vs {w}");
    }
    // One point (a vector) gives one output row.
    let one = vals(&m.apply(&arr(&x[..3], &[3])).unwrap());
    assert_eq!(one, got[..2]);
}

/// A real function, the reference of an activation.
type Scalar = fn(f64) -> f64;

#[test]
fn activations_have_their_values_and_jaxs_kinks() {
    let x = [-30.0, -1.5, -0.0, 0.0, 0.7, 30.0, 800.0];
    let xa = arr(&x, &[7]);
    let cases: [(Activation, Scalar); 6] = [
        (Activation::Tanh, f64::tanh),
        (Activation::Sin, f64::sin),
        (Activation::Relu, |v| v.max(0.0)),
        (Activation::Sigmoid, |v| 1.0 / (1.0 + (-v).exp())),
        (Activation::Softplus, |v| {
            v.max(0.0) + (-v.abs()).exp().ln_1p()
        }),
        (Activation::Silu, |v| v / (1.0 + (-v).exp())),
    ];
    for (act, f) in cases {
        let got = vals(&act.apply(&xa).unwrap());
        for (g, v) in got.iter().zip(x) {
            let want = f(v);
            assert!(
                (g - want).abs() <= 1e-15 * want.abs().max(1.0),
                "{act:?}({v}) = {g}, want {want}"
            );
        }
        // Derivatives: central differences away from the kink at 0.
        let d = tree::grad(move |x: &Array, _: &()| act.apply(x)?.sum(Axes::All, false))(&xa, &())
            .unwrap();
        let d = vals(&d);
        for (i, v) in x.iter().enumerate() {
            if *v != 0.0 && v.abs() < 100.0 {
                let h = 1e-6;
                let fd = (f(v + h) - f(v - h)) / (2.0 * h);
                assert!(
                    (d[i] - fd).abs() < 1e-6,
                    "{act:?}'({v}) = {}, differences {fd}",
                    d[i]
                );
            }
        }
        let at_zero = [d[2], d[3]];
        let want = match act {
            Activation::Relu => 0.0,
            Activation::Sigmoid => 0.25,
            Activation::Softplus | Activation::Silu => 0.5,
            Activation::Tanh | Activation::Sin => 1.0,
        };
        assert_eq!(at_zero, [want, want], "{act:?}'(-0), {act:?}'(0)");
    }
    // No overflow: softplus(800) is 800, its derivative 1.
    assert_eq!(
        vals(&Activation::Softplus.apply(&arr(&[800.0], &[1])).unwrap()),
        [800.0]
    );
}

#[test]
fn gradients_through_an_mlp_match_central_differences() {
    let m = net(Activation::Silu);
    let x = arr(
        &(0..15).map(|i| (i as f64 * 0.61).cos()).collect::<Vec<_>>(),
        &[5, 3],
    );
    let loss = |p: &Mlp, x: &Array| -> Result<Array> {
        let y = p.apply(x)?;
        (&y * &y)?.sum(Axes::All, false)
    };
    let g = tree::grad(loss)(&m, &x).unwrap();
    let leaves = m.leaves();
    let grads = g.leaves();
    for (li, leaf) in leaves.iter().enumerate() {
        let base = vals(leaf);
        for j in [0, base.len() / 2, base.len() - 1] {
            let at = |d: f64| {
                let mut v = base.clone();
                v[j] += d;
                let mut new = leaves.clone();
                new[li] = arr(&v, leaf.shape());
                let p = m.unflatten_like(&mut new.into_iter()).unwrap();
                loss(&p, &x).unwrap().item::<f64>().unwrap()
            };
            let fd = (at(1e-6) - at(-1e-6)) / 2e-6;
            let an = vals(&grads[li])[j];
            assert!(
                (an - fd).abs() < 1e-6 * fd.abs().max(1.0),
                "leaf {li}[{j}]: {an} vs {fd}"
            );
        }
    }
}

#[test]
fn bad_sizes_and_inputs_say_what_is_wrong() {
    let key = random::key_on(&cpu(), 0).unwrap();
    let e = Mlp::new(&key, &[3], Activation::Tanh, DType::F32).unwrap_err();
    assert!(
        matches!(&e, Error::Value(m) if m.contains("at least an input and an output")),
        "{e}"
    );
    let e = Linear::new(&key, 0, 4, DType::F32).unwrap_err();
    assert!(matches!(&e, Error::Value(m) if m.contains("0 -> 4")), "{e}");
    let e = Mlp::new(&key, &[2, 4], Activation::Tanh, DType::I32).unwrap_err();
    assert!(matches!(e, Error::DType(_)), "{e}");
    let m = Mlp::new(&key, &[2, 4, 1], Activation::Tanh, DType::F32).unwrap();
    let wide = Array::from_slice_on(&cpu(), &[0.0f32; 15], &[5, 3]).unwrap();
    let e = m.apply(&wide).unwrap_err();
    assert!(
        matches!(&e, Error::Shape(s) if s.contains("last axis must have 2")),
        "{e}"
    );
    let empty = Mlp {
        layers: vec![],
        activation: Activation::Tanh,
    };
    let point = Array::from_slice_on(&cpu(), &[0.0f32; 2], &[2]).unwrap();
    assert!(matches!(empty.apply(&point), Err(Error::Value(_))));
}
