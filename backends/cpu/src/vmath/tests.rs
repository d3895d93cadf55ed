//! The kernels against libm's f64 functions (accurate to well under an f32 ulp, so their value
//! rounded to f32 stands for the correctly rounded result): within 1 ulp on a sample of every
//! exponent range plus the edge inputs, and on all 2^32 inputs in the ignored
//! `all_f32_inputs_are_within_one_ulp`. The vector loop must give the scalar callouts' bits.

use super::{map, scalar};
use quabla_abi::qir::UnaryOp;
use rayon::prelude::*;

fn reference(op: UnaryOp) -> fn(f64) -> f64 {
    use UnaryOp::*;
    match op {
        Rsqrt => |v| 1.0 / v.sqrt(),
        Exp => f64::exp,
        Exp2 => f64::exp2,
        Expm1 => f64::exp_m1,
        Log => f64::ln,
        Log1p => f64::ln_1p,
        Tanh => f64::tanh,
        Logistic => |v| 1.0 / (1.0 + (-v).exp()),
        Sinh => f64::sinh,
        Cosh => f64::cosh,
        Sin => f64::sin,
        Cos => f64::cos,
        Tan => f64::tan,
        Atan => f64::atan,
        Asin => f64::asin,
        Acos => f64::acos,
        Asinh => libm::asinh,
        Acosh => |v| if v < 1.0 { f64::NAN } else { libm::acosh(v) },
        Atanh => libm::atanh,
        Erf => libm::erf,
        Erfc => libm::erfc,
        Cbrt => f64::cbrt,
        _ => unreachable!("{op:?} has no kernel"),
    }
}

fn kernel_ops() -> Vec<UnaryOp> {
    UnaryOp::ALL
        .iter()
        .copied()
        .filter(|op| scalar(*op).is_some())
        .collect()
}

/// The kernels held to 1 ulp: all but `erf_inv`, which is XLA's algorithm (JAX's bits,
/// a few ulps off; `tests_erf_inv.rs`).
fn rounded_ops() -> Vec<UnaryOp> {
    let mut ops = kernel_ops();
    ops.retain(|op| *op != UnaryOp::ErfInv);
    ops
}

/// Steps between two f32 values along the number line (+0 and -0 one apart).
pub(super) fn ulps(a: f32, b: f32) -> u64 {
    let key = |v: f32| {
        let b = v.to_bits() as i64;
        if b < 0 {
            -(b & 0x7FFF_FFFF) - 1
        } else {
            b
        }
    };
    key(a).abs_diff(key(b))
}

/// Why `got` is not an acceptable value of `op` at `x`, if it is not.
fn check(op: UnaryOp, x: f32, got: f32) -> Option<String> {
    let want = reference(op)(x as f64) as f32;
    let bad = if want.is_nan() || x.is_nan() {
        !got.is_nan() || (x.is_nan() && got.to_bits() != x.to_bits())
    } else if want.is_infinite() || want == 0.0 {
        // Exact values (and the sign of zero) must be exact.
        got.to_bits() != want.to_bits() && ulps(got, want) > 1
            || got.is_nan()
            || (want == 0.0 && got == 0.0 && got.to_bits() != want.to_bits())
    } else {
        got.is_nan() || ulps(got, want) > 1
    };
    bad.then(|| {
        format!(
            "{op:?}({x:e} = {:#010x}) = {got:e}, want {want:e}",
            x.to_bits()
        )
    })
}

pub(super) fn edge_inputs() -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7FA0_0001), // signalling NaN
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
        0.5,
        88.72283,
        88.72284,
        89.0,
        -87.33654,
        -103.27893,
        -103.972_08,
        -104.0,
        127.99999,
        128.0,
        -149.0,
        -150.0,
        -151.0,
        1e-30,
        -1e-30,
        0.346_573_6,
        -0.346_573_6,
        -0.999_999_94,
        9.01,
        20.0,
        super::trig::FAST_LIMIT,
        -super::trig::FAST_LIMIT,
        1e6,
        1e30,
        // Where the inverse functions' reductions and domains end.
        0.414_213_57,
        0.414_213_6,
        0.999_999_94,
        1.000_000_1,
        -1.000_000_1,
        1.5,
        // erf's two forms meet at 1/2; erfc leaves the normal range near 9.2 and reaches 0
        // near 10.06; the polynomial ends at 11.
        0.499_999_97,
        0.500_000_06,
        9.2,
        10.05,
        10.06,
        11.0,
        -11.0,
        8.0,
        -27.0,
    ];
    // Near multiples of pi/2, where the reduction cancels.
    for k in 1..64 {
        let m = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
        v.extend([
            m,
            f32::from_bits(m.to_bits() + 1),
            f32::from_bits(m.to_bits() - 1),
            -m,
        ]);
    }
    v
}

/// Every 4099th bit pattern (all exponents, both signs) and the edge inputs.
fn sample_inputs() -> Vec<f32> {
    let mut v: Vec<f32> = (0..u32::MAX / 4099)
        .map(|i| f32::from_bits(i * 4099))
        .collect();
    v.extend(edge_inputs());
    v
}

