//! Whole programs replayed as CUDA graphs: a program made of kernels alone (no `cond` or
//! `while`, no factorization or host call) is, from its second run on, one graph launch
//! instead of a launch and an allocation per kernel. Launch overhead is what a training
//! step of small arrays costs on a GPU (the PINN step's 169 kernels), and a graph pays it
//! once.
//!
//! The graph is captured on buffers of its own, allocated once: a fixed copy of each input
//! and the kernels' results (values whose lifetimes do not overlap sharing a buffer:
//! `graph_buffers.rs`). A run copies the inputs in, launches the graph and copies the
//! outputs out into fresh buffers (the caller keeps them while the next run overwrites the
//! graph's), all on the plugin's one stream, so runs are ordered and a run's copies never
//! race the graph. Captures happen on a stream of their own (the GPU's capture lane), so
//! what other threads queue meanwhile is never captured; the graph is launched on the
//! plugin's stream. The kernels are the plan's own, so the results are the same bits as a
//! launch-by-launch run. `QUABLA_CUDA_GRAPHS=0` turns graphs off; `=always` captures at the
//! first run (the conformance suite runs each program once).

use crate::plan::{Plan, Step};
use crate::runtime::{Compiled, Lane, Value};
use cudarc::driver::{sys, CudaGraph, CudaSlice, CudaStream, DevicePtr};
use quabla_abi::abi::AbiError;
use std::collections::HashMap;
use std::sync::Arc;

/// The most bytes a program's graph may hold in buffers of its own, shared where lifetimes
/// allow (above it, programs run launch by launch, their intermediates freed as they go):
/// the PINN step at 16,384 points needs 190 MB in f32 and twice that in f64.
const MAX_GRAPH_BYTES: usize = 512 << 20;

/// Where a program (`G = Captured`) or a loop (`G = LoopGraph`) stands with its graph.
pub enum Replay<G> {
    /// Runs so far, launch by launch.
    Cold(u32),
    Ready(Box<G>),
    /// Not replayed (why, kept for debugging).
    Off(String),
}

/// When graphs are captured: never, at a program's second run, or at its first.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    Off,
    SecondRun,
    FirstRun,
}

impl Policy {
    /// From `QUABLA_CUDA_GRAPHS`: `0` off, `always` at the first run, else at the second.
    pub fn from_env() -> Policy {
        match std::env::var("QUABLA_CUDA_GRAPHS").as_deref() {
            Ok("0") => Policy::Off,
            Ok("always") => Policy::FirstRun,
            _ => Policy::SecondRun,
        }
    }
}

impl<G> Replay<G> {
    /// The state of a new program (or loop, whose regions are `plans`): never replayed
    /// where a plan cannot be (a region, a library or host step, too many bytes) or the
    /// policy says so.
    pub fn new(plans: &[&Plan], policy: Policy) -> Replay<G> {
        match (policy, plans.iter().find_map(|p| why_not(p))) {
            (Policy::Off, _) => Replay::Off("QUABLA_CUDA_GRAPHS=0".into()),
            (_, Some(why)) => Replay::Off(why),
            // `Compiled::run` captures once one run is counted.
            (Policy::SecondRun, None) => Replay::Cold(0),
            (Policy::FirstRun, None) => Replay::Cold(1),
        }
    }
}

/// Why `plan` cannot be one graph (None: it can).
fn why_not(plan: &Plan) -> Option<String> {
    let mut bytes: usize = plan.types[..plan.num_inputs]
        .iter()
        .map(|t| t.size_bytes())
        .sum();
    let mut stack = vec![plan];
    while let Some(p) = stack.pop() {
        for s in &p.steps {
            match s {
                // An update writes its target's buffer.
                Step::Constant { .. } | Step::Alias { .. } | Step::Update { .. } => {}
                Step::Kernel(k) => bytes += written(p, k),
                Step::Speculate { branches, pick, .. } => {
                    bytes += written(p, pick);
                    stack.extend(branches.iter());
                }
                Step::Linalg { .. } => return Some("a factorization (library workspaces)".into()),
                Step::HostCallback { .. } => return Some("a host callback".into()),
                Step::Cond { .. } | Step::While { .. } => {
                    return Some("a region decided on the host".into())
                }
            }
        }
    }
    // Kernels alone share buffers (`graph_buffers.rs`): the peak is what counts.
    if let Some(a) = crate::graph_buffers::assign(plan) {
        bytes = plan.types[..plan.num_inputs]
            .iter()
            .map(|t| t.size_bytes())
            .sum::<usize>()
            + a.bytes();
    }
    (bytes > MAX_GRAPH_BYTES).then(|| format!("{bytes} bytes of buffers"))
}

