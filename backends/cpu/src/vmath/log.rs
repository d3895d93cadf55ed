//! `log` and `log1p`.
//!
//! `u = m 2^e` with `m` in `[sqrt(1/2), sqrt(2))`, read from the f64 bits (every f32, subnormals
//! included, is a normal f64); `log m = 2 atanh(s)` with `s = (m-1)/(m+1)`, `|s| <= 0.172`, the
//! odd series to `s^17` (truncation below 1e-15 relative). The exponent becomes a float by the
//! `2^52` bit trick rather than an integer conversion, which AVX2 lacks for 64-bit lanes.

use super::{horner, nan_or};

const LN2: f64 = std::f64::consts::LN_2;
const SQRT2: f64 = std::f64::consts::SQRT_2;
/// `2^52`: an f64 with these exponent bits holds a small integer in its low mantissa bits.
const TWO52: f64 = 4503599627370496.0;

/// `ln u` for a positive, finite, normal f64 `u`.
#[inline(always)]
pub(super) fn log_f64(u: f64) -> f64 {
    let bits = u.to_bits();
    let biased = f64::from_bits(TWO52.to_bits() | (bits >> 52)) - TWO52;
    let m = f64::from_bits((bits & 0x000F_FFFF_FFFF_FFFF) | 1.0f64.to_bits());
    let high = m > SQRT2;
    let m = if high { 0.5 * m } else { m };
    let e = if high {
        biased - 1022.0
    } else {
        biased - 1023.0
    };
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    const C: [f64; 8] = [
        2.0 / 3.0,
        2.0 / 5.0,
        2.0 / 7.0,
        2.0 / 9.0,
        2.0 / 11.0,
        2.0 / 13.0,
        2.0 / 15.0,
        2.0 / 17.0,
    ];
    e * LN2 + s * (2.0 + z * horner(z, &C))
}

/// `ln x`: `-inf` at ±0, NaN below 0, `+inf` at `+inf`.
#[inline(always)]
pub fn log(x: f32) -> f32 {
    let y = log_f64(x as f64) as f32;
    let y = if x == f32::INFINITY { x } else { y };
    let y = if x < 0.0 { f32::NAN } else { y };
    nan_or(x, if x == 0.0 { f32::NEG_INFINITY } else { y })
}

/// `ln(1 + x)`: `u = 1 + x` rounds in f64 only when `|x| < 2^-29`, and the term
/// `(x - (u - 1)) / u` puts back what that rounding lost.
#[inline(always)]
pub fn log1p(x: f32) -> f32 {
    let xd = x as f64;
    let u = 1.0 + xd;
    let y = (log_f64(u) + (xd - (u - 1.0)) / u) as f32;
    let y = if x == f32::INFINITY { x } else { y };
    let y = if x < -1.0 { f32::NAN } else { y };
    let y = if x == -1.0 { f32::NEG_INFINITY } else { y };
    nan_or(x, if x == 0.0 { x } else { y })
}
