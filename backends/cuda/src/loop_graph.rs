//! A `while` loop of kernels alone as one CUDA graph per iteration (`in_place.rs` says why
//! the carry can be updated in place): the graph holds the condition's kernels, the body's,
//! the freeze kernel and the copies of the next carry over the carry, on buffers of its own.
//! A run copies the carry in, launches the graph in batches between read-backs of the
//! predicate, and copies the carry out: a 10,000-step scan is 10,000 graph launches, not
//! 10,000 times the body's kernels and allocations.

use crate::fusion::Kernel;
use crate::graph::{buffer, captured, launch, place, record, slot, Slot};
use crate::in_place::{run_in_place, InPlace};
use crate::plan::Plan;
use crate::runtime::{scalar_of, Compiled, Value};
use cudarc::driver::{CudaGraph, CudaSlice, CudaStream, DevicePtr};
use quabla_abi::abi::AbiError;
use quabla_abi::TensorType;
use std::sync::Arc;

/// A loop's iteration graph and the buffers it works on.
pub struct LoopGraph {
    graph: CudaGraph,
    carry: Vec<CudaSlice<u8>>,
    /// The freeze kernel's results, copied over `carry` at the end of each iteration.
    _next: Vec<CudaSlice<u8>>,
    buffers: Vec<Option<CudaSlice<u8>>>,
    pred: Slot,
    pred_type: TensorType,
    carry_types: Vec<TensorType>,
}

// SAFETY: a `LoopGraph` lives in its program's `Mutex`, so the graph is used by one thread at
// a time, the external synchronization CUDA asks of graph objects.
unsafe impl Send for LoopGraph {}

/// The iteration graph of the loop `cond`/`body` (with its `freeze` kernel).
pub fn capture_loop(
    c: &Compiled,
    cond: &Plan,
    body: &Plan,
    freeze: &Kernel,
) -> Result<LoopGraph, AbiError> {
    let carry_types: Vec<TensorType> = cond.types[..cond.num_inputs].to_vec();
    let alloc = |types: &[TensorType]| {
        types
            .iter()
            .map(|t| c.gpu().alloc_output(t.size_bytes()))
            .collect::<Result<Vec<_>, _>>()
    };
    let (carry, mut next) = (alloc(&carry_types)?, alloc(&carry_types)?);
    let mut buffers = Vec::new();
    let carried = || (0..carry_types.len()).map(Slot::Input).collect::<Vec<_>>();
    let cond_placed = place(c, cond, carried(), &mut buffers)?;
    let body_placed = place(c, body, carried(), &mut buffers)?;
    let pred = slot(&cond_placed.slots, cond.outputs[0])?;
    let results = body
        .outputs
        .iter()
        .map(|&o| slot(&body_placed.slots, o))
        .collect::<Result<Vec<_>, _>>()?;
    let graph = c.gpu().with_capture_lane(|lane| {
        captured(lane.stream, || {
            record(c, lane, cond, &cond_placed, &carry, &mut buffers)?;
            record(c, lane, body, &body_placed, &carry, &mut buffers)?;
            let mut reads = vec![buffer(&pred, &carry, &buffers)?];
            for r in &results {
                reads.push(buffer(r, &carry, &buffers)?);
            }
            reads.extend(carry.iter());
            let mut writes: Vec<&mut CudaSlice<u8>> = next.iter_mut().collect();
            c.enqueue_on(lane, freeze, &reads, &mut writes)?;
            // The next carry over the carry: both buffers the graph's own, so a raw copy
            // between their addresses (the carry is read above, written only here).
            for ((n, t), b) in next.iter().zip(&carry_types).zip(&carry) {
                copy(lane.stream, n, b, t.size_bytes())?;
            }
            Ok(())
        })
    })?;
    Ok(LoopGraph {
        graph,
        carry,
        _next: next,
        buffers,
        pred,
        pred_type: cond.types[cond.outputs[0]].clone(),
        carry_types,
    })
}

/// One launch per iteration; the predicate read from its buffer.
struct Iterations<'a> {
    c: &'a Compiled,
    g: &'a LoopGraph,
    stream: &'a Arc<CudaStream>,
}

impl InPlace for Iterations<'_> {
    fn iterate(&mut self) -> Result<(), AbiError> {
        launch(&self.g.graph, self.stream)
    }

    fn going(&mut self) -> Result<bool, AbiError> {
        let b = buffer(&self.g.pred, &self.g.carry, &self.g.buffers)?;
        let bytes = self.c.gpu().download(b, self.g.pred_type.size_bytes())?;
        Ok(scalar_of(&bytes) != 0)
    }
}

impl LoopGraph {
    /// The loop from `carry` to its end: the carry copied in, iterations launched, the
    /// final carry copied out into fresh buffers.
    pub fn run(
        &mut self,
        c: &Compiled,
        stream: &Arc<CudaStream>,
        carry: &[Value],
    ) -> Result<Vec<Value>, AbiError> {
        let driver = |e: cudarc::driver::DriverError| {
            AbiError::internal(format!("a loop's CUDA graph: {e}"))
        };
        for ((v, b), t) in carry
            .iter()
            .zip(self.carry.iter_mut())
            .zip(&self.carry_types)
        {
            let size = t.size_bytes();
            if size > 0 {
                stream
                    .memcpy_dtod(&v.slice(0..size), &mut b.slice_mut(0..size))
                    .map_err(driver)?;
            }
        }
        run_in_place(&mut Iterations { c, g: self, stream })?;
        self.carry
            .iter()
            .zip(&self.carry_types)
            .map(|(b, t)| {
                let size = t.size_bytes();
                let mut out = c.gpu().alloc_output(size)?;
                if size > 0 {
                    stream
                        .memcpy_dtod(&b.slice(0..size), &mut out.slice_mut(0..size))
                        .map_err(driver)?;
                }
                Ok(Arc::new(out))
            })
            .collect()
    }
}

/// Copies `bytes` bytes from `from` to `to` on `stream` (a capturing one: the copy becomes a
/// node of the graph).
fn copy(
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
        .map_err(crate::graph::capturing)
}
