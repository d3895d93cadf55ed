//! Parameter trees: flatten order and rebuilding for every implementation and for
//! `#[derive(Tree)]` (named, tuple, generic, unit structs, static fields), the errors of a
//! wrong leaf count, `tree::value_and_grad` against closed forms, and an Adam fit on a
//! struct of parameters that gives the flat API's bits.

mod common;

use common::cpu;
use quabla::optim::{adam, apply_updates};
use quabla::tree::{self, Tree};
use quabla::{Array, Axes, Result};
use std::collections::{BTreeMap, HashMap};

fn scalar(v: f64) -> Array {
    Array::from_slice_on(&cpu(), &[v], &[]).unwrap()
}

fn values(t: &impl Tree) -> Vec<f64> {
    t.leaves()
        .iter()
        .map(|a| a.item::<f64>().unwrap())
        .collect()
}

#[derive(Clone, Tree)]
struct Layer {
    w: Array,
    b: Array,
}

#[derive(Clone, Tree)]
struct Net<T> {
    layers: Vec<T>,
    scale: Option<Array>,
    #[tree(static)]
    name: String,
}

#[derive(Clone, Tree)]
struct Pair(Array, (Array, Array));

#[derive(Clone, Tree)]
struct Nothing;

#[test]
fn leaves_come_in_field_and_key_order_and_rebuild() {
    let net = Net {
        layers: vec![
            Layer {
                w: scalar(1.0),
                b: scalar(2.0),
            },
            Layer {
                w: scalar(3.0),
                b: scalar(4.0),
            },
        ],
        scale: Some(scalar(5.0)),
        name: "mlp".into(),
    };
    assert_eq!(values(&net), vec![1.0, 2.0, 3.0, 4.0, 5.0]);
    let doubled = net.map_leaves(|a| a * 2.0).unwrap();
    assert_eq!(values(&doubled), vec![2.0, 4.0, 6.0, 8.0, 10.0]);
    assert_eq!(doubled.name, "mlp", "static fields are cloned, not leaves");
    let pair = Pair(scalar(1.0), (scalar(2.0), scalar(3.0)));
    assert_eq!(values(&pair), vec![1.0, 2.0, 3.0]);
    assert!(Nothing.leaves().is_empty());
    assert!(Nothing.with_leaves(vec![]).is_ok());
    let none: Option<Array> = None;
    assert!(none.leaves().is_empty());
    let arr = [scalar(1.0), scalar(2.0)];
    assert_eq!(
        values(&arr.map_leaves(|a| a + 1.0).unwrap()),
        vec![2.0, 3.0]
    );
    // Maps: key order, whatever the insertion order or the hasher's.
    let mut h = HashMap::new();
    let mut b = BTreeMap::new();
    for (k, v) in [("c", 3.0), ("a", 1.0), ("b", 2.0)] {
        h.insert(k.to_string(), scalar(v));
        b.insert(k.to_string(), scalar(v));
    }
    assert_eq!(values(&h), vec![1.0, 2.0, 3.0]);
    assert_eq!(values(&b), vec![1.0, 2.0, 3.0]);
    let h2 = h
        .with_leaves(vec![scalar(10.0), scalar(20.0), scalar(30.0)])
        .unwrap();
    assert_eq!(h2["a"].item::<f64>().unwrap(), 10.0);
    assert_eq!(h2["c"].item::<f64>().unwrap(), 30.0);
    let zipped = (scalar(1.0), vec![scalar(2.0)])
        .zip_map(&(scalar(10.0), vec![scalar(20.0)]), |x, y| x + y)
        .unwrap();
    assert_eq!(values(&zipped), vec![11.0, 22.0]);
}

#[test]
fn a_wrong_number_of_leaves_is_an_error() {
    let t = (scalar(1.0), scalar(2.0));
    let few = t.with_leaves(vec![scalar(1.0)]).unwrap_err();
    assert!(few.to_string().contains("fewer leaves"), "{few}");
    let many = t
        .with_leaves(vec![scalar(1.0), scalar(2.0), scalar(3.0)])
        .unwrap_err();
    assert!(
        many.to_string().contains("has 2 leaves, 3 were given"),
        "{many}"
    );
    let e = vec![scalar(1.0)]
        .zip_map(&vec![], |x, _| Ok(x.clone()))
        .unwrap_err();
    assert!(e.to_string().contains("one structure"), "{e}");
}

/// `sum((w x + b - y)^2)` over the data `(x, y)`.
fn squared_error(p: &Layer, data: &(Array, Array)) -> Result<Array> {
    let r = (&(&(&data.0 * &p.w)? + &p.b)? - &data.1)?;
    (&r * &r)?.sum(Axes::All, false)
}

