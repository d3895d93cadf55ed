//! f32 vector math: the transcendental unary ops on f32, evaluated in f64 with range reduction
//! and polynomials and rounded once to f32, so each result is within 1 ulp (the conformance
//! suite's f32 bound; `tests.rs` checks it on samples, and on all 2^32 inputs when asked).
//!
//! Why this shape: libm's f64 functions, one call per element, cost 4-15 ns; these kernels are
//! branch-free straight-line code over f64 that LLVM vectorises, and [`map`] compiles the
//! element loop once per instruction set and picks one at run time (pulp: SSE2, AVX2,
//! AVX-512; wasm32 gets simd128 only when built with it). Every step is an IEEE basic operation
//! or an exact bit manipulation, and Rust never contracts `a * b + c` into a fused
//! multiply-add, so every instruction set, the scalar tail and the compiled tier's callouts
//! ([`scalar`]) give the same bits. NaN inputs come back as themselves and domain errors as
//! the one quiet NaN, so even NaN bits do not depend on the hardware.
//!
//! f64 operands keep libm (`elementwise::via_f64`): its bounds need more than f64 arithmetic.
//! Ops without a kernel here (inverse trigonometric and hyperbolic functions, `erf`, `erfc`,
//! `cbrt`, `pow`, `atan2`) keep libm for f32 too.
//!
//! ```
//! use quabla_abi::qir::UnaryOp;
//! let y = quabla_cpu::vmath::map(UnaryOp::Exp, &[0.0, 1.0]).unwrap();
//! assert_eq!(y, [1.0, std::f32::consts::E]);
//! ```

mod exp;
mod log;
mod trig;

#[cfg(test)]
mod tests;

use crate::pool;
use quabla_abi::qir::UnaryOp;
use std::mem::MaybeUninit;

/// A kernel with the C calling convention, for the compiled tier to call.
pub type F32Fn = extern "C" fn(f32) -> f32;

/// `1.5 * 2^52`: adding it rounds an f64 below 2^51 in magnitude to an integer (ties to even),
/// and leaves that integer in the low mantissa bits.
const ROUND_MAGIC: f64 = 6755399441055744.0;

/// `(k, k as i64)` with `k` the integer nearest `t` (ties to even), for `|t| < 2^51`: adds and
/// bit arithmetic only, which vectorise where a float-to-int64 conversion does not (AVX2).
#[inline(always)]
fn round_to_int(t: f64) -> (f64, i64) {
    let s = t + ROUND_MAGIC;
    let k = s - ROUND_MAGIC;
    let ki = (s.to_bits() as i64).wrapping_sub(ROUND_MAGIC.to_bits() as i64);
    (k, ki)
}

/// `c[0] + c[1] x + ... + c[N-1] x^(N-1)` by Horner's rule, in this one fixed order.
#[inline(always)]
fn horner<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let mut q = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        q = c[i] + x * q;
    }
    q
}

/// `x` itself when it is NaN, else `y`.
#[inline(always)]
fn nan_or(x: f32, y: f32) -> f32 {
    if x.is_nan() {
        x
    } else {
        y
    }
}

/// `1/sqrt(x)`: two correctly rounded f64 steps, as the interpreter always evaluated it.
#[inline(always)]
fn rsqrt(x: f32) -> f32 {
    nan_or(x, (1.0 / (x as f64).sqrt()) as f32)
}

/// The element loop of [`map_with`] as a pulp operation: `with_simd` is an
/// `#[inline(always)]` function, so it and the kernel inline into pulp's target-feature
/// function, where LLVM vectorises the loop (a closure body or an iterator adaptor such as
/// `extend` may be compiled once, for the baseline instruction set, and called instead).
struct MapLoop<'a, F> {
    x: &'a [f32],
    out: &'a mut [MaybeUninit<f32>],
    f: F,
}

impl<F: Fn(f32) -> f32> pulp::WithSimd for MapLoop<'_, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let n = self.x.len().min(self.out.len());
        let (x, out) = (&self.x[..n], &mut self.out[..n]);
        for i in 0..n {
            out[i].write((self.f)(x[i]));
        }
    }
}

/// Maps `f` over `x` into a recycled vector, the loop compiled for the best instruction set
/// the machine has.
#[inline(always)]
fn map_with(x: &[f32], f: impl Fn(f32) -> f32) -> Vec<f32> {
    let n = x.len();
    let mut out = pool::take(n);
    let spare = &mut out.spare_capacity_mut()[..n];
    pulp::Arch::new().dispatch(MapLoop { x, out: spare, f });
    // SAFETY: the loop wrote each of the first `n` elements (`spare` has exactly `n`).
    unsafe { out.set_len(n) };
    out
}

/// [`map_with`] for a trigonometric function: the vector loop's fast path, then the scalar
/// function for the lanes outside its range.
fn map_trig(x: &[f32], fast: impl Fn(f32) -> f32, full: fn(f32) -> f32) -> Vec<f32> {
    let mut out = map_with(x, fast);
    trig::fix_outside(x, &mut out, full);
    out
}

/// The kernel's values of `op` over `x`, or `None` when `op` has no kernel here.
pub fn map(op: UnaryOp, x: &[f32]) -> Option<Vec<f32>> {
    use UnaryOp::*;
    Some(match op {
        Rsqrt => map_with(x, rsqrt),
        Exp => map_with(x, exp::exp),
        Exp2 => map_with(x, exp::exp2),
        Expm1 => map_with(x, exp::expm1),
        Log => map_with(x, log::log),
        Log1p => map_with(x, log::log1p),
        Tanh => map_with(x, exp::tanh),
        Logistic => map_with(x, exp::logistic),
        Sinh => map_with(x, exp::sinh),
        Cosh => map_with(x, exp::cosh),
        Sin => map_trig(x, trig::sin_fast, trig::sin),
        Cos => map_trig(x, trig::cos_fast, trig::cos),
        Tan => map_trig(x, trig::tan_fast, trig::tan),
        Neg | Abs | Sign | Floor | Ceil | Round | Sqrt | IsFinite | Not | Cbrt | Asin | Acos
        | Atan | Asinh | Acosh | Atanh | Erf | Erfc => return None,
    })
}

macro_rules! c_kernel {
    ($f:path) => {{
        extern "C" fn c(x: f32) -> f32 {
            $f(x)
        }
        c as F32Fn
    }};
}

/// The one-element form of [`map`]'s kernel for `op`: the same function, so the same bits.
pub fn scalar(op: UnaryOp) -> Option<F32Fn> {
    use UnaryOp::*;
    Some(match op {
        Rsqrt => c_kernel!(rsqrt),
        Exp => c_kernel!(exp::exp),
        Exp2 => c_kernel!(exp::exp2),
        Expm1 => c_kernel!(exp::expm1),
        Log => c_kernel!(log::log),
        Log1p => c_kernel!(log::log1p),
        Tanh => c_kernel!(exp::tanh),
        Logistic => c_kernel!(exp::logistic),
        Sinh => c_kernel!(exp::sinh),
        Cosh => c_kernel!(exp::cosh),
        Sin => c_kernel!(trig::sin),
        Cos => c_kernel!(trig::cos),
        Tan => c_kernel!(trig::tan),
        Neg | Abs | Sign | Floor | Ceil | Round | Sqrt | IsFinite | Not | Cbrt | Asin | Acos
        | Atan | Asinh | Acosh | Atanh | Erf | Erfc => return None,
    })
}
