//! The interpreter's scalar functions, with the C calling convention, for the ops compiled
//! code calls rather than spells out: each symbol wraps the very function `elementwise.rs`
//! maps over slices, so the two tiers cannot drift apart.

use crate::elementwise::{
    self, binary_via_f64, int_div, int_rem, int_shift_left, int_shift_right_arithmetic,
    int_shift_right_logical, via_f64, Int, Real,
};
use quabla_abi::qir::{BinaryOp, LinalgOp, ReduceKind, UnaryOp};
use quabla_abi::DType;
use std::mem::MaybeUninit;

extern "C" fn sign<T: Real>(x: T) -> T {
    elementwise::sign(x)
}
extern "C" fn rem<T: Real>(x: T, y: T) -> T {
    x.rem(y)
}
extern "C" fn div<T: Int>(x: T, y: T) -> T {
    int_div(x, y)
}
extern "C" fn irem<T: Int>(x: T, y: T) -> T {
    int_rem(x, y)
}
extern "C" fn pow<T: Int>(x: T, y: T) -> T {
    x.pow(y)
}
extern "C" fn shl<T: Int>(x: T, y: T) -> T {
    int_shift_left(x, y)
}
extern "C" fn shrl<T: Int>(x: T, y: T) -> T {
    int_shift_right_logical(x, y)
}
extern "C" fn shra<T: Int>(x: T, y: T) -> T {
    int_shift_right_arithmetic(x, y)
}

/// `dst = lhs @ rhs`, batched (`dot::gemm_raw`): sizes `[b, m, k, n]` and strides as
/// separate words, so the signature is plain integers and pointers.
#[allow(clippy::too_many_arguments)]
extern "C" fn dot<T: crate::dot::GemmScalar>(
    dst: *mut T,
    lhs: *const T,
    rhs: *const T,
    b: u64,
    m: u64,
    k: u64,
    n: u64,
    lhs_row: u64,
    lhs_col: u64,
    rhs_row: u64,
    rhs_col: u64,
) {
    let u = |x: u64| x as usize;
    // SAFETY: `Function::check` bounded both operands and the destination inside their
    // arrays, which the caller of the compiled code vouches for; the destination is a
    // scratch array of its own.
    unsafe {
        crate::dot::gemm_raw(
            dst,
            lhs,
            rhs,
            [u(b), u(m), u(k), u(n)],
            (u(lhs_row), u(lhs_col)),
            (u(rhs_row), u(rhs_col)),
        )
    }
}

/// `dst[r]` = row `r` of `src` folded by the reduction `ReduceKind::ALL[kind]`, exactly as
/// the interpreter folds it (`reduce::Reducible`).
extern "C" fn reduce<T: crate::reduce::Reducible>(
    dst: *mut T,
    src: *const T,
    rows: u64,
    len: u64,
    kind: u32,
) {
    let Some(kind) = ReduceKind::ALL.get(kind as usize) else {
        return;
    };
    let (rows, len) = (rows as usize, len as usize);
    // SAFETY: `Function::check` bounded the rows and the destination inside their arrays,
    // which the caller of the compiled code vouches for; the destination is scratch.
    let (src, dst) = unsafe {
        (
            std::slice::from_raw_parts(src, rows * len),
            std::slice::from_raw_parts_mut(dst, rows),
        )
    };
    T::fold_rows_into(*kind, src, len, dst);
}

/// `dst[r]` = the sum of row `r` of the products `src[i] * times[i]`, exactly as the
/// interpreter sums the stored products (`reduce::sum_products_into`).
extern "C" fn sum_products<T: crate::elementwise::Real + Send + Sync>(
    dst: *mut T,
    src: *const T,
    times: *const T,
    rows: u64,
    len: u64,
) {
    let (rows, len) = (rows as usize, len as usize);
    // SAFETY: as in `reduce`; `Function::check` bounded both factors' rows alike.
    let (src, times, dst) = unsafe {
        (
            std::slice::from_raw_parts(src, rows * len),
            std::slice::from_raw_parts(times, rows * len),
            std::slice::from_raw_parts_mut(dst, rows),
        )
    };
    crate::reduce::sum_products_into(src, times, len, dst);
}

