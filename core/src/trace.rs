//! Tracing: while a function runs under `jit`, operations on traced arrays append nodes to a
//! QIR program instead of running.

use crate::array::{Array, Repr};
use crate::error::{type_err, Error, Result};
use crate::runtime::Device;
use quabla_abi::host::Buffer;
use quabla_abi::qir::{Node, Op, Program, ValueId};
use quabla_abi::{HostArray, TensorType};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

struct TraceState {
    program: Program,
    next: u32,
    /// Concrete arrays already captured as constants, keyed by buffer address; the buffer is
    /// kept alive so its address cannot be reused by another buffer during the trace.
    captured: HashMap<usize, (ValueId, Arc<Buffer>)>,
}

/// One tracing session: a program under construction on a target device.
pub struct Trace {
    id: u64,
    device: Arc<Device>,
    state: Mutex<TraceState>,
}

impl Trace {
    pub(crate) fn new(device: Arc<Device>, inputs: Vec<TensorType>) -> Arc<Trace> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let next = inputs.len() as u32;
        Arc::new(Trace {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            device,
            state: Mutex::new(TraceState {
                program: Program {
                    inputs,
                    nodes: vec![],
                    outputs: vec![],
                },
                next,
                captured: HashMap::new(),
            }),
        })
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    pub(crate) fn device(&self) -> &Arc<Device> {
        &self.device
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, TraceState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Appends a node whose types were already checked; returns its result ids.
    pub(crate) fn push(
        &self,
        op: Op,
        operands: Vec<ValueId>,
        results: Vec<TensorType>,
    ) -> Vec<ValueId> {
        let mut s = self.lock();
        let first = s.next;
        s.next += results.len() as u32;
        let n = results.len() as u32;
        s.program.nodes.push(Node {
            op,
            operands,
            results,
        });
        (first..first + n).map(ValueId).collect()
    }

    /// A constant node holding `value`.
    pub(crate) fn constant(&self, value: HostArray) -> ValueId {
        let ty = value.ty.clone();
        self.push(Op::Constant(value), vec![], vec![ty])[0]
    }

    /// The constant node of a captured concrete buffer, made once per buffer.
    pub(crate) fn capture(
        &self,
        buffer: &Arc<Buffer>,
        value: impl FnOnce() -> Result<HostArray>,
    ) -> Result<ValueId> {
        let key = Arc::as_ptr(buffer) as usize;
        if let Some((v, _)) = self.lock().captured.get(&key) {
            return Ok(*v);
        }
        let id = self.constant(value()?);
        self.lock().captured.insert(key, (id, buffer.clone()));
        Ok(id)
    }

    /// The finished program returning `outputs`.
    pub(crate) fn finish(&self, outputs: Vec<ValueId>) -> Program {
        let mut p = self.lock().program.clone();
        p.outputs = outputs;
        p
    }
}

/// Traces `f` on fresh traced inputs of `types` into a validated program. Concrete arrays
/// the function returns or captures become constants.
pub(crate) fn trace_function<F>(device: &Arc<Device>, types: &[TensorType], f: F) -> Result<Program>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let trace = Trace::new(device.clone(), types.to_vec());
    let traced: Vec<Array> = types
        .iter()
        .enumerate()
        .map(|(i, t)| Array::traced(trace.clone(), ValueId(i as u32), t.clone()))
        .collect();
    let outs = f(&traced)?;
    let mut ids = Vec::with_capacity(outs.len());
    for o in &outs {
        ids.push(match &o.repr {
            Repr::Traced { trace: t, value } if t.id() == trace.id() => *value,
            Repr::Traced { .. } => {
                return type_err("an output of the traced function belongs to another trace")
            }
            Repr::Concrete { buffer, .. } => trace.capture(buffer, || o.to_host())?,
        });
    }
    // Simplified, folded and pruned before anything differentiates or compiles it.
    let program = crate::passes::dce(&crate::passes::fold_constants(
        &crate::passes::optimize(&trace.finish(ids)),
        device,
    ));
    program.validate().map_err(|e| {
        Error::Type(format!(
            "tracing produced an invalid program (a bug in quabla): {e}"
        ))
    })?;
    Ok(program)
}
