//! The error function and its complement on f32, evaluated in f64 and rounded once.
//!
//! `erfc(a) = t exp(P(t) - a^2)` with `t = 3 / (3 + a)` for `a >= 0`: one smooth function
//! `P` of `t` in `(0, 1]` covers the whole range, so a single degree-14 polynomial (error
//! 1.75e-11, relative in `erfc`) serves every input without a branch; `exp` is the f32
//! kernels' f64 core (`exp.rs`, error 6e-10), and `a^2` is exact for an f32 `a`. Negative
//! operands use `erfc(-a) = 2 - erfc(a)`. `erf = 1 - erfc` above 1/2; below, where that
//! subtraction would cancel, `erf(x) = x Q(x^2)` (degree 6, error 1e-13). Both errors are far
//! under the 3e-8 (2^-25) that keeps one rounding to f32 within 1 ulp. Beyond 11 `erfc` is
//! below the smallest f32 subnormal, so the operand is clamped there.

use super::exp::exp_f64;
use super::{horner, nan_or};

/// `erf(u) / u` as a polynomial in `u^2` on `u^2 <= 1/4` (mpmath `chebyfit`, error 1.0e-13;
/// `backends/cpu/tools/vmath32_constants.py`).
const ERF_Q: [f64; 7] = [
    f64::from_bits(0x3ff20dd7504299a6),
    f64::from_bits(0xbfd812746af8968e),
    f64::from_bits(0x3fbce2f20f1cc4dc),
    f64::from_bits(0xbf9b82ca17586b5a),
    f64::from_bits(0x3f75650064120833),
    f64::from_bits(0xbf4bdffdd58b5872),
    f64::from_bits(0x3f1c5f0aaee3c83a),
];

/// `P(t) = log(erfc(a) / t) + a^2` with `a = 3/t - 3`, as a polynomial in `t` on
/// `[3/14, 1]` (`a` in `[0, 11]`; mpmath `chebyfit`, error 1.75e-11; the same script).
const ERFC_P: [f64; 15] = [
    f64::from_bits(0xbffabc459e410f70),
    f64::from_bits(0x3feffce00c8befed),
    f64::from_bits(0x3fdcc87bdb7156d5),
    f64::from_bits(0x3fc6d7000010869b),
    f64::from_bits(0x3fd5382b2b8c8ec8),
    f64::from_bits(0xbfed3f1f1adaaea8),
    f64::from_bits(0x4003eacc2ebf8719),
    f64::from_bits(0xc013ead70ffb6650),
    f64::from_bits(0x401a857771761f80),
    f64::from_bits(0xc016df780fd83a48),
    f64::from_bits(0x4000e2b305575f6c),
    f64::from_bits(0x3ff3a7180bace2d9),
    f64::from_bits(0xbffd05e3845b7e7c),
    f64::from_bits(0x3fe9f5fa135f26c9),
    f64::from_bits(0xbfc10baee0986a98),
];

/// Where `ERFC_P` ends: `erfc(11)` is 1.4e-54, zero in f32, and `erf(11)` is 1.
const CLAMP: f64 = 11.0;

/// `erfc a` in f64 for `0 <= a <= CLAMP`.
#[inline(always)]
fn erfc_nonneg(a: f64) -> f64 {
    let t = 3.0 / (3.0 + a);
    t * exp_f64(horner(t, &ERFC_P) - a * a)
}

/// `erf x`, odd, so `erf(-0) = -0`; `±1` at `±inf`.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    let a = (x as f64).abs().min(CLAMP);
    let y = if a <= 0.5 {
        a * horner(a * a, &ERF_Q)
    } else {
        1.0 - erfc_nonneg(a)
    };
    nan_or(x, (y as f32).copysign(x))
}

/// `erfc x = 1 - erf x`: 2 at `-inf`, 0 at `inf`.
#[inline(always)]
pub fn erfc(x: f32) -> f32 {
    let v = x as f64;
    let e = erfc_nonneg(v.abs().min(CLAMP));
    nan_or(x, (if v < 0.0 { 2.0 - e } else { e }) as f32)
}
