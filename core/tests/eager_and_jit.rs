mod common;

use common::{cpu, values};
use quabla::{jit, Array, Axes, DType, Error};

fn arr(data: &[f32], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), data, shape).unwrap()
}

#[test]
fn eager_arithmetic_matches_hand_computed_values() {
    let x = arr(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let row = arr(&[10.0, 20.0, 30.0], &[3]);
    let y = (&x + &row).unwrap();
    assert_eq!(y.shape(), &[2, 3]);
    assert_eq!(
        y.to_vec::<f32>().unwrap(),
        vec![11.0, 22.0, 33.0, 14.0, 25.0, 36.0]
    );
    let s = x.sum(Axes::Some(&[0]), false).unwrap();
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![5.0, 7.0, 9.0]);
    let m = x.mean(Axes::All, true).unwrap();
    assert_eq!(m.shape(), &[1, 1]);
    assert_eq!(m.item::<f32>().unwrap(), 3.5);
    let e = arr(&[0.0, 1.0], &[2])
        .exp()
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(e, vec![1.0, std::f32::consts::E]);
}

#[test]
fn weak_scalars_keep_f32_and_ints_promote_like_jax() {
    let x = arr(&[1.5, 2.5], &[2]);
    assert_eq!((&x * 2.0).unwrap().dtype(), DType::F32);
    let i = Array::from_slice_on(&cpu(), &[3i32, -7], &[2]).unwrap();
    assert_eq!((&i * 2).unwrap().dtype(), DType::I32);
    assert_eq!((&i * 2.0).unwrap().dtype(), DType::F32);
    assert_eq!((&i + &x).unwrap().dtype(), DType::F32);
    // int / int is true division in the default float, as jnp's `/`.
    let q = (&i / 2).unwrap();
    assert_eq!(q.dtype(), DType::F32);
    assert_eq!(q.to_vec::<f32>().unwrap(), vec![1.5, -3.5]);
    // The truncating integer division of the primitive, and its division-by-zero value.
    let t = i.div_promoted(0).unwrap().to_vec::<i32>().unwrap();
    assert_eq!(t, vec![-1, -1]);
    let d = Array::from_slice_on(&cpu(), &[1.0f64], &[1]).unwrap();
    assert_eq!((&x + &d).unwrap().dtype(), DType::F64);
}

#[test]
fn shape_errors_are_typed_values() {
    let a = arr(&[1.0, 2.0, 3.0], &[3]);
    let b = arr(&[1.0, 2.0], &[2]);
    match &a + &b {
        Err(Error::Shape(m)) => assert!(m.contains("do not broadcast"), "{m}"),
        other => panic!("expected a shape error, got {other:?}"),
    }
    assert!(matches!(a.reshape(&[2, 2]), Err(Error::Shape(_))));
    assert!(matches!(a.matmul(&b), Err(Error::Shape(_))));
    assert!(matches!(a.to_vec::<i32>(), Err(Error::DType(_))));
}

#[test]
fn eager_ops_reuse_their_compiled_executables() {
    let dev = cpu();
    let p = quabla::qir::Program::parse(
        "program(%0: f32[7,13]) {\n  %1 = sin(%0) : f32[7,13]\n  return %1\n}\n",
    )
    .unwrap();
    let first = dev.compile(&p).unwrap();
    let again = dev.compile(&p).unwrap();
    assert!(std::sync::Arc::ptr_eq(&first, &again));
    // An eager op on that type runs exactly this program, through the same cache.
    let a = Array::from_slice_on(&dev, &[0.5f32; 91], &[7, 13]).unwrap();
    assert_eq!(
        a.sin().unwrap().to_vec::<f32>().unwrap(),
        vec![0.5f32.sin(); 91]
    );
    assert!(std::sync::Arc::ptr_eq(&dev.compile(&p).unwrap(), &first));
}

fn model(xs: &[Array]) -> quabla::Result<Vec<Array>> {
    let (x, w, b) = (&xs[0], &xs[1], &xs[2]);
    let h = (x.matmul(w)? + b)?.tanh()?;
    let z = (h.mul(&h)? * 0.5)?.exp()?;
    let s = z.sum(Axes::Some(&[1]), false)?;
    let c = h.cumsum(0, false)?;
    let r = h.gt(0.0)?.select(&h, 0.0)?;
    let m = r.max(Axes::All, false)?;
    Ok(vec![
        s,
        c,
        m,
        h.take(&Array::from_slice_on(h.device(), &[2i32, 0, 9], &[3])?, 0)?,
    ])
}

