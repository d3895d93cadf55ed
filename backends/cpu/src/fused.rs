//! Running a fused group of elementwise nodes: tile by tile (`TILE` elements), the tiles in
//! parallel on rayon, no full-size temporaries for the values the group keeps inside.

use crate::elementwise::{self, View};
use crate::exec::get;
use crate::plan::{FusedGroup, GroupOperand, Plan};
use crate::pool;
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::{Node, Op, ValueId};
use quabla_abi::DType;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Elements per tile of a fused group.
const TILE: usize = 4096;

/// Groups up to this many elements run as one tile: their values fit in the core's cache
/// anyway, and the tile's pieces are the outputs, with no copy.
const ONE_TILE_MAX: usize = 16384;

/// Groups of fewer elements run their tiles on the calling thread: handing tiles to
/// rayon's workers costs a wake-up and a wait (microseconds, measured as half of a
/// 100x100 Hessian's time), more than a few tiles of work. The tiles are the same either
/// way, so the bits are too.
const PAR_MIN: usize = 1 << 15;

/// Evaluates an elementwise node over views of its operands.
pub(crate) fn eval_elementwise(node: &Node, args: &[View]) -> Storage {
    match &node.op {
        Op::Unary(u) => elementwise::unary(*u, args[0]),
        Op::Binary(b) => elementwise::binary(*b, args[0], args[1]),
        Op::Compare(d) => elementwise::compare(*d, args[0], args[1]),
        Op::Select => elementwise::select(args[0], args[1], args[2]),
        Op::Convert => elementwise::convert(args[0], node.results[0].dtype),
        Op::Bitcast => elementwise::bitcast(args[0], node.results[0].dtype),
        Op::Constant(_)
        | Op::Iota { .. }
        | Op::BroadcastInDim { .. }
        | Op::Reshape
        | Op::Transpose { .. }
        | Op::Slice { .. }
        | Op::Pad { .. }
        | Op::Concatenate { .. }
        | Op::Reverse { .. }
        | Op::Reduce { .. }
        | Op::Cumulative { .. }
        | Op::Sort { .. }
        | Op::DotGeneral(_)
        | Op::Gather(_)
        | Op::ScatterAdd(_)
        | Op::DynamicSlice { .. }
        | Op::DynamicUpdateSlice
        | Op::Cond { .. }
        | Op::While { .. }
        | Op::HostCallback { .. }
        | Op::Linalg(_)
        | Op::StopGradient
        | Op::CustomJvp { .. }
        | Op::CustomVjp { .. }
        | Op::CustomVjpLinear { .. }
        | Op::Checkpoint { .. }
        | Op::NamedAxis { .. }
        | Op::Scan { .. }
        | Op::BoundedWhile { .. }
        | Op::LinearSolve { .. } => unreachable!("only elementwise ops are fused"),
    }
}

/// Runs one tile `[start, end)` of a group, returning the exported values' pieces.
fn fused_tile(
    plan: &Plan,
    g: &FusedGroup,
    values: &[Option<Tensor>],
    start: usize,
    end: usize,
) -> Vec<Storage> {
    let mut local: Vec<Storage> = Vec::with_capacity(g.nodes.len());
    for (&ni, operands) in g.nodes.iter().zip(&g.operands) {
        let node = &plan.program.nodes[ni];
        let out = if let Op::BroadcastInDim { .. } = node.op {
            // The group planner admits only broadcasts that repeat their operand end to
            // end. A group-local operand has the group's length, as the result has: the
            // broadcast only adds axes of length 1 and keeps every element in place (a
            // splat of its first element would be right only for a one-element group).
            match operands[0] {
                GroupOperand::Local(k) => local[k].clone(),
                GroupOperand::Outer(v) => get(values, v).data.repeated(start, end),
            }
        } else {
            let args: Vec<View> = operands
                .iter()
                .map(|o| match *o {
                    GroupOperand::Local(k) => View::all(&local[k]),
                    GroupOperand::Outer(v) => View::of(&get(values, v).data, start, end),
                })
                .collect();
            eval_elementwise(node, &args)
        };
        local.push(out);
        for &k in &g.release_after[local.len() - 1] {
            // Dropping a storage returns its vector to this thread's pool.
            local[k] = Storage::Bool(Vec::new());
        }
    }
    g.export_positions
        .iter()
        .map(|&k| std::mem::replace(&mut local[k], Storage::Bool(Vec::new())))
        .collect()
}

