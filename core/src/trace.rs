//! Tracing: while a function runs under `jit`, operations on traced arrays append nodes to a
//! QIR program instead of running.

use crate::array::{Array, Repr};
use crate::error::{Error, Result};
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
    /// Values of enclosing traces used inside this one (region functions closing over outer
    /// values): each gets a placeholder id, turned into an extra input when tracing ends.
    outer: Vec<(Array, ValueId)>,
    /// Concrete values of traced values, where known: the inputs of a transformation called
    /// on concrete arrays (outside `jit`), and what was computed from them on request.
    known: HashMap<ValueId, Array>,
}

/// Placeholder ids for captured outer values, far above any real value id.
const PLACEHOLDER_BASE: u32 = 1 << 31;

thread_local! {
    /// The traces currently being built on this thread, innermost last.
    static ACTIVE: std::cell::RefCell<Vec<(u64, std::sync::Weak<Trace>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Keeps a trace on the active stack while its function runs.
struct ActiveGuard;

impl ActiveGuard {
    fn push(trace: &Arc<Trace>) -> ActiveGuard {
        ACTIVE.with(|a| a.borrow_mut().push((trace.id, Arc::downgrade(trace))));
        ActiveGuard
    }
}

/// The innermost trace being built on this thread, if any: where an op without operands
/// that must run with the program (an effect) is recorded.
pub(crate) fn innermost_active() -> Option<Arc<Trace>> {
    ACTIVE.with(|a| a.borrow().last().and_then(|(_, t)| t.upgrade()))
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        ACTIVE.with(|a| {
            a.borrow_mut().pop();
        });
    }
}

fn is_active(id: u64) -> bool {
    ACTIVE.with(|a| a.borrow().iter().any(|(i, _)| *i == id))
}

/// Where an op on values of `operands` (the innermost trace among its operands) is
/// recorded: the innermost active trace when that one captures and `operands` encloses it,
/// as JAX stages into the innermost dynamic trace. So a `cond` branch, a loop body or a
/// transformed function that computes on values it closes over computes them inside it,
/// not once outside: the branch not taken does not run them, and its cotangent (zero)
/// never meets their derivatives (`0 * inf`).
pub(crate) fn recording_trace(operands: Arc<Trace>) -> Arc<Trace> {
    match innermost_active() {
        Some(inner) if inner.id > operands.id && inner.capturing && is_active(operands.id) => inner,
        _ => operands,
    }
}

/// One tracing session: a program under construction on a target device.
pub struct Trace {
    id: u64,
    device: Arc<Device>,
    /// Whether values of enclosing traces may be captured as extra inputs.
    capturing: bool,
    state: Mutex<TraceState>,
}

impl Trace {
    fn with_capture(device: Arc<Device>, inputs: Vec<TensorType>, capturing: bool) -> Arc<Trace> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let next = inputs.len() as u32;
        Arc::new(Trace {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            device,
            capturing,
            state: Mutex::new(TraceState {
                program: Program {
                    inputs,
                    nodes: vec![],
                    outputs: vec![],
                },
                next,
                captured: HashMap::new(),
                outer: Vec::new(),
                known: HashMap::new(),
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

    /// The placeholder for `outer`, a value of an enclosing trace used inside this one; an
    /// error when this trace does not capture or `outer`'s trace is not enclosing.
    pub(crate) fn capture_outer(
        &self,
        outer: &Array,
        outer_trace: u64,
        outer_value: ValueId,
    ) -> Result<ValueId> {
        if !self.capturing || !is_active(outer_trace) {
            return Err(Error::Mismatch(
                "a traced array was used outside the function that traced it (or inside another `jit`); \
                 pass it as an argument instead of capturing it"
                    .into(),
            ));
        }
        let mut s = self.lock();
        let known = s.outer.iter().find(|(a, _)| match &a.repr {
            Repr::Traced { trace, value } => trace.id() == outer_trace && *value == outer_value,
            _ => false,
        });
        if let Some((_, v)) = known {
            return Ok(*v);
        }
        let v = ValueId(PLACEHOLDER_BASE + s.outer.len() as u32);
        s.outer.push((outer.clone(), v));
        Ok(v)
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

    /// The concrete value of `v`, when the trace's inputs are known: the trace so far that
    /// `v` depends on, run on them (and remembered, so a later request runs only what is
    /// new). `None` when `v` depends on an input whose value is not known (under `jit`).
    /// This is how a transformation called outside `jit` lets Python control flow read
    /// primal values (`if x > 0:`), as JAX's JVP tracers do; the program then holds the
    /// path those values took.
    pub(crate) fn value_of(&self, v: ValueId) -> Result<Option<Array>> {
        let (program, inputs) = {
            let s = self.lock();
            if s.known.is_empty() {
                return Ok(None);
            }
            if let Some(a) = s.known.get(&v) {
                return Ok(Some(a.clone()));
            }
            match prefix_program(&s, v)? {
                Some(found) => found,
                None => return Ok(None),
            }
        };
        let value = crate::eval::eval_program(&program, &inputs)?.remove(0);
        self.lock().known.insert(v, value.clone());
        Ok(Some(value))
    }

    /// Makes the trace's inputs known (a transformation called on concrete arrays).
    fn know_inputs(&self, args: &[Array]) {
        let mut s = self.lock();
        for (i, a) in args.iter().enumerate() {
            s.known.insert(ValueId(i as u32), a.clone());
        }
    }

    /// The finished program returning `outputs`.
    pub(crate) fn finish(&self, outputs: Vec<ValueId>) -> Program {
        let mut p = self.lock().program.clone();
        p.outputs = outputs;
        p
    }
}

/// The nodes of the trace so far that `v` needs beyond the known values, as a program of
/// those known values (returned, concrete, in input order). `None` when an input or an
/// outer value it needs is not known. The walk is an explicit stack: its depth is the
/// user's program's, not bounded by the Rust stack.
fn prefix_program(s: &TraceState, v: ValueId) -> Result<Option<(Program, Vec<Array>)>> {
    let n_in = s.program.inputs.len() as u32;
    let mut firsts = Vec::with_capacity(s.program.nodes.len());
    let mut next = n_in;
    for node in &s.program.nodes {
        firsts.push(next);
        next += node.results.len() as u32;
    }
    let node_of = |u: ValueId| firsts.partition_point(|f| *f <= u.0).checked_sub(1);
    let mut leaves: Vec<ValueId> = Vec::new();
    let mut needed = vec![false; s.program.nodes.len()];
    let mut stack = vec![v];
    let mut seen = std::collections::HashSet::new();
    let mut outer_values: HashMap<ValueId, Array> = HashMap::new();
    while let Some(u) = stack.pop() {
        if !seen.insert(u) {
            continue;
        }
        if s.known.contains_key(&u) {
            leaves.push(u);
            continue;
        }
        if u.0 < n_in {
            return Ok(None);
        }
        if u.0 >= PLACEHOLDER_BASE {
            // An enclosing trace's value: known there, or not at all.
            let Some((outer, _)) = s.outer.iter().find(|(_, p)| *p == u) else {
                return Ok(None);
            };
            match outer.known_value()? {
                Some(value) => {
                    outer_values.insert(u, value);
                    leaves.push(u);
                    continue;
                }
                None => return Ok(None),
            }
        }
        let Some(i) = node_of(u) else {
            return Ok(None);
        };
        if !needed[i] {
            needed[i] = true;
            stack.extend(s.program.nodes[i].operands.iter().copied());
        }
    }
    leaves.sort();
    let mut map: HashMap<ValueId, ValueId> = HashMap::new();
    let mut inputs = Vec::with_capacity(leaves.len());
    let mut types = Vec::with_capacity(leaves.len());
    for (k, u) in leaves.iter().enumerate() {
        let Some(value) = s.known.get(u).or_else(|| outer_values.get(u)).cloned() else {
            return Ok(None);
        };
        map.insert(*u, ValueId(k as u32));
        types.push(value.tensor_type().clone());
        inputs.push(value);
    }
    let renumbered = |map: &HashMap<ValueId, ValueId>, o: &ValueId| -> Result<ValueId> {
        map.get(o).copied().ok_or_else(|| {
            Error::Internal(format!(
                "reading a traced value: {o} is computed nowhere before"
            ))
        })
    };
    let mut nodes = Vec::new();
    let mut id = leaves.len() as u32;
    for (i, node) in s.program.nodes.iter().enumerate() {
        if !needed[i] {
            continue;
        }
        let operands = node
            .operands
            .iter()
            .map(|o| renumbered(&map, o))
            .collect::<Result<_>>()?;
        for r in 0..node.results.len() as u32 {
            map.insert(ValueId(firsts[i] + r), ValueId(id));
            id += 1;
        }
        nodes.push(Node {
            op: node.op.clone(),
            operands,
            results: node.results.clone(),
        });
    }
    let program = Program {
        inputs: types,
        nodes,
        outputs: vec![renumbered(&map, &v)?],
    };
    Ok(Some((program, inputs)))
}

/// Traces `f` on fresh traced inputs of `types` into a validated program. Concrete arrays
/// the function returns or captures become constants.
pub(crate) fn trace_function<F>(device: &Arc<Device>, types: &[TensorType], f: F) -> Result<Program>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    Ok(trace_inner(device, types, f, false, None)?.0)
}

/// Like [`trace_function`], for region functions that may close over traced values of the
/// enclosing traces: each such value becomes an extra input after `types`, and is returned
/// (in input order) so the caller can pass it as an operand.
pub(crate) fn trace_function_capturing<F>(
    device: &Arc<Device>,
    types: &[TensorType],
    f: F,
) -> Result<(Program, Vec<Array>)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    trace_inner(device, types, f, true, None)
}

/// [`trace_function_capturing`] for a transformation called on `args`: when their values
/// are known (outside `jit`), the traced values know theirs, so Python-style control flow
/// on primal values works while tracing (see [`Trace::value_of`]).
pub(crate) fn trace_function_at<F>(
    device: &Arc<Device>,
    args: &[Array],
    f: F,
) -> Result<(Program, Vec<Array>)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let types: Vec<TensorType> = args.iter().map(|a| a.tensor_type().clone()).collect();
    // Concrete arguments, or traced ones whose trace knows their values (a transformation
    // nested in another called outside `jit`, as hessian's).
    let mut known = Vec::with_capacity(args.len());
    for a in args {
        match a.known_value()? {
            Some(v) => known.push(v),
            None => return trace_inner(device, &types, f, true, None),
        }
    }
    trace_inner(device, &types, f, true, Some(&known))
}

/// Moves captured placeholders to inputs after the declared ones, renumbering the rest.
fn place_captures(mut p: Program, outer: &[(Array, ValueId)]) -> Program {
    let n_in = p.inputs.len() as u32;
    let c = outer.len() as u32;
    let remap = |v: ValueId| -> ValueId {
        if v.0 >= PLACEHOLDER_BASE {
            ValueId(n_in + (v.0 - PLACEHOLDER_BASE))
        } else if v.0 >= n_in {
            ValueId(v.0 + c)
        } else {
            v
        }
    };
    for node in &mut p.nodes {
        for o in &mut node.operands {
            *o = remap(*o);
        }
    }
    for o in &mut p.outputs {
        *o = remap(*o);
    }
    p.inputs
        .extend(outer.iter().map(|(a, _)| a.tensor_type().clone()));
    p
}

fn trace_inner<F>(
    device: &Arc<Device>,
    types: &[TensorType],
    f: F,
    capturing: bool,
    known: Option<&[Array]>,
) -> Result<(Program, Vec<Array>)>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let trace = Trace::with_capture(device.clone(), types.to_vec(), capturing);
    if let Some(args) = known {
        trace.know_inputs(args);
    }
    let _active = ActiveGuard::push(&trace);
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
            Repr::Traced { trace: t, value } => trace.capture_outer(o, t.id(), *value)?,
            Repr::Concrete { buffer, .. } => trace.capture(buffer, || o.to_host())?,
        });
    }
    let outer = std::mem::take(&mut trace.lock().outer);
    let raw = place_captures(trace.finish(ids), &outer);
    // Simplified, folded and pruned before anything differentiates or compiles it.
    let program = crate::passes::dce(&crate::passes::fold_constants(
        &crate::passes::optimize(&raw),
        device,
    ));
    program.validate().map_err(|e| {
        Error::Internal(format!(
            "tracing produced an invalid program (a bug in quabla): {e}"
        ))
    })?;
    Ok((program, outer.into_iter().map(|(a, _)| a).collect()))
}
