//! Which `dot_general`s are (batched) matrix products of row-major operands, so that the GPU
//! runtime can hand them to cuBLAS: batch axes leading on both sides, then each operand's
//! free and contracted axes as two contiguous groups in either order.

use quabla_abi::qir::DotDims;
use quabla_abi::DType;

/// A row-major `[batch, m, n]` product of `lhs` (`[batch, m, k]`, or `[batch, k, m]` where
/// `lhs_transposed`) and `rhs` (`[batch, k, n]`, or `[batch, n, k]` where
/// `rhs_transposed`); `lhs` and `rhs` are value ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gemm {
    pub dtype: DType,
    pub batch: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub lhs: usize,
    pub rhs: usize,
    pub lhs_transposed: bool,
    pub rhs_transposed: bool,
}

/// Whether `axes` lists `0..rank` in order.
fn in_order(axes: impl Iterator<Item = usize>, rank: usize) -> bool {
    axes.eq(0..rank)
}

/// `Some(false)` where an operand's axes are `batch ++ first ++ second`, `Some(true)` where
/// they are `batch ++ second ++ first`, `None` otherwise.
fn grouped(batch: &[usize], first: &[usize], second: &[usize], rank: usize) -> Option<bool> {
    let chained =
        |x: &[usize], y: &[usize]| in_order(batch.iter().chain(x).chain(y).copied(), rank);
    if chained(first, second) {
        Some(false)
    } else if chained(second, first) {
        Some(true)
    } else {
        None
    }
}

impl Gemm {
    /// The product `d` describes on operands of shapes `l` and `r` (value ids `lhs`, `rhs`),
    /// if it is one cuBLAS computes: f32 or f64, the layout above, no empty and no dimension
    /// past `i32::MAX`.
    pub fn of(
        d: &DotDims,
        l: &[usize],
        r: &[usize],
        dtype: DType,
        lhs: usize,
        rhs: usize,
    ) -> Option<Gemm> {
        if !matches!(dtype, DType::F32 | DType::F64) {
            return None;
        }
        let b = d.lhs_batch.len();
        if !in_order(d.lhs_batch.iter().copied(), b) || !in_order(d.rhs_batch.iter().copied(), b) {
            return None;
        }
        let free = |rank: usize, batch: &[usize], contract: &[usize]| -> Vec<usize> {
            (0..rank)
                .filter(|a| !batch.contains(a) && !contract.contains(a))
                .collect()
        };
        let lf = free(l.len(), &d.lhs_batch, &d.lhs_contract);
        let rf = free(r.len(), &d.rhs_batch, &d.rhs_contract);
        let lhs_transposed = grouped(&d.lhs_batch, &lf, &d.lhs_contract, l.len())?;
        let rhs_transposed = grouped(&d.rhs_batch, &d.rhs_contract, &rf, r.len())?;
        let size = |s: &[usize], axes: &[usize]| axes.iter().map(|&a| s[a]).product::<usize>();
        let g = Gemm {
            dtype,
            batch: size(l, &d.lhs_batch),
            m: size(l, &lf),
            n: size(r, &rf),
            k: size(l, &d.lhs_contract),
            lhs,
            rhs,
            lhs_transposed,
            rhs_transposed,
        };
        let fits = |x: usize| x > 0 && x <= i32::MAX as usize;
        let all = [g.batch, g.m, g.n, g.k, g.m * g.k, g.k * g.n, g.m * g.n];
        all.into_iter().all(fits).then_some(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(lb: &[usize], rb: &[usize], lc: &[usize], rc: &[usize]) -> DotDims {
        DotDims {
            lhs_batch: lb.to_vec(),
            rhs_batch: rb.to_vec(),
            lhs_contract: lc.to_vec(),
            rhs_contract: rc.to_vec(),
        }
    }

    #[test]
    fn matrix_products_in_each_layout() {
        let g = Gemm::of(
            &dims(&[], &[], &[1], &[0]),
            &[4, 3],
            &[3, 5],
            DType::F32,
            0,
            1,
        );
        let g = g.unwrap();
        assert_eq!((g.batch, g.m, g.n, g.k), (1, 4, 5, 3));
        assert!(!g.lhs_transposed && !g.rhs_transposed);
        // xᵀ y and x yᵀ.
        let g = Gemm::of(
            &dims(&[], &[], &[0], &[0]),
            &[3, 4],
            &[3, 5],
            DType::F64,
            0,
            1,
        );
        assert!(g.unwrap().lhs_transposed && !g.unwrap().rhs_transposed);
        let g = Gemm::of(
            &dims(&[], &[], &[1], &[1]),
            &[4, 3],
            &[5, 3],
            DType::F64,
            0,
            1,
        );
        assert!(!g.unwrap().lhs_transposed && g.unwrap().rhs_transposed);
        // Batched, and a matrix-vector product (n = 1), and two contracted axes as one k.
        let g = Gemm::of(
            &dims(&[0], &[0], &[2], &[1]),
            &[2, 3, 4],
            &[2, 4, 5],
            DType::F32,
            0,
            1,
        );
        assert_eq!(g.map(|g| (g.batch, g.m, g.n, g.k)), Some((2, 3, 5, 4)));
        let g = Gemm::of(&dims(&[], &[], &[1], &[0]), &[4, 3], &[3], DType::F32, 0, 1);
        assert_eq!(g.map(|g| (g.m, g.n, g.k)), Some((4, 1, 3)));
        let g = Gemm::of(
            &dims(&[], &[], &[1, 2], &[0, 1]),
            &[4, 2, 3],
            &[2, 3, 5],
            DType::F32,
            0,
            1,
        );
        assert_eq!(g.map(|g| (g.m, g.n, g.k)), Some((4, 5, 6)));
    }

    #[test]
    fn other_dots_stay_kernels() {
        // Integers; a batch axis that is not leading; contracted axes out of order; empty.
        assert!(Gemm::of(
            &dims(&[], &[], &[1], &[0]),
            &[4, 3],
            &[3, 5],
            DType::I32,
            0,
            1
        )
        .is_none());
        assert!(Gemm::of(
            &dims(&[1], &[0], &[2], &[1]),
            &[3, 2, 4],
            &[2, 4, 5],
            DType::F32,
            0,
            1
        )
        .is_none());
        assert!(Gemm::of(
            &dims(&[], &[], &[2, 1], &[0, 1]),
            &[4, 2, 3],
            &[3, 2, 5],
            DType::F32,
            0,
            1
        )
        .is_none());
        assert!(Gemm::of(
            &dims(&[], &[], &[1], &[0]),
            &[4, 0],
            &[0, 5],
            DType::F32,
            0,
            1
        )
        .is_none());
        // The middle axis contracted: neither group order.
        assert!(Gemm::of(
            &dims(&[], &[], &[1], &[0]),
            &[4, 3, 2],
            &[3, 5],
            DType::F32,
            0,
            1
        )
        .is_none());
    }
}