/// `op` (decoded by [`linalg_op`]) on the `batch` row-major `m x n` matrices at `a` (and a
/// triangular solve's `p x q` right-hand sides at `b`), result `k` written whole to `rk`
/// (float results are `T`, index results `i32`; an op has at most three), by
/// the interpreter's own kernels (`linalg::per_matrix`).
#[allow(clippy::too_many_arguments)]
extern "C" fn linalg<T: crate::linalg::Float>(
    code: u32,
    a: *const T,
    b: *const T,
    r0: *mut u8,
    r1: *mut u8,
    r2: *mut u8,
    batch: u64,
    m: u64,
    n: u64,
    p: u64,
    q: u64,
) {
    use crate::linalg::{per_matrix, Matrices, Part};
    let Some(op) = linalg_op(code) else {
        return;
    };
    let u = |x: u64| x as usize;
    let (batch, two) = (u(batch), matches!(op, LinalgOp::TriangularSolve { .. }));
    // SAFETY: `Function::check` bounded every operand inside its array and gave each result
    // an array of its own of exactly the op's result type (so its dtype and length are the
    // parts' below), which the caller of the compiled code vouches for.
    unsafe {
        let mats = |ptr: *const T, rows: usize, cols: usize| Matrices {
            data: std::slice::from_raw_parts(ptr, batch * rows * cols),
            batch,
            rows,
            cols,
        };
        let rhs = two.then(|| mats(b, u(p), u(q)));
        let parts = per_matrix(&op, mats(a, u(m), u(n)), rhs);
        for (k, dst) in [r0, r1, r2].into_iter().enumerate() {
            if parts.first().is_none_or(|m| k >= m.len()) {
                break;
            }
            for (i, matrix) in parts.iter().enumerate() {
                match &matrix[k] {
                    Part::F(x) => {
                        let at = dst.cast::<T>().add(i * x.len());
                        std::ptr::copy_nonoverlapping(x.as_ptr(), at, x.len());
                    }
                    Part::I(x) => {
                        let at = dst.cast::<i32>().add(i * x.len());
                        std::ptr::copy_nonoverlapping(x.as_ptr(), at, x.len());
                    }
                }
            }
        }
    }
}

/// The code [`linalg`] reads an op from: the variant in the low three bits, its flags
/// above them.
pub fn linalg_code(op: &LinalgOp) -> u32 {
    let flags = |bits: &[bool]| {
        bits.iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (3 + i)))
    };
    match op {
        LinalgOp::Cholesky => 0,
        LinalgOp::Lu => 1,
        LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            unit_diagonal,
        } => 2 | flags(&[*left_side, *lower, *transpose_a, *unit_diagonal]),
        LinalgOp::Eigh => 3,
        LinalgOp::Qr { full_matrices } => 4 | flags(&[*full_matrices]),
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => 5 | flags(&[*full_matrices, *compute_uv]),
    }
}

/// The op of a [`linalg_code`].
fn linalg_op(code: u32) -> Option<LinalgOp> {
    let flag = |i: u32| code & (1 << (3 + i)) != 0;
    Some(match code & 7 {
        0 => LinalgOp::Cholesky,
        1 => LinalgOp::Lu,
        2 => LinalgOp::TriangularSolve {
            left_side: flag(0),
            lower: flag(1),
            transpose_a: flag(2),
            unit_diagonal: flag(3),
        },
        3 => LinalgOp::Eigh,
        4 => LinalgOp::Qr {
            full_matrices: flag(0),
        },
        5 => LinalgOp::Svd {
            full_matrices: flag(0),
            compute_uv: flag(1),
        },
        _ => return None,
    })
}

/// The code `reduce` reads a reduction's kind from: its position in `ReduceKind::ALL`.
pub fn reduce_kind_code(kind: ReduceKind) -> u32 {
    ReduceKind::ALL
        .iter()
        .position(|k| *k == kind)
        .unwrap_or_default() as u32
}

/// `dst[..n] = op(src[..n])` by a kernel's vector loop (`vmath::map_to`,
/// `vmath::map_to_f64`), `op` being `UnaryOp::ALL[op]`, written straight into `dst`. Where
/// the runs overlap (an in-place update) the kernel writes a vector of its own, copied out
/// once the source is no longer borrowed.
///
/// # Safety
/// `src` and `dst` must each point to `n` elements.
unsafe fn map_into<T: crate::pool::Pooled>(
    op: u32,
    dst: *mut T,
    src: *const T,
    n: u64,
    map_to: fn(UnaryOp, &[T], &mut [MaybeUninit<T>]) -> bool,
) {
    let Some(op) = UnaryOp::ALL.get(op as usize) else {
        return;
    };
    let n = n as usize;
    let overlap = (src as usize) < (dst as usize).wrapping_add(n * size_of::<T>())
        && (dst as usize) < (src as usize).wrapping_add(n * size_of::<T>());
    // SAFETY: as the caller vouches; without overlap the two runs are distinct memory.
    let x = unsafe { std::slice::from_raw_parts(src, n) };
    if !overlap {
        let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<MaybeUninit<T>>(), n) };
        map_to(*op, x, out);
        return;
    }
    let mut y = crate::pool::take(n);
    if map_to(*op, x, &mut y.spare_capacity_mut()[..n]) {
        // SAFETY: `map_to` wrote the first `n` elements of `y`, a vector of its own; the
        // source borrow ends before the destination is written.
        unsafe {
            y.set_len(n);
            std::ptr::copy_nonoverlapping(y.as_ptr(), dst, n);
        }
    }
    crate::pool::give(y);
}

