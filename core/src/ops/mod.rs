//! Operations on arrays, one file per op family. Each builds QIR nodes through [`apply`],
//! which either records them (traced inputs) or runs them at once (concrete inputs).
//!
//! Adding an op touches its family file here (and, as the transformations land, the op's
//! JVP, transpose and batching rules beside it) plus the backends.

pub(crate) mod basic_index;
pub(crate) mod contraction;
pub(crate) mod control_flow;
pub(crate) mod conv;
pub(crate) mod creation;
pub(crate) mod custom;
pub(crate) mod elementwise;
pub(crate) mod host_callback;
pub(crate) mod indexing;
pub(crate) mod linalg;
pub(crate) mod linear_solve;
pub(crate) mod named_axis;
pub(crate) mod reduction;
pub(crate) mod shape;
pub(crate) mod sort;

pub use elementwise::Operand;
pub use reduction::Axes;

use crate::array::{Array, Repr};
use crate::error::{Error, Result};
use crate::runtime::Device;
use crate::trace::Trace;
use quabla_abi::qir::{infer_result_types, Node, Op, Program, ValueId};
use quabla_abi::{HostArray, TensorType};
use std::sync::Arc;

/// Applies `op` to `inputs`. `declared` gives the result type for ops that need one
/// (`convert`, `reshape`, `iota`...). Types are checked first, so a mistake is a typed error
/// naming the op, never a backend failure.
pub(crate) fn apply(op: Op, inputs: &[&Array], declared: Vec<TensorType>) -> Result<Vec<Array>> {
    let in_types: Vec<&TensorType> = inputs.iter().map(|a| &a.ty).collect();
    let regions_out: Vec<Vec<TensorType>> = op.regions().iter().map(|r| r.output_types()).collect();
    let results = infer_result_types(&op, &in_types, &declared, &regions_out)
        .map_err(|m| Error::Shape(format!("{}: {m}", op.name())))?;
    // The innermost trace (the most recent) among the inputs, or the capturing trace being
    // built inside it, records the op; values of enclosing traces are captured into it.
    let trace = inputs
        .iter()
        .filter_map(|a| match &a.repr {
            Repr::Traced { trace, .. } => Some(trace.clone()),
            _ => None,
        })
        .max_by_key(|t| t.id())
        .map(crate::trace::recording_trace);
    match trace {
        Some(t) => {
            let operands = inputs
                .iter()
                .map(|a| value_in(&t, a))
                .collect::<Result<Vec<_>>>()?;
            let ids = t.push(op, operands, results.clone());
            Ok(ids
                .into_iter()
                .zip(results)
                .map(|(v, ty)| Array::traced(t.clone(), v, ty))
                .collect())
        }
        None => {
            let device = match inputs.first() {
                Some(a) => a.device().clone(),
                None => crate::runtime::default_device()?,
            };
            run_eager(&device, op, inputs, results)
        }
    }
}

/// Like [`apply`], but ops without operands are emitted next to `anchor` (into its trace)
/// instead of running on the default device: used when re-emitting a program's nodes.
pub(crate) fn apply_at(
    anchor: Option<&Array>,
    op: Op,
    inputs: &[&Array],
    declared: Vec<TensorType>,
) -> Result<Vec<Array>> {
    match (inputs.is_empty(), anchor) {
        // A host call without operands may have any number of results (none for an effect).
        (true, Some(like)) if matches!(op, Op::HostCallback { .. }) => {
            host_callback::emit_without_operands(like, op, declared)
        }
        (true, Some(like)) => {
            let ty = declared.first().cloned().ok_or_else(|| {
                Error::Value(format!("{} needs a declared result type", op.name()))
            })?;
            Ok(vec![apply_nullary_like(like, op, ty)?])
        }
        _ => apply(op, inputs, declared),
    }
}

/// Like [`apply`] for ops without operands, on a chosen device.
pub(crate) fn apply_nullary(device: &Arc<Device>, op: Op, declared: TensorType) -> Result<Array> {
    let results = infer_result_types(&op, &[], std::slice::from_ref(&declared), &[])
        .map_err(|m| Error::Shape(format!("{}: {m}", op.name())))?;
    Ok(run_eager(device, op, &[], results)?.remove(0))
}

pub(crate) fn apply1(op: Op, inputs: &[&Array], declared: Vec<TensorType>) -> Result<Array> {
    Ok(apply(op, inputs, declared)?.remove(0))
}

/// The id of `a` inside trace `t`: its own id if it belongs to `t`, else a captured constant.
fn value_in(t: &Arc<Trace>, a: &Array) -> Result<ValueId> {
    match &a.repr {
        Repr::Traced { trace, value } if trace.id() == t.id() => Ok(*value),
        Repr::Traced { trace, value } => t.capture_outer(a, trace.id(), *value),
        Repr::Concrete { buffer, .. } => t.capture(buffer, || a.to_host()),
    }
}

