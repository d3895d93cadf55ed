//! A whole program as one function: the straight-line code around a solver's loop (an
//! ODE's initial step size, its read-out) compiled with it, so a small solve pays no
//! interpreter step per scalar op.

use super::views::View;
use super::{decline, Declined, Entry, Lowering, Val};
use crate::loop_ir::{Block, Function, Operand};
use crate::qir::{Op, Program};
use crate::TensorType;

/// Lowers a whole program: its inputs enter as a `while`'s operands do (a one-element input
/// a parameter, a larger one an array the function may update in place once the caller has
/// made it its own), and each output leaves as a scalar result or as an array of the
/// output's length (a computed value's own scratch, an input or constant returned whole, or
/// a copy of a view of one).
///
/// ```
/// use quabla_abi::loop_ir::{lower_program, Operand};
/// use quabla_abi::qir::Program;
///
/// let p = Program::parse(
///     "program(%0: f64[], %1: f64[4]) {
///        %2 = broadcast_in_dim[dims=[]](%0) : f64[4]
///        %3 = mul(%1, %2) : f64[4]
///        %4 = reduce[kind=sum, axes=[0]](%3) : f64[]
///        return %4, %3
///      }",
/// )
/// .unwrap();
/// let f = lower_program(&p).unwrap();
/// assert!(matches!(f.outputs[..], [Operand::Scalar, Operand::Array(_)]));
/// ```
pub fn lower_program(p: &Program) -> Result<Function, Declined> {
    let mut l = Lowering::default();
    let Entry {
        params,
        operands,
        args,
    } = l.entry(&p.inputs, &WHOLE).map_err(as_program)?;
    let p = super::super::outer_products(p);
    let mut body = Block::default();
    let outs = l.region(&p, &args, &mut body)?;
    l.outputs(&p, &outs, params, operands, body)
        .map_err(as_program)
}

/// Stands for the program in the helpers' declines, renamed by [`as_program`].
const WHOLE: Op = Op::Reshape;

/// A decline about the program's inputs or outputs, not about an op of it.
fn as_program(d: Declined) -> Declined {
    Declined {
        op: "program",
        reason: d.reason,
    }
}

impl Lowering {
    /// The function whose body is `body`, returning `outs`, the values of `p`'s outputs.
    fn outputs(
        mut self,
        p: &Program,
        outs: &[Val],
        params: Vec<crate::loop_ir::Reg>,
        operands: Vec<Operand>,
        mut body: Block,
    ) -> Result<Function, Declined> {
        let types = p.output_types();
        let mut results = Vec::new();
        let mut outputs = Vec::with_capacity(outs.len());
        for (v, t) in outs.iter().zip(&types) {
            outputs.push(match v {
                Val::Scalar(r) => {
                    results.push(*r);
                    Operand::Scalar
                }
                Val::Splat { x, .. } => {
                    let dst = self.scratch(t, &WHOLE)?;
                    self.fill(&dst, *x, &WHOLE, &mut body)?;
                    Operand::Array(dst.index.array)
                }
                Val::Array(v) => Operand::Array(self.whole_array(v, t, &WHOLE, &mut body)?),
            });
        }
        let f = Function {
            regs: self.regs,
            params,
            arrays: self.arrays,
            operands,
            body,
            results,
            outputs,
        };
        f.check()
            .map_err(|_| decline(&WHOLE, "the lowering broke its own invariant (a bug)"))?;
        Ok(f)
    }

    /// The array holding exactly `v`'s elements, row-major: its own when `v` is all of it,
    /// else a copy.
    fn whole_array(
        &mut self,
        v: &View,
        t: &TensorType,
        op: &Op,
        out: &mut Block,
    ) -> Result<crate::loop_ir::ArrayId, Declined> {
        self.current(v, op)?;
        let a = v.index.array;
        let all = v.index.offset == 0
            && v.index.terms.is_empty()
            && v.is_dense()
            && self.arrays[a.index()].len == t.num_elements();
        if all {
            return Ok(a);
        }
        Ok(self.own_copy(v, op, out)?.index.array)
    }
}