/// The bytes kernel `k` of `plan` writes.
fn written(plan: &Plan, k: &crate::fusion::Kernel) -> usize {
    k.writes.iter().map(|&w| plan.types[w].size_bytes()).sum()
}

/// Where a value of the plan lives in a captured graph.
#[derive(Clone)]
pub(crate) enum Slot {
    Input(usize),
    Constant(Value),
    Buffer(usize),
}

/// A captured graph and the buffers it reads and writes.
pub struct Captured {
    graph: CudaGraph,
    inputs: Vec<CudaSlice<u8>>,
    buffers: Vec<Option<CudaSlice<u8>>>,
    /// Where each of the plan's outputs is after a launch.
    outputs: Vec<Slot>,
}

// SAFETY: a `Captured` lives in its program's `Mutex`, so the graph is used by one thread at a
// time, the external synchronization CUDA asks of graph objects.
unsafe impl Send for Captured {}

/// Where a plan's values live in a graph, and, by step, where each speculated branch's do.
pub(crate) struct Placed {
    pub slots: Vec<Option<Slot>>,
    branches: HashMap<usize, Vec<Placed>>,
}

/// Buffers for every kernel result of `plan` (pushed onto `buffers`), and where each of its
/// values lives: its inputs at `inputs`, constants as uploaded, aliases as their source.
/// Speculated branches are placed in turn (as deep as QIR's validation lets regions nest).
pub(crate) fn place(
    c: &Compiled,
    plan: &Plan,
    inputs: Vec<Slot>,
    buffers: &mut Vec<Option<CudaSlice<u8>>>,
) -> Result<Placed, AbiError> {
    let mut slots: Vec<Option<Slot>> = vec![None; plan.types.len()];
    for (slot, input) in slots.iter_mut().zip(inputs) {
        *slot = Some(input);
    }
    let mut branches = HashMap::new();
    for (i, s) in plan.steps.iter().enumerate() {
        match s {
            Step::Constant { value, .. } => {
                slots[*value] = Some(Slot::Constant(c.uploaded(plan, *value)?))
            }
            Step::Alias { from, to } => slots[*to] = slots[*from].clone(),
            // An update writes its target's buffer where that is a kernel result's of this
            // plan; an input (the graph's copy, a loop's carry, which the freeze kernel
            // still reads, or a speculated branch's operand, which the other branches read)
            // is copied into a buffer of the result's first (`record`).
            Step::Update { target, result, .. } => match &slots[*target] {
                Some(Slot::Buffer(b)) if *target >= plan.num_inputs => {
                    slots[*result] = Some(Slot::Buffer(*b))
                }
                _ => allocate(c, plan, &mut slots, &[*result], buffers)?,
            },
            Step::Kernel(k) => allocate(c, plan, &mut slots, &k.writes, buffers)?,
            Step::Speculate {
                operands,
                branches: plans,
                results,
                ..
            } => {
                let ins = operands
                    .iter()
                    .map(|&v| slot(&slots, v))
                    .collect::<Result<Vec<_>, _>>()?;
                let placed = plans
                    .iter()
                    .map(|b| place(c, b, ins.clone(), buffers))
                    .collect::<Result<Vec<_>, _>>()?;
                branches.insert(i, placed);
                allocate(c, plan, &mut slots, results, buffers)?;
            }
            Step::Linalg { .. }
            | Step::HostCallback { .. }
            | Step::Cond { .. }
            | Step::While { .. } => return Err(AbiError::internal("a step a graph cannot hold")),
        }
    }
    Ok(Placed { slots, branches })
}

