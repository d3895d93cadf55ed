//! The f64 `sin`, `cos` and `tan`, within the conformance suite's bounds (1, 1 and 2 ulp;
//! `tests_f64.rs` measures them against a double-double reference, and next to multiples of
//! pi/2 against libm).
//!
//! `x = n pi/2 + r` with pi/2 in three parts (33 + 33 + 53 bits): for `|x| <= FAST_LIMIT`
//! the products `n * PIO2_1` and `n * PIO2_2` are exact and so is the first difference, and
//! the rest is carried as `r + rr` by exact two-sums, so even next to a multiple of pi/2 the
//! reduced argument keeps its relative accuracy. On `|r| <= pi/4`, `sin(r + rr)` is
//! `r + (r^3 S(r^2) + rr (1 - r^2/2))` and `cos(r + rr)` is `1 - r^2/2` (its rounding error
//! recovered exactly) plus `r^4 C(r^2) - r rr`, with `S` and `C` Chebyshev fits (degree 6
//! and 5, errors 1.2e-20 and 1.3e-18); `tan` divides the two before their last rounding. Larger arguments go to libm, whose reduction is exact
//! for every argument; the vector loop redoes those few lanes in a second pass
//! ([`fix_outside`]).

use super::{horner, round_to_int, split};

const PIO2_1: f64 = f64::from_bits(0x3FF9_21FB_5440_0000);
const PIO2_2: f64 = f64::from_bits(0x3DD0_B461_1A60_0000);
const PIO2_3: f64 = f64::from_bits(0x3BA3_198A_2E03_7073);
const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;

/// Arguments up to this magnitude (about 2^10 pi/2) are reduced here: `|n| <= 1024`, so
/// the reduction's error (`n` times that of the three-part pi/2, about 2^-108) stays far
/// below an ulp of the smallest reduced argument there. Larger ones go to libm.
pub const FAST_LIMIT: f64 = 1608.0;

/// `S` of `sin r = r + r^3 S(r^2)`: `(sin(r) - r) / r^3` in `r^2` on `|r| <= pi/4` (mpmath
/// `chebyfit`; `backends/cpu/tools/exp64_constants.py`).
const SIN_S: [f64; 7] = [
    f64::from_bits(0xbfc5555555555555),
    f64::from_bits(0x3f81111111111110),
    f64::from_bits(0xbf2a01a01a019938),
    f64::from_bits(0x3ec71de3a546095b),
    f64::from_bits(0xbe5ae645412c5607),
    f64::from_bits(0x3de61217f0b7fce6),
    f64::from_bits(0xbd6ab17d404b944f),
];

/// `(cos(r) - 1 + r^2/2) / r^4` in `r^2` on `|r| <= pi/4`.
const COS_C: [f64; 6] = [
    f64::from_bits(0x3fa5555555555555),
    f64::from_bits(0xbf56c16c16c16967),
    f64::from_bits(0x3efa01a019f4eb01),
    f64::from_bits(0xbe927e4fa17da09b),
    f64::from_bits(0x3e21eeb68e93b35e),
    f64::from_bits(0xbda907da36781b54),
];

/// `(r, rr, n mod 4)` with `x = n pi/2 + r + rr`, for `|x| <= FAST_LIMIT`.
#[inline(always)]
fn reduce(x: f64) -> (f64, f64, i64) {
    let (n, ni) = round_to_int(x * FRAC_2_PI);
    let t = x - n * PIO2_1;
    let w = n * PIO2_2;
    // `r1 + e1 = t - w` exactly (a two-sum: either may be the larger near a multiple).
    let r1 = t - w;
    let back = r1 - t;
    let e1 = (t - (r1 - back)) + (-w - back);
    let tail = e1 - n * PIO2_3;
    let r = r1 + tail;
    (r, (r1 - r) + tail, ni & 3)
}

/// A value as the unevaluated sum `hi + lo`, `hi` the rounded sum.
type Parts = (f64, f64);

