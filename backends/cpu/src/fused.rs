//! Running a fused group of elementwise nodes: tile by tile (`TILE` elements), the tiles in
//! parallel on rayon, no full-size temporaries for the values the group keeps inside.

use crate::elementwise::{self, View};
use crate::exec::get;
use crate::plan::{FusedGroup, GroupOperand, Plan};
use crate::pool::{self, Pooled};
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::{Node, Op, ValueId};
use quabla_abi::DType;
use rayon::prelude::*;

/// Elements per tile of a fused group.
const TILE: usize = 4096;

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
        | Op::DotGeneral(_)
        | Op::Gather(_)
        | Op::ScatterAdd(_)
        | Op::DynamicSlice { .. }
        | Op::DynamicUpdateSlice
        | Op::Cond { .. }
        | Op::While { .. }
        | Op::Linalg(_)
        | Op::StopGradient
        | Op::CustomJvp { .. }
        | Op::CustomVjp { .. }
        | Op::CustomVjpLinear { .. }
        | Op::Checkpoint { .. }
        | Op::Scan { .. }
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
            // The group planner admits only one-element broadcasts.
            match operands[0] {
                GroupOperand::Local(k) => local[k].splat(end - start),
                GroupOperand::Outer(v) => get(values, v).data.splat(end - start),
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

/// Runs a group over its whole length: tiles in parallel on rayon, each exported value
/// assembled from the tiles' pieces.
pub(crate) fn run_fused(plan: &Plan, g: &FusedGroup, values: &[Option<Tensor>]) -> Vec<Tensor> {
    let ranges: Vec<(usize, usize)> = (0..g.len.div_ceil(TILE).max(1))
        .map(|t| (t * TILE, ((t + 1) * TILE).min(g.len)))
        .collect();
    if ranges.len() == 1 {
        let pieces = fused_tile(plan, g, values, 0, g.len);
        return g
            .exports
            .iter()
            .zip(pieces)
            .map(|(v, data)| Tensor::new(value_type(plan, *v), data))
            .collect();
    }
    if let [v] = g.exports[..] {
        let ty = value_type(plan, v);
        let tile = |s: usize, e: usize| fused_tile(plan, g, values, s, e).pop();
        return vec![Tensor::new(ty.clone(), gather_one(ty.dtype, g.len, tile))];
    }
    let tile = |(s, e): &(usize, usize)| fused_tile(plan, g, values, *s, *e);
    let mut pieces: Vec<Vec<Storage>> = if g.len < PAR_MIN {
        ranges.iter().map(tile).collect()
    } else {
        ranges.par_iter().map(tile).collect()
    };
    g.exports
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let ty = value_type(plan, *v);
            let parts: Vec<Storage> = pieces
                .iter_mut()
                .map(|p| std::mem::replace(&mut p[k], Storage::Bool(Vec::new())))
                .collect();
            Tensor::new(ty.clone(), Storage::concat(ty.dtype, &parts))
        })
        .collect()
}

/// The one exported value of a group, each tile copying its piece into the output while the
/// piece is still in cache (a concatenation afterwards would read every piece back from
/// memory).
fn gather_one(
    dtype: DType,
    n: usize,
    tile: impl Fn(usize, usize) -> Option<Storage> + Sync,
) -> Storage {
    macro_rules! gather {
        ($variant:ident) => {
            Storage::$variant(write_tiles(n, &tile, |p| match View::all(p) {
                View::$variant(v) => v,
                _ => &[],
            }))
        };
    }
    match dtype {
        DType::Bool => gather!(Bool),
        DType::I32 => gather!(I32),
        DType::U32 => gather!(U32),
        DType::F32 => gather!(F32),
        DType::F64 => gather!(F64),
    }
}

/// An `n`-element vector whose tile `[s, e)` (consecutive `TILE`-element ranges) holds the
/// elements of `piece(s, e)`, the tiles in parallel (from `PAR_MIN` elements).
fn write_tiles<T: Pooled + Send + Sync>(
    n: usize,
    piece: &(impl Fn(usize, usize) -> Option<Storage> + Sync),
    elements: impl Fn(&Storage) -> &[T] + Sync,
) -> Vec<T> {
    let mut out = pool::take(n);
    let tile = |(t, dst): (usize, &mut [std::mem::MaybeUninit<T>])| {
        let s = t * TILE;
        // Dropping the piece afterwards hands its vector back to the pool for the next tile.
        let Some(p) = piece(s, s + dst.len()) else {
            return 0;
        };
        let v = elements(&p);
        let k = v.len().min(dst.len());
        dst[..k].write_copy_of_slice(&v[..k]);
        k
    };
    let spare = &mut out.spare_capacity_mut()[..n];
    let written: usize = if n < PAR_MIN {
        spare.chunks_mut(TILE).enumerate().map(tile).sum()
    } else {
        spare.par_chunks_mut(TILE).enumerate().map(tile).sum()
    };
    // A short or missing piece would leave elements unwritten: never expose them.
    assert_eq!(written, n, "fused tiles wrote {written} of {n} elements");
    // SAFETY: the chunks partition `0..n` and together wrote all `n` elements.
    unsafe { out.set_len(n) };
    out
}

fn value_type(plan: &Plan, v: ValueId) -> quabla_abi::TensorType {
    let n_in = plan.program.inputs.len();
    if v.index() < n_in {
        return plan.program.inputs[v.index()].clone();
    }
    let ni = plan.first_ids.partition_point(|f| f.index() <= v.index()) - 1;
    plan.program.nodes[ni].results[v.index() - plan.first_ids[ni].index()].clone()
}
