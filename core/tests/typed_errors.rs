//! Each kind of failure reaches the caller as its own `Error` variant, so front ends can raise
//! the matching exception: an op the device's backend lacks is `Unsupported` naming the op and
//! the backend (checked on the `toy` example plugin, which has add, mul, neg and exp only);
//! shapes, dtypes and argument values are `Shape`, `DType` and `Value`.
//! Needs the toy plugin built (`cargo xtask test` builds it first).

mod common;

use quabla::{Array, Error, HostArray};

#[test]
fn an_op_the_backend_lacks_is_unsupported_naming_op_and_backend() {
    quabla::runtime::Registry::global()
        .add_search_path(&common::built_library("quabla_toy_backend"));
    let toy = quabla::runtime::device("toy").unwrap();
    let x = HostArray::from_slice(vec![3], &[0.5f32, 1.0, 2.0]).unwrap();
    let a = Array::from_host_on(&toy, &x).unwrap();
    // What the toy backend has runs there.
    let e = a.exp().unwrap().to_vec::<f32>().unwrap();
    assert_eq!(e, vec![0.5f32.exp(), 1.0f32.exp(), 2.0f32.exp()]);
    match a.sin() {
        Err(Error::Unsupported { op, backend }) => {
            assert_eq!((op.as_str(), backend.as_str()), ("sin", "toy"));
        }
        other => panic!("expected Unsupported, got {other:?}"),
    }
    let m = a.sin().unwrap_err().to_string();
    assert!(m.contains("`sin`") && m.contains("`toy`"), "{m}");
}

#[test]
fn shape_dtype_and_value_errors_are_told_apart() {
    let cpu = common::cpu();
    let on_cpu = |h: HostArray| Array::from_host_on(&cpu, &h).unwrap();
    let f = on_cpu(HostArray::from_slice(vec![2], &[1.0f32, 2.0]).unwrap());
    let g = on_cpu(HostArray::from_slice(vec![3], &[1.0f32, 2.0, 3.0]).unwrap());
    assert!(matches!(&f + &g, Err(Error::Shape(_))));
    let i = on_cpu(HostArray::from_slice(vec![2], &[1i32, 2]).unwrap());
    assert!(matches!(
        quabla::ad::grad(
            |a: &[Array]| Ok(vec![a[0].sum(quabla::Axes::All, false)?]),
            &[0]
        )(&[i]),
        Err(Error::DType(_))
    ));
    assert!(matches!(Array::concatenate(&[], 0), Err(Error::Value(_))));
}
