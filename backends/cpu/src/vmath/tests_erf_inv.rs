//! The `erf_inv` kernels against JAX 0.10.2's `lax.erf_inv` on the CPU, bit for bit
//! (`erf_inv_jax.txt`, recorded by `tools/erf_inv_jax.py`), and against the inverse relation
//! `erf(erf_inv(x)) = x` with an independent `erf` (libm).

use super::{map, map_f64, scalar, scalar_f64};
use quabla_abi::qir::UnaryOp::ErfInv;

const JAX: &str = include_str!("erf_inv_jax.txt");

/// The recorded `(dtype, input bits, output bits)` triples.
fn recorded() -> Vec<(&'static str, u64, u64)> {
    JAX.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            let bits = |s: &str| u64::from_str_radix(s, 16).expect("hex bits");
            (f[0], bits(f[1]), bits(f[2]))
        })
        .collect()
}

#[test]
fn kernels_give_jaxs_bits() {
    let (mut n32, mut n64) = (0, 0);
    let f32k = scalar(ErfInv).expect("an f32 kernel");
    let f64k = scalar_f64(ErfInv).expect("an f64 kernel");
    for (dtype, x, want) in recorded() {
        if dtype == "f32" {
            let got = f32k(f32::from_bits(x as u32));
            assert_eq!(
                got.to_bits() as u64,
                want,
                "erf_inv({:e})",
                f32::from_bits(x as u32)
            );
            n32 += 1;
        } else {
            let got = f64k(f64::from_bits(x));
            assert_eq!(got.to_bits(), want, "erf_inv({:e})", f64::from_bits(x));
            n64 += 1;
        }
    }
    assert!(n32 > 1000 && n64 > 1000, "{n32} f32 and {n64} f64 pairs");
}

#[test]
fn vector_loops_give_the_scalar_bits() {
    let x: Vec<f32> = (0..2000).map(|i| -1.05 + 2.1 * i as f32 / 1999.0).collect();
    let y = map(ErfInv, &x).expect("a kernel");
    let f = scalar(ErfInv).expect("a kernel");
    for (a, b) in x.iter().zip(&y) {
        assert_eq!(b.to_bits(), f(*a).to_bits(), "{a:e}");
    }
    let x: Vec<f64> = x.iter().map(|v| *v as f64).collect();
    let y = map_f64(ErfInv, &x).expect("a kernel");
    let f = scalar_f64(ErfInv).expect("a kernel");
    for (a, b) in x.iter().zip(&y) {
        assert_eq!(b.to_bits(), f(*a).to_bits(), "{a:e}");
    }
}

#[test]
fn ends_domain_and_signs() {
    let f = scalar(ErfInv).expect("f32");
    let g = scalar_f64(ErfInv).expect("f64");
    assert_eq!(f(1.0), f32::INFINITY);
    assert_eq!(f(-1.0), f32::NEG_INFINITY);
    assert_eq!(g(1.0), f64::INFINITY);
    assert_eq!(g(-1.0), f64::NEG_INFINITY);
    assert_eq!(f(-0.0).to_bits(), (-0.0f32).to_bits());
    assert_eq!(g(0.0).to_bits(), 0);
    // Outside [-1, 1]: the one quiet NaN; NaN: itself.
    for x in [1.5f32, -1.0000001, f32::INFINITY] {
        assert_eq!(f(x).to_bits(), f32::NAN.to_bits(), "{x}");
    }
    assert_eq!(g(-2.0).to_bits(), f64::NAN.to_bits());
    let payload = f64::from_bits(0x7FF4_0000_0000_0001);
    assert_eq!(g(payload).to_bits(), payload.to_bits());
    // Subnormals are kept (XLA would flush them): erf_inv(x) = sqrt(pi)/2 x near 0.
    let tiny = f32::from_bits(0x0000_1000);
    assert_eq!(
        f(tiny),
        (tiny as f64 * std::f64::consts::PI.sqrt() / 2.0) as f32
    );
}

#[test]
fn erf_of_the_result_gives_back_the_input() {
    // Giles' polynomials are within a few ulps of erfinv; through erf (slope <= 2/sqrt(pi))
    // that is a few ulps of x too, except near +-1, where erf's slope vanishes.
    for i in 1..4000 {
        let x = -0.98 + 1.96 * i as f64 / 4000.0;
        let y64 = scalar_f64(ErfInv).expect("f64")(x);
        assert!(
            (libm::erf(y64) - x).abs() <= 4e-15,
            "f64 erf(erf_inv({x})) = {}",
            libm::erf(y64)
        );
        let x32 = x as f32;
        let y32 = scalar(ErfInv).expect("f32")(x32);
        let back = libm::erf(y32 as f64);
        assert!(
            (back - x32 as f64).abs() <= 6e-7,
            "f32 erf(erf_inv({x32})) = {back}"
        );
    }
}
