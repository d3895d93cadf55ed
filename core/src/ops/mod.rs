//! Operations on arrays, one file per op family. Each builds QIR nodes through [`apply`],
//! which either records them (traced inputs) or runs them at once (concrete inputs).
//!
//! Adding an op touches its family file here (and, as the transformations land, the op's
//! JVP, transpose and batching rules beside it) plus the backends.

mod contraction;
mod creation;
mod elementwise;
mod indexing;
pub(crate) mod reduction;
mod shape;

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
    let results = infer_result_types(&op, &in_types, &declared, &[])
        .map_err(|m| Error::Type(format!("{}: {m}", op.name())))?;
    let trace = inputs.iter().find_map(|a| match &a.repr {
        Repr::Traced { trace, .. } => Some(trace.clone()),
        _ => None,
    });
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

/// Like [`apply`] for ops without operands, on a chosen device.
pub(crate) fn apply_nullary(device: &Arc<Device>, op: Op, declared: TensorType) -> Result<Array> {
    let results = infer_result_types(&op, &[], std::slice::from_ref(&declared), &[])
        .map_err(|m| Error::Type(format!("{}: {m}", op.name())))?;
    Ok(run_eager(device, op, &[], results)?.remove(0))
}

pub(crate) fn apply1(op: Op, inputs: &[&Array], declared: Vec<TensorType>) -> Result<Array> {
    Ok(apply(op, inputs, declared)?.remove(0))
}

/// The id of `a` inside trace `t`: its own id if it belongs to `t`, else a captured constant.
fn value_in(t: &Arc<Trace>, a: &Array) -> Result<ValueId> {
    match &a.repr {
        Repr::Traced { trace, value } if trace.id() == t.id() => Ok(*value),
        Repr::Traced { .. } => Err(Error::Mismatch(
            "an array traced by one `jit` was used inside another; pass it as an argument instead of capturing it".into(),
        )),
        Repr::Concrete { buffer, .. } => {
            let host = a.to_host()?;
            Ok(t.capture(Some(Arc::as_ptr(buffer) as usize), host))
        }
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
    let mut bufs = Vec::with_capacity(n_in);
    for a in inputs {
        if !Arc::ptr_eq(a.device(), device) {
            return Err(Error::Mismatch(format!(
                "arrays on different devices (`{}` and `{}`) cannot meet in one operation; move one first",
                a.device().platform(),
                device.platform()
            )));
        }
        bufs.push(a.buffer().expect("eager inputs are concrete").as_ref());
    }
    let outs = exe.run(&bufs).map_err(|e| device.backend_err(e))?;
    Ok(outs
        .into_iter()
        .zip(results)
        .map(|(b, ty)| Array {
            ty,
            repr: Repr::Concrete {
                device: device.clone(),
                buffer: Arc::new(b),
            },
        })
        .collect())
}

/// A constant next to `like`: captured in its trace, or uploaded to its device.
pub(crate) fn constant_like(like: &Array, host: HostArray) -> Result<Array> {
    match &like.repr {
        Repr::Traced { trace, .. } => {
            let ty = host.ty.clone();
            let v = trace.capture(None, host);
            Ok(Array::traced(trace.clone(), v, ty))
        }
        Repr::Concrete { device, .. } => Array::from_host_on(device, &host),
    }
}
