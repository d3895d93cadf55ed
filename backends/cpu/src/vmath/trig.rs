//! `sin`, `cos` and `tan`.
//!
//! Range reduction `r = x - k pi/2` in three steps with pi/2 split in 33 + 33 + 53 bits: for
//! `|x| <= 2^19 pi/2` the first two products are exact and the first difference is exact by
//! Sterbenz, so `r` keeps f64 precision even next to a multiple of pi/2. Beyond that bound
//! (`FAST_LIMIT`) the kernels take libm's f64 functions, whose reduction is exact for every
//! argument; the vector loop fixes those few lanes in a second pass. On `|r| <= pi/4`, sin
//! and cos are Taylor polynomials to degree 15 and 16 (truncation below 1e-16).

use super::{horner, nan_or, round_to_int};

const PIO2_1: f64 = f64::from_bits(0x3FF9_21FB_5440_0000);
const PIO2_2: f64 = f64::from_bits(0x3DD0_B461_1A60_0000);
const PIO2_3: f64 = f64::from_bits(0x3BA3_198A_2E03_7073);
const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;

/// Arguments up to this magnitude are reduced here; larger ones go to libm.
pub const FAST_LIMIT: f32 = 823_549.6;

/// `(r, k mod 4)` with `x = k pi/2 + r`, for `|x| <= FAST_LIMIT`.
#[inline(always)]
fn reduce(x: f64) -> (f64, i64) {
    let (k, ki) = round_to_int(x * FRAC_2_PI);
    (((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3, ki & 3)
}

/// `(sin r, cos r)` for `|r| <= pi/4 + a little`.
#[inline(always)]
fn sin_cos_poly(r: f64) -> (f64, f64) {
    const S: [f64; 7] = [
        -1.0 / 6.0,
        1.0 / 120.0,
        -1.0 / 5040.0,
        1.0 / 362880.0,
        -1.0 / 39916800.0,
        1.0 / 6227020800.0,
        -1.0 / 1307674368000.0,
    ];
    const C: [f64; 8] = [
        -1.0 / 2.0,
        1.0 / 24.0,
        -1.0 / 720.0,
        1.0 / 40320.0,
        -1.0 / 3628800.0,
        1.0 / 479001600.0,
        -1.0 / 87178291200.0,
        1.0 / 20922789888000.0,
    ];
    let z = r * r;
    (r + r * (z * horner(z, &S)), 1.0 + z * horner(z, &C))
}

/// `(sin x, cos x)` in f64 for a finite f32 `x` within `FAST_LIMIT` (others give garbage the
/// callers replace).
#[inline(always)]
fn sin_cos(x: f32) -> (f64, f64) {
    let a = x as f64;
    let a = if a.abs() <= FAST_LIMIT as f64 { a } else { 0.0 };
    let (r, q) = reduce(a);
    let (s, c) = sin_cos_poly(r);
    let (s, c) = if q & 1 == 1 { (c, -s) } else { (s, c) };
    if q & 2 == 2 {
        (-s, -c)
    } else {
        (s, c)
    }
}

/// The value for an argument the fast path does not take: NaN stays itself, infinities give
/// NaN, large finite ones libm's f64 function.
#[inline(always)]
fn outside(x: f32, y: f32, slow: fn(f64) -> f64) -> f32 {
    if x.abs() <= FAST_LIMIT {
        y
    } else if x.is_finite() {
        slow(x as f64) as f32
    } else {
        nan_or(x, f32::NAN)
    }
}

/// The fast path alone, for the vector loop (`fix_outside` then handles large arguments).
#[inline(always)]
pub fn sin_fast(x: f32) -> f32 {
    // The polynomial's `r + r z s` turns -0 into +0.
    if x == 0.0 {
        x
    } else {
        sin_cos(x).0 as f32
    }
}
/// As [`sin_fast`].
#[inline(always)]
pub fn cos_fast(x: f32) -> f32 {
    sin_cos(x).1 as f32
}
/// As [`sin_fast`].
#[inline(always)]
pub fn tan_fast(x: f32) -> f32 {
    let (s, c) = sin_cos(x);
    if x == 0.0 {
        x
    } else {
        (s / c) as f32
    }
}

/// `sin x`, keeping `sin(-0) = -0`.
pub fn sin(x: f32) -> f32 {
    outside(x, sin_fast(x), f64::sin)
}
/// `cos x`.
pub fn cos(x: f32) -> f32 {
    outside(x, cos_fast(x), f64::cos)
}
/// `tan x`.
pub fn tan(x: f32) -> f32 {
    outside(x, tan_fast(x), f64::tan)
}

/// Rewrites the lanes the fast path does not take, as the scalar functions do.
pub fn fix_outside(x: &[f32], out: &mut [f32], scalar: fn(f32) -> f32) {
    for (o, v) in out.iter_mut().zip(x) {
        // NaN and the infinities are outside too.
        if v.is_nan() || v.abs() > FAST_LIMIT {
            *o = scalar(*v);
        }
    }
}
