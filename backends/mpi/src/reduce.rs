//! Reductions over ranks in a fixed order: every rank's bytes are gathered, then combined
//! rank 0, 1, ..., n-1 on every rank, so results are bit-identical from run to run and across
//! ranks, whatever order the messages arrived in (MPI's own `MPI_Allreduce` may pick its
//! algorithm, and so its order of additions, by message size and process count).

use quabla_abi::abi::{AbiError, ReduceOp};
use quabla_abi::DType;

/// Combines `n` ranks' chunks of `gathered` (rank-major: rank `r`'s whole buffer is
/// `gathered[r * per_rank..(r + 1) * per_rank]`) over the byte range `range` of one rank's
/// buffer, into `out` (`range.len()` bytes), in rank order.
///
/// ```
/// use quabla_abi::{abi::ReduceOp, DType};
/// // Two ranks of one f32 each: 1.5 and 2.5.
/// let gathered: Vec<u8> = [1.5f32, 2.5].iter().flat_map(|x| x.to_le_bytes()).collect();
/// let mut out = [0u8; 4];
/// quabla_mpi::reduce::reduce_ranks(DType::F32, ReduceOp::Sum, &gathered, 2, 0..4, &mut out)?;
/// assert_eq!(f32::from_le_bytes(out), 4.0);
/// # Ok::<(), quabla_abi::abi::AbiError>(())
/// ```
pub fn reduce_ranks(
    dtype: DType,
    op: ReduceOp,
    gathered: &[u8],
    n: usize,
    range: std::ops::Range<usize>,
    out: &mut [u8],
) -> Result<(), AbiError> {
    let per_rank = gathered.len() / n.max(1);
    let chunk = |r: usize| &gathered[r * per_rank + range.start..r * per_rank + range.end];
    match dtype {
        DType::F32 => fold::<f32, 4>(op, n, chunk, out, f32::from_le_bytes, f32::to_le_bytes),
        DType::F64 => fold::<f64, 8>(op, n, chunk, out, f64::from_le_bytes, f64::to_le_bytes),
        DType::I32 => fold::<i32, 4>(op, n, chunk, out, i32::from_le_bytes, i32::to_le_bytes),
        DType::U32 => fold::<u32, 4>(op, n, chunk, out, u32::from_le_bytes, u32::to_le_bytes),
        DType::Bool => fold::<u8, 1>(op, n, chunk, out, u8::from_le_bytes, u8::to_le_bytes),
    }
}

/// One element type's combination of two values.
trait Combine: Copy {
    fn sum(self, other: Self) -> Self;
    /// NaN wins (as `jnp.maximum`); for floats `-0 < +0`.
    fn max(self, other: Self) -> Self;
    fn min(self, other: Self) -> Self;
    /// `self / n`, for means (floats only; the kit refuses integer means).
    fn div(self, n: usize) -> Self;
}

macro_rules! float_combine {
    ($t:ty) => {
        impl Combine for $t {
            fn sum(self, o: Self) -> Self {
                self + o
            }
            fn max(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() {
                    <$t>::NAN
                } else if self == o {
                    // Equal values differ only in the sign of zero: +0 is the larger.
                    if self.is_sign_positive() {
                        self
                    } else {
                        o
                    }
                } else if self > o {
                    self
                } else {
                    o
                }
            }
            fn min(self, o: Self) -> Self {
                if self.is_nan() || o.is_nan() {
                    <$t>::NAN
                } else if self == o {
                    if self.is_sign_negative() {
                        self
                    } else {
                        o
                    }
                } else if self < o {
                    self
                } else {
                    o
                }
            }
            fn div(self, n: usize) -> Self {
                self / n as $t
            }
        }
    };
}
float_combine!(f32);
float_combine!(f64);

