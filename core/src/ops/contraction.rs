//! Contractions: dot_general and numpy's matmul on top of it.

use super::apply1;
use crate::array::Array;
use crate::error::Result;
use crate::promotion::promote_types;
use quabla_abi::qir::{DotDims, Op};

impl Array {
    /// XLA's dot_general: result dims are batch, then lhs free, then rhs free.
    ///
    /// ```no_run
    /// # use quabla::{qir::DotDims, Array};
    /// // A batch of two 2x3 by 3x1 products: result [2, 2, 1].
    /// let a = Array::from_slice(&[1.0f32; 12], &[2, 2, 3])?;
    /// let b = Array::from_slice(&[1.0f32; 6], &[2, 3, 1])?;
    /// let dims = DotDims {
    ///     lhs_batch: vec![0],
    ///     rhs_batch: vec![0],
    ///     lhs_contract: vec![2],
    ///     rhs_contract: vec![1],
    /// };
    /// assert_eq!(a.dot_general(&b, dims)?.shape(), &[2, 2, 1]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn dot_general(&self, rhs: &Array, dims: DotDims) -> Result<Array> {
        let d = promote_types(self.dtype(), rhs.dtype());
        apply1(
            Op::DotGeneral(dims),
            &[&self.astype(d)?, &rhs.astype(d)?],
            vec![],
        )
    }

    /// numpy's matmul: 1-d operands are vectors, leading dims batch (broadcast).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let a = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    /// let v = Array::from_slice(&[1.0f32, 1.0], &[2]).unwrap();
    /// assert_eq!(a.matmul(&v).unwrap().to_vec::<f32>().unwrap(), vec![3.0, 7.0]);
    /// ```
    pub fn matmul(&self, rhs: &Array) -> Result<Array> {
        if self.ndim() == 0 || rhs.ndim() == 0 {
            return Err(crate::Error::shape(
                "matmul does not take 0-d operands; use multiplication",
            ));
        }
        let a = if self.ndim() == 1 {
            self.expand_dims(0)?
        } else {
            self.clone()
        };
        let b = if rhs.ndim() == 1 {
            rhs.expand_dims(-1)?
        } else {
            rhs.clone()
        };
        let (ra, rb) = (a.ndim(), b.ndim());
        if a.shape()[ra - 1] != b.shape()[rb - 2] {
            return Err(crate::Error::shape(format!(
                "matmul: {:?} @ {:?} do not match in the contracted dim",
                self.shape(),
                rhs.shape()
            )));
        }
        let batch =
            crate::ops::elementwise::broadcast_shapes(&a.shape()[..ra - 2], &b.shape()[..rb - 2])?;
        let mut sa = batch.clone();
        sa.extend_from_slice(&a.shape()[ra - 2..]);
        let mut sb = batch.clone();
        sb.extend_from_slice(&b.shape()[rb - 2..]);
        let (a, b) = (a.broadcast_to(&sa)?, b.broadcast_to(&sb)?);
        let nb = batch.len();
        let dims = DotDims {
            lhs_batch: (0..nb).collect(),
            rhs_batch: (0..nb).collect(),
            lhs_contract: vec![nb + 1],
            rhs_contract: vec![nb],
        };
        let mut out = a.dot_general(&b, dims)?;
        if self.ndim() == 1 {
            let mut s: Vec<isize> = out.shape().iter().map(|&d| d as isize).collect();
            s.remove(nb);
            out = out.reshape(&s)?;
        }
        if rhs.ndim() == 1 {
            let mut s: Vec<isize> = out.shape().iter().map(|&d| d as isize).collect();
            s.pop();
            out = out.reshape(&s)?;
        }
        Ok(out)
    }
}

// ---- AD rules -------------------------------------------------------------------------

use crate::ad::rules::{JvpArgs, Primal, TransposeArgs};

pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    let Op::DotGeneral(d) = &a.node.op else {
        unreachable!("dispatched for dot_general")
    };
    let (x, y) = (&a.primals[0], &a.primals[1]);
    let l = a.tangents[0]
        .as_ref()
        .map(|t| apply1(Op::DotGeneral(d.clone()), &[t, y], vec![]))
        .transpose()?;
    let r = a.tangents[1]
        .as_ref()
        .map(|t| apply1(Op::DotGeneral(d.clone()), &[x, t], vec![]))
        .transpose()?;
    Ok(vec![match (l, r) {
        (Some(l), Some(r)) => Some((&l + &r)?),
        (l, r) => l.or(r),
    }])
}

fn remaining(rank: usize, a: &[usize], b: &[usize]) -> Vec<usize> {
    (0..rank)
        .filter(|d| !a.contains(d) && !b.contains(d))
        .collect()
}

fn argsort(v: &[usize]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by_key(|&i| v[i]);
    idx
}

