//! Contractions: dot_general and numpy's matmul on top of it.

use super::apply1;
use crate::array::Array;
use crate::error::{type_err, Result};
use crate::promotion::promote_types;
use quabla_abi::qir::{DotDims, Op};

impl Array {
    /// XLA's dot_general: result dims are batch, then lhs free, then rhs free.
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
            return type_err("matmul does not take 0-d operands; use multiplication");
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
            return type_err(format!(
                "matmul: {:?} @ {:?} do not match in the contracted dim",
                self.shape(),
                rhs.shape()
            ));
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
