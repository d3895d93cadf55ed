//! `quabla::random` against JAX 0.10.2's numbers, recorded by `tests/tools/make_goldens.py`
//! into the Python tests' `jax_random.json` (the same goldens `quabla.random` is tested
//! against): keys, `split`, `fold_in`, `bits` and `[0, 1)` uniforms bit for bit at five
//! seeds (negative and above 2^32 included), scaled uniforms to an ulp, normals bit for bit
//! (f32 and f64, eager and jitted); plus traced keys and refusals.

mod common;

use common::cpu;
use quabla::{jit, random, Array, DType};
use serde_json::Value;

fn goldens() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../bindings/python/tests/goldens/jax_random.json"
    );
    let text = std::fs::read_to_string(path).expect("the recorded JAX goldens are in the tree");
    serde_json::from_str(&text).expect("the goldens are JSON")
}

/// A golden's bytes (`hex`), dtype name and shape.
fn decode(g: &Value) -> (Vec<u8>, String, Vec<usize>) {
    let hex = g["hex"].as_str().expect("hex");
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digits"))
        .collect();
    let shape = g["shape"]
        .as_array()
        .expect("shape")
        .iter()
        .map(|d| d.as_u64().expect("dim") as usize)
        .collect();
    (
        bytes,
        g["dtype"].as_str().expect("dtype").to_string(),
        shape,
    )
}