#[test]
fn sampled_inputs_are_within_one_ulp() {
    let xs = sample_inputs();
    for op in rounded_ops() {
        let ys = map(op, &xs).unwrap();
        let bad: Vec<String> = xs
            .iter()
            .zip(&ys)
            .filter_map(|(x, y)| check(op, *x, *y))
            .take(5)
            .collect();
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}

#[test]
fn the_vector_loop_gives_the_scalar_kernels_bits() {
    let xs = sample_inputs();
    for op in kernel_ops() {
        let f = scalar(op).unwrap();
        // Every length up to 17 exercises the vector body and each tail length.
        for n in (0..=17).chain([xs.len()]) {
            let ys = map(op, &xs[..n]).unwrap();
            for (x, y) in xs.iter().zip(&ys) {
                assert_eq!(y.to_bits(), f(*x).to_bits(), "{op:?}({x:e}), length {n}");
            }
        }
    }
}

#[test]
fn signs_of_zero_and_exact_values() {
    use UnaryOp::*;
    let f = |op: UnaryOp, x: f32| scalar(op).unwrap()(x);
    for op in [
        Expm1, Log1p, Tanh, Sinh, Sin, Tan, Atan, Asin, Asinh, Atanh, Erf, Cbrt,
    ] {
        assert_eq!(f(op, -0.0).to_bits(), (-0.0f32).to_bits(), "{op:?}(-0)");
        assert_eq!(f(op, 0.0).to_bits(), 0, "{op:?}(+0)");
    }
    assert_eq!(f(Exp, 0.0), 1.0);
    assert_eq!(f(Exp2, 10.0), 1024.0);
    assert_eq!(f(Exp2, -149.0), f32::from_bits(1));
    assert_eq!(f(Log, 1.0).to_bits(), 0);
    assert_eq!(f(Log, -0.0), f32::NEG_INFINITY);
    assert!(f(Log, -1.0).is_nan());
    assert_eq!(f(Log1p, -1.0), f32::NEG_INFINITY);
    assert!(f(Log1p, -2.0).is_nan());
    assert_eq!(f(Logistic, 0.0), 0.5);
    assert_eq!(f(Logistic, f32::NEG_INFINITY), 0.0);
    assert_eq!(f(Tanh, f32::INFINITY), 1.0);
    assert_eq!(f(Exp, 89.0), f32::INFINITY);
    assert_eq!(f(Exp, -104.0), 0.0);
    assert_eq!(f(Cos, 0.0), 1.0);
    assert!(f(Sin, f32::INFINITY).is_nan());
    assert_eq!(f(Sin, 1e30), (1e30f32 as f64).sin() as f32);
    assert_eq!(f(Acos, 1.0).to_bits(), 0);
    assert_eq!(f(Acos, -1.0), std::f32::consts::PI);
    assert_eq!(f(Asin, -1.0), -std::f32::consts::FRAC_PI_2);
    assert_eq!(f(Atan, f32::NEG_INFINITY), -std::f32::consts::FRAC_PI_2);
    assert_eq!(f(Acosh, 1.0).to_bits(), 0);
    assert_eq!(f(Atanh, -1.0), f32::NEG_INFINITY);
    assert_eq!(f(Asinh, f32::INFINITY), f32::INFINITY);
    assert_eq!(f(Erf, f32::NEG_INFINITY), -1.0);
    assert_eq!(f(Erfc, f32::NEG_INFINITY), 2.0);
    assert_eq!(f(Erfc, f32::INFINITY).to_bits(), 0);
    assert_eq!(f(Erfc, 0.0), 1.0);
    assert_eq!(f(Cbrt, -8.0), -2.0);
    assert_eq!(f(Cbrt, f32::NEG_INFINITY), f32::NEG_INFINITY);
    // Domain errors are the one quiet NaN, whatever the hardware's default NaN is.
    for (op, x) in [
        (Asin, 1.5),
        (Acos, -2.0),
        (Acosh, 0.5),
        (Atanh, 2.0),
        (Log, -1.0),
    ] {
        assert_eq!(f(op, x).to_bits(), f32::NAN.to_bits(), "{op:?}({x})");
    }
}

/// All 2^32 inputs of every kernel (minutes in release: `cargo test --release -p quabla-cpu
/// all_f32 -- --ignored --nocapture`). Prints, per function, the largest error and how many
/// results are not the correctly rounded one.
#[test]
#[ignore]
fn all_f32_inputs_are_within_one_ulp() {
    for op in rounded_ops() {
        let (worst, off, bad) = (0..1u64 << 16)
            .into_par_iter()
            .map(|hi| {
                let xs: Vec<f32> = (0..1u32 << 16)
                    .map(|lo| f32::from_bits(((hi as u32) << 16) | lo))
                    .collect();
                let ys = map(op, &xs).unwrap();
                let mut acc = (0u64, 0u64, None);
                for (x, y) in xs.iter().zip(&ys) {
                    let want = reference(op)(*x as f64) as f32;
                    if !want.is_nan() && !y.is_nan() {
                        let d = ulps(*y, want);
                        acc.0 = acc.0.max(d);
                        acc.1 += (d > 0) as u64;
                    }
                    if acc.2.is_none() {
                        acc.2 = check(op, *x, *y);
                    }
                }
                acc
            })
            .reduce(
                || (0, 0, None),
                |a, b| (a.0.max(b.0), a.1 + b.1, a.2.or(b.2)),
            );
        println!("{op:?}: max {worst} ulp, {off} of 2^32 not correctly rounded");
        assert!(bad.is_none(), "{}", bad.unwrap_or_default());
    }
}
