//! The everyday Rust API: numpy's basic indexing (`index`, `at`, `s!`) against numpy's
//! results (written out), its gradient; arrays printing their values; scalars on the left
//! of operators with JAX's weak typing; `eye`, `linspace`, `arange_f` against numpy.

mod common;

use common::cpu;
use quabla::{grad, jit, s, Array, Axes, DType, Index};

fn iota(shape: &[usize]) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|i| i as f64).collect();
    Array::from_slice_on(&cpu(), &v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

#[test]
fn basic_indexing_matches_numpy() {
    let x = iota(&[3, 4]);
    // Each expected value is numpy's `np.arange(12.).reshape(3, 4)[...]`.
    let cases: Vec<(Vec<Index>, Vec<usize>, Vec<f64>)> = vec![
        (s![1].to_vec(), vec![4], vec![4.0, 5.0, 6.0, 7.0]),
        (s![-1, -1].to_vec(), vec![], vec![11.0]),
        (s![.., 1].to_vec(), vec![3], vec![1.0, 5.0, 9.0]),
        (s![1.., ..2].to_vec(), vec![2, 2], vec![4.0, 5.0, 8.0, 9.0]),
        (
            s![..-1, 2..=3].to_vec(),
            vec![2, 2],
            vec![2.0, 3.0, 6.0, 7.0],
        ),
        (
            vec![Index::Full, Index::stepped(None, None, -2)],
            vec![3, 2],
            vec![3.0, 1.0, 7.0, 5.0, 11.0, 9.0],
        ),
        (
            vec![Index::stepped(Some(2), None, -1), Index::At(0)],
            vec![3],
            vec![8.0, 4.0, 0.0],
        ),
        (
            vec![Index::NewAxis, Index::At(2), Index::NewAxis],
            vec![1, 1, 4],
            vec![8.0, 9.0, 10.0, 11.0],
        ),
        (s![5..].to_vec(), vec![0, 4], vec![]),
        (s![1..=2, 3].to_vec(), vec![2], vec![7.0, 11.0]),
    ];
    for (ix, shape, want) in cases {
        let got = x.index(&ix).unwrap();
        assert_eq!(got.shape(), shape.as_slice(), "{ix:?}");
        assert_eq!(vals(&got), want, "{ix:?}");
    }
    assert_eq!(vals(&x.at(-1).unwrap()), vec![8.0, 9.0, 10.0, 11.0]);
    let e = x.index(&s![3]).unwrap_err();
    assert!(
        e.to_string()
            .contains("out of bounds for axis 0 of length 3"),
        "{e}"
    );
    let e = x.index(&s![0, 0, 0]).unwrap_err();
    assert!(
        e.to_string().contains("3 indices for an array of rank 2"),
        "{e}"
    );
    let e = x.index(&[Index::stepped(None, None, 0)]).unwrap_err();
    assert!(e.to_string().contains("step must not be zero"), "{e}");
}

#[test]
fn indexing_differentiates_and_traces() {
    let x = iota(&[3, 4]);
    // d/dx sum(x[1:, ::-2] * 2) is 2 at the picked entries, 0 elsewhere.
    let f = |a: &[Array]| {
        let picked = a[0].index(&[
            Index::stepped(Some(1), None, 1),
            Index::stepped(None, None, -2),
        ])?;
        Ok(vec![(&picked * 2.0)?.sum(Axes::All, false)?])
    };
    let g = grad(f, &[0])(std::slice::from_ref(&x)).unwrap();
    let want = [0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, 2.0, 0.0, 2.0, 0.0, 2.0];
    assert_eq!(vals(&g[0]), want);
    let last = jit(|a: &[Array]| Ok(vec![a[0].index(&s![.., -1])?]))
        .call(&[x])
        .unwrap();
    assert_eq!(vals(&last[0]), vec![3.0, 7.0, 11.0]);
}

#[test]
fn arrays_print_their_values() {
    let x = Array::from_slice_on(&cpu(), &[1.0f32, 2.5, -3.0, 4.0], &[2, 2]).unwrap();
    assert_eq!(x.to_string(), "[[ 1.0,  2.5],\n [-3.0,  4.0]]");
    assert_eq!(
        format!("{x:?}"),
        "Array([[ 1.0,  2.5],\n       [-3.0,  4.0]], dtype=f32, device=cpu)"
    );
    let big = Array::from_slice_on(&cpu(), &(0..5000).collect::<Vec<i32>>(), &[5000]).unwrap();
    assert_eq!(big.to_string(), "[   0,    1,    2, ..., 4997, 4998, 4999]");
    // Inside jit there are no values yet: the type is printed.
    let printed = std::sync::Mutex::new(String::new());
    jit(|a: &[Array]| {
        *printed.lock().unwrap() = format!("{} / {:?}", a[0], a[0]);
        Ok(vec![a[0].clone()])
    })
    .call(&[x])
    .unwrap();
    let p = printed.into_inner().unwrap();
    assert!(
        p.starts_with("Traced(f32[2,2] as %") && p.contains(" / Traced("),
        "{p}"
    );
}

#[test]
fn scalars_on_the_left_are_weakly_typed() {
    let x = Array::from_slice_on(&cpu(), &[1.0f32, 2.0, 4.0], &[3]).unwrap();
    let y = (2.0 * &x).unwrap();
    assert_eq!(y.dtype(), DType::F32);
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 8.0]);
    assert_eq!(
        (1.0 - &x).unwrap().to_vec::<f32>().unwrap(),
        vec![0.0, -1.0, -3.0]
    );
    assert_eq!(
        (8.0 / x.clone()).unwrap().to_vec::<f32>().unwrap(),
        vec![8.0, 4.0, 2.0]
    );
    assert_eq!(
        (x.clone() + x.clone()).unwrap().to_vec::<f32>().unwrap(),
        vec![2.0, 4.0, 8.0]
    );
    assert_eq!(
        (-x.clone()).unwrap().to_vec::<f32>().unwrap(),
        vec![-1.0, -2.0, -4.0]
    );
    let i = Array::from_slice_on(&cpu(), &[1i32, 2, 4], &[3]).unwrap();
    // An int scalar stays with the int array; a float one makes the default float; true
    // division of ints gives floats (jnp's `/`).
    assert_eq!((10 - &i).unwrap().to_vec::<i32>().unwrap(), vec![9, 8, 6]);
    assert_eq!((0.5 * &i).unwrap().dtype(), DType::F32);
    assert_eq!(
        (1 / &i).unwrap().to_vec::<f32>().unwrap(),
        vec![1.0, 0.5, 0.25]
    );
    assert_eq!((7 % &i).unwrap().to_vec::<i32>().unwrap(), vec![0, 1, 3]);
}