/// `(sin, cos)` of `r + rr`, `|r| <= pi/4` and `|rr|` within an ulp of it, each as its
/// rounded value and what that rounding lost (exact fast two-sums: the leading `r` and
/// `1 - r^2/2` dominate their corrections).
#[inline(always)]
fn sin_cos_reduced(r: f64, rr: f64) -> (Parts, Parts) {
    let z = r * r;
    let ts = (z * r) * horner(z, &SIN_S) + rr * (1.0 - 0.5 * z);
    let s = r + ts;
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    let tc = ((1.0 - w) - hz) + ((z * z) * horner(z, &COS_C) - r * rr);
    let c = w + tc;
    ((s, (r - s) + ts), (c, (w - c) + tc))
}

/// `(sin x, cos x)` for a finite `|x| <= FAST_LIMIT` as [`Parts`] (others give values the
/// callers replace).
#[inline(always)]
fn sin_cos_parts(x: f64) -> (Parts, Parts) {
    let a = if x.abs() <= FAST_LIMIT { x } else { 0.0 };
    let (r, rr, q) = reduce(a);
    let (s, c) = sin_cos_reduced(r, rr);
    let neg = |(h, l): Parts| (-h, -l);
    let (s, c) = if q & 1 == 1 { (c, neg(s)) } else { (s, c) };
    if q & 2 == 2 {
        (neg(s), neg(c))
    } else {
        (s, c)
    }
}

/// `(sin x, cos x)`, rounded.
#[inline(always)]
fn sin_cos(x: f64) -> (f64, f64) {
    let (s, c) = sin_cos_parts(x);
    (s.0, c.0)
}

/// `(nh + nl) / (dh + dl)` to about half an ulp: the quotient of the high parts, corrected
/// by the remainder, formed exactly with Dekker's product (`nh - q dh` cancels exactly).
#[inline(always)]
fn divide(n: Parts, d: Parts) -> f64 {
    let q = n.0 / d.0;
    let p = q * d.0;
    let ((qh, ql), (dh, dl)) = (split(q), split(d.0));
    let p_err = (((qh * dh - p) + qh * dl) + ql * dh) + ql * dl;
    let rem = (((n.0 - p) - p_err) + n.1) - q * d.1;
    q + rem / d.0
}

/// `sin x` for `|x| <= FAST_LIMIT`, for the vector loop; `sin(-0) = -0`.
#[inline(always)]
pub fn sin_fast(x: f64) -> f64 {
    if x == 0.0 {
        x
    } else {
        sin_cos(x).0
    }
}

/// `cos x` for `|x| <= FAST_LIMIT`, for the vector loop.
#[inline(always)]
pub fn cos_fast(x: f64) -> f64 {
    sin_cos(x).1
}

/// `tan x` for `|x| <= FAST_LIMIT`, for the vector loop: `sin / cos` from their unrounded
/// parts (the quotient of the two rounded kernels measured 2.16 ulp, over the bound of 2);
/// `tan(-0) = -0`.
#[inline(always)]
pub fn tan_fast(x: f64) -> f64 {
    let (s, c) = sin_cos_parts(x);
    if x == 0.0 {
        x
    } else {
        divide(s, c)
    }
}

/// The value for an argument the fast path does not take: NaN stays itself, infinities
/// give the one quiet NaN, large finite ones libm's value.
#[inline(always)]
fn outside(x: f64, y: f64, slow: fn(f64) -> f64) -> f64 {
    if x.abs() <= FAST_LIMIT {
        y
    } else if x.is_finite() {
        slow(x)
    } else if x.is_nan() {
        x
    } else {
        f64::NAN
    }
}

/// `sin x`.
pub fn sin(x: f64) -> f64 {
    outside(x, sin_fast(x), f64::sin)
}

/// `cos x`.
pub fn cos(x: f64) -> f64 {
    outside(x, cos_fast(x), f64::cos)
}

/// `tan x`.
pub fn tan(x: f64) -> f64 {
    outside(x, tan_fast(x), f64::tan)
}

/// Rewrites the lanes the fast path does not take (NaN, infinities, `|x| > FAST_LIMIT`) as
/// the scalar functions do.
pub fn fix_outside(x: &[f64], out: &mut [f64], scalar: fn(f64) -> f64) {
    for (o, v) in out.iter_mut().zip(x) {
        if v.is_nan() || v.abs() > FAST_LIMIT {
            *o = scalar(*v);
        }
    }
}
