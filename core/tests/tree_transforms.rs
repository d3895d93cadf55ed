//! The tree forms of `jacfwd`, `jacrev`, `vmap`, `lax` control flow and `odeint` against
//! closed forms, the element-by-element computation, and finite differences.

mod common;

use common::cpu;
use quabla::ode::OdeOptions;
use quabla::tree::{self, Tree};
use quabla::{Array, Axes, DType, Result};

fn arr(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

fn close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len(), "{a:?} vs {b:?}");
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{a:?} vs {b:?}");
    }
}

#[derive(Clone, Tree)]
struct Layer {
    w: Array,
    b: Array,
}

/// `tanh(w0 x + w1 x^2 + b)` for each `x`.
fn model(p: &Layer, x: &Array) -> Result<Array> {
    let w0 = p.w.index(&quabla::s![0])?;
    let w1 = p.w.index(&quabla::s![1])?;
    let z = ((&(x * &w0)? + &(&(x * x)? * &w1)?)? + &p.b)?;
    z.tanh()
}

#[test]
fn jacobians_of_a_struct_match_the_closed_form_both_ways() {
    let p = Layer {
        w: arr(&[0.3, -0.7], &[2]),
        b: arr(&[0.1], &[]),
    };
    let xs = [0.5, -1.0, 2.0];
    let x = arr(&xs, &[3]);
    let fwd = tree::jacfwd(model)(&p, &x).unwrap();
    let rev = tree::jacrev(model)(&p, &x).unwrap();
    assert_eq!(fwd.w.shape(), &[3, 2]);
    assert_eq!(fwd.b.shape(), &[3]);
    let mut dw = Vec::new();
    let mut db = Vec::new();
    for &x in &xs {
        let z: f64 = 0.3 * x - 0.7 * x * x + 0.1;
        let s = 1.0 - z.tanh().powi(2);
        dw.extend([s * x, s * x * x]);
        db.push(s);
    }
    for j in [&fwd, &rev] {
        close(&vals(&j.w), &dw, 1e-12);
        close(&vals(&j.b), &db, 1e-12);
    }
}

#[derive(Clone, Tree)]
struct Points {
    x: Array,
    weight: Array,
}

#[test]
fn vmap_over_a_tree_equals_the_element_by_element_loop() {
    let p = Layer {
        w: arr(&[0.3, -0.7], &[2]),
        b: arr(&[0.1], &[]),
    };
    let pts = Points {
        x: arr(&[0.5, -1.0, 2.0, 0.0, 1.5, 3.0, -2.0, 0.25], &[4, 2]),
        weight: arr(&[1.0, 2.0, 0.5, -1.0], &[4]),
    };
    // Per point: (weighted sum of the model over its two coordinates, the coordinates' mean).
    let per_point = |q: &Points, p: &Layer| -> Result<(Array, Array)> {
        let s = (model(p, &q.x)?.sum(Axes::All, false)? * &q.weight)?;
        Ok((s, q.x.mean(Axes::All, false)?))
    };
    let (s, m) = tree::vmap(per_point)(&pts, &p).unwrap();
    assert_eq!(s.shape(), &[4]);
    for i in 0..4isize {
        let one = Points {
            x: pts.x.at(i).unwrap(),
            weight: pts.weight.at(i).unwrap(),
        };
        let (si, mi) = per_point(&one, &p).unwrap();
        close(&[vals(&s)[i as usize]], &vals(&si), 1e-14);
        close(&[vals(&m)[i as usize]], &vals(&mi), 1e-14);
    }
    let none = tree::vmap(|_: &(), p: &Layer| Ok(p.b.clone()))(&(), &p);
    let err = none.expect_err("nothing to map over").to_string();
    assert!(err.contains("no leaves"), "{err}");
}

#[test]
fn loops_and_branches_carry_trees() {
    let init = (arr(&[1.0], &[]), arr(&[0.0], &[]));
    let (a, b) = tree::fori_loop(
        0,
        5,
        |_i, (a, b): &(Array, Array)| Ok(((a * 2.0)?, (b + a)?)),
        &init,
    )
    .unwrap();
    assert_eq!((vals(&a), vals(&b)), (vec![32.0], vec![31.0]));

    let hundred = arr(&[100.0], &[]);
    let doubled = tree::while_loop(
        |c: &Vec<Array>| c[0].lt(&hundred),
        |c: &Vec<Array>| Ok(vec![(&c[0] * 2.0)?, (&c[1] + 1.0)?]),
        &vec![arr(&[1.0], &[]), arr(&[0.0], &[])],
    )
    .unwrap();
    assert_eq!(
        (vals(&doubled[0]), vals(&doubled[1])),
        (vec![128.0], vec![7.0])
    );

    // Running sum and running maximum of a pair of sequences; ys a struct.
    let xs = (arr(&[1.0, 2.0, 3.0], &[3]), arr(&[5.0, -1.0, 4.0], &[3]));
    let (carry, ys) = tree::scan(
        |c: &Array, (u, v): &(Array, Array)| {
            let s = (c + &(u * v)?)?;
            Ok((
                s.clone(),
                Layer {
                    w: s,
                    b: u.maximum(v)?,
                },
            ))
        },
        &arr(&[0.0], &[]),
        &xs,
    )
    .unwrap();
    assert_eq!(vals(&carry), vec![15.0]);
    assert_eq!(vals(&ys.w), vec![5.0, 3.0, 15.0]);
    assert_eq!(vals(&ys.b), vec![5.0, 2.0, 4.0]);

    let op = (arr(&[2.0], &[]), arr(&[3.0], &[]));
    for (pred, want) in [(true, [6.0, 5.0]), (false, [-2.0, -3.0])] {
        let p = Array::from_slice_on(&cpu(), &[pred], &[]).unwrap();
        let out = tree::cond(
            &p,
            |(x, y): &(Array, Array)| {
                Ok(Layer {
                    w: (x * y)?,
                    b: (x + y)?,
                })
            },
            |(x, y): &(Array, Array)| {
                Ok(Layer {
                    w: x.neg()?,
                    b: y.neg()?,
                })
            },
            &op,
        )
        .unwrap();
        assert_eq!(vals(&out.w)[0], want[0]);
        assert_eq!(vals(&out.b)[0], want[1]);
    }
}

