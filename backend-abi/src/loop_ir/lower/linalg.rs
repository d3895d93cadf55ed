//! Dense linear algebra as library calls: each operand read whole from row-major memory,
//! each result written to scratch of its own, so an implicit stepper's LU factorisation
//! and triangular solves keep its loop compiled.

use super::{Declined, Lowering, Val};
use crate::loop_ir::{Block, DenseOperand, Inst};
use crate::qir::{LinalgOp, Node};
use crate::TensorType;

impl Lowering {
    /// A `linalg` node over `args` of the node's operand `types`: its operands made dense
    /// (a one-element or broadcast operand written to memory first), an [`Inst::Linalg`]
    /// call, and a one-element result loaded back into a register, as every one-element
    /// value is.
    pub(super) fn linalg(
        &mut self,
        n: &Node,
        op: &LinalgOp,
        args: &[Val],
        types: &[&TensorType],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let mut operands = Vec::with_capacity(args.len());
        for (a, t) in args.iter().zip(types) {
            let v = match a {
                Val::Array(v) => self.dense(v, &n.op, out)?,
                Val::Scalar(x) | Val::Splat { x, .. } => {
                    let mut v = self.scratch(t, &n.op)?;
                    self.fill(&v, *x, &n.op, out)?;
                    v.generation = self.generations[v.index.array.index()];
                    v
                }
            };
            operands.push(DenseOperand {
                start: v.index,
                ty: (*t).clone(),
            });
        }
        let mut dsts = Vec::with_capacity(n.results.len());
        for t in &n.results {
            dsts.push(self.scratch(t, &n.op)?);
        }
        out.0.push(Inst::Linalg {
            op: *op,
            operands,
            results: dsts.iter().map(|d| d.index.array).collect(),
        });
        let mut results = Vec::with_capacity(dsts.len());
        for (d, t) in dsts.into_iter().zip(&n.results) {
            results.push(if t.num_elements() == 1 {
                let x = self.reg(t.dtype);
                out.0.push(Inst::Load {
                    dst: x,
                    index: d.index,
                });
                Val::Scalar(x)
            } else {
                Val::Array(d)
            });
        }
        Ok(results)
    }
}