/// The cotangent of the lhs `x` of `dot_general(x, y)` (JAX's `_dot_general_transpose_lhs`).
fn transpose_lhs(
    g: &Array,
    x_rank: usize,
    y: &Array,
    d: &DotDims,
    swap_ans: bool,
) -> Result<Array> {
    let x_kept = remaining(x_rank, &d.lhs_contract, &d.lhs_batch);
    let y_kept = remaining(y.ndim(), &d.rhs_contract, &d.rhs_batch);
    let nb = d.lhs_batch.len();
    let ans_batch: Vec<usize> = (0..nb).collect();
    let ans_y: Vec<usize> = if swap_ans {
        (nb..nb + y_kept.len()).collect()
    } else {
        (nb + x_kept.len()..nb + x_kept.len() + y_kept.len()).collect()
    };
    let dims = DotDims {
        lhs_batch: ans_batch,
        rhs_batch: d.rhs_batch.clone(),
        lhs_contract: ans_y,
        rhs_contract: y_kept,
    };
    let order = argsort(&d.rhs_contract);
    let x_contract_sorted_by_y: Vec<usize> = order.iter().map(|&i| d.lhs_contract[i]).collect();
    let mut pre: Vec<usize> = d.lhs_batch.clone();
    pre.extend(&x_kept);
    pre.extend(&x_contract_sorted_by_y);
    let out_axes = argsort(&pre);
    apply1(Op::DotGeneral(dims), &[g, y], vec![])?.transpose(&out_axes)
}

pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let Some(ct) = &a.cts[0] else {
        return Ok(vec![None, None]);
    };
    let Op::DotGeneral(d) = &a.node.op else {
        unreachable!("dispatched for dot_general")
    };
    let name = "dot_general";
    Ok(match (&a.operands[0], &a.operands[1]) {
        (Primal::Linear(xt), y) => vec![
            Some(transpose_lhs(ct, xt.rank(), y.known(name)?, d, false)?),
            None,
        ],
        (x, Primal::Linear(yt)) => {
            let swapped = DotDims {
                lhs_batch: d.rhs_batch.clone(),
                rhs_batch: d.lhs_batch.clone(),
                lhs_contract: d.rhs_contract.clone(),
                rhs_contract: d.lhs_contract.clone(),
            };
            vec![
                None,
                Some(transpose_lhs(
                    ct,
                    yt.rank(),
                    x.known(name)?,
                    &swapped,
                    true,
                )?),
            ]
        }
        _ => vec![None, None],
    })
}

/// Batching: a batch axis on both sides becomes a dot_general batch dim; on one side it is a
/// free dim, moved to the front of the result.
pub(crate) fn batch(a: &crate::batching::BatchArgs) -> Result<Vec<(Array, bool)>> {
    let Op::DotGeneral(d) = &a.node.op else {
        unreachable!("dispatched for dot_general")
    };
    let shift = |v: &[usize]| v.iter().map(|x| x + 1).collect::<Vec<_>>();
    let (x, y) = (&a.args[0], &a.args[1]);
    let nb = d.lhs_batch.len();
    let out = match (a.batched[0], a.batched[1]) {
        (true, true) => {
            let dims = DotDims {
                lhs_batch: [vec![0], shift(&d.lhs_batch)].concat(),
                rhs_batch: [vec![0], shift(&d.rhs_batch)].concat(),
                lhs_contract: shift(&d.lhs_contract),
                rhs_contract: shift(&d.rhs_contract),
            };
            apply1(Op::DotGeneral(dims), &[x, y], vec![])?
        }
        (true, false) => {
            let dims = DotDims {
                lhs_batch: shift(&d.lhs_batch),
                rhs_batch: d.rhs_batch.clone(),
                lhs_contract: shift(&d.lhs_contract),
                rhs_contract: d.rhs_contract.clone(),
            };
            // The batch axis is lhs's first free dim: result position nb.
            let r = apply1(Op::DotGeneral(dims), &[x, y], vec![])?;
            let mut perm: Vec<usize> = (0..r.ndim()).filter(|&i| i != nb).collect();
            perm.insert(0, nb);
            r.transpose(&perm)?
        }
        (false, true) => {
            let dims = DotDims {
                lhs_batch: d.lhs_batch.clone(),
                rhs_batch: shift(&d.rhs_batch),
                lhs_contract: d.lhs_contract.clone(),
                rhs_contract: shift(&d.rhs_contract),
            };
            // The batch axis is rhs's first free dim: after the batch and lhs free dims.
            let lhs_free = x.ndim() - nb - d.lhs_contract.len();
            let r = apply1(Op::DotGeneral(dims), &[x, y], vec![])?;
            let pos = nb + lhs_free;
            let mut perm: Vec<usize> = (0..r.ndim()).filter(|&i| i != pos).collect();
            perm.insert(0, pos);
            r.transpose(&perm)?
        }
        (false, false) => unreachable!("unbatched nodes are not sent to batching rules"),
    };
    Ok(vec![(out, true)])
}
