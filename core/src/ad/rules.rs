//! What a primitive's AD rules see, and the dispatch from an op to its family's rules.
//!
//! JVP rules compute output tangents from primal inputs, primal outputs and input tangents
//! (`None` is a symbolic zero). Their tangent computations must be linear in the tangents and
//! use only primitives that have transpose rules: that is what lets reverse mode be
//! linearize + transpose. Transpose rules map output cotangents to the cotangents of the
//! linear operands; the other operands are known values (residuals).

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops;
use quabla_abi::qir::{Node, Op};
use quabla_abi::TensorType;

/// A JVP rule's view of one node.
pub(crate) struct JvpArgs<'a> {
    pub node: &'a Node,
    pub primals: &'a [Array],
    pub outs: &'a [Array],
    pub tangents: &'a [Option<Array>],
}

/// An operand during transposition: part of the linear computation (its cotangent is wanted)
/// or a known value.
pub(crate) enum Primal {
    Linear(TensorType),
    Known(Array),
}

impl Primal {
    pub fn is_linear(&self) -> bool {
        matches!(self, Primal::Linear(_))
    }

    pub fn ty(&self) -> &TensorType {
        match self {
            Primal::Linear(t) => t,
            Primal::Known(a) => a.tensor_type(),
        }
    }

    /// The known value; an error naming `op` when it is linear (a nonlinear use of a tangent).
    pub fn known(&self, op: &str) -> Result<&Array> {
        match self {
            Primal::Known(a) => Ok(a),
            Primal::Linear(_) => Err(Error::Type(format!(
                "`{op}` is not linear in this operand, so it cannot be transposed (a JVP rule produced a nonlinear tangent computation)"
            ))),
        }
    }
}

/// A transpose rule's view of one node.
pub(crate) struct TransposeArgs<'a> {
    pub node: &'a Node,
    pub operands: &'a [Primal],
    /// Output cotangents (`None`: zero).
    pub cts: &'a [Option<Array>],
}

pub(crate) fn no_rule<T>(kind: &str, op: &Op) -> Result<T> {
    Err(Error::Type(format!(
        "primitive `{}` has no {kind} rule",
        op.name()
    )))
}

/// Output tangents of one node.
pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    match &a.node.op {
        Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::Select | Op::Convert | Op::Bitcast => {
            ops::elementwise::jvp(a)
        }
        Op::Constant(_) | Op::Iota { .. } => Ok(vec![None]),
        Op::BroadcastInDim { .. }
        | Op::Reshape
        | Op::Transpose { .. }
        | Op::Slice { .. }
        | Op::Pad { .. }
        | Op::Concatenate { .. }
        | Op::Reverse { .. } => ops::shape::jvp(a),
        Op::Reduce { .. } | Op::Cumulative { .. } => ops::reduction::jvp(a),
        Op::DotGeneral(_) => ops::contraction::jvp(a),
        Op::Gather(_) | Op::ScatterAdd(_) | Op::DynamicSlice { .. } | Op::DynamicUpdateSlice => {
            ops::indexing::jvp(a)
        }
        Op::StopGradient => Ok(vec![None]),
        op => unreachable!("`{}` has regions: jvp_walk differentiates it", op.name()),
    }
}

/// Cotangents of the operands of one linear node.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    match &a.node.op {
        Op::Unary(_) | Op::Binary(_) | Op::Select | Op::Convert => ops::elementwise::transpose(a),
        Op::BroadcastInDim { .. }
        | Op::Reshape
        | Op::Transpose { .. }
        | Op::Slice { .. }
        | Op::Pad { .. }
        | Op::Concatenate { .. }
        | Op::Reverse { .. } => ops::shape::transpose(a),
        Op::Reduce { .. } | Op::Cumulative { .. } => ops::reduction::transpose(a),
        Op::DotGeneral(_) => ops::contraction::transpose(a),
        Op::Gather(_) | Op::ScatterAdd(_) | Op::DynamicSlice { .. } | Op::DynamicUpdateSlice => {
            ops::indexing::transpose(a)
        }
        Op::Cond { .. } | Op::Scan { .. } => ops::control_flow::transpose(a),
        Op::Checkpoint { .. } | Op::CustomVjpLinear { .. } => ops::custom::transpose(a),
        op => no_rule("transpose", op),
    }
}