/// `place` for a plan of kernels alone, its results in the shared buffers of `a` (pushed
/// onto `buffers`).
fn place_shared(
    c: &Compiled,
    plan: &Plan,
    a: &crate::graph_buffers::Assignment,
    buffers: &mut Vec<Option<CudaSlice<u8>>>,
) -> Result<Placed, AbiError> {
    let base = buffers.len();
    for &size in &a.sizes {
        buffers.push(Some(c.gpu().alloc_output(size)?));
    }
    let mut slots: Vec<Option<Slot>> = vec![None; plan.types.len()];
    for (k, slot) in slots.iter_mut().enumerate().take(plan.num_inputs) {
        *slot = Some(Slot::Input(k));
    }
    for s in &plan.steps {
        match s {
            Step::Constant { value, .. } => {
                slots[*value] = Some(Slot::Constant(c.uploaded(plan, *value)?))
            }
            Step::Alias { from, to } => slots[*to] = slots[*from].clone(),
            Step::Kernel(k) => {
                for &w in &k.writes {
                    let b = a.of_value[w]
                        .ok_or_else(|| AbiError::internal("a kernel result without a buffer"))?;
                    slots[w] = Some(Slot::Buffer(base + b));
                }
            }
            // `graph_buffers` gives the result its target's buffer, or one of its own where
            // the target is an input (which `record` copies in).
            Step::Update { result, .. } => {
                let b = a.of_value[*result]
                    .ok_or_else(|| AbiError::internal("an updated value without a buffer"))?;
                slots[*result] = Some(Slot::Buffer(base + b));
            }
            Step::Speculate { .. }
            | Step::Linalg { .. }
            | Step::HostCallback { .. }
            | Step::Cond { .. }
            | Step::While { .. } => return Err(AbiError::internal("a step a graph cannot hold")),
        }
    }
    Ok(Placed {
        slots,
        branches: HashMap::new(),
    })
}

/// A buffer of its own for each value `writes` of `plan`.
fn allocate(
    c: &Compiled,
    plan: &Plan,
    slots: &mut [Option<Slot>],
    writes: &[usize],
    buffers: &mut Vec<Option<CudaSlice<u8>>>,
) -> Result<(), AbiError> {
    for &w in writes {
        buffers.push(Some(c.gpu().alloc_output(plan.types[w].size_bytes())?));
        slots[w] = Some(Slot::Buffer(buffers.len() - 1));
    }
    Ok(())
}

/// Where value `v` lives, by `slots`.
pub(crate) fn slot(slots: &[Option<Slot>], v: usize) -> Result<Slot, AbiError> {
    slots
        .get(v)
        .cloned()
        .flatten()
        .ok_or_else(|| AbiError::internal(format!("%{v} has no buffer in the graph")))
}

/// The buffer of `slot`: one of `inputs`, a constant, or one of `buffers`.
pub(crate) fn buffer<'a>(
    slot: &'a Slot,
    inputs: &'a [CudaSlice<u8>],
    buffers: &'a [Option<CudaSlice<u8>>],
) -> Result<&'a CudaSlice<u8>, AbiError> {
    match slot {
        Slot::Input(i) => inputs
            .get(*i)
            .ok_or_else(|| AbiError::internal("a graph input out of range")),
        Slot::Constant(v) => Ok(&**v),
        Slot::Buffer(j) => buffers
            .get(*j)
            .and_then(|b| b.as_ref())
            .ok_or_else(|| AbiError::internal("a kernel reading its own result")),
    }
}

/// The capture error of a driver call.
pub(crate) fn capturing(e: cudarc::driver::DriverError) -> AbiError {
    AbiError::internal(format!("capturing a CUDA graph: {e}"))
}

