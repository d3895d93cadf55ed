//! `Expr`: formulas with one `?`, giving the same bits as the `?`-per-step form, carrying
//! the first error, keeping Rust scalars weak, and working inside transformations.

mod common;

use common::cpu;
use quabla::ad::grad;
use quabla::{Array, Axes, DType, Error, Expr, ExprTree, Result};

fn f32s(v: &[f32], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

#[test]
fn a_formula_gives_the_bits_of_the_step_by_step_form() {
    let a = f32s(&[0.5, -1.25, 2.0], &[3]);
    let b = f32s(&[1.5, 0.75, -0.5], &[3]);
    let stepwise = (&(&(&(2.0 * &a).unwrap() + &(&b / 4.0).unwrap()).unwrap() - &b.exp().unwrap())
        .unwrap()
        .tanh()
        .unwrap()
        * &a)
        .unwrap();
    let formula = ((2.0 * a.ex() + b.ex() / 4.0 - b.ex().exp()).tanh() * &a)
        .get()
        .unwrap();
    assert_eq!(
        formula.to_vec::<f32>().unwrap(),
        stepwise.to_vec::<f32>().unwrap()
    );
    // Rust scalars stay weak on either side: f32 in, f32 out.
    assert_eq!((1 - a.ex() * 3.0f32).get().unwrap().dtype(), DType::F32);
    // Arrays on the left, owned or borrowed, and results of fallible calls on the right.
    let m = f32s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let mm = (&m * (m.ex().matmul(m.t()) - 1.0))
        .sum(Axes::All, false)
        .get()
        .unwrap();
    let want = (&m * &(&m.matmul(&m.t().unwrap()).unwrap() - 1.0).unwrap())
        .unwrap()
        .sum(Axes::All, false)
        .unwrap();
    assert_eq!(mm.to_vec::<f32>().unwrap(), want.to_vec::<f32>().unwrap());
    let neg = (-(m.clone() + m.ex())).get().unwrap();
    assert_eq!(neg.to_vec::<f32>().unwrap(), vec![-2.0, -4.0, -6.0, -8.0]);
}

#[test]
fn the_first_error_reaches_get_and_later_steps_do_not_run() {
    let a = f32s(&[1.0, 2.0], &[2]);
    let b = f32s(&[1.0, 2.0, 3.0], &[3]);
    let expected = (&a + &b).unwrap_err().to_string();
    let ran = std::cell::Cell::new(false);
    let e = (a.ex() + &b)
        .then(|x| {
            ran.set(true);
            x.exp()
        })
        .get()
        .unwrap_err();
    assert_eq!(e.to_string(), expected);
    assert!(!ran.get(), "a step after the error ran");
    let r: Result<Array> = (b.ex() * 2.0).into();
    assert!(r.is_ok());
}

#[test]
fn formulas_work_inside_transformations() {
    // d/dx sum(3 x^2 - sin x) = 6x - cos x.
    let f = |x: &[Array]| -> Result<Vec<Array>> {
        Ok(vec![(3.0 * x[0].ex() * &x[0] - x[0].ex().sin())
            .sum(Axes::All, false)
            .get()?])
    };
    let x = Array::from_slice_on(&cpu(), &[0.3f64, -1.1], &[2]).unwrap();
    let g = grad(f, &[0])(std::slice::from_ref(&x)).unwrap();
    let got = g[0].to_vec::<f64>().unwrap();
    for (gi, xi) in got.iter().zip([0.3f64, -1.1]) {
        assert!((gi - (6.0 * xi - xi.cos())).abs() < 1e-14, "{gi}");
    }
    let _: Expr = x.ex();
}

#[test]
fn a_tree_of_formulas_resolves_to_the_same_tree_of_arrays() {
    let x = f32s(&[0.5, -2.0], &[2]);
    let z = f32s(&[1.5, 0.25], &[2]);
    // Nested tuple, array and Vec, with a plain array and a fallible call among the leaves.
    let ((dx, dz), [sq, ex], rest) = (
        (&x * (1.5 - z.ex()), &z * (x.ex() - 3.0)),
        [x.ex() * &x, x.ex().exp()],
        vec![Ok(z.clone()), &x + &z],
    )
        .get()
        .unwrap();
    let stepwise = |a: Result<Array>| a.unwrap().to_vec::<f32>().unwrap();
    let v = |a: &Array| a.to_vec::<f32>().unwrap();
    assert_eq!(v(&dx), stepwise(&x * &(1.5 - &z).unwrap()));
    assert_eq!(v(&dz), stepwise(&z * &(&x - 3.0).unwrap()));
    assert_eq!(v(&sq), stepwise(&x * &x));
    assert_eq!(v(&ex), stepwise(x.exp()));
    assert_eq!(rest.len(), 2);
    assert_eq!(v(&rest[0]), v(&z));
    assert_eq!(v(&rest[1]), stepwise(&x + &z));
}

#[test]
fn a_tree_of_formulas_gives_its_first_error_in_order() {
    let a = f32s(&[1.0, 2.0], &[2]);
    let b = f32s(&[1.0, 2.0, 3.0], &[3]);
    let shape_error = (&a + &b).unwrap_err().to_string();
    // Depth first, left to right: the shape error inside the first element wins over the
    // later value error, in a tuple, an array and a Vec alike.
    let first = || (a.ex() + &b, Expr::from(Error::value("later")));
    assert_eq!(first().get().unwrap_err().to_string(), shape_error);
    let e = [a.ex() * 2.0, Expr::from(Error::value("second"))]
        .get()
        .unwrap_err()
        .to_string();
    assert!(e.contains("second"), "{e}");
    let e = vec![a.ex(), a.ex() - &b, Expr::from(Error::value("third"))]
        .get()
        .unwrap_err()
        .to_string();
    assert_eq!(e, shape_error);
}

#[test]
fn scalars_makes_named_zero_d_arrays() {
    cpu();
    let [alpha, beta, gamma] = Array::scalars([1.5f64, -0.0, f64::INFINITY]).unwrap();
    for s in [&alpha, &beta, &gamma] {
        assert_eq!((s.ndim(), s.dtype()), (0, DType::F64));
    }
    assert_eq!(alpha.item::<f64>().unwrap(), 1.5);
    assert!(beta.item::<f64>().unwrap().is_sign_negative(), "-0 kept");
    assert_eq!(gamma.item::<f64>().unwrap(), f64::INFINITY);
    let [n] = Array::scalars([7i32]).unwrap();
    assert_eq!(n.dtype(), DType::I32);
    let none: [Array; 0] = Array::scalars::<f32, 0>([]).unwrap();
    assert!(none.is_empty());
}
