//! The two-operand kernels (`pow`, `atan2`) over pairs of f32 slices: the same vector-loop
//! and same-bits design as the unary ones ([`super::map`]), with one kernel function per op
//! that the interpreter maps and the compiled tier calls.
//!
//! ```
//! use quabla_abi::qir::BinaryOp;
//! let y = quabla_cpu::vmath::map_binary(BinaryOp::Pow, &[2.0, -2.0], &[10.0, 3.0]).unwrap();
//! assert_eq!(y, [1024.0, -8.0]);
//! ```

use super::{inverse, pow};
use crate::pool;
use quabla_abi::qir::BinaryOp;
use std::marker::PhantomData;
use std::mem::MaybeUninit;

/// A two-operand kernel with the C calling convention, for the compiled tier to call.
pub type F32BinaryFn = extern "C" fn(f32, f32) -> f32;

/// A kernel as a type whose `apply` inlines into the vector loop (see `super::Kernel`).
trait BinaryKernel {
    fn apply(a: f32, b: f32) -> f32;
}

/// The element loop of [`zip_with`] as a pulp operation (see `super::MapLoop`).
struct ZipLoop<'a, K> {
    a: &'a [f32],
    b: &'a [f32],
    out: &'a mut [MaybeUninit<f32>],
    kernel: PhantomData<K>,
}

impl<K: BinaryKernel> pulp::WithSimd for ZipLoop<'_, K> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let n = self.a.len().min(self.b.len()).min(self.out.len());
        let (a, b, out) = (&self.a[..n], &self.b[..n], &mut self.out[..n]);
        for i in 0..n {
            out[i].write(K::apply(a[i], b[i]));
        }
    }
}

/// Maps kernel `K` over the pairs of `a` and `b` (one length) into the first `a.len()` of
/// `out`, the loop compiled for the best instruction set the machine has.
#[inline(always)]
fn zip_with<K: BinaryKernel>(a: &[f32], b: &[f32], out: &mut [MaybeUninit<f32>]) {
    let n = a.len();
    assert_eq!(b.len(), n, "a binary kernel's operands have one length");
    pulp::Arch::new().dispatch(ZipLoop::<K> {
        a,
        b,
        out: &mut out[..n],
        kernel: PhantomData,
    });
}

/// [`zip_with`] of the kernel `$f` over `$a`, `$b` into `$out`.
macro_rules! zip_kernel {
    ($a:expr, $b:expr, $out:expr, $f:path) => {{
        struct K;
        impl BinaryKernel for K {
            #[inline(always)]
            fn apply(a: f32, b: f32) -> f32 {
                $f(a, b)
            }
        }
        zip_with::<K>($a, $b, $out)
    }};
}

/// The kernel's values of `op` over the pairs of `a` and `b`, or `None` when `op` has no
/// kernel here.
///
/// # Panics
/// If `a` and `b` differ in length.
pub fn map_binary(op: BinaryOp, a: &[f32], b: &[f32]) -> Option<Vec<f32>> {
    let n = a.len();
    let mut out = pool::take(n);
    if !map_binary_to(op, a, b, &mut out.spare_capacity_mut()[..n]) {
        pool::give(out);
        return None;
    }
    // SAFETY: `map_binary_to` wrote each of the first `n` elements.
    unsafe { out.set_len(n) };
    Some(out)
}

/// Writes the kernel's values of `op` into `out[..a.len()]` and returns `true`, or returns
/// `false`, writing nothing, when `op` has no kernel here.
///
/// # Panics
/// If `a` and `b` differ in length or `out` is shorter.
pub fn map_binary_to(op: BinaryOp, a: &[f32], b: &[f32], out: &mut [MaybeUninit<f32>]) -> bool {
    use BinaryOp::*;
    match op {
        Pow => zip_kernel!(a, b, out, pow::pow),
        Atan2 => zip_kernel!(a, b, out, inverse::atan2),
        Add | Sub | Mul | Div | Rem | Max | Min | And | Or | Xor | ShiftLeft
        | ShiftRightLogical | ShiftRightArithmetic => return false,
    }
    true
}

/// The one-element form of [`map_binary`]'s kernel for `op`: the same function, so the same
/// bits.
pub fn scalar_binary(op: BinaryOp) -> Option<F32BinaryFn> {
    use BinaryOp::*;
    Some(match op {
        Pow => {
            extern "C" fn c(a: f32, b: f32) -> f32 {
                pow::pow(a, b)
            }
            c
        }
        Atan2 => {
            extern "C" fn c(a: f32, b: f32) -> f32 {
                inverse::atan2(a, b)
            }
            c
        }
        Add | Sub | Mul | Div | Rem | Max | Min | And | Or | Xor | ShiftLeft
        | ShiftRightLogical | ShiftRightArithmetic => return None,
    })
}