/// `a` has exactly the golden's dtype, shape and bytes.
fn same(a: &Array, g: &Value, what: &str) {
    let (bytes, dtype, shape) = decode(g);
    let want = match dtype.as_str() {
        "uint32" => DType::U32,
        "float32" => DType::F32,
        "float64" => DType::F64,
        other => panic!("{what}: unexpected golden dtype {other}"),
    };
    assert_eq!(a.dtype(), want, "{what}");
    assert_eq!(a.shape(), shape.as_slice(), "{what}");
    assert_eq!(a.to_host().unwrap().bytes, bytes, "{what}: not JAX's bits");
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The distance in ulps between two finite floats of one sign convention (as integers on
/// a line through zero).
fn ulps64(a: f64, b: f64) -> u64 {
    let line = |x: f64| {
        let i = x.to_bits() as i64;
        if i < 0 {
            i64::MIN - i
        } else {
            i
        }
    };
    line(a).abs_diff(line(b))
}

#[test]
fn keys_splits_bits_and_uniforms_are_jaxs_bit_for_bit() {
    let g = goldens();
    let seeds = g["seeds"].as_object().expect("seeds");
    assert_eq!(seeds.len(), 5);
    for (seed, want) in seeds {
        let k = random::key_on(&cpu(), seed.parse::<i64>().unwrap()).unwrap();
        same(&k, &want["key"], &format!("key({seed})"));
        let split = random::split(&k, &[5]).unwrap();
        same(&split, &want["split5"], &format!("split({seed}, 5)"));
        let split = random::split(&k, &[2, 3]).unwrap();
        same(&split, &want["split2x3"], &format!("split({seed}, (2, 3))"));
        let folded = random::fold_in(&k, 123).unwrap();
        same(&folded, &want["fold_in123"], &format!("fold_in({seed})"));
        let bits = random::bits(&k, &[7]).unwrap();
        same(&bits, &want["bits7"], &format!("bits({seed})"));
        let u = random::uniform(&k, &[4, 5], DType::F32).unwrap();
        same(
            &u,
            &want["uniform_f32_4x5"],
            &format!("uniform f32 ({seed})"),
        );
        let u = random::uniform(&k, &[33], DType::F64).unwrap();
        same(
            &u,
            &want["uniform_f64_33"],
            &format!("uniform f64 ({seed})"),
        );
        // XLA fuses the scaling into an FMA: an ulp apart at most.
        let scaled = random::uniform_range(&k, &[33], DType::F64, -1.0, 4.0).unwrap();
        let (bytes, ..) = decode(&want["uniform_f64_33_m1_4"]);
        for (a, b) in scaled.to_vec::<f64>().unwrap().iter().zip(f64s(&bytes)) {
            assert!(ulps64(*a, b) <= 1, "seed {seed}: {a} vs JAX's {b}");
            assert!((-1.0..4.0).contains(a));
        }
        // split2 is split's two rows.
        let [k1, k2] = random::split2(&k).unwrap();
        let two = random::split(&k, &[2]).unwrap().to_vec::<u32>().unwrap();
        let rows = [k1.to_vec::<u32>().unwrap(), k2.to_vec::<u32>().unwrap()].concat();
        assert_eq!(rows, two, "split2({seed})");
    }
}

#[test]
fn normals_are_jaxs_bits() {
    let g = goldens();
    let k = random::key_on(&cpu(), 3).unwrap();
    let z = random::normal(&k, &[4000], DType::F32).unwrap();
    let (bytes, ..) = decode(&g["normal_f32_seed3"]);
    let got: Vec<u8> = z
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    assert_eq!(got, bytes, "f32 normals");
    let z = random::normal(&k, &[4000], DType::F64).unwrap();
    let (bytes, ..) = decode(&g["normal_f64_seed3"]);
    let le = |z: &Array| -> Vec<u8> {
        z.to_vec::<f64>()
            .unwrap()
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    };
    assert_eq!(le(&z), bytes, "f64 normals");
    // The same bits from a jitted draw (the compiled tier calls the same kernel).
    let f = jit(|a: &[Array]| Ok(vec![random::normal(&a[0], &[4000], DType::F64)?]));
    let z = f.call(&[k]).unwrap().remove(0);
    assert_eq!(le(&z), bytes, "jitted f64 normals");
}

#[test]
fn erfinv_inverts_erf_and_maps_the_ends_to_infinity() {
    let x = Array::from_slice_on(
        &cpu(),
        &[
            -1.0f64,
            -0.999999,
            -0.5,
            -0.0,
            0.0,
            1e-300,
            0.3,
            0.9,
            0.999999999,
            1.0,
        ],
        &[10],
    )
    .unwrap();
    let y = random::erfinv(&x).unwrap();
    let back = y.erf().unwrap().to_vec::<f64>().unwrap();
    let xs = x.to_vec::<f64>().unwrap();
    let ys = y.to_vec::<f64>().unwrap();
    assert_eq!(ys[0], f64::NEG_INFINITY);
    assert_eq!(ys[9], f64::INFINITY);
    for i in 1..9 {
        assert!(
            (back[i] - xs[i]).abs() <= 4e-16 * xs[i].abs().max(1e-300),
            "{i}: {ys:?}"
        );
    }
    // erfinv(0.5), erfinv(0.9) from mpmath (50 digits).
    assert!((ys[2] + 0.476_936_276_204_469_9).abs() < 1e-15);
    assert!((ys[7] - 1.163_087_153_676_674_3).abs() < 1e-15);
}

#[test]
fn keys_may_be_traced() {
    let k = random::key_on(&cpu(), 11).unwrap();
    let draw = jit(|a: &[Array]| {
        let [k1, _] = random::split2(&a[0])?;
        Ok(vec![random::uniform(&k1, &[6], DType::F32)?])
    });
    let traced = draw.call(std::slice::from_ref(&k)).unwrap()[0].clone();
    let [k1, _] = random::split2(&k).unwrap();
    let eager = random::uniform(&k1, &[6], DType::F32).unwrap();
    assert_eq!(
        traced.to_host().unwrap().bytes,
        eager.to_host().unwrap().bytes
    );
}

#[test]
fn bad_keys_and_dtypes_are_refused_with_what_to_do() {
    let not_a_key = Array::from_slice_on(&cpu(), &[1.0f32, 2.0], &[2]).unwrap();
    let e = random::uniform(&not_a_key, &[2], DType::F32).unwrap_err();
    assert!(e.to_string().contains("u32[2]"), "{e}");
    let k = random::key_on(&cpu(), 0).unwrap();
    let e = random::normal(&k, &[2], DType::I32).unwrap_err();
    assert!(e.to_string().contains("DType::F32"), "{e}");
}