#[test]
fn gradients_flow_through_a_tree_loop() {
    // a <- a w three times: the loss w^3 a0 has gradient 3 w^2 a0 in w, w^3 in a0.
    let loss = |p: &Layer, _: &()| -> Result<Array> {
        let (a, _) = tree::fori_loop(
            0,
            3,
            |_i, (a, w): &(Array, Array)| Ok(((a * w)?, w.clone())),
            &(p.b.clone(), p.w.clone()),
        )?;
        Ok(a)
    };
    let p = Layer {
        w: arr(&[1.5], &[]),
        b: arr(&[2.0], &[]),
    };
    let g = tree::grad(loss)(&p, &()).unwrap();
    close(&vals(&g.w), &[3.0 * 1.5 * 1.5 * 2.0], 1e-14);
    close(&vals(&g.b), &[1.5f64.powi(3)], 1e-14);
}

#[test]
fn odeint_on_trees_matches_the_oscillator_and_finite_differences() {
    let t = Array::linspace(0.0, 2.0, 9, DType::F64).unwrap();
    let tv = vals(&t);
    let field = |(x, v): &(Array, Array), _t: &Array, w: &Array| -> Result<(Array, Array)> {
        Ok((v.clone(), (&(w * w)? * x)?.neg()?))
    };
    let opts = OdeOptions {
        rtol: 1e-10,
        atol: 1e-10,
        ..Default::default()
    };
    let y0 = (arr(&[1.0], &[]), arr(&[0.0], &[]));
    let w = arr(&[1.3], &[]);
    let ((xs, vs), stats) = tree::odeint(field, &y0, &t, &w, &opts).unwrap();
    assert!(stats.reached.item::<bool>().unwrap());
    let cos: Vec<f64> = tv.iter().map(|t| (1.3 * t).cos()).collect();
    let sin: Vec<f64> = tv.iter().map(|t| -1.3 * (1.3 * t).sin()).collect();
    close(&vals(&xs), &cos, 1e-8);
    close(&vals(&vs), &sin, 1e-8);

    // d x(2) / dw = -2 sin(2w), through the solve; and by central differences.
    let end = |w: &Array, _: &()| -> Result<Array> {
        let ((xs, _), _) = tree::odeint(field, &y0, &t, w, &opts)?;
        xs.index(&quabla::s![-1])
    };
    let g = tree::grad(end)(&w, &()).unwrap().item::<f64>().unwrap();
    close(&[g], &[-2.0 * (2.0 * 1.3f64).sin()], 1e-7);
    let h = 1e-5;
    let at = |w: f64| end(&arr(&[w], &[]), &()).unwrap().item::<f64>().unwrap();
    close(&[g], &[(at(1.3 + h) - at(1.3 - h)) / (2.0 * h)], 1e-6);
}

#[test]
fn the_tree_trainer_takes_the_flat_trainers_steps() {
    use quabla::optim::{adam, Trainer};
    // A line fitted to 2x + 1: the tree trainer and the flat one, step for step.
    let x = Array::from_slice_on(&cpu(), &[0.0f64, 0.25, 0.5, 0.75, 1.0], &[5]).unwrap();
    let y = ((2.0 * &x).unwrap() + 1.0).unwrap();
    let loss = |p: &Layer, (x, y): &(Array, Array)| -> Result<Array> {
        let r = (&(&(x * &p.w)? + &p.b)? - y)?;
        (&r * &r)?.mean(Axes::All, false)
    };
    let p = Layer {
        w: arr(&[0.0], &[]),
        b: arr(&[0.0], &[]),
    };
    let mut t = tree::Trainer::new(loss, p.clone(), adam(5e-2)).unwrap();
    let batch = (x.clone(), y.clone());
    t.run(200, &batch, false).unwrap();
    let flat_loss = move |a: &[Array]| {
        let q = Layer {
            w: a[0].clone(),
            b: a[1].clone(),
        };
        Ok(vec![loss(&q, &(a[2].clone(), a[3].clone()))?])
    };
    let mut f = Trainer::new(flat_loss, p.leaves(), adam(5e-2)).unwrap();
    f.run(200, &[x, y], false).unwrap();
    let fitted = t.params().unwrap();
    assert_eq!(vals(&fitted.w), vals(&f.params()[0]));
    assert_eq!(vals(&fitted.b), vals(&f.params()[1]));
    assert_eq!(t.loss().unwrap().to_bits(), f.loss().unwrap().to_bits());
    assert_eq!(t.steps(), 200);
    assert!(
        (vals(&fitted.w)[0] - 2.0).abs() < 0.2,
        "{:?}",
        vals(&fitted.w)
    );
}
