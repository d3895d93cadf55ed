//! The f64 exponential family: `exp`, `exp2`, `expm1`, `tanh`, `logistic`, `sinh` and `cosh`,
//! within the conformance suite's f64 bounds (1, 1, 2, 2, 4, 2 and 2 ulp of the correctly
//! rounded result; `tests_f64.rs` measures them against a double-double reference).
//!
//! One core: `x = k ln 2 + r` with `|r| <= ln 2 / 2`, carried as `r + dr` (Cody-Waite with a
//! two-part `ln 2`, then an exact two-sum), and `e^r = 1 + r + r^2 Q(r)` with `Q` a degree-10
//! Chebyshev fit (error 1.6e-18). `1 + r` is split exactly into its rounded sum and error, so
//! the one rounding of the last add dominates (about 0.51 ulp). `2^k` is applied as two
//! normal factors, `2^e1 2^e2`, so overflow to infinity and gradual underflow come out of the
//! final product without a branch. There is no table: a table lookup is a gather, and with
//! one LLVM leaves the loop scalar (measured: 4.3 ns an element against 0.7 without).
//!
//! As in the f32 kernels, every step is an IEEE basic operation or exact bit arithmetic,
//! never contracted into a fused multiply-add, so the vector loop on every instruction set
//! and the scalar function give the same bits.

use super::{horner, split, ROUND_MAGIC};

/// `ln 2` to 42 significant bits, so `k * LN2_HI` is exact for every `|k| < 2^11`
/// (`log64.rs` adds `k ln 2` with the same split).
pub(super) const LN2_HI: f64 = f64::from_bits(0x3fe62e42fefa3800);
/// `ln 2 - LN2_HI`.
pub(super) const LN2_LO: f64 = f64::from_bits(0x3d2ef35793c76730);
const LN2: f64 = std::f64::consts::LN_2;
/// `ln 2 - LN2`, the rounding error of the f64 `ln 2`.
const LN2_TAIL: f64 = f64::from_bits(0x3c7abc9e3b39803f);
/// Added to `k` so that it stays positive for every clamped operand: the exponent splits
/// below are then logical shifts, which vectorise (AVX2 has no 64-bit arithmetic shift).
const BIAS: u64 = 2048;

/// `(e^r - 1 - r) / r^2` on `|r| <= 0.35` (mpmath `chebyfit`, error 1.6e-18;
/// `backends/cpu/tools/exp64_constants.py`).
const EXPM1_Q: [f64; 11] = [
    f64::from_bits(0x3fe0000000000000),
    f64::from_bits(0x3fc5555555555557),
    f64::from_bits(0x3fa5555555555556),
    f64::from_bits(0x3f8111111110ff8b),
    f64::from_bits(0x3f56c16c16c16214),
    f64::from_bits(0x3f2a01a01ac9de9e),
    f64::from_bits(0x3efa01a01a74077a),
    f64::from_bits(0x3ec71ddfff6573d6),
    f64::from_bits(0x3e927e4da1e12fb1),
    f64::from_bits(0x3e5af5282aacdb2e),
    f64::from_bits(0x3e21f75a3caadff5),
];

/// `(tanh(a) - a) / a^3` as a polynomial in `a^2` on `a <= 0.55` (mpmath `chebyfit`, error
/// 7.7e-18).
const TANH_P: [f64; 11] = [
    f64::from_bits(0xbfd5555555555555),
    f64::from_bits(0x3fc1111111111032),
    f64::from_bits(0xbfaba1ba1b9fec84),
    f64::from_bits(0x3f9664f487713373),
    f64::from_bits(0xbf8226e32f00cf0c),
    f64::from_bits(0x3f6d6d339333f329),
    f64::from_bits(0xbf57d97cfd138c28),
    f64::from_bits(0x3f434c5a8a996cd4),
    f64::from_bits(0xbf2ec1091436eb2a),
    f64::from_bits(0x3f164fd88e9900a5),
    f64::from_bits(0xbef59a834187ce22),
];

