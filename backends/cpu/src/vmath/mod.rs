//! Vector math: the transcendental ops on f32, evaluated in f64 with range reduction
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
//! The f32 kernels: the exponential family (`exp.rs`), the logarithms (`log.rs`), `sin`,
//! `cos` and `tan` (`trig.rs`), the inverse trigonometric and hyperbolic functions
//! (`inverse.rs`), `erf` and `erfc` (`erf.rs`), `cbrt` (`pow.rs`), `rsqrt` here, and the
//! two-operand `pow` and `atan2` (`binary.rs`: [`map_binary`], [`scalar_binary`]). Every
//! transcendental f32 op has one; the rest are exact in f32 itself. The one exception to
//! "evaluated in f64, rounded once": `erf_inv` (`erf_inv.rs`, f32 and f64) is XLA's algorithm
//! step for step, fused multiply-adds included (correctly rounded, so the same bits on every
//! instruction set), to give JAX's numbers.
//!
//! f64 has kernels of its own for the exponential family (`exp64.rs`: `exp`, `exp2`, `expm1`,
//! `tanh`, `logistic`, `sinh`, `cosh`), the logarithms (`log64.rs`: `log`, `log1p`) and `sin`,
//! `cos` and `tan` (`trig64.rs`), within the suite's f64 bounds, with the same vector-loop and
//! same-bits design ([`map_f64`], [`scalar_f64`]); its other functions keep libm
//! (`elementwise::via_f64`).
//!
//! ```
//! use quabla_abi::qir::UnaryOp;
//! let y = quabla_cpu::vmath::map(UnaryOp::Exp, &[0.0, 1.0]).unwrap();
//! assert_eq!(y, [1.0, std::f32::consts::E]);
//! ```

mod binary;
mod erf;
mod erf_inv;
mod exp;
mod exp64;
mod inverse;
mod log;
mod log64;
mod pow;
mod trig;
mod trig64;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_binary;
#[cfg(test)]
mod tests_erf_inv;
#[cfg(test)]
mod tests_f64;

use crate::elementwise::F64Fn;
use crate::pool;
use quabla_abi::qir::UnaryOp;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

pub use binary::{map_binary, map_binary_to, scalar_binary, F32BinaryFn};

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

/// Veltkamp's split of `v` into a high half of 26 bits and the rest, both exact, so that
/// products of halves are exact (Dekker's product without a fused multiply-add).
#[inline(always)]
const fn split(v: f64) -> (f64, f64) {
    let c = 134217729.0 * v; // 2^27 + 1
    let hi = c - (c - v);
    (hi, v - hi)
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

/// A kernel as a type whose `apply` is `#[inline(always)]` (made by [`map_kernel!`]). A
/// function item or closure passed as `impl Fn` goes through a `call` shim that LLVM may
/// decline to inline once the kernel is large (the f64 `tanh` and `expm1` were), and the
/// loop then stays scalar: 5-7 ns an element instead of about 1.
trait Kernel<T> {
    fn apply(x: T) -> T;
}

/// The element loop of [`map_with`] as a pulp operation: `with_simd` is an
/// `#[inline(always)]` function, so it and the kernel inline into pulp's target-feature
/// function, where LLVM vectorises the loop (a closure body or an iterator adaptor such as
/// `extend` may be compiled once, for the baseline instruction set, and called instead).
struct MapLoop<'a, T, K> {
    x: &'a [T],
    out: &'a mut [MaybeUninit<T>],
    kernel: PhantomData<K>,
}

impl<T: Copy, K: Kernel<T>> pulp::WithSimd for MapLoop<'_, T, K> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let n = self.x.len().min(self.out.len());
        let (x, out) = (&self.x[..n], &mut self.out[..n]);
        for i in 0..n {
            out[i].write(K::apply(x[i]));
        }
    }
}

/// Maps kernel `K` over `x` into `out` (the first `x.len()` of it), the loop compiled for
/// the best instruction set the machine has; returns the written elements.
#[inline(always)]
fn map_with<'o, T: Copy, K: Kernel<T>>(x: &[T], out: &'o mut [MaybeUninit<T>]) -> &'o mut [T] {
    let n = x.len();
    let out = &mut out[..n];
    pulp::Arch::new().dispatch(MapLoop::<T, K> {
        x,
        out: &mut *out,
        kernel: PhantomData,
    });
    // SAFETY: the loop wrote each of the `n` elements of `out`, and `MaybeUninit<T>` has
    // `T`'s layout.
    unsafe { &mut *(out as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// [`map_with`] of the kernel `$f` of element type `$t` over `$x` into `$out`.
macro_rules! map_kernel {
    ($x:expr, $out:expr, $t:ty, $f:path) => {{
        struct K;
        impl Kernel<$t> for K {
            #[inline(always)]
            fn apply(x: $t) -> $t {
                $f(x)
            }
        }
        map_with::<$t, K>($x, $out)
    }};
}

/// A dtype's `fix_outside` (`trig::fix_outside`, `trig64::fix_outside`).
type FixOutside<T> = fn(&[T], &mut [T], fn(T) -> T);

/// A trigonometric kernel's vector-loop output `out` over `x`, with the lanes outside its
/// fast path's range redone by the scalar function `full` (`fix` is the dtype's
/// `fix_outside`).
fn fixed<'o, T>(x: &[T], out: &'o mut [T], fix: FixOutside<T>, full: fn(T) -> T) -> &'o mut [T] {
    fix(x, out, full);
    out
}

