//! Tracing: while a function runs under `jit`, operations on traced arrays append nodes to a
//! QIR program instead of running.

use crate::runtime::Device;
use quabla_abi::qir::{Node, Op, Program, ValueId};
use quabla_abi::{HostArray, TensorType};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

struct TraceState {
    program: Program,
    next: u32,
    /// Concrete arrays already captured as constants, keyed by buffer address.
    captured: HashMap<usize, ValueId>,
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

    /// A constant node holding `value`, reused when the same buffer is captured again.
    pub(crate) fn capture(&self, key: Option<usize>, value: HostArray) -> ValueId {
        if let Some(k) = key {
            if let Some(v) = self.lock().captured.get(&k) {
                return *v;
            }
        }
        let ty = value.ty.clone();
        let id = self.push(Op::Constant(value), vec![], vec![ty])[0];
        if let Some(k) = key {
            self.lock().captured.insert(k, id);
        }
        id
    }

    /// The finished program returning `outputs`.
    pub(crate) fn finish(&self, outputs: Vec<ValueId>) -> Program {
        let mut p = self.lock().program.clone();
        p.outputs = outputs;
        p
    }
}