/// `(sinh(a) - a) / a^3` as a polynomial in `a^2` on `a <= 1` (mpmath `chebyfit`, error
/// 3.5e-19).
const SINH_P: [f64; 7] = [
    f64::from_bits(0x3fc5555555555555),
    f64::from_bits(0x3f811111111110fd),
    f64::from_bits(0x3f2a01a01a01ee70),
    f64::from_bits(0x3ec71de3a4e14f40),
    f64::from_bits(0x3e5ae6460fae3728),
    f64::from_bits(0x3de611cb330c1fe8),
    f64::from_bits(0x3d6b41232cf9950f),
];

/// Below this `|x|`, `sinh` is its polynomial; above, `e^|x|/2 - e^-|x|/2` cancels by at
/// most a factor 1.31.
const SINH_SMALL: f64 = 1.0;

/// Below this `|x|`, `tanh` is its polynomial; above, `1 - 2/(e^2|x| + 1)` is at least 1/2,
/// so the subtraction cannot cancel.
const TANH_SMALL: f64 = 0.55;

/// `2^k e^(r + dr)` apart, for assembly: `e^x = (s1 (1 + r + c)) f` and
/// `e^x - 1 = ((s1 - g) + s1 (r + c)) f`, with `c = dr + r^2 Q(r)`, `s1 f = 2^k`, `g = 1/f`.
struct Parts {
    r: f64,
    c: f64,
    s1: f64,
    f: f64,
    g: f64,
}

/// The f64 whose bits are `biased_exponent << 52`: `2^(biased_exponent - 1023)`.
#[inline(always)]
fn pow2(biased_exponent: u64) -> f64 {
    f64::from_bits(biased_exponent << 52)
}

/// `(k, k + BIAS)` with `k` the integer nearest `t` (ties to even), for `|t| < 2^51`.
#[inline(always)]
fn round_biased(t: f64) -> (f64, u64) {
    let shifted = t + ROUND_MAGIC;
    let k = shifted - ROUND_MAGIC;
    let kb = shifted
        .to_bits()
        .wrapping_sub(ROUND_MAGIC.to_bits())
        .wrapping_add(BIAS);
    (k, kb)
}

/// The parts of `2^k e^(r + dr)` for `kb = k + BIAS`, `k` within `[-1080, 1026]`,
/// `|r| <= 0.35` and `|dr|` within an ulp of `r` (a NaN operand gives meaningless parts,
/// never a panic).
#[inline(always)]
fn parts(kb: u64, r: f64, dr: f64) -> Parts {
    // `e1 = floor(k / 2)` and `e2 = k - e1`, both biased by 1023 for the exponent field:
    // `e1 + 1023 = half - 1`, `e2 + 1023 = kb - half - 1`, `1023 - e2 = 2047 + half - kb`.
    let half = kb >> 1;
    Parts {
        r,
        c: dr + (r * r) * horner(r, &EXPM1_Q),
        s1: pow2(half.wrapping_sub(1)),
        f: pow2(kb.wrapping_sub(half).wrapping_sub(1)),
        g: pow2(2047u64.wrapping_add(half).wrapping_sub(kb)),
    }
}

/// The parts of `e^a` for `a` within `[-746, 711]`.
#[inline(always)]
fn parts_e(a: f64) -> Parts {
    let (k, kb) = round_biased(a * std::f64::consts::LOG2_E);
    // `k * LN2_HI` is exact and `a` within half a step of it, so `hi` is exact too; `r`
    // rounds `hi + lo` and `dr` is what that rounding lost (an exact two-sum: `|hi| > |lo|`).
    let hi = a - k * LN2_HI;
    let lo = -(k * LN2_LO);
    let r = hi + lo;
    parts(kb, r, (hi - r) + lo)
}

/// `e^(r + dr) 2^k` times `scale` (a power of two that keeps `p.f * scale` normal)
/// assembled: `1 + r` split exactly into its rounded sum and its error.
#[inline(always)]
fn assemble_exp(p: &Parts, scale: f64) -> f64 {
    let s = 1.0 + p.r;
    let err = (1.0 - s) + p.r;
    (p.s1 * (s + (err + p.c))) * (p.f * scale)
}

/// `e^a` for `a` within `[-746, 710]`: 0 below -745.2, infinity above 709.8.
#[inline(always)]
fn exp_in_range(a: f64) -> f64 {
    assemble_exp(&parts_e(a), 1.0)
}