/// Runs a group over its whole length: tiles in parallel on rayon, each tile copying its
/// pieces of the exported values into their outputs while the pieces are still in cache
/// (assembling the outputs afterwards would read every piece back from memory).
pub(crate) fn run_fused(plan: &Plan, g: &FusedGroup, values: &[Option<Tensor>]) -> Vec<Tensor> {
    let types: Vec<_> = g.exports.iter().map(|v| value_type(plan, *v)).collect();
    let ranges: Vec<(usize, usize)> = (0..g.len.div_ceil(TILE).max(1))
        .map(|t| (t * TILE, ((t + 1) * TILE).min(g.len)))
        .collect();
    if g.len <= ONE_TILE_MAX {
        let pieces = fused_tile(plan, g, values, 0, g.len);
        return types
            .into_iter()
            .zip(pieces)
            .map(|(ty, data)| Tensor::new(ty, data))
            .collect();
    }
    let mut outputs: Vec<Storage> = types.iter().map(|t| unwritten(t.dtype, g.len)).collect();
    let mut windows: Vec<_> = outputs
        .iter_mut()
        .map(|o| tile_windows(o, g.len).into_iter())
        .collect();
    let tiles: Vec<(usize, Vec<Window>)> = (0..ranges.len())
        .map(|t| (t, windows.iter_mut().filter_map(Iterator::next).collect()))
        .collect();
    let tile = |(t, windows): (usize, Vec<Window>)| -> Vec<usize> {
        let (s, e) = ranges[t];
        // Dropping the pieces afterwards hands their vectors back to the pool for the next tile.
        let pieces = fused_tile(plan, g, values, s, e);
        windows
            .into_iter()
            .zip(&pieces)
            .map(|(w, p)| w.fill(p))
            .collect()
    };
    let written: Vec<Vec<usize>> = if g.len < PAR_MIN {
        tiles.into_iter().map(tile).collect()
    } else {
        tiles.into_par_iter().map(tile).collect()
    };
    for k in 0..outputs.len() {
        let n: usize = written.iter().filter_map(|w| w.get(k)).sum();
        // A short or missing piece would leave elements unwritten: never expose them.
        assert_eq!(n, g.len, "fused tiles wrote {n} of {} elements", g.len);
    }
    types
        .into_iter()
        .zip(outputs)
        .map(|(ty, mut data)| {
            // SAFETY: the windows partition the first `g.len` elements, and the tiles
            // wrote all of them (checked above).
            unsafe { set_len(&mut data, g.len) };
            Tensor::new(ty, data)
        })
        .collect()
}

/// An empty vector of `dtype` with room for `n` elements, from the pool.
fn unwritten(dtype: DType, n: usize) -> Storage {
    match dtype {
        DType::Bool => Storage::Bool(pool::take(n)),
        DType::I32 => Storage::I32(pool::take(n)),
        DType::U32 => Storage::U32(pool::take(n)),
        DType::F32 => Storage::F32(pool::take(n)),
        DType::F64 => Storage::F64(pool::take(n)),
    }
}

/// One tile's part of an output's first `n` elements, not yet written.
enum Window<'a> {
    Bool(&'a mut [MaybeUninit<bool>]),
    I32(&'a mut [MaybeUninit<i32>]),
    U32(&'a mut [MaybeUninit<u32>]),
    F32(&'a mut [MaybeUninit<f32>]),
    F64(&'a mut [MaybeUninit<f64>]),
}

impl Window<'_> {
    /// Copies `piece` in; returns how many elements it wrote (fewer than the window's if
    /// the piece is short or of another dtype).
    fn fill(self, piece: &Storage) -> usize {
        fn copy<T: Copy>(dst: &mut [MaybeUninit<T>], src: &[T]) -> usize {
            let k = dst.len().min(src.len());
            dst[..k].write_copy_of_slice(&src[..k]);
            k
        }
        match (self, piece) {
            (Window::Bool(d), Storage::Bool(s)) => copy(d, s),
            (Window::I32(d), Storage::I32(s)) => copy(d, s),
            (Window::U32(d), Storage::U32(s)) => copy(d, s),
            (Window::F32(d), Storage::F32(s)) => copy(d, s),
            (Window::F64(d), Storage::F64(s)) => copy(d, s),
            _ => 0,
        }
    }
}

/// The first `n` elements of `out`'s spare room, cut into consecutive `TILE`-element windows.
fn tile_windows(out: &mut Storage, n: usize) -> Vec<Window<'_>> {
    macro_rules! cut {
        ($v:expr, $variant:ident) => {
            $v.spare_capacity_mut()[..n]
                .chunks_mut(TILE)
                .map(Window::$variant)
                .collect()
        };
    }
    match out {
        Storage::Bool(v) => cut!(v, Bool),
        Storage::I32(v) => cut!(v, I32),
        Storage::U32(v) => cut!(v, U32),
        Storage::F32(v) => cut!(v, F32),
        Storage::F64(v) => cut!(v, F64),
    }
}

/// # Safety
/// The first `n` elements of `s`'s vector must be initialised.
unsafe fn set_len(s: &mut Storage, n: usize) {
    // SAFETY: as the caller promises.
    unsafe {
        match s {
            Storage::Bool(v) => v.set_len(n),
            Storage::I32(v) => v.set_len(n),
            Storage::U32(v) => v.set_len(n),
            Storage::F32(v) => v.set_len(n),
            Storage::F64(v) => v.set_len(n),
        }
    }
}

fn value_type(plan: &Plan, v: ValueId) -> quabla_abi::TensorType {
    let n_in = plan.program.inputs.len();
    if v.index() < n_in {
        return plan.program.inputs[v.index()].clone();
    }
    let ni = plan.first_ids.partition_point(|f| f.index() <= v.index()) - 1;
    plan.program.nodes[ni].results[v.index() - plan.first_ids[ni].index()].clone()
}