#[test]
fn jit_matches_eager_bit_for_bit() {
    let x = arr(&values(8 * 16, 1), &[8, 16]);
    let w = arr(&values(16 * 32, 2), &[16, 32]);
    let b = arr(&values(32, 3), &[32]);
    let eager = model(&[x.clone(), w.clone(), b.clone()]).unwrap();
    let f = jit(model);
    let compiled = f.call(&[x, w, b]).unwrap();
    assert_eq!(eager.len(), compiled.len());
    for (e, c) in eager.iter().zip(&compiled) {
        assert_eq!(e.shape(), c.shape());
        let (e, c) = (e.to_vec::<f32>().unwrap(), c.to_vec::<f32>().unwrap());
        let eb: Vec<u32> = e.iter().map(|v| v.to_bits()).collect();
        let cb: Vec<u32> = c.iter().map(|v| v.to_bits()).collect();
        assert_eq!(eb, cb);
    }
}

#[test]
fn jit_traces_once_per_signature() {
    let f = jit(|xs: &[Array]| Ok(vec![(xs[0].sin()? * 3.0)?]));
    let a = arr(&[0.1, 0.2], &[2]);
    let b = arr(&[0.3, 0.4], &[2]);
    let c = arr(&[0.3, 0.4, 0.5], &[3]);
    let ya = f.call(&[a]).unwrap()[0].to_vec::<f32>().unwrap();
    f.call(&[b]).unwrap();
    assert_eq!(f.cache_size(), 1);
    f.call(&[c]).unwrap();
    assert_eq!(f.cache_size(), 2);
    assert_eq!(ya, vec![0.1f32.sin() * 3.0, 0.2f32.sin() * 3.0]);
}

#[test]
fn reading_a_traced_value_is_a_clear_error() {
    let f = jit(|xs: &[Array]| {
        let _ = xs[0].to_vec::<f32>()?;
        Ok(vec![xs[0].clone()])
    });
    match f.call(&[arr(&[1.0], &[1])]) {
        Err(e @ Error::TracedValue) => {
            assert!(e.to_string().contains("return it from the function"))
        }
        other => panic!("expected TracedValue, got {other:?}"),
    }
}

#[test]
fn jit_captures_outside_arrays_as_constants_and_lowers_to_text() {
    let k = arr(&[2.0, 4.0], &[2]);
    let f = jit(move |xs: &[Array]| Ok(vec![(&xs[0] * &k)?]));
    let x = arr(&[1.0, 1.5], &[2]);
    let program = f.lower(std::slice::from_ref(&x)).unwrap();
    let text = program.to_text();
    assert!(text.contains("constant[value=[2.0, 4.0]]"), "{text}");
    assert_eq!(quabla::qir::Program::parse(&text).unwrap(), program);
    assert_eq!(
        f.call(&[x]).unwrap()[0].to_vec::<f32>().unwrap(),
        vec![2.0, 6.0]
    );
}

#[test]
fn indexing_and_matmul_follow_numpy() {
    let x = arr(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let idx = Array::from_slice_on(&cpu(), &[2i32, -1, 0], &[3]).unwrap();
    // Out-of-bounds indices clamp, as JAX's gather does.
    assert_eq!(
        x.take(&idx, 1).unwrap().to_vec::<f32>().unwrap(),
        vec![3.0, 1.0, 1.0, 6.0, 4.0, 4.0]
    );
    let v = arr(&[1.0, 0.0, -1.0], &[3]);
    assert_eq!(
        x.matmul(&v).unwrap().to_vec::<f32>().unwrap(),
        vec![-2.0, -2.0]
    );
    let xt = x.t().unwrap();
    let g = x.matmul(&xt).unwrap();
    assert_eq!(g.shape(), &[2, 2]);
    assert_eq!(g.to_vec::<f32>().unwrap(), vec![14.0, 32.0, 32.0, 77.0]);
    let z = Array::from_slice_on(&cpu(), &[0i32], &[]).unwrap();
    let one = Array::from_slice_on(&cpu(), &[5i32], &[]).unwrap();
    let ds = x.dynamic_slice(&[&z, &one], &[2, 2]).unwrap();
    assert_eq!(ds.to_vec::<f32>().unwrap(), vec![2.0, 3.0, 5.0, 6.0]);
}

#[test]
fn eval_shape_traces_types_without_values() {
    // 40 GB of input: only its type is ever made.
    let big = quabla::TensorType::new(DType::F32, vec![100_000, 100_000]);
    let f = |a: &[Array]| -> quabla::Result<Vec<Array>> {
        let m = a[0].matmul(&a[0])?;
        Ok(vec![m.sum(Axes::All, false)?, m.gt(0.0)?])
    };
    let out = quabla::eval_shape(f, &[big], &cpu()).unwrap();
    assert_eq!(out[0], quabla::TensorType::new(DType::F32, vec![]));
    assert_eq!(
        out[1],
        quabla::TensorType::new(DType::Bool, vec![100_000, 100_000])
    );
}
