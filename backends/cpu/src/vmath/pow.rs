//! Powers on f32: `cbrt` and `pow`, evaluated in f64 and rounded once.
//!
//! `cbrt` starts from the exponent divided by three in the bits and refines with two Halley
//! steps (cubic convergence: a 6% start becomes about 1e-12). `pow(x, y)` is
//! `exp(y log|x|)` with the f64 `log` kernel (`log64.rs`, 1 ulp) and the f32 kernels' f64
//! `exp` (`exp.rs`): `|y log|x||` is at most about 104 before the f32 result over- or
//! underflows, so the product's rounding costs under 5e-14 relative, and the sum of errors
//! stays far under the 3e-8 that keeps one rounding within 1 ulp. The sign, the domain error
//! of a negative base with a non-integer exponent, and C's special values (`pow(x, ±0) = 1`
//! and `pow(1, y) = 1` even for NaN, `pow(-1, ±inf) = 1`) are selected around that one core.

use super::exp::exp_f64;
use super::{log64, nan_or};

/// The biased f64 exponent 1023 less a third of it (682), in the high word's exponent field:
/// `bits/3 + CBRT_BIAS` keeps the exponent of `a^(1/3)` and interpolates the mantissa.
const CBRT_BIAS: u32 = 682 << 20;

/// `cbrt x`, odd, exact at 0 (signed) and the infinities.
#[inline(always)]
pub fn cbrt(x: f32) -> f32 {
    // Every f32 (subnormals too) is a normal f64, so the bit estimate needs no rescaling.
    let a = (x as f64).abs();
    let high = (a.to_bits() >> 32) as u32;
    let mut r = f64::from_bits(u64::from(high / 3 + CBRT_BIAS) << 32);
    for _ in 0..2 {
        let c = r * r * r;
        r = r * (c + 2.0 * a) / (2.0 * c + a);
    }
    let y = (r as f32).copysign(x);
    if x == 0.0 || x.is_infinite() {
        x
    } else {
        nan_or(x, y)
    }
}

/// `x^y` with C's special values (`f64::powf`'s). A NaN operand comes back as itself
/// (`x` first) unless the result is 1 regardless.
#[inline(always)]
pub fn pow(x: f32, y: f32) -> f32 {
    let (v, w) = (x as f64, y as f64);
    let a = v.abs();
    // log(0) = -inf and log(inf) = inf make the over- and underflows of the special cases.
    let m = exp_f64((w * log64::log(a)).clamp(-110.0, 90.0));
    let integer = w.floor() == w;
    let odd = w - 2.0 * (0.5 * w).floor() == 1.0;
    let r = if odd && v.is_sign_negative() { -m } else { m };
    let r = if v < 0.0 && v.is_finite() && !integer {
        f32::NAN
    } else {
        r as f32
    };
    if w == 0.0 || v == 1.0 || (a == 1.0 && w.is_infinite()) {
        1.0
    } else if x.is_nan() {
        x
    } else {
        nan_or(y, r)
    }
}
