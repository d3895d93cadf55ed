//! The two-operand kernels against Rust's f64 `powf` and `atan2` (C's, accurate to well under
//! an f32 ulp, so their value rounded to f32 stands for the correctly rounded result): within
//! 1 ulp on a grid of every exponent range against the edge inputs, and on 2^32 first operands
//! for a handful of second ones in the ignored `binary_kernels_on_whole_f32_lines`. Special
//! values (signed zeros, infinities, NaN) must be C's exactly; the vector loop must give the
//! scalar callouts' bits.

use super::tests::{edge_inputs, ulps};
use super::{map_binary, scalar_binary};
use quabla_abi::qir::BinaryOp;
use rayon::prelude::*;

const OPS: [BinaryOp; 2] = [BinaryOp::Pow, BinaryOp::Atan2];

fn reference(op: BinaryOp, a: f32, b: f32) -> f32 {
    match op {
        BinaryOp::Pow => (a as f64).powf(b as f64) as f32,
        BinaryOp::Atan2 => (a as f64).atan2(b as f64) as f32,
        _ => unreachable!("{op:?} has no kernel"),
    }
}

/// Why `got` is not an acceptable value of `op(a, b)`, if it is not.
fn check(op: BinaryOp, a: f32, b: f32, got: f32) -> Option<String> {
    let want = reference(op, a, b);
    let bad = if want.is_nan() {
        // A NaN operand comes back as itself, the first one first; otherwise the one NaN.
        let nan = if a.is_nan() {
            a
        } else if b.is_nan() {
            b
        } else {
            f32::NAN
        };
        got.to_bits() != nan.to_bits()
    } else if want.is_infinite() || want == 0.0 || want.abs() == 1.0 {
        // Exact values, and the sign of zero, must be exact.
        got.to_bits() != want.to_bits()
    } else {
        got.is_nan() || ulps(got, want) > 1
    };
    bad.then(|| format!("{op:?}({a:e}, {b:e}) = {got:e}, want {want:e}"))
}

/// Every 65537th bit pattern (all exponents, both signs) and the edge inputs, as first
/// operands; the edge inputs and a few exponents as second operands.
fn grid() -> (Vec<f32>, Vec<f32>) {
    let mut firsts: Vec<f32> = (0..u32::MAX / 65537)
        .map(|i| f32::from_bits(i * 65537))
        .collect();
    firsts.extend(edge_inputs());
    let mut seconds = edge_inputs();
    seconds.extend([
        2.0,
        3.0,
        -3.0,
        0.5,
        -0.5,
        1.0 / 3.0,
        2.5,
        -7.0,
        1e-7,
        16777217.0,
    ]);
    (firsts, seconds)
}

/// Every pair of the grid, as two operand vectors.
fn pairs() -> (Vec<f32>, Vec<f32>) {
    let (firsts, seconds) = grid();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for y in &seconds {
        for x in &firsts {
            a.push(*x);
            b.push(*y);
        }
        // And the other way round, so both operands range over all exponents.
        for x in &firsts {
            a.push(*y);
            b.push(*x);
        }
    }
    (a, b)
}

#[test]
fn sampled_pairs_are_within_one_ulp() {
    let (a, b) = pairs();
    for op in OPS {
        let ys = map_binary(op, &a, &b).unwrap();
        let bad: Vec<String> = (0..a.len())
            .filter_map(|i| check(op, a[i], b[i], ys[i]))
            .take(5)
            .collect();
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }
}

#[test]
fn the_vector_loop_gives_the_scalar_kernels_bits() {
    let (a, b) = pairs();
    for op in OPS {
        let f = scalar_binary(op).unwrap();
        for n in (0..=17).chain([a.len()]) {
            let ys = map_binary(op, &a[..n], &b[..n]).unwrap();
            for i in 0..n {
                assert_eq!(
                    ys[i].to_bits(),
                    f(a[i], b[i]).to_bits(),
                    "{op:?}, length {n}"
                );
            }
        }
    }
}