/// `op(x)` in a recycled vector, by `into` (one of the `map_to` functions), or `None`.
fn map_pooled<T: pool::Pooled>(
    op: UnaryOp,
    x: &[T],
    into: fn(UnaryOp, &[T], &mut [MaybeUninit<T>]) -> bool,
) -> Option<Vec<T>> {
    let n = x.len();
    let mut out = pool::take(n);
    if !into(op, x, &mut out.spare_capacity_mut()[..n]) {
        pool::give(out);
        return None;
    }
    // SAFETY: `into` wrote each of the first `n` elements.
    unsafe { out.set_len(n) };
    Some(out)
}

/// The kernel's values of `op` over `x`, or `None` when `op` has no kernel here.
pub fn map(op: UnaryOp, x: &[f32]) -> Option<Vec<f32>> {
    map_pooled(op, x, map_to)
}

/// Writes the kernel's values of `op` over `x` into `out[..x.len()]` and returns `true`, or
/// returns `false`, writing nothing, when `op` has no kernel here. The compiled tier's
/// callout writes straight into its destination this way.
///
/// # Panics
/// If `out` is shorter than `x`.
pub fn map_to(op: UnaryOp, x: &[f32], out: &mut [MaybeUninit<f32>]) -> bool {
    use UnaryOp::*;
    let _written = match op {
        Rsqrt => map_kernel!(x, out, f32, rsqrt),
        Exp => map_kernel!(x, out, f32, exp::exp),
        Exp2 => map_kernel!(x, out, f32, exp::exp2),
        Expm1 => map_kernel!(x, out, f32, exp::expm1),
        Log => map_kernel!(x, out, f32, log::log),
        Log1p => map_kernel!(x, out, f32, log::log1p),
        Tanh => map_kernel!(x, out, f32, exp::tanh),
        Logistic => map_kernel!(x, out, f32, exp::logistic),
        Sinh => map_kernel!(x, out, f32, exp::sinh),
        Cosh => map_kernel!(x, out, f32, exp::cosh),
        // The lanes outside the fast path's range are redone by the scalar function.
        Sin => fixed(
            x,
            map_kernel!(x, out, f32, trig::sin_fast),
            trig::fix_outside,
            trig::sin,
        ),
        Cos => fixed(
            x,
            map_kernel!(x, out, f32, trig::cos_fast),
            trig::fix_outside,
            trig::cos,
        ),
        Tan => fixed(
            x,
            map_kernel!(x, out, f32, trig::tan_fast),
            trig::fix_outside,
            trig::tan,
        ),
        Atan => map_kernel!(x, out, f32, inverse::atan),
        Asin => map_kernel!(x, out, f32, inverse::asin),
        Acos => map_kernel!(x, out, f32, inverse::acos),
        Asinh => map_kernel!(x, out, f32, inverse::asinh),
        Acosh => map_kernel!(x, out, f32, inverse::acosh),
        Atanh => map_kernel!(x, out, f32, inverse::atanh),
        Erf => map_kernel!(x, out, f32, erf::erf),
        Erfc => map_kernel!(x, out, f32, erf::erfc),
        ErfInv => map_kernel!(x, out, f32, erf_inv::erf_inv),
        Cbrt => map_kernel!(x, out, f32, pow::cbrt),
        Neg | Abs | Sign | Floor | Ceil | Round | Sqrt | IsFinite | Not => return false,
    };
    true
}

/// Kernel `$f` on `$t` with the C calling convention, for the compiled tier to call.
macro_rules! c_kernel {
    ($t:ty, $f:path) => {{
        extern "C" fn c(x: $t) -> $t {
            $f(x)
        }
        c
    }};
}