fn run_eager(
    device: &Arc<Device>,
    op: Op,
    inputs: &[&Array],
    results: Vec<TensorType>,
) -> Result<Vec<Array>> {
    let n_in = inputs.len();
    let program = Program {
        inputs: inputs.iter().map(|a| a.ty.clone()).collect(),
        nodes: vec![Node {
            op,
            operands: (0..n_in as u32).map(ValueId).collect(),
            results: results.clone(),
        }],
        outputs: (n_in as u32..(n_in + results.len()) as u32)
            .map(ValueId)
            .collect(),
    };
    let exe = device.compile(&program)?;
    crate::eval::run_executable(device, &exe, inputs, results)
}

/// A constant next to `like`: captured in its trace, or uploaded to its device.
pub(crate) fn constant_like(like: &Array, host: HostArray) -> Result<Array> {
    match &like.repr {
        Repr::Traced { trace, .. } => {
            let ty = host.ty.clone();
            let v = trace.constant(host);
            Ok(Array::traced(trace.clone(), v, ty))
        }
        Repr::Concrete { device, .. } => Array::from_host_on(device, &host),
    }
}

/// A nullary op next to `like`: recorded in its trace, or run on its device.
pub(crate) fn apply_nullary_like(like: &Array, op: Op, declared: TensorType) -> Result<Array> {
    match &like.repr {
        Repr::Traced { trace, .. } => {
            let results = infer_result_types(&op, &[], std::slice::from_ref(&declared), &[])
                .map_err(|m| Error::Shape(format!("{}: {m}", op.name())))?;
            let v = trace.push(op, vec![], results)[0];
            Ok(Array::traced(trace.clone(), v, declared))
        }
        Repr::Concrete { device, .. } => apply_nullary(device, op, declared),
    }
}

/// `iota` next to `like`.
pub(crate) fn iota_like(
    like: &Array,
    dtype: quabla_abi::DType,
    shape: &[usize],
    dim: usize,
) -> Result<Array> {
    apply_nullary_like(
        like,
        Op::Iota { dim },
        TensorType::new(dtype, shape.to_vec()),
    )
}

/// Zeros of type `ty` next to `like`, as a broadcast scalar (no large constants).
pub(crate) fn zeros_typed(like: &Array, ty: &TensorType) -> Result<Array> {
    let z = constant_like(like, creation::filled(ty.dtype, &[], crate::Scalar::Int(0)))?;
    z.broadcast_in_dim(&ty.shape, &[])
}

/// `(t1, t2, ...)`: types listed in error messages.
pub(crate) fn show_types(ts: &[TensorType]) -> String {
    let parts: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
    format!("({})", parts.join(", "))
}

/// The machine epsilon of a float dtype (f32's for f32, f64's otherwise).
pub(crate) fn machine_eps(d: quabla_abi::DType) -> f64 {
    if d == quabla_abi::DType::F32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    }
}

/// The op family whose file holds a primitive's rules (JVP, transpose, batching): the one
/// place that maps ops to families, so the rule dispatchers cannot drift apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    Elementwise,
    Creation,
    Shape,
    Reduction,
    Contraction,
    Indexing,
    ControlFlow,
    Custom,
    LinearSolve,
    Linalg,
    Sort,
    Host,
    NamedAxis,
}

pub(crate) fn family(op: &Op) -> Family {
    match op {
        Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::Select | Op::Convert | Op::Bitcast => {
            Family::Elementwise
        }
        Op::Constant(_) | Op::Iota { .. } => Family::Creation,
        Op::BroadcastInDim { .. }
        | Op::Reshape
        | Op::Transpose { .. }
        | Op::Slice { .. }
        | Op::Pad { .. }
        | Op::Concatenate { .. }
        | Op::Reverse { .. } => Family::Shape,
        Op::Reduce { .. } | Op::Cumulative { .. } => Family::Reduction,
        Op::Sort { .. } => Family::Sort,
        Op::DotGeneral(_) => Family::Contraction,
        Op::Gather(_) | Op::ScatterAdd(_) | Op::DynamicSlice { .. } | Op::DynamicUpdateSlice => {
            Family::Indexing
        }
        Op::Cond { .. } | Op::While { .. } | Op::Scan { .. } | Op::BoundedWhile { .. } => {
            Family::ControlFlow
        }
        Op::StopGradient
        | Op::CustomJvp { .. }
        | Op::CustomVjp { .. }
        | Op::CustomVjpLinear { .. }
        | Op::Checkpoint { .. } => Family::Custom,
        Op::LinearSolve { .. } => Family::LinearSolve,
        Op::Linalg(_) => Family::Linalg,
        Op::HostCallback { .. } => Family::Host,
        Op::NamedAxis { .. } => Family::NamedAxis,
    }
}