#[test]
fn creation_matches_numpy() {
    let e = Array::eye(3, DType::F32).unwrap();
    assert_eq!(
        e.to_vec::<f32>().unwrap(),
        vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    );
    assert_eq!(Array::eye(0, DType::F64).unwrap().shape(), &[0, 0]);
    // np.linspace(0, 1, 7): the last value exactly 1, the others i * (1/6).
    let t = Array::linspace(0.0, 1.0, 7, DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    let want: Vec<f64> = (0..7)
        .map(|i| if i == 6 { 1.0 } else { i as f64 * (1.0 / 6.0) })
        .collect();
    assert_eq!(t, want);
    assert_eq!(
        Array::linspace(2.0, 3.0, 1, DType::F32)
            .unwrap()
            .to_vec::<f32>()
            .unwrap(),
        vec![2.0]
    );
    assert_eq!(
        Array::linspace(2.0, 3.0, 0, DType::F32).unwrap().shape(),
        &[0]
    );
    assert!(Array::linspace(0.0, 1.0, 3, DType::I32).is_err());
    // np.arange(1, 2, 0.3) has 4 values; a negative step counts down.
    let a = Array::arange_f(1.0, 2.0, 0.3, DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(a, vec![1.0, 1.3, 1.6, 1.9000000000000001]);
    let d = Array::arange_f(3.0, 0.0, -1.0, DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(d, vec![3.0, 2.0, 1.0]);
    assert!(Array::arange_f(0.0, 1.0, 0.0, DType::F64).is_err());
}
