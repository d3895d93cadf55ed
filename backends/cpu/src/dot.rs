//! dot_general: operands are laid out as (batch, m, k) x (batch, k, n), then multiplied by
//! the `gemm` crate (runtime-dispatched SIMD kernels, AVX-512 where the CPU has it) for
//! floats, and by a plain loop for integers (wrapping, as integer arithmetic everywhere).

use crate::matvec::{try_matvec, Matvec};
use crate::movement;
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::DotDims;
use quabla_abi::TensorType;
use rayon::prelude::*;
use std::sync::Arc;

/// Rows of the output per gemm call. Fixed so that every output element is computed by the
/// same kernel call shape whatever the thread count (bitwise reproducible). Each call packs
/// the whole right operand again, so the chunk trades that repacking against parallelism:
/// on a 1024^3 f32 product, one thread, 64 rows took 15.9 ms, 128 12.7, 256 11.2 and 512
/// 10.4 (JAX: 12.1); 256 still gives four chunks to the threads at m = 1024.
const ROW_CHUNK: usize = 256;

/// An operand as a batch of matrices: element (b, i, j) at
/// `b * rows * cols + i * row_stride + j * col_stride`.
struct MatrixView {
    data: Arc<Storage>,
    row_stride: usize,
    col_stride: usize,
}

/// The operand with `batch` dims first, then `rows`, then `cols`. gemm takes any strides, so
/// an operand stored as (batch, cols, rows), which is what the transposes of reverse mode
/// produce, is read in place; only other orders are copied.
fn matrix_view(x: &Tensor, batch: &[usize], rows: &[usize], cols: &[usize]) -> MatrixView {
    let is_identity = |order: &[&[usize]]| {
        order
            .iter()
            .flat_map(|dims| dims.iter())
            .enumerate()
            .all(|(i, p)| i == *p)
    };
    let extent = |dims: &[usize]| dims.iter().map(|&i| x.shape()[i]).product::<usize>();
    let (n_rows, n_cols) = (extent(rows), extent(cols));
    if is_identity(&[batch, rows, cols]) {
        return MatrixView {
            data: x.data.clone(),
            row_stride: n_cols,
            col_stride: 1,
        };
    }
    if is_identity(&[batch, cols, rows]) {
        return MatrixView {
            data: x.data.clone(),
            row_stride: 1,
            col_stride: n_rows,
        };
    }
    let perm: Vec<usize> = batch.iter().chain(rows).chain(cols).copied().collect();
    let shape = perm.iter().map(|&p| x.shape()[p]).collect();
    MatrixView {
        data: Arc::new(movement::transpose(
            x,
            &perm,
            &TensorType::new(x.ty.dtype, shape),
        )),
        row_stride: n_cols,
        col_stride: 1,
    }
}