macro_rules! int_combine {
    ($t:ty) => {
        impl Combine for $t {
            /// Wrapping, as the dtype's own `add`.
            fn sum(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn max(self, o: Self) -> Self {
                Ord::max(self, o)
            }
            fn min(self, o: Self) -> Self {
                Ord::min(self, o)
            }
            fn div(self, _n: usize) -> Self {
                self
            }
        }
    };
}
int_combine!(i32);
int_combine!(u32);
// bool as its byte: max is `any`, min is `all` (the kit refuses a bool sum).
int_combine!(u8);

fn fold<'a, T: Combine, const W: usize>(
    op: ReduceOp,
    n: usize,
    chunk: impl Fn(usize) -> &'a [u8],
    out: &mut [u8],
    read: fn([u8; W]) -> T,
    write: fn(T) -> [u8; W],
) -> Result<(), AbiError> {
    let at = |bytes: &[u8], i: usize| -> T {
        let mut a = [0u8; W];
        a.copy_from_slice(&bytes[i * W..(i + 1) * W]);
        read(a)
    };
    let first = chunk(0);
    let count = first.len() / W;
    if out.len() != first.len() {
        return Err(AbiError::internal(format!(
            "reduction writes {} bytes into {}",
            first.len(),
            out.len()
        )));
    }
    for i in 0..count {
        let mut acc = at(first, i);
        for r in 1..n {
            let v = at(chunk(r), i);
            acc = match op {
                ReduceOp::Sum | ReduceOp::Mean => acc.sum(v),
                ReduceOp::Max => acc.max(v),
                ReduceOp::Min => acc.min(v),
            };
        }
        if op == ReduceOp::Mean {
            acc = acc.div(n);
        }
        out[i * W..(i + 1) * W].copy_from_slice(&write(acc));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes32(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn floats(b: &[u8]) -> Vec<f32> {
        b.chunks(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    fn run(op: ReduceOp, ranks: &[&[f32]]) -> Vec<f32> {
        let gathered: Vec<u8> = ranks.iter().flat_map(|r| bytes32(r)).collect();
        let len = ranks[0].len() * 4;
        let mut out = vec![0u8; len];
        reduce_ranks(DType::F32, op, &gathered, ranks.len(), 0..len, &mut out).unwrap();
        floats(&out)
    }

    #[test]
    fn sums_add_in_rank_order() {
        // (1e8 + 1) - 1e8 is 0 in f32 when added left to right, 1 if the last two came first.
        let s = run(ReduceOp::Sum, &[&[1e8], &[1.0], &[-1e8]]);
        assert_eq!(s, [(1e8f32 + 1.0) - 1e8]);
        assert_eq!(run(ReduceOp::Mean, &[&[1.0, 2.0], &[3.0, 6.0]]), [2.0, 4.0]);
    }

    #[test]
    fn max_and_min_follow_jax_at_nan_and_signed_zero() {
        let nan = f32::NAN;
        let m = run(ReduceOp::Max, &[&[nan, -0.0, 1.0], &[2.0, 0.0, -1.0]]);
        assert!(m[0].is_nan());
        assert_eq!((m[1].to_bits(), m[2]), (0.0f32.to_bits(), 1.0));
        let m = run(ReduceOp::Min, &[&[1.0, 0.0], &[nan, -0.0]]);
        assert!(m[0].is_nan());
        assert_eq!(m[1].to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn a_byte_range_reduces_one_ranks_share() {
        // Two ranks of 4 f32 each; the second half of every rank (reduce_scatter's rank 1).
        let gathered: Vec<u8> =
            [bytes32(&[1., 2., 3., 4.]), bytes32(&[10., 20., 30., 40.])].concat();
        let mut out = vec![0u8; 8];
        reduce_ranks(DType::F32, ReduceOp::Sum, &gathered, 2, 8..16, &mut out).unwrap();
        assert_eq!(floats(&out), [33.0, 44.0]);
    }

    #[test]
    fn integers_wrap_and_bools_are_any_and_all() {
        let g: Vec<u8> = [i32::MAX, 1].iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut out = vec![0u8; 4];
        reduce_ranks(DType::I32, ReduceOp::Sum, &g, 2, 0..4, &mut out).unwrap();
        assert_eq!(
            i32::from_le_bytes([out[0], out[1], out[2], out[3]]),
            i32::MIN
        );
        let b = [1u8, 0, 0, 0];
        let mut out = vec![0u8; 2];
        reduce_ranks(DType::Bool, ReduceOp::Max, &b, 2, 0..2, &mut out).unwrap();
        assert_eq!(out, [1, 0]);
        reduce_ranks(DType::Bool, ReduceOp::Min, &b, 2, 0..2, &mut out).unwrap();
        assert_eq!(out, [0, 0]);
    }
}