fn data() -> (Array, Array) {
    let x = Array::from_slice_on(&cpu(), &[0.0f64, 1.0, 2.0, 3.0], &[4]).unwrap();
    let y = Array::from_slice_on(&cpu(), &[1.0f64, 2.5, 5.5, 6.0], &[4]).unwrap();
    (x, y)
}

#[test]
fn value_and_grad_of_a_struct_matches_the_closed_form() {
    let p = Layer {
        w: scalar(1.5),
        b: scalar(-0.5),
    };
    let d = data();
    let (v, g) = tree::value_and_grad(squared_error)(&p, &d).unwrap();
    let (xs, ys) = ([0.0, 1.0, 2.0, 3.0], [1.0, 2.5, 5.5, 6.0]);
    let r: Vec<f64> = xs.iter().zip(ys).map(|(x, y)| 1.5 * x - 0.5 - y).collect();
    let want_v: f64 = r.iter().map(|r| r * r).sum();
    let want_w: f64 = r.iter().zip(xs).map(|(r, x)| 2.0 * r * x).sum();
    let want_b: f64 = r.iter().map(|r| 2.0 * r).sum();
    assert!((v.item::<f64>().unwrap() - want_v).abs() < 1e-12);
    assert!((g.w.item::<f64>().unwrap() - want_w).abs() < 1e-12);
    assert!((g.b.item::<f64>().unwrap() - want_b).abs() < 1e-12);
    let g2 = tree::grad(squared_error)(&p, &d).unwrap();
    assert_eq!(values(&g2), values(&g));
}

#[test]
fn adam_on_a_struct_gives_the_flat_apis_bits() {
    let d = data();
    let opt = adam(0.05);
    // The tree way: no indices.
    let mut p = Layer {
        w: scalar(0.0),
        b: scalar(0.0),
    };
    let mut state = opt.init(&p).unwrap();
    let vg = tree::value_and_grad(squared_error);
    let mut first_loss = None;
    for _ in 0..200 {
        let (loss, g) = vg(&p, &d).unwrap();
        first_loss.get_or_insert(loss.item::<f64>().unwrap());
        let (u, s) = opt.update(&g, &state, &p).unwrap();
        p = apply_updates(&p, &u).unwrap();
        state = s;
    }
    // The flat way, by hand.
    let loss_flat = |a: &[Array]| -> Result<Vec<Array>> {
        let layer = Layer {
            w: a[0].clone(),
            b: a[1].clone(),
        };
        Ok(vec![squared_error(&layer, &(a[2].clone(), a[3].clone()))?])
    };
    let mut flat = vec![scalar(0.0), scalar(0.0)];
    let mut fstate = opt.init(&flat[..]).unwrap();
    for _ in 0..200 {
        let args = [flat.clone(), vec![d.0.clone(), d.1.clone()]].concat();
        let g = quabla::grad(loss_flat, &[0, 1])(&args).unwrap();
        let (u, s) = opt.update(&g[..], &fstate, &flat[..]).unwrap();
        flat = apply_updates(&flat[..], &u[..]).unwrap();
        fstate = s;
    }
    assert_eq!(values(&p), values(&flat));
    // And it heads for the least-squares line of y on x: w = 1.8, b = 1.05.
    let (w, b) = (p.w.item::<f64>().unwrap(), p.b.item::<f64>().unwrap());
    assert!((w - 1.8).abs() < 0.15 && (b - 1.05).abs() < 0.3, "{w} {b}");
    assert!(first_loss.unwrap() > squared_error(&p, &d).unwrap().item::<f64>().unwrap());
}

#[test]
fn a_jitted_training_step_takes_and_returns_trees() {
    let d = data();
    let opt = adam(0.05);
    let p0 = Layer {
        w: scalar(0.0),
        b: scalar(0.0),
    };
    let s0 = opt.init(&p0).unwrap();
    let o = opt.clone();
    let step = tree::jit(move |(p, s, d): &(Layer, Vec<Array>, (Array, Array))| {
        let (loss, g) = tree::value_and_grad(squared_error)(p, d)?;
        let (u, s) = o.update(&g, s, p)?;
        Ok((apply_updates(p, &u)?, s, loss))
    });
    let (mut p, mut s) = (p0.clone(), s0.clone());
    let (mut pe, mut se) = (p0, s0);
    for _ in 0..20 {
        let (p1, s1, _loss) = step.call(&(p, s, d.clone())).unwrap();
        (p, s) = (p1, s1);
        let g = tree::grad(squared_error)(&pe, &d).unwrap();
        let (u, s2) = opt.update(&g, &se, &pe).unwrap();
        (pe, se) = (apply_updates(&pe, &u).unwrap(), s2);
    }
    for (a, b) in values(&p).iter().zip(values(&pe)) {
        assert!(
            (a - b).abs() <= 1e-12 * b.abs().max(1.0),
            "{a} vs eager {b}"
        );
    }
    assert_eq!(s.len(), se.len());
}
