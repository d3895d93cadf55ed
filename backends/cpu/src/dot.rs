//! dot_general: operands are laid out as (batch, m, k) x (batch, k, n), then multiplied by
//! the `gemm` crate (runtime-dispatched SIMD kernels, AVX-512 where the CPU has it) for
//! floats, and by a plain loop for integers (wrapping, as integer arithmetic everywhere).

use crate::movement;
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::DotDims;
use quabla_abi::TensorType;
use rayon::prelude::*;
use std::sync::Arc;

/// Rows of the output per gemm call. Fixed so that every output element is computed by the
/// same kernel call shape whatever the thread count (bitwise reproducible).
const ROW_CHUNK: usize = 64;

fn to_layout(x: &Tensor, first: &[usize], second: &[usize], third: &[usize]) -> Arc<Storage> {
    let perm: Vec<usize> = first.iter().chain(second).chain(third).copied().collect();
    if perm.iter().enumerate().all(|(i, p)| i == *p) {
        return x.data.clone();
    }
    let shape = perm.iter().map(|&p| x.shape()[p]).collect();
    Arc::new(movement::transpose(
        x,
        &perm,
        &TensorType::new(x.ty.dtype, shape),
    ))
}

trait GemmScalar: crate::pool::Pooled + Copy + Send + Sync + 'static {
    const ZERO: Self;
    const ONE: Self;
}
impl GemmScalar for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
}
impl GemmScalar for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
}

/// Batch count and matrix sizes of a batched (m x k) @ (k x n) product.
#[derive(Clone, Copy)]
struct Sizes {
    b: usize,
    m: usize,
    k: usize,
    n: usize,
}

fn gemm_batched<T: GemmScalar>(l: &[T], r: &[T], Sizes { b, m, k, n }: Sizes) -> Vec<T> {
    let mut out = crate::pool::filled(b * m * n, T::ZERO);
    if k == 0 || m == 0 || n == 0 {
        return out;
    }
    let chunks_per_batch = m.div_ceil(ROW_CHUNK);
    let work = |(ci, dst): (usize, &mut [T])| {
        let (bi, c) = (ci / chunks_per_batch, ci % chunks_per_batch);
        let row0 = c * ROW_CHUNK;
        let rows = dst.len() / n;
        let lhs = &l[bi * m * k + row0 * k..];
        let rhs = &r[bi * k * n..];
        // SAFETY: dst holds rows x n, lhs at least rows x k, rhs k x n, all row-major and
        // in bounds by construction of the chunking above.
        unsafe {
            gemm::gemm(
                rows,
                n,
                k,
                dst.as_mut_ptr(),
                1,
                n as isize,
                false,
                lhs.as_ptr(),
                1,
                k as isize,
                rhs.as_ptr(),
                1,
                n as isize,
                T::ZERO,
                T::ONE,
                false,
                false,
                false,
                gemm::Parallelism::None,
            );
        }
    };
    // Split each batch's rows into fixed chunks; chunk boundaries never straddle batches.
    let mut pieces: Vec<(usize, &mut [T])> = Vec::new();
    for (bi, batch) in out.chunks_mut(m * n).enumerate() {
        for (c, d) in batch.chunks_mut(ROW_CHUNK * n).enumerate() {
            pieces.push((bi * chunks_per_batch + c, d));
        }
    }
    if b * m * n * k >= 1 << 18 {
        pieces.into_par_iter().for_each(work);
    } else {
        pieces.into_iter().for_each(work);
    }
    out
}

fn int_batched<T: crate::pool::Pooled + Default>(
    l: &[T],
    r: &[T],
    Sizes { b, m, k, n }: Sizes,
    mul: fn(T, T) -> T,
    add: fn(T, T) -> T,
) -> Vec<T> {
    let mut out = crate::pool::filled(b * m * n, T::default());
    for bi in 0..b {
        for i in 0..m {
            for p in 0..k {
                let a = l[bi * m * k + i * k + p];
                for j in 0..n {
                    let o = &mut out[bi * m * n + i * n + j];
                    *o = add(*o, mul(a, r[bi * k * n + p * n + j]));
                }
            }
        }
    }
    out
}

pub fn dot_general(l: &Tensor, r: &Tensor, d: &DotDims) -> Storage {
    let lfree: Vec<usize> = (0..l.ty.rank())
        .filter(|i| !d.lhs_batch.contains(i) && !d.lhs_contract.contains(i))
        .collect();
    let rfree: Vec<usize> = (0..r.ty.rank())
        .filter(|i| !d.rhs_batch.contains(i) && !d.rhs_contract.contains(i))
        .collect();
    let size = |t: &Tensor, dims: &[usize]| dims.iter().map(|&i| t.shape()[i]).product::<usize>();
    let sz = Sizes {
        b: size(l, &d.lhs_batch),
        m: size(l, &lfree),
        k: size(l, &d.lhs_contract),
        n: size(r, &rfree),
    };
    let ld = to_layout(l, &d.lhs_batch, &lfree, &d.lhs_contract);
    let rd = to_layout(r, &d.rhs_batch, &d.rhs_contract, &rfree);
    match (&*ld, &*rd) {
        (Storage::F32(x), Storage::F32(y)) => Storage::F32(gemm_batched(x, y, sz)),
        (Storage::F64(x), Storage::F64(y)) => Storage::F64(gemm_batched(x, y, sz)),
        (Storage::I32(x), Storage::I32(y)) => {
            Storage::I32(int_batched(x, y, sz, i32::wrapping_mul, i32::wrapping_add))
        }
        (Storage::U32(x), Storage::U32(y)) => {
            Storage::U32(int_batched(x, y, sz, u32::wrapping_mul, u32::wrapping_add))
        }
        _ => unreachable!("validation: dot_general operands are numeric and of one dtype"),
    }
}
