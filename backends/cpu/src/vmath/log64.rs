//! The f64 logarithms `log` and `log1p`, within the conformance suite's f64 bounds (1 and 2
//! ulp; `tests_f64.rs` measures them against a double-double reference).
//!
//! `x = 2^k m` with `m` in `[sqrt(1/2), sqrt(2))`, so `f = m - 1` is exact and small, and
//! `log1p(f) = 2 atanh(s)` with `s = f / (2 + f)`, `|s| <= 0.1716`. Written as
//! `f - (h - s (h + R))` with `h = f^2 / 2` and `R = s^2 P(s^2)` (a degree-7 Chebyshev fit,
//! error 2e-18), the leading `f` is exact and only small corrections round; `k ln 2` joins as
//! an exact high part and a rounded low part. Exponent and mantissa come from bit arithmetic
//! and the integer `k` is turned into a float by the same magic-constant trick as the
//! reductions elsewhere, so the loop stays branch-free and vectorises; IEEE basic operations
//! only, no fused multiply-add, so every instruction set gives the same bits.

use super::exp64::{LN2_HI, LN2_LO};
use super::{horner, ROUND_MAGIC};

/// `(2 atanh(s) - 2 s) / s^3` as a polynomial in `s^2` on `s^2 <= 0.02944` (mpmath
/// `chebyfit`, error 2.1e-18; `backends/cpu/tools/exp64_constants.py`).
const LOG_P: [f64; 8] = [
    f64::from_bits(0x3fe5555555555555),
    f64::from_bits(0x3fd9999999999a38),
    f64::from_bits(0x3fd2492492476c8b),
    f64::from_bits(0x3fcc71c720160332),
    f64::from_bits(0x3fc745cf90196560),
    f64::from_bits(0x3fc3b1c35fbecd93),
    f64::from_bits(0x3fc0fbe84f5cacca),
    f64::from_bits(0x3fc0c044ccf380aa),
];

const MANTISSA: u64 = (1 << 52) - 1;
/// `2^54`, which lifts every subnormal into the normal range.
const TWO_54: f64 = 18014398509481984.0;

/// `log x` for a finite `x > 0` (other inputs give meaningless values the callers replace).
#[inline(always)]
fn log_positive(x: f64) -> f64 {
    let subnormal = x < f64::MIN_POSITIVE;
    let xs = if subnormal { x * TWO_54 } else { x };
    let bits = xs.to_bits();
    // The biased exponent as a float: its bits added under ROUND_MAGIC's, exactly.
    let biased = f64::from_bits(ROUND_MAGIC.to_bits() + ((bits >> 52) & 0x7ff)) - ROUND_MAGIC;
    let m = f64::from_bits((bits & MANTISSA) | (1023 << 52));
    let high = m >= std::f64::consts::SQRT_2;
    let m = if high { m * 0.5 } else { m };
    let k =
        (biased - if subnormal { 1023.0 + 54.0 } else { 1023.0 }) + if high { 1.0 } else { 0.0 };
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * horner(z, &LOG_P);
    let h = 0.5 * f * f;
    k * LN2_HI + (f - (h - (s * (h + r) + k * LN2_LO)))
}

/// `log x` once `y` is its value for finite `x > 0`: `-inf` at zero, `inf` at `inf`, the one
/// quiet NaN below zero, NaN inputs as themselves.
#[inline(always)]
fn log_edges(x: f64, y: f64) -> f64 {
    let y = if x > 0.0 && x < f64::INFINITY {
        y
    } else if x == 0.0 {
        f64::NEG_INFINITY
    } else if x == f64::INFINITY {
        x
    } else {
        f64::NAN
    };
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// `log x`.
#[inline(always)]
pub fn log(x: f64) -> f64 {
    log_edges(x, log_positive(x))
}

/// `log(1 + x)`: `log u` for `u = 1 + x` rounded, plus `(1 + x - u) / u`, the first-order
/// correction for that rounding (its numerator is exact: `u - 1` below 2, `u - x` above).
/// `log1p(-0) = -0`.
#[inline(always)]
pub fn log1p(x: f64) -> f64 {
    let u = 1.0 + x;
    let rest = if u < 2.0 {
        x - (u - 1.0)
    } else {
        1.0 - (u - x)
    };
    let y = log_edges(u, log_positive(u) + rest / u);
    if x == 0.0 || x.is_nan() {
        x
    } else {
        y
    }
}