#[test]
fn special_values_are_c_s() {
    let f = |op: BinaryOp, a: f32, b: f32| scalar_binary(op).unwrap()(a, b);
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    for (a, b, want) in [
        (nan, 0.0, 1.0),
        (1.0, nan, 1.0),
        (-1.0, inf, 1.0),
        (-1.0, -inf, 1.0),
        (-0.0, 3.0, -0.0),
        (-0.0, -3.0, -inf),
        (-0.0, -2.0, inf),
        (0.0, -0.5, inf),
        (-inf, 3.0, -inf),
        (-inf, -3.0, -0.0),
        (-inf, 0.5, inf),
        (0.5, inf, 0.0),
        (0.5, -inf, inf),
        (2.0, -inf, 0.0),
        (-2.0, 3.0, -8.0),
        (2.0, 0.5, std::f32::consts::SQRT_2),
    ] {
        assert_eq!(
            f(BinaryOp::Pow, a, b).to_bits(),
            want.to_bits(),
            "pow({a}, {b})"
        );
    }
    assert_eq!(f(BinaryOp::Pow, -2.0, 0.5).to_bits(), nan.to_bits());
    for (y, x, want) in [
        (0.0, 0.0, 0.0),
        (-0.0, 0.0, -0.0),
        (0.0, -0.0, PI),
        (-0.0, -0.0, -PI),
        (-0.0, -1.0, -PI),
        (1.0, 0.0, FRAC_PI_2),
        (-1.0, -0.0, -FRAC_PI_2),
        (inf, inf, FRAC_PI_4),
        (-inf, -inf, -3.0 * FRAC_PI_4),
        (1.0, -inf, PI),
        (-1.0, inf, -0.0),
    ] {
        assert_eq!(
            f(BinaryOp::Atan2, y, x).to_bits(),
            want.to_bits(),
            "atan2({y}, {x})"
        );
    }
    let odd_nan = f32::from_bits(0x7FC0_1234);
    assert_eq!(
        f(BinaryOp::Atan2, odd_nan, nan).to_bits(),
        odd_nan.to_bits()
    );
    assert_eq!(f(BinaryOp::Pow, 2.0, odd_nan).to_bits(), odd_nan.to_bits());
}

/// Each kernel on all 2^32 first operands against a few second operands (minutes in release:
/// `cargo test --release -p quabla-cpu binary_kernels_on -- --ignored --nocapture`). Prints
/// the largest error and how many results are not the correctly rounded one.
#[test]
#[ignore]
fn binary_kernels_on_whole_f32_lines() {
    let lines = [
        (BinaryOp::Pow, [0.5, 3.0, -1.5, 1.0 / 3.0]),
        (BinaryOp::Atan2, [1.0, -3.0, 1e-30, -7e25]),
    ];
    for (op, seconds) in lines {
        for b in seconds {
            let (worst, off, bad) = (0..1u64 << 16)
                .into_par_iter()
                .map(|hi| {
                    let a: Vec<f32> = (0..1u32 << 16)
                        .map(|lo| f32::from_bits(((hi as u32) << 16) | lo))
                        .collect();
                    let bs = vec![b; a.len()];
                    let ys = map_binary(op, &a, &bs).unwrap();
                    let mut acc = (0u64, 0u64, None);
                    for (x, y) in a.iter().zip(&ys) {
                        let want = reference(op, *x, b);
                        if !want.is_nan() && !y.is_nan() {
                            let d = ulps(*y, want);
                            acc.0 = acc.0.max(d);
                            acc.1 += (d > 0) as u64;
                        }
                        if acc.2.is_none() {
                            acc.2 = check(op, *x, b, *y);
                        }
                    }
                    acc
                })
                .reduce(
                    || (0, 0, None),
                    |p, q| (p.0.max(q.0), p.1 + q.1, p.2.or(q.2)),
                );
            println!("{op:?}(x, {b:e}): max {worst} ulp, {off} of 2^32 not correctly rounded");
            assert!(bad.is_none(), "{}", bad.unwrap_or_default());
        }
    }
}