/// [`map_into`] by the f32 kernels.
extern "C" fn map_f32(op: u32, dst: *mut f32, src: *const f32, n: u64) {
    // SAFETY: `Function::check` bounded both runs inside their arrays, which the caller of
    // the compiled code vouches for.
    unsafe { map_into(op, dst, src, n, crate::vmath::map_to) }
}

/// [`map_into`] by the f64 kernels.
extern "C" fn map_f64(op: u32, dst: *mut f64, src: *const f64, n: u64) {
    // SAFETY: as in `map_f32`.
    unsafe { map_into(op, dst, src, n, crate::vmath::map_to_f64) }
}

/// The symbol of the vector loop of a dtype's kernels ([`map_f32`], [`map_f64`]).
pub fn map_symbol(dtype: DType) -> String {
    typed_symbol("map", dtype)
}

/// The code `map_f32` and `map_f64` read an op from: its position in `UnaryOp::ALL`.
pub fn unary_code(op: UnaryOp) -> u32 {
    UnaryOp::ALL
        .iter()
        .position(|o| *o == op)
        .unwrap_or_default() as u32
}

/// The symbol of the row reduction of a dtype.
pub fn reduce_symbol(dtype: DType) -> String {
    typed_symbol("reduce", dtype)
}

/// The symbol of the sum of products of a float dtype ([`sum_products`]).
pub fn sum_products_symbol(dtype: DType) -> String {
    typed_symbol("sum_products", dtype)
}

/// The symbol of the matrix product of a float dtype.
pub fn dot_symbol(dtype: DType) -> String {
    typed_symbol("dot", dtype)
}

/// The symbol of the linear algebra of a float dtype ([`linalg`]).
pub fn linalg_symbol(dtype: DType) -> String {
    typed_symbol("linalg", dtype)
}

/// The symbol of the f64 function a float op is evaluated with (`via_f64`, `binary_via_f64`).
pub fn f64_symbol(op_name: &str) -> String {
    format!("quabla_f64_{op_name}")
}

/// The symbol of the f32 vector-math kernel of an op (`vmath::scalar`,
/// `vmath::scalar_binary`).
pub fn f32_kernel_symbol(op_name: &str) -> String {
    format!("quabla_f32_{op_name}")
}

/// The symbol of a same-dtype scalar function (`sign`, float `rem`, integer
/// `div` / `rem` / `pow` / shifts).
pub fn typed_symbol(op_name: &str, dtype: DType) -> String {
    format!("quabla_{op_name}_{}", dtype.name())
}

