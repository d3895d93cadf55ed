//! A `while` loop of kernels alone as one CUDA graph per iteration (`in_place.rs` says why
//! the carry can be updated in place): the graph holds the condition's kernels, the body's,
//! the freeze kernel (writing the windows of a carry updated in a window in place) and the
//! copies of the next carry over the carry, on buffers of its own.
//! A run copies the carry in, launches the graph in batches between read-backs of the
//! predicate, and copies the carry out: a 10,000-step scan is 10,000 graph launches, not
//! 10,000 times the body's kernels and allocations.

use crate::graph::{buffer, captured, copy, launch, place, record, slot, Slot};
use crate::in_place::{run_in_place, Carried, InPlace, InPlaceLoop};
use crate::plan::Plan;
use crate::runtime::{scalar_of, Compiled, Value};
use cudarc::driver::{CudaGraph, CudaSlice, CudaStream};
use quabla_abi::abi::AbiError;
use quabla_abi::TensorType;
use std::sync::Arc;

/// A loop's iteration graph and the buffers it works on.
pub struct LoopGraph {
    graph: CudaGraph,
    carry: Vec<CudaSlice<u8>>,
    /// The freeze kernel's results (one per [`Carried::Next`] carry), copied over `carry`
    /// at the end of each iteration.
    _next: Vec<CudaSlice<u8>>,
    buffers: Vec<Option<CudaSlice<u8>>>,
    pred: Slot,
    pred_type: TensorType,
    carry_types: Vec<TensorType>,
}

// SAFETY: a `LoopGraph` lives in its program's `Mutex`, so the graph is used by one thread at
// a time, the external synchronization CUDA asks of graph objects.
unsafe impl Send for LoopGraph {}

/// The iteration graph of the loop `cond`/`body`, run in place as `in_place` says.
pub fn capture_loop(
    c: &Compiled,
    cond: &Plan,
    body: &Plan,
    in_place: &InPlaceLoop,
) -> Result<LoopGraph, AbiError> {
    let carry_types: Vec<TensorType> = cond.types[..cond.num_inputs].to_vec();
    let body = in_place.body(body);
    let next_of: Vec<usize> = in_place.next().collect();
    let alloc = |of: &[usize]| {
        of.iter()
            .map(|&j| c.gpu().alloc_output(carry_types[j].size_bytes()))
            .collect::<Result<Vec<_>, _>>()
    };
    let all: Vec<usize> = (0..carry_types.len()).collect();
    let (mut carry, mut next) = (alloc(&all)?, alloc(&next_of)?);
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
            // The windows' carries are written in place: borrowed apart from the rest,
            // which the freeze kernel only reads (`carried.rs` sees that no read is theirs).
            let (mut windows, rest) = split_windows(&mut carry, in_place);
            let reads = in_place.freeze_reads(
                operand(&pred, &rest, &buffers)?,
                results.len(),
                |j| {
                    results
                        .get(j)
                        .ok_or_else(|| AbiError::internal("a body result out of range"))
                        .and_then(|r| operand(r, &rest, &buffers))
                },
                |j| {
                    rest.get(j)
                        .copied()
                        .flatten()
                        .ok_or_else(|| AbiError::internal("a carry out of range"))
                },
            )?;
            let mut writes: Vec<&mut CudaSlice<u8>> = next.iter_mut().collect();
            writes.append(&mut windows);
            c.enqueue_on(lane, &in_place.freeze, &reads, &mut writes)?;
            // Each next carry over its carry: both buffers the graph's own, so a raw copy
            // between their addresses (the carry is read above, written only here).
            for (n, &j) in next.iter().zip(&next_of) {
                copy(lane.stream, n, &carry[j], carry_types[j].size_bytes())?;
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

/// The buffer of `slot` for the freeze kernel to read: a carry from `rest` (a window's
/// carry is not there: `carried.rs` sees that none is read), else one of `buffers`.
fn operand<'a>(
    slot: &'a Slot,
    rest: &[Option<&'a CudaSlice<u8>>],
    buffers: &'a [Option<CudaSlice<u8>>],
) -> Result<&'a CudaSlice<u8>, AbiError> {
    match slot {
        Slot::Input(j) => rest
            .get(*j)
            .copied()
            .flatten()
            .ok_or_else(|| AbiError::internal("a freeze kernel would read a window's carry")),
        Slot::Constant(_) | Slot::Buffer(_) => buffer(slot, &[], buffers),
    }
}

/// The carries `in_place` writes in a window, mutably and in carry order, and the others
/// by index (`None` at a window).
#[allow(clippy::type_complexity)]
fn split_windows<'a>(
    carry: &'a mut [CudaSlice<u8>],
    in_place: &InPlaceLoop,
) -> (Vec<&'a mut CudaSlice<u8>>, Vec<Option<&'a CudaSlice<u8>>>) {
    let (mut windows, mut rest) = (Vec::new(), Vec::new());
    for (j, b) in carry.iter_mut().enumerate() {
        if matches!(in_place.carried.get(j), Some(Carried::Window { .. })) {
            windows.push(b);
            rest.push(None);
        } else {
            rest.push(Some(&*b));
        }
    }
    (windows, rest)
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