/// The one-element form of [`map`]'s kernel for `op`: the same function, so the same bits.
pub fn scalar(op: UnaryOp) -> Option<F32Fn> {
    use UnaryOp::*;
    Some(match op {
        Rsqrt => c_kernel!(f32, rsqrt),
        Exp => c_kernel!(f32, exp::exp),
        Exp2 => c_kernel!(f32, exp::exp2),
        Expm1 => c_kernel!(f32, exp::expm1),
        Log => c_kernel!(f32, log::log),
        Log1p => c_kernel!(f32, log::log1p),
        Tanh => c_kernel!(f32, exp::tanh),
        Logistic => c_kernel!(f32, exp::logistic),
        Sinh => c_kernel!(f32, exp::sinh),
        Cosh => c_kernel!(f32, exp::cosh),
        Sin => c_kernel!(f32, trig::sin),
        Cos => c_kernel!(f32, trig::cos),
        Tan => c_kernel!(f32, trig::tan),
        Atan => c_kernel!(f32, inverse::atan),
        Asin => c_kernel!(f32, inverse::asin),
        Acos => c_kernel!(f32, inverse::acos),
        Asinh => c_kernel!(f32, inverse::asinh),
        Acosh => c_kernel!(f32, inverse::acosh),
        Atanh => c_kernel!(f32, inverse::atanh),
        Erf => c_kernel!(f32, erf::erf),
        Erfc => c_kernel!(f32, erf::erfc),
        ErfInv => c_kernel!(f32, erf_inv::erf_inv),
        Cbrt => c_kernel!(f32, pow::cbrt),
        Neg | Abs | Sign | Floor | Ceil | Round | Sqrt | IsFinite | Not => return None,
    })
}

/// The f64 kernel's values of `op` over `x`, or `None` when f64 `op` keeps libm.
///
/// ```
/// use quabla_abi::qir::UnaryOp;
/// let y = quabla_cpu::vmath::map_f64(UnaryOp::Exp2, &[0.0, 3.0, -1074.0]).unwrap();
/// assert_eq!(y, [1.0, 8.0, f64::from_bits(1)]);
/// ```
pub fn map_f64(op: UnaryOp, x: &[f64]) -> Option<Vec<f64>> {
    map_pooled(op, x, map_to_f64)
}

/// [`map_to`] for the f64 kernels.
///
/// # Panics
/// If `out` is shorter than `x`.
pub fn map_to_f64(op: UnaryOp, x: &[f64], out: &mut [MaybeUninit<f64>]) -> bool {
    use UnaryOp::*;
    let _written = match op {
        Exp => map_kernel!(x, out, f64, exp64::exp),
        Exp2 => map_kernel!(x, out, f64, exp64::exp2),
        Expm1 => map_kernel!(x, out, f64, exp64::expm1),
        Tanh => map_kernel!(x, out, f64, exp64::tanh),
        Logistic => map_kernel!(x, out, f64, exp64::logistic),
        Log => map_kernel!(x, out, f64, log64::log),
        Log1p => map_kernel!(x, out, f64, log64::log1p),
        Sin => fixed(
            x,
            map_kernel!(x, out, f64, trig64::sin_fast),
            trig64::fix_outside,
            trig64::sin,
        ),
        Cos => fixed(
            x,
            map_kernel!(x, out, f64, trig64::cos_fast),
            trig64::fix_outside,
            trig64::cos,
        ),
        Tan => fixed(
            x,
            map_kernel!(x, out, f64, trig64::tan_fast),
            trig64::fix_outside,
            trig64::tan,
        ),
        Sinh => map_kernel!(x, out, f64, exp64::sinh),
        Cosh => map_kernel!(x, out, f64, exp64::cosh),
        ErfInv => map_kernel!(x, out, f64, erf_inv::erf_inv64),
        Rsqrt | Neg | Abs | Sign | Floor | Ceil | Round | Sqrt | IsFinite | Not | Cbrt | Asin
        | Acos | Atan | Asinh | Acosh | Atanh | Erf | Erfc => return false,
    };
    true
}

/// The one-element form of [`map_f64`]'s kernel for `op`: the same function, so the same
/// bits. The interpreter's scalar paths and the compiled tier call it.
pub fn scalar_f64(op: UnaryOp) -> Option<F64Fn> {
    use UnaryOp::*;
    Some(match op {
        Exp => c_kernel!(f64, exp64::exp),
        Exp2 => c_kernel!(f64, exp64::exp2),
        Expm1 => c_kernel!(f64, exp64::expm1),
        Tanh => c_kernel!(f64, exp64::tanh),
        Logistic => c_kernel!(f64, exp64::logistic),
        Log => c_kernel!(f64, log64::log),
        Log1p => c_kernel!(f64, log64::log1p),
        Sin => c_kernel!(f64, trig64::sin),
        Cos => c_kernel!(f64, trig64::cos),
        Tan => c_kernel!(f64, trig64::tan),
        Sinh => c_kernel!(f64, exp64::sinh),
        Cosh => c_kernel!(f64, exp64::cosh),
        ErfInv => c_kernel!(f64, erf_inv::erf_inv64),
        Rsqrt | Neg | Abs | Sign | Floor | Ceil | Round | Sqrt | IsFinite | Not | Cbrt | Asin
        | Acos | Atan | Asinh | Acosh | Atanh | Erf | Erfc => return None,
    })
}