/// `e^a / 2` for `a` within `[0, 711]`, finite up to `ln(2 MAX)` = 710.48: the last factor
/// is halved before it scales, not after the product overflowed.
#[inline(always)]
fn half_exp(a: f64) -> f64 {
    assemble_exp(&parts_e(a), 0.5)
}

/// `x` itself when it is NaN, else `y`.
#[inline(always)]
fn nan_or(x: f64, y: f64) -> f64 {
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// `e^x`.
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    nan_or(x, exp_in_range(x.clamp(-746.0, 710.0)))
}

/// `2^x`: `t = x - k` is exact, and `t ln 2` is formed exactly as `r + dr` (Dekker's
/// product with split halves, plus `t` times the f64 `ln 2`'s own error), so an integer `x`
/// gives its power of two exactly and the rest is as accurate as `exp`.
#[inline(always)]
pub fn exp2(x: f64) -> f64 {
    const L: (f64, f64) = split(LN2);
    let a = x.clamp(-1080.0, 1025.0);
    let (k, kb) = round_biased(a);
    let t = a - k;
    let r = t * LN2;
    let (th, tl) = split(t);
    let dr = (((th * L.0 - r) + th * L.1) + tl * L.0) + tl * L.1 + t * LN2_TAIL;
    nan_or(x, assemble_exp(&parts(kb, r, dr), 1.0))
}

/// `e^x - 1` as `((s1 - g) + s1 (r + c)) f`, where `s1 - g` (that is `2^k - 1`, scaled) is
/// exact wherever the result is not already within an ulp of -1 or of `e^x`. Below
/// `ln 2 / 2`, `k = 0` and this is `x + x^2 Q(x)` exactly, with no cancellation; above, `2^k - 1`
/// is at least 0.29 in magnitude. Below -40 the result rounds to -1; `expm1(-0) = -0`.
#[inline(always)]
pub fn expm1(x: f64) -> f64 {
    let a = x.clamp(-40.0, 710.0);
    let p = parts_e(a);
    let y = ((p.s1 - p.g) + p.s1 * (p.r + p.c)) * p.f;
    nan_or(x, if x == 0.0 { x } else { y })
}

/// `tanh(x)`, odd: a polynomial below [`TANH_SMALL`], `1 - 2/(e^2|x| + 1)` above, 1 from
/// `|x| = 22` on (`tanh(22)` is within 2^-62 of 1).
#[inline(always)]
pub fn tanh(x: f64) -> f64 {
    let a = x.abs().min(22.0);
    let z = a * a;
    let small = a + a * (z * horner(z, &TANH_P));
    let large = 1.0 - 2.0 / (exp_in_range(2.0 * a) + 1.0);
    let y = if a < TANH_SMALL { small } else { large };
    nan_or(x, y.copysign(x))
}

/// `1 / (1 + e^-x)`, as `e^x / (1 + e^x)` for negative `x` so the left tail keeps its
/// subnormal values instead of dividing by an overflowed `e^-x`.
#[inline(always)]
pub fn logistic(x: f64) -> f64 {
    let e = exp_in_range((-x.abs()).max(-746.0));
    let d = 1.0 + e;
    let y = if x < 0.0 { e / d } else { 1.0 / d };
    nan_or(x, y)
}

/// `sinh(x)`, odd: a polynomial below [`SINH_SMALL`], `h - 1/(4h)` with `h = e^|x| / 2`
/// above (infinite from `|x| = 710.48` on, where `sinh` overflows).
#[inline(always)]
pub fn sinh(x: f64) -> f64 {
    let a = x.abs().min(711.0);
    let z = a * a;
    let small = a + a * (z * horner(z, &SINH_P));
    let h = half_exp(a);
    let large = h - 0.25 / h;
    let y = if a < SINH_SMALL { small } else { large };
    nan_or(x, y.copysign(x))
}

/// `cosh(x) = h + 1/(4h)` with `h = e^|x| / 2`: a sum of two positive terms, whose errors
/// cancel to first order where they are equal (`x` near 0).
#[inline(always)]
pub fn cosh(x: f64) -> f64 {
    let h = half_exp(x.abs().min(711.0));
    nan_or(x, h + 0.25 / h)
}