/// The graph of `plan`'s kernels as `c` launches them, on buffers of its own, captured on
/// the GPU's capture lane (`Gpu::with_capture_lane`).
pub fn capture(c: &Compiled, plan: &Plan) -> Result<Captured, AbiError> {
    let inputs = plan.types[..plan.num_inputs]
        .iter()
        .map(|t| c.gpu().alloc_output(t.size_bytes()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut buffers = Vec::new();
    let placed = match crate::graph_buffers::assign(plan) {
        Some(a) => place_shared(c, plan, &a, &mut buffers)?,
        None => place(
            c,
            plan,
            (0..plan.num_inputs).map(Slot::Input).collect(),
            &mut buffers,
        )?,
    };
    let graph = c.gpu().with_capture_lane(|lane| {
        captured(lane.stream, || {
            record(c, lane, plan, &placed, &inputs, &mut buffers)
        })
    })?;
    let outputs = plan
        .outputs
        .iter()
        .map(|&o| slot(&placed.slots, o))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Captured {
        graph,
        inputs,
        buffers,
        outputs,
    })
}

/// The graph of what `queue` puts on `stream` (ended whatever happened, so the stream is
/// usable again), instantiated and uploaded.
pub(crate) fn captured(
    stream: &Arc<CudaStream>,
    queue: impl FnOnce() -> Result<(), AbiError>,
) -> Result<CudaGraph, AbiError> {
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        .map_err(capturing)?;
    let queued = queue();
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    queued?;
    let graph = graph
        .map_err(capturing)?
        .ok_or_else(|| AbiError::internal("capturing a CUDA graph gave none"))?;
    graph.upload().map_err(capturing)?;
    // Launches go to the plugin's stream: the upload, on the capture lane's, is done first.
    stream.synchronize().map_err(capturing)?;
    Ok(graph)
}

/// Launches `graph` on `stream` (the plugin's: it was captured on the capture lane's).
pub(crate) fn launch(graph: &CudaGraph, stream: &Arc<CudaStream>) -> Result<(), AbiError> {
    // SAFETY: a live executable graph (owned by `graph`) and a live stream of its context.
    unsafe { cudarc::driver::result::graph::launch(graph.cu_graph_exec(), stream.cu_stream()) }
        .map_err(|e| AbiError::internal(format!("launching a CUDA graph: {e}")))
}

/// Queues every kernel of `plan` on the capturing stream, its values where `placed` says
/// (speculated branches in turn, then their pick).
pub(crate) fn record(
    c: &Compiled,
    lane: &Lane<'_>,
    plan: &Plan,
    placed: &Placed,
    inputs: &[CudaSlice<u8>],
    buffers: &mut [Option<CudaSlice<u8>>],
) -> Result<(), AbiError> {
    for (i, s) in plan.steps.iter().enumerate() {
        let reads_of = |k: &crate::fusion::Kernel| {
            k.reads
                .iter()
                .map(|&v| slot(&placed.slots, v))
                .collect::<Result<Vec<_>, _>>()
        };
        // The kernel, what it reads, and the values whose buffers it writes.
        let (k, read_slots, written) = match s {
            Step::Kernel(k) => (k, reads_of(k)?, k.writes.clone()),
            Step::Update { kernel, result, .. } => (kernel, reads_of(kernel)?, vec![*result]),
            Step::Speculate {
                index,
                branches,
                pick,
                ..
            } => {
                let inner = placed
                    .branches
                    .get(&i)
                    .ok_or_else(|| AbiError::internal("a speculated cond not placed"))?;
                let mut reads = vec![slot(&placed.slots, *index)?];
                for (b, p) in branches.iter().zip(inner) {
                    record(c, lane, b, p, inputs, buffers)?;
                    for &o in &b.outputs {
                        reads.push(slot(&p.slots, o)?);
                    }
                }
                (pick, reads, pick.writes.clone())
            }
            Step::Constant { .. }
            | Step::Alias { .. }
            | Step::Linalg { .. }
            | Step::HostCallback { .. }
            | Step::Cond { .. }
            | Step::While { .. } => continue,
        };
        // An update whose target has another buffer than its result (an input, a constant)
        // starts from a copy of it.
        if let Step::Update { target, result, .. } = s {
            let (from, to) = (slot(&placed.slots, *target)?, slot(&placed.slots, *result)?);
            if !matches!((&from, &to), (Slot::Buffer(a), Slot::Buffer(b)) if a == b) {
                let to = buffer(&to, inputs, buffers)?;
                let bytes = plan.types[*result].size_bytes();
                copy(lane.stream, buffer(&from, inputs, buffers)?, to, bytes)?;
            }
        }
        // The results leave `buffers` while the reads borrow it (a kernel never reads what
        // it writes), and come back after.
        let mut taken = Vec::with_capacity(written.len());
        for &w in &written {
            let Slot::Buffer(j) = slot(&placed.slots, w)? else {
                return Err(AbiError::internal("a kernel result without a buffer"));
            };
            let b = buffers[j]
                .take()
                .ok_or_else(|| AbiError::internal("a buffer written twice"))?;
            taken.push((j, b));
        }
        let result = read_slots
            .iter()
            .map(|s| buffer(s, inputs, buffers))
            .collect::<Result<Vec<_>, _>>()
            .and_then(|reads| {
                let mut writes: Vec<&mut CudaSlice<u8>> =
                    taken.iter_mut().map(|(_, b)| b).collect();
                c.enqueue_on(lane, k, &reads, &mut writes)
            });
        for (j, b) in taken {
            buffers[j] = Some(b);
        }
        result?;
    }
    Ok(())
}

impl Captured {
    /// One run: `inputs` copied in, the graph launched, the outputs copied out.
    pub fn run(
        &mut self,
        c: &Compiled,
        plan: &Plan,
        stream: &Arc<CudaStream>,
        inputs: &[Value],
    ) -> Result<Vec<Value>, AbiError> {
        let driver = |e: cudarc::driver::DriverError| {
            AbiError::internal(format!("replaying a CUDA graph: {e}"))
        };
        for (k, (v, fixed)) in inputs.iter().zip(self.inputs.iter_mut()).enumerate() {
            let n = plan.types[k].size_bytes();
            if n > 0 {
                stream
                    .memcpy_dtod(&v.slice(0..n), &mut fixed.slice_mut(0..n))
                    .map_err(driver)?;
            }
        }
        launch(&self.graph, stream)?;
        plan.outputs
            .iter()
            .zip(&self.outputs)
            .map(|(&o, slot)| match slot {
                Slot::Input(k) => inputs
                    .get(*k)
                    .cloned()
                    .ok_or_else(|| AbiError::internal("an output from a missing input")),
                Slot::Constant(v) => Ok(v.clone()),
                Slot::Buffer(j) => {
                    let n = plan.types[o].size_bytes();
                    let mut out = c.gpu().alloc_output(n)?;
                    if let (Some(b), true) = (&self.buffers[*j], n > 0) {
                        stream
                            .memcpy_dtod(&b.slice(0..n), &mut out.slice_mut(0..n))
                            .map_err(driver)?;
                    }
                    Ok(Arc::new(out))
                }
            })
            .collect()
    }
}

/// Copies `bytes` bytes from `from` to `to` on `stream` (a capturing one: the copy becomes a
/// node of the graph).
pub(crate) fn copy(
    stream: &Arc<CudaStream>,
    from: &CudaSlice<u8>,
    to: &CudaSlice<u8>,
    bytes: usize,
) -> Result<(), AbiError> {
    if bytes == 0 {
        return Ok(());
    }
    let (src, _s) = from.device_ptr(stream);
    let (dst, _d) = to.device_ptr(stream);
    // SAFETY: both buffers hold at least `bytes` bytes and live as long as the graph.
    unsafe { cudarc::driver::result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()) }
        .map_err(capturing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_abi::qir::Program;

    fn planned(text: &str) -> Plan {
        crate::plan::plan(&Program::parse(text).unwrap(), "t").unwrap()
    }

    #[test]
    fn kernels_alone_are_replayed_from_the_run_the_policy_says() {
        let p = planned("program(%0: f32[4]) {\n  %1 = exp(%0) : f32[4]\n  return %1\n}");
        let new = |policy| Replay::<()>::new(&[&p], policy);
        assert!(matches!(new(Policy::SecondRun), Replay::Cold(0)));
        assert!(matches!(new(Policy::FirstRun), Replay::Cold(1)));
        assert!(matches!(new(Policy::Off), Replay::Off(_)));
    }

    /// A counter loop over `x` of `n` elements, doubled each iteration.
    fn doubling_loop(n: usize) -> Plan {
        planned(&format!(
            "program(%0: i32[], %1: f32[{n}]) {{
  %2, %3 = while(%0, %1) : i32[], f32[{n}] {{
    cond(%0: i32[], %1: f32[{n}]) {{
      %2 = constant[value=[3]]() : i32[]
      %3 = compare[dir=lt](%0, %2) : bool[]
      return %3
    }}
    body(%0: i32[], %1: f32[{n}]) {{
      %2 = constant[value=[1]]() : i32[]
      %3 = add(%0, %2) : i32[]
      %4 = add(%1, %1) : f32[{n}]
      return %3, %4
    }}
  }}
  return %2, %3
}}"
        ))
    }

    #[test]
    fn regions_and_host_calls_are_not_replayed() {
        // Too much work per iteration for a device loop: its regions stay host-driven.
        let looped = doubling_loop(crate::device_loop::MAX_LOOP_ELEMENTS as usize + 1);
        let Replay::<()>::Off(why) = Replay::new(&[&looped], Policy::FirstRun) else {
            panic!("a loop replayed")
        };
        assert!(why.contains("region"), "{why}");
        // A loop on the device is one kernel.
        assert!(matches!(
            Replay::<()>::new(&[&doubling_loop(8)], Policy::FirstRun),
            Replay::Cold(1)
        ));
        let called = planned(
            "program(%0: f32[2]) {\n  %1 = host_callback[callback=1, effectful=true](%0) : f32[2]\n  return %1\n}",
        );
        assert!(matches!(
            Replay::<()>::new(&[&called], Policy::SecondRun),
            Replay::Off(_)
        ));
        let big = planned(
            "program(%0: f32[100000000]) {\n  %1 = exp(%0) : f32[100000000]\n  return %1\n}",
        );
        let Replay::<()>::Off(why) = Replay::new(&[&big], Policy::SecondRun) else {
            panic!("800 MB replayed")
        };
        assert!(why.contains("bytes"), "{why}");
    }
}
