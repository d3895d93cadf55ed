//! What a primitive's AD rules see, and the dispatch from an op to its family's rules.
//!
//! JVP rules compute output tangents from primal inputs, primal outputs and input tangents
//! (`None` is a symbolic zero). Their tangent computations must be linear in the tangents and
//! use only primitives that have transpose rules: that is what lets reverse mode be
//! linearize + transpose. Transpose rules map output cotangents to the cotangents of the
//! linear operands; the other operands are known values (residuals).

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::{self, Family};
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
            Primal::Linear(_) => Err(Error::Value(format!(
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
    Err(Error::Internal(format!(
        "primitive `{}` has no {kind} rule",
        op.name()
    )))
}

/// Output tangents of one node (region ops are differentiated by `jvp_walk` directly).
pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    match ops::family(&a.node.op) {
        Family::Elementwise => ops::elementwise::jvp(a),
        Family::Creation => Ok(vec![None]),
        Family::Shape => ops::shape::jvp(a),
        Family::Reduction => ops::reduction::jvp(a),
        Family::Contraction => ops::contraction::jvp(a),
        Family::Indexing => ops::indexing::jvp(a),
        Family::Linalg => ops::linalg::jvp(a),
        Family::Sort => ops::sort::jvp(a),
        Family::Host => ops::host_callback::jvp(a),
        Family::NamedAxis => ops::named_axis::jvp(a),
        // stop_gradient: zero; the other custom ops and regions carry regions.
        Family::Custom if matches!(a.node.op, Op::StopGradient) => Ok(vec![None]),
        Family::ControlFlow | Family::Custom | Family::LinearSolve => unreachable!(
            "`{}` has regions: jvp_walk differentiates it",
            a.node.op.name()
        ),
    }
}

/// Cotangents of the operands of one linear node.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    match ops::family(&a.node.op) {
        Family::Elementwise => ops::elementwise::transpose(a),
        Family::Shape => ops::shape::transpose(a),
        Family::Reduction => ops::reduction::transpose(a),
        Family::Contraction => ops::contraction::transpose(a),
        Family::Indexing => ops::indexing::transpose(a),
        Family::ControlFlow => ops::control_flow::transpose(a),
        Family::Custom => ops::custom::transpose(a),
        Family::LinearSolve => ops::linear_solve::transpose(a),
        Family::Linalg => ops::linalg::transpose(a),
        Family::Sort => ops::sort::transpose(a),
        Family::Host => ops::host_callback::transpose(a),
        Family::NamedAxis => ops::named_axis::transpose(a),
        Family::Creation => no_rule("transpose", &a.node.op),
    }
}
