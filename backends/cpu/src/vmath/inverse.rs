//! The inverse trigonometric and hyperbolic functions on f32 (`atan`, `asin`, `acos`,
//! `atan2`, `asinh`, `acosh`, `atanh`), evaluated in f64 and rounded once.
//!
//! One core, the arctangent of an f64 `a >= 0`: `atan a = pi/2 - atan(1/a)` above 1 and
//! `atan t = pi/4 + atan((t - 1)/(t + 1))` above `tan(pi/8)`, so the polynomial
//! `u + u^3 A(u^2)` sees `|u| <= tan(pi/8)`, where a degree-8 fit in `u^2` errs by 2.4e-14,
//! far under the 3e-8 (2^-25) that keeps one rounding to f32 within 1 ulp. Each offset is at
//! least twice what is subtracted from it, so nothing cancels. `asin`, `acos` and `atan2` are
//! that arctangent of a quotient that f32 operands make nearly exact in f64 (`(1 - x)(1 + x)`
//! is exact; `y / x` neither overflows nor underflows). The hyperbolic ones are the f64
//! `log1p` kernel (`log64.rs`) of arguments written without cancellation. Domain errors give
//! the one quiet NaN, NaN operands come back as themselves.

use super::{horner, log64, nan_or};
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

/// `(atan u - u) / u^3` as a polynomial in `u^2` on `u^2 <= tan(pi/8)^2` (mpmath `chebyfit`,
/// error 2.4e-14; `backends/cpu/tools/vmath32_constants.py`).
const ATAN_A: [f64; 9] = [
    f64::from_bits(0xbfd55555555553a4),
    f64::from_bits(0x3fc99999998d17a4),
    f64::from_bits(0xbfc249248aa7a6d1),
    f64::from_bits(0x3fbc71c382a86b83),
    f64::from_bits(0xbfb74563e02ad281),
    f64::from_bits(0x3fb3a9d989caaacb),
    f64::from_bits(0xbfb0c533d232a2d6),
    f64::from_bits(0x3faa76e4d63f12a7),
    f64::from_bits(0xbf9be2eec66c6bdf),
];

/// `tan(pi/8) = sqrt(2) - 1`, where the second reduction starts.
const TAN_PI_8: f64 = 0.41421356237309503;

/// `atan a` in f64 for `a >= 0` (infinity included: `pi/2`), relative error about 1e-14.
#[inline(always)]
pub(super) fn atan_nonneg(a: f64) -> f64 {
    let inverted = a > 1.0;
    let t = if inverted { 1.0 / a } else { a };
    let shifted = t > TAN_PI_8;
    let u = if shifted { (t - 1.0) / (t + 1.0) } else { t };
    let z = u * u;
    let p = u + u * z * horner(z, &ATAN_A);
    let p = if shifted { FRAC_PI_4 + p } else { p };
    if inverted {
        FRAC_PI_2 - p
    } else {
        p
    }
}

/// `atan x`, odd, so `atan(-0) = -0`.
#[inline(always)]
pub fn atan(x: f32) -> f32 {
    let y = atan_nonneg((x as f64).abs()) as f32;
    nan_or(x, y.copysign(x))
}

/// `asin x = atan(x / sqrt((1 - x)(1 + x)))`; `|x| > 1` is a domain error.
#[inline(always)]
pub fn asin(x: f32) -> f32 {
    let a = (x as f64).abs();
    let y = atan_nonneg(a / ((1.0 - a) * (1.0 + a)).sqrt()) as f32;
    nan_or(x, if a <= 1.0 { y.copysign(x) } else { f32::NAN })
}

/// `acos x = 2 atan(sqrt((1 - x)/(1 + x)))`: `+0` at 1, `pi` at -1 (the quotient is then
/// infinite); `|x| > 1` is a domain error.
#[inline(always)]
pub fn acos(x: f32) -> f32 {
    let v = x as f64;
    let y = 2.0 * atan_nonneg(((1.0 - v) / (1.0 + v)).sqrt());
    nan_or(x, if v.abs() <= 1.0 { y as f32 } else { f32::NAN })
}

/// `atan2(y, x)`, the angle of the point `(x, y)`, with C's (and JAX's) signed zeros and
/// infinities: `atan2(±0, +0) = ±0`, `atan2(±0, -0) = ±pi`, `atan2(±inf, ±inf) = ±pi/4` or
/// `±3pi/4`. A NaN operand comes back as itself, `y` first.
#[inline(always)]
pub fn atan2(y: f32, x: f32) -> f32 {
    let (ay, ax) = ((y as f64).abs(), (x as f64).abs());
    // The first quadrant's angle; 0/0 and inf/inf are NaN as quotients, 0 and pi/4 as angles.
    let base = if ay == 0.0 {
        0.0
    } else if ay.is_infinite() && ax.is_infinite() {
        FRAC_PI_4
    } else {
        atan_nonneg(ay / ax)
    };
    let angle = if x.is_sign_negative() {
        PI - base
    } else {
        base
    };
    let r = (angle as f32).copysign(y);
    if y.is_nan() {
        y
    } else {
        nan_or(x, r)
    }
}

/// `asinh x = log1p(a + a^2 / (1 + sqrt(1 + a^2)))` with `a = |x|`, the quotient written
/// with `r = 1/a` so that neither 0 nor infinity makes it NaN.
#[inline(always)]
pub fn asinh(x: f32) -> f32 {
    let a = (x as f64).abs();
    let r = 1.0 / a;
    let y = log64::log1p(a + a / (r + (r * r + 1.0).sqrt())) as f32;
    nan_or(x, y.copysign(x))
}

/// `acosh x = log1p(t + sqrt(t (t + 2)))` with `t = x - 1` (exact), accurate near 1;
/// `x < 1` is a domain error.
#[inline(always)]
pub fn acosh(x: f32) -> f32 {
    let t = x as f64 - 1.0;
    let y = log64::log1p(t + (t * (t + 2.0)).sqrt());
    nan_or(x, if t >= 0.0 { y as f32 } else { f32::NAN })
}

/// `atanh x = log1p(2x / (1 - x)) / 2` (`1 - x` exact): `±inf` at `±1`, `atanh(-0) = -0`;
/// `|x| > 1` is a domain error.
#[inline(always)]
pub fn atanh(x: f32) -> f32 {
    let v = x as f64;
    let y = 0.5 * log64::log1p(2.0 * v / (1.0 - v));
    nan_or(x, if v.abs() <= 1.0 { y as f32 } else { f32::NAN })
}