pub(crate) trait GemmScalar:
    crate::pool::Pooled + crate::matvec::Lane + Copy + Send + Sync + 'static
{
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

/// Element strides (row, column) of the two operands.
#[derive(Clone, Copy)]
struct Strides {
    lhs: (usize, usize),
    rhs: (usize, usize),
}

fn gemm_batched<T: GemmScalar>(l: &[T], r: &[T], sizes: Sizes, strides: Strides) -> Vec<T> {
    let mut out = crate::pool::filled(sizes.b * sizes.m * sizes.n, T::ZERO);
    gemm_batched_into(l, r, sizes, strides, &mut out);
    out
}

/// The product into `out` (`b * m * n` elements, overwritten), in fixed row chunks.
fn gemm_batched_into<T: GemmScalar>(
    l: &[T],
    r: &[T],
    Sizes { b, m, k, n }: Sizes,
    Strides {
        lhs: (lrs, lcs),
        rhs: (rrs, rcs),
    }: Strides,
    out: &mut [T],
) {
    if k == 0 || m == 0 || n == 0 {
        out.fill(T::ZERO);
        return;
    }
    let threaded = b * m * n * k >= 1 << 18;
    if !threaded
        && (m == 1 || n == 1)
        && matvecs(l, r, Sizes { b, m, k, n }, (lrs, lcs), (rrs, rcs), out)
    {
        return;
    }
    let chunks_per_batch = m.div_ceil(ROW_CHUNK);
    let work = |(ci, dst): (usize, &mut [T])| {
        let (bi, c) = (ci / chunks_per_batch, ci % chunks_per_batch);
        let row0 = c * ROW_CHUNK;
        let rows = dst.len() / n;
        let lhs = &l[bi * m * k + row0 * lrs..];
        let rhs = &r[bi * k * n..];
        // SAFETY: dst holds rows x n (row-major); the largest lhs offset read is
        // (rows - 1) * lrs + (k - 1) * lcs, inside this batch's m x k block at row0 whichever
        // of the two layouts `matrix_view` chose, and likewise for rhs's k x n block.
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
                lcs as isize,
                lrs as isize,
                rhs.as_ptr(),
                rcs as isize,
                rrs as isize,
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
    if threaded {
        pieces.into_par_iter().for_each(work);
    } else {
        pieces.into_iter().for_each(work);
    }
}

/// Each batch's product by `matvec` when one side is a vector (`m == 1` or `n == 1`) and the
/// layout has a kernel there; `false`, with nothing written, otherwise. The layout is the
/// same for every batch, so either all batches take the kernel or none does.
fn matvecs<T: GemmScalar>(
    l: &[T],
    r: &[T],
    Sizes { b, m, k, n }: Sizes,
    lhs: (usize, usize),
    rhs: (usize, usize),
    out: &mut [T],
) -> bool {
    for (bi, out) in out.chunks_mut(m * n).enumerate().take(b) {
        let (l, r) = (&l[bi * m * k..], &r[bi * k * n..]);
        // n == 1: out[i] = lhs row i . rhs column; m == 1: out[j] = rhs column j . lhs row.
        let product = if n == 1 {
            Matvec {
                out,
                a: l,
                a_strides: lhs,
                v: r,
                v_stride: rhs.0,
                k,
            }
        } else {
            Matvec {
                out,
                a: r,
                a_strides: (rhs.1, rhs.0),
                v: l,
                v_stride: lhs.1,
                k,
            }
        };
        if !try_matvec(product) {
            debug_assert_eq!(bi, 0, "one layout for every batch");
            return false;
        }
    }
    true
}

/// The float matrix product the compiled tier calls (`native/callouts.rs`): the same gemm
/// calls, row chunks and threading rule as [`dot_general`], on operands already laid out
/// as `(batch, m, k)` and `(batch, k, n)` with the given (row, column) strides.
///
/// # Safety
/// `l`, `r` and `out` point at `b*m*k`, `b*k*n` and `b*m*n` valid elements; `out` overlaps
/// neither operand.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) unsafe fn gemm_raw<T: GemmScalar>(
    out: *mut T,
    l: *const T,
    r: *const T,
    [b, m, k, n]: [usize; 4],
    lhs: (usize, usize),
    rhs: (usize, usize),
) {
    // SAFETY: the caller's contract.
    let (l, r, out) = unsafe {
        (
            std::slice::from_raw_parts(l, b * m * k),
            std::slice::from_raw_parts(r, b * k * n),
            std::slice::from_raw_parts_mut(out, b * m * n),
        )
    };
    gemm_batched_into(l, r, Sizes { b, m, k, n }, Strides { lhs, rhs }, out);
}

fn int_batched<T: crate::pool::Pooled + Default>(
    l: &[T],
    r: &[T],
    Sizes { b, m, k, n }: Sizes,
    Strides {
        lhs: (lrs, lcs),
        rhs: (rrs, rcs),
    }: Strides,
    mul: fn(T, T) -> T,
    add: fn(T, T) -> T,
) -> Vec<T> {
    let mut out = crate::pool::filled(b * m * n, T::default());
    for bi in 0..b {
        for i in 0..m {
            for p in 0..k {
                let a = l[bi * m * k + i * lrs + p * lcs];
                for j in 0..n {
                    let o = &mut out[bi * m * n + i * n + j];
                    *o = add(*o, mul(a, r[bi * k * n + p * rrs + j * rcs]));
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
    let lv = matrix_view(l, &d.lhs_batch, &lfree, &d.lhs_contract);
    let rv = matrix_view(r, &d.rhs_batch, &d.rhs_contract, &rfree);
    let strides = Strides {
        lhs: (lv.row_stride, lv.col_stride),
        rhs: (rv.row_stride, rv.col_stride),
    };
    match (&*lv.data, &*rv.data) {
        (Storage::F32(x), Storage::F32(y)) => Storage::F32(gemm_batched(x, y, sz, strides)),
        (Storage::F64(x), Storage::F64(y)) => Storage::F64(gemm_batched(x, y, sz, strides)),
        (Storage::I32(x), Storage::I32(y)) => Storage::I32(int_batched(
            x,
            y,
            sz,
            strides,
            i32::wrapping_mul,
            i32::wrapping_add,
        )),
        (Storage::U32(x), Storage::U32(y)) => Storage::U32(int_batched(
            x,
            y,
            sz,
            strides,
            u32::wrapping_mul,
            u32::wrapping_add,
        )),
        _ => unreachable!("validation: dot_general operands are numeric and of one dtype"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_abi::DType;

    fn tensor(shape: &[usize], dtype: DType, seed: u64) -> Tensor {
        let n: usize = shape.iter().product();
        let ints = (0..n as u64).map(|i| ((i * 7919 + seed * 104729) % 13) as i32 - 6);
        let data = match dtype {
            DType::F32 => Storage::F32(ints.map(|v| v as f32 / 4.0).collect()),
            DType::F64 => Storage::F64(ints.map(|v| v as f64 / 4.0).collect()),
            DType::I32 => Storage::I32(ints.collect()),
            _ => unreachable!(),
        };
        Tensor::new(TensorType::new(dtype, shape.to_vec()), data)
    }

    fn as_f64(s: &Storage) -> Vec<f64> {
        match s {
            Storage::F32(v) => v.iter().map(|x| *x as f64).collect(),
            Storage::F64(v) => v.clone(),
            Storage::I32(v) => v.iter().map(|x| *x as f64).collect(),
            _ => unreachable!(),
        }
    }

    /// out[b, i, j] = sum_p l[..] * r[..] by index arithmetic on the original layouts.
    fn reference(l: &Tensor, r: &Tensor, d: &DotDims, sizes: [usize; 4]) -> Vec<f64> {
        let [b, m, k, n] = sizes;
        let (lv, rv) = (as_f64(&l.data), as_f64(&r.data));
        // Every group here is a single axis (or absent), which is what the cases below use.
        let index = |t: &Tensor, axes: [(Option<&usize>, usize); 3]| {
            let mut at = vec![0; t.ty.rank()];
            for (axis, i) in axes {
                if let Some(&a) = axis {
                    at[a] = i;
                }
            }
            at.iter()
                .zip(t.shape())
                .fold(0, |acc, (i, extent)| acc * extent + i)
        };
        let lfree: Vec<usize> = (0..l.ty.rank())
            .filter(|i| !d.lhs_batch.contains(i) && !d.lhs_contract.contains(i))
            .collect();
        let rfree: Vec<usize> = (0..r.ty.rank())
            .filter(|i| !d.rhs_batch.contains(i) && !d.rhs_contract.contains(i))
            .collect();
        let mut out = vec![0.0; b * m * n];
        for bi in 0..b {
            for i in 0..m {
                for j in 0..n {
                    out[(bi * m + i) * n + j] = (0..k)
                        .map(|p| {
                            let li = index(
                                l,
                                [
                                    (d.lhs_batch.first(), bi),
                                    (lfree.first(), i),
                                    (d.lhs_contract.first(), p),
                                ],
                            );
                            let ri = index(
                                r,
                                [
                                    (d.rhs_batch.first(), bi),
                                    (d.rhs_contract.first(), p),
                                    (rfree.first(), j),
                                ],
                            );
                            lv[li] * rv[ri]
                        })
                        .sum();
                }
            }
        }
        out
    }

    /// Every placement of the batch, free and contracted axis of both operands: the layouts
    /// read in place (row- or column-major per batch) and the ones copied first.
    #[test]
    fn every_axis_order_matches_index_arithmetic() {
        let (b, m, k, n) = (3, ROW_CHUNK + 6, 5, 4); // so a chunk starts past row 0
        let orders: [[usize; 3]; 6] = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        for dtype in [DType::F32, DType::F64, DType::I32] {
            for lo in orders {
                for ro in orders {
                    // lo[g] is the axis holding group g (batch, free, contract) of lhs.
                    let mut lshape = [0; 3];
                    for (g, extent) in [b, m, k].into_iter().enumerate() {
                        lshape[lo[g]] = extent;
                    }
                    let mut rshape = [0; 3];
                    for (g, extent) in [b, k, n].into_iter().enumerate() {
                        rshape[ro[g]] = extent;
                    }
                    let d = DotDims {
                        lhs_batch: vec![lo[0]],
                        rhs_batch: vec![ro[0]],
                        lhs_contract: vec![lo[2]],
                        rhs_contract: vec![ro[1]],
                    };
                    let l = tensor(&lshape, dtype, 1);
                    let r = tensor(&rshape, dtype, 2);
                    let got = as_f64(&dot_general(&l, &r, &d));
                    // Quarter-integers with small sums: exact in every dtype.
                    assert_eq!(
                        got,
                        reference(&l, &r, &d, [b, m, k, n]),
                        "{dtype:?} {lo:?} {ro:?}"
                    );
                }
            }
        }
    }

    /// Matrix-vector products (`matvec`) in every layout and at lengths around every vector
    /// width: the whole-vector loops, the four-row groups and the tails.
    #[test]
    fn matrix_vector_products_match_index_arithmetic() {
        for dtype in [DType::F32, DType::F64] {
            for (m, k) in [
                (1, 2),
                (5, 1),
                (3, 7),
                (4, 8),
                (9, 16),
                (17, 17),
                (64, 64),
                (67, 33),
            ] {
                for transposed in [false, true] {
                    let (shape, contract) = if transposed { ([k, m], 0) } else { ([m, k], 1) };
                    let a = tensor(&shape, dtype, 4);
                    let v = tensor(&[k, 1], dtype, 5);
                    let w = tensor(&[1, k], dtype, 6);
                    // n == 1: a @ v; m == 1: w @ a^T, the same matrix on the other side.
                    let av = DotDims {
                        lhs_batch: vec![],
                        rhs_batch: vec![],
                        lhs_contract: vec![contract],
                        rhs_contract: vec![0],
                    };
                    let wa = DotDims {
                        lhs_batch: vec![],
                        rhs_batch: vec![],
                        lhs_contract: vec![1],
                        rhs_contract: vec![contract],
                    };
                    let got = as_f64(&dot_general(&a, &v, &av));
                    assert_eq!(
                        got,
                        reference(&a, &v, &av, [1, m, k, 1]),
                        "{dtype:?} a@v {m}x{k} {transposed}"
                    );
                    let got = as_f64(&dot_general(&w, &a, &wa));
                    assert_eq!(
                        got,
                        reference(&w, &a, &wa, [1, 1, k, m]),
                        "{dtype:?} w@a {m}x{k} {transposed}"
                    );
                }
            }
        }
    }

    /// Lanes read past a short row are cleared, not multiplied by zero: an infinity in the
    /// next rows must not turn a finite row's sum into NaN. A one-term sum is the exact
    /// product, `-0` included (the loop IR lowers such products to multiplies).
    #[test]
    fn matrix_vector_tails_do_not_read_neighbouring_rows() {
        let (m, k) = (40, 3);
        let mut a = vec![f32::INFINITY; m * k];
        a[..k].copy_from_slice(&[1.0, 2.0, 3.0]);
        let a = Tensor::new(TensorType::new(DType::F32, vec![m, k]), Storage::F32(a));
        let v = Tensor::new(
            TensorType::new(DType::F32, vec![k]),
            Storage::F32(vec![1.0; k]),
        );
        let d = DotDims {
            lhs_batch: vec![],
            rhs_batch: vec![],
            lhs_contract: vec![1],
            rhs_contract: vec![0],
        };
        let got = as_f64(&dot_general(&a, &v, &d));
        assert_eq!(got[0], 6.0);
        assert!(got[1..].iter().all(|x| *x == f64::INFINITY));
        let a = Tensor::new(
            TensorType::new(DType::F32, vec![2, 1]),
            Storage::F32(vec![-0.0, 2.0]),
        );
        let v = Tensor::new(
            TensorType::new(DType::F32, vec![1]),
            Storage::F32(vec![1.0]),
        );
        let Storage::F32(ref got) = dot_general(&a, &v, &d) else {
            unreachable!()
        };
        assert_eq!((got[0].to_bits(), got[1]), ((-0.0f32).to_bits(), 2.0));
    }

    #[test]
    fn matrix_view_reads_transposed_operands_in_place() {
        let x = tensor(&[2, 5, 3], DType::F32, 3);
        let row_major = matrix_view(&x, &[0], &[1], &[2]);
        assert!(Arc::ptr_eq(&row_major.data, &x.data));
        assert_eq!((row_major.row_stride, row_major.col_stride), (3, 1));
        let col_major = matrix_view(&x, &[0], &[2], &[1]);
        assert!(Arc::ptr_eq(&col_major.data, &x.data));
        assert_eq!((col_major.row_stride, col_major.col_stride), (1, 3));
        let copied = matrix_view(&x, &[1], &[0], &[2]);
        assert!(!Arc::ptr_eq(&copied.data, &x.data));
    }
}