/// Every symbol compiled code may import, with its address.
pub fn symbols() -> Vec<(String, *const u8)> {
    let mut s: Vec<(String, *const u8)> = Vec::new();
    for op in UnaryOp::ALL {
        if let Some(f) = via_f64(*op) {
            s.push((f64_symbol(op.name()), f as *const u8));
        }
        if let Some(f) = crate::vmath::scalar(*op) {
            s.push((f32_kernel_symbol(op.name()), f as *const u8));
        }
    }
    for op in BinaryOp::ALL {
        if let Some(f) = binary_via_f64(*op) {
            s.push((f64_symbol(op.name()), f as *const u8));
        }
        if let Some(f) = crate::vmath::scalar_binary(*op) {
            s.push((f32_kernel_symbol(op.name()), f as *const u8));
        }
    }
    s.push((map_symbol(DType::F32), map_f32 as *const u8));
    s.push((map_symbol(DType::F64), map_f64 as *const u8));
    let mut typed = |op: &str, dtype: DType, f: *const u8| s.push((typed_symbol(op, dtype), f));
    typed("reduce", DType::F32, reduce::<f32> as *const u8);
    typed("reduce", DType::F64, reduce::<f64> as *const u8);
    typed("reduce", DType::I32, reduce::<i32> as *const u8);
    typed("reduce", DType::U32, reduce::<u32> as *const u8);
    typed("reduce", DType::Bool, reduce::<bool> as *const u8);
    typed("sum_products", DType::F32, sum_products::<f32> as *const u8);
    typed("sum_products", DType::F64, sum_products::<f64> as *const u8);
    typed("dot", DType::F32, dot::<f32> as *const u8);
    typed("dot", DType::F64, dot::<f64> as *const u8);
    typed("linalg", DType::F32, linalg::<f32> as *const u8);
    typed("linalg", DType::F64, linalg::<f64> as *const u8);
    typed("sign", DType::F32, sign::<f32> as *const u8);
    typed("sign", DType::F64, sign::<f64> as *const u8);
    typed("rem", DType::F32, rem::<f32> as *const u8);
    typed("rem", DType::F64, rem::<f64> as *const u8);
    typed("div", DType::I32, div::<i32> as *const u8);
    typed("div", DType::U32, div::<u32> as *const u8);
    typed("rem", DType::I32, irem::<i32> as *const u8);
    typed("rem", DType::U32, irem::<u32> as *const u8);
    typed("pow", DType::I32, pow::<i32> as *const u8);
    typed("pow", DType::U32, pow::<u32> as *const u8);
    typed("shift_left", DType::I32, shl::<i32> as *const u8);
    typed("shift_left", DType::U32, shl::<u32> as *const u8);
    typed("shift_right_logical", DType::I32, shrl::<i32> as *const u8);
    typed("shift_right_logical", DType::U32, shrl::<u32> as *const u8);
    typed(
        "shift_right_arithmetic",
        DType::I32,
        shra::<i32> as *const u8,
    );
    typed(
        "shift_right_arithmetic",
        DType::U32,
        shra::<u32> as *const u8,
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linalg_codes_round_trip_every_op_and_flag() {
        let mut ops = vec![LinalgOp::Cholesky, LinalgOp::Lu, LinalgOp::Eigh];
        for bits in 0..16u32 {
            let bit = |i: u32| bits & (1 << i) != 0;
            ops.push(LinalgOp::TriangularSolve {
                left_side: bit(0),
                lower: bit(1),
                transpose_a: bit(2),
                unit_diagonal: bit(3),
            });
            if bits < 2 {
                ops.push(LinalgOp::Qr {
                    full_matrices: bit(0),
                });
            }
            if bits < 4 {
                ops.push(LinalgOp::Svd {
                    full_matrices: bit(0),
                    compute_uv: bit(1),
                });
            }
        }
        let codes: std::collections::HashSet<u32> = ops.iter().map(linalg_code).collect();
        assert_eq!(codes.len(), ops.len(), "two ops share a code");
        for op in &ops {
            assert_eq!(linalg_op(linalg_code(op)).as_ref(), Some(op));
        }
        assert_eq!(linalg_op(7), None);
    }

    /// The vector-math callout gives the scalar kernel's bits writing into another array,
    /// in place, and into a run that overlaps its source by part.
    #[test]
    fn map_callout_gives_the_kernels_bits_into_any_destination() {
        let code = unary_code(UnaryOp::Tanh);
        let kernel = crate::vmath::scalar(UnaryOp::Tanh).expect("tanh has an f32 kernel");
        let x: Vec<f32> = (0..37).map(|i| (i as f32 - 18.0) * 0.37).collect();
        let want: Vec<u32> = x.iter().map(|v| kernel(*v).to_bits()).collect();
        let bits = |v: &[f32]| v.iter().map(|y| y.to_bits()).collect::<Vec<u32>>();
        let mut other = vec![0.0f32; x.len()];
        map_f32(code, other.as_mut_ptr(), x.as_ptr(), x.len() as u64);
        assert_eq!(bits(&other), want, "into another array");
        let mut same = x.clone();
        map_f32(code, same.as_mut_ptr(), same.as_ptr(), x.len() as u64);
        assert_eq!(bits(&same), want, "in place");
        // dst starts 5 elements into src's run: the source must be read before it is written.
        let mut shifted = x.clone();
        shifted.extend([0.0; 5]);
        let p = shifted.as_mut_ptr();
        // SAFETY: both runs of 37 lie inside the 42 elements of `shifted`.
        map_f32(code, unsafe { p.add(5) }, p, x.len() as u64);
        assert_eq!(bits(&shifted[5..]), want, "overlapping");
    }
}
