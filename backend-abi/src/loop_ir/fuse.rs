//! Element-loop fusion, a pass over a lowered [`Function`]: consecutive element loops over
//! the same index space become one loop (and so do loops with only independent work
//! between them, `reorder.rs`), a value one part stores and the next loads at the
//! same element passes in a register, and memory nothing reads any more is not written.
//! A chain of elementwise ops (a stencil's sums, an axpy after a matrix product) then
//! walks its operands once, as XLA's loop fusion does, instead of once per op. Last, the
//! levels of every loop nest that all its accesses step through evenly merge into one
//! (a contiguous run is one loop, whatever its rank).
//!
//! Only elementwise work is reordered, and only where every element is still computed
//! from the same operands by the same instructions, so the bits do not change. The
//! backend says which fused bodies it wants (a CPU emitter refuses one that would lose its
//! SIMD form, say).
//!
//! ```
//! use quabla_abi::loop_ir::{fuse, lower_while, Inst};
//! use quabla_abi::qir::Program;
//!
//! // y = (x + x) * x, twice an element loop, once fused.
//! let p = Program::parse(
//!     "program(%0: f32[64]) {
//!        %1 = while(%0) : f32[64] {
//!          cond(%0: f32[64]) {
//!            %1 = constant[value=[false]]() : bool[]
//!            return %1
//!          }
//!          body(%0: f32[64]) {
//!            %1 = add(%0, %0) : f32[64]
//!            %2 = mul(%1, %0) : f32[64]
//!            return %2
//!          }
//!        }
//!        return %1
//!      }",
//! )
//! .unwrap();
//! let mut f = lower_while(&p.nodes[0]).unwrap();
//! fuse(&mut f, &|_, _, _| true);
//! let loops = f.body.instructions().iter().filter(|i| matches!(i, Inst::Loop { .. })).count();
//! assert_eq!(loops, 1);
//! ```

use super::{ArrayId, ArrayRole, Block, ElementIndex, Function, IndexTerm, Inst, Reg};
use std::collections::{HashMap, HashSet};

/// Whether the backend takes `body` (the innermost body of a fused nest, its counter
/// `counter`) as one loop.
pub type Accept = dyn Fn(&Function, Reg, &Block) -> bool;

/// Fuses `f`'s element loops where `accept` takes the result, folds products a float sum
/// alone reads into the sum (`product_sums.rs`), drops stores to scratch memory nothing
/// reads or that a loop body's next iteration overwrites unread (`back_edge_stores.rs`),
/// and merges evenly stepped levels of every nest.
pub fn fuse(f: &mut Function, accept: &Accept) {
    let mut body = std::mem::take(&mut f.body);
    body.for_each_region_mut(|b| fuse_block(b, f, accept));
    f.body = body;
    product_sums::sum_products_in_place(f);
    drop_dead_stores(f);
    back_edge_stores::drop_stores_dead_across_iterations(f);
    collapse_levels(&mut f.body);
}

/// A loop nest: its counters and trip counts, outermost first, and its innermost body.
#[derive(Clone)]
struct Nest {
    counters: Vec<Reg>,
    counts: Vec<u64>,
    body: Block,
}

impl Nest {
    /// The nest `inst` starts, if it is an element loop.
    fn of(inst: &Inst) -> Option<Nest> {
        let mut nest = Nest {
            counters: Vec::new(),
            counts: Vec::new(),
            body: Block::default(),
        };
        let mut at = inst;
        while let Inst::Loop {
            counter,
            count,
            body,
        } = at
        {
            nest.counters.push(*counter);
            nest.counts.push(*count);
            match &body.0[..] {
                [inner @ Inst::Loop { .. }] => at = inner,
                _ => {
                    nest.body = body.clone();
                    return Some(nest);
                }
            }
        }
        None
    }

    fn into_inst(self) -> Inst {
        // `Nest::of` builds nests of one level or more.
        let last = self.counters.len() - 1;
        let mut inst = Inst::Loop {
            counter: self.counters[last],
            count: self.counts[last],
            body: self.body,
        };
        for (counter, count) in self.counters[..last].iter().zip(&self.counts).rev() {
            inst = Inst::Loop {
                counter: *counter,
                count: *count,
                body: Block(vec![inst]),
            };
        }
        inst
    }
}

/// The registers an instruction of an element-loop body reads and writes; `None` for one
/// that does not belong in one (control flow, a library call), which stops fusion.
fn flat_regs(inst: &Inst) -> Option<(Vec<Reg>, Option<Reg>)> {
    let starts = |i: &ElementIndex| i.terms.iter().map(|t| t.start).collect::<Vec<_>>();
    Some(match inst {
        Inst::Const { dst, .. } => (vec![], Some(*dst)),
        Inst::Unary { dst, x, .. }
        | Inst::Convert { dst, x }
        | Inst::Bitcast { dst, x }
        | Inst::Copy { dst, src: x } => (vec![*x], Some(*dst)),
        Inst::Binary { dst, a, b, .. } | Inst::Compare { dst, a, b, .. } => {
            (vec![*a, *b], Some(*dst))
        }
        Inst::Select {
            dst,
            pred,
            on_true,
            on_false,
        } => (vec![*pred, *on_true, *on_false], Some(*dst)),
        Inst::Load { dst, index } => (starts(index), Some(*dst)),
        Inst::Store { index, src } => {
            let mut r = starts(index);
            r.push(*src);
            (r, None)
        }
        Inst::Loop { .. }
        | Inst::Dot { .. }
        | Inst::Reduce { .. }
        | Inst::Linalg { .. }
        | Inst::While { .. }
        | Inst::Switch { .. } => return None,
    })
}

/// `inst` with every register it reads replaced through `map`.
fn rename_reads(inst: &mut Inst, map: &HashMap<Reg, Reg>) {
    let m = |r: &mut Reg| {
        if let Some(to) = map.get(r) {
            *r = *to;
        }
    };
    let terms = |i: &mut ElementIndex| i.terms.iter_mut().for_each(|t| m(&mut t.start));
    match inst {
        Inst::Const { .. } => {}
        Inst::Unary { x, .. }
        | Inst::Convert { x, .. }
        | Inst::Bitcast { x, .. }
        | Inst::Copy { src: x, .. } => m(x),
        Inst::Binary { a, b, .. } | Inst::Compare { a, b, .. } => {
            m(a);
            m(b);
        }
        Inst::Select {
            pred,
            on_true,
            on_false,
            ..
        } => {
            m(pred);
            m(on_true);
            m(on_false);
        }
        Inst::Load { index, .. } => terms(index),
        Inst::Store { index, src } => {
            terms(index);
            m(src);
        }
        // Never inside an element loop (`flat_regs` stops fusion first).
        Inst::Loop { .. }
        | Inst::Dot { .. }
        | Inst::Reduce { .. }
        | Inst::Linalg { .. }
        | Inst::While { .. }
        | Inst::Switch { .. } => {}
    }
}

/// The registers a body reads and writes, if every instruction of it is flat.
fn body_regs(b: &Block) -> Option<(HashSet<Reg>, HashSet<Reg>)> {
    let (mut reads, mut writes) = (HashSet::new(), HashSet::new());
    for inst in &b.0 {
        let (r, w) = flat_regs(inst)?;
        reads.extend(r);
        writes.extend(w);
    }
    Some((reads, writes))
}

/// Whether `i` names a different element on every trip of the nest (its counters' terms
/// step over each other's whole spans), so two bodies touching it touch element `k` only
/// on trip `k`.
fn injective(i: &ElementIndex, counters: &[Reg]) -> bool {
    let mut terms: Vec<&IndexTerm> = i
        .terms
        .iter()
        .filter(|t| counters.contains(&t.start))
        .collect();
    if terms.len() != counters.len() {
        return false;
    }
    terms.sort_by_key(|t| t.stride);
    let mut span = 0u64;
    for t in terms {
        if t.stride <= span {
            return false;
        }
        span = span.saturating_add(t.stride.saturating_mul(t.max));
    }
    true
}

/// Whether running `b` right after `a` trip by trip computes what running all of `a` and
/// then all of `b` computes: shared registers none, and every element one writes and the
/// other touches the same element on the same trip.
fn may_interleave(a: &Block, b: &Block, counters: &[Reg]) -> bool {
    let (Some((ra, wa)), Some((rb, wb))) = (body_regs(a), body_regs(b)) else {
        return false;
    };
    if !wa.is_disjoint(&rb) || !wb.is_disjoint(&ra) || !wa.is_disjoint(&wb) {
        return false;
    }
    let accesses = |blk: &Block| -> Vec<(bool, ElementIndex)> {
        blk.0
            .iter()
            .filter_map(|i| match i {
                Inst::Load { index, .. } => Some((false, index.clone())),
                Inst::Store { index, .. } => Some((true, index.clone())),
                _ => None,
            })
            .collect()
    };
    let (xa, xb) = (accesses(a), accesses(b));
    xa.iter().all(|(sa, ia)| {
        xb.iter().all(|(sb, ib)| {
            ia.array != ib.array || !(sa | sb) || (ia == ib && injective(ia, counters))
        })
    })
}

/// A register instruction between two nests that may move above the first: it reads
/// nothing the nest writes, and the nest neither reads nor writes what it writes (`nr`,
/// `nw`: the registers the nest's body reads and writes).
fn may_hoist(inst: &Inst, nest: &Nest, (nr, nw): &(HashSet<Reg>, HashSet<Reg>)) -> bool {
    let Some((reads, Some(dst))) = flat_regs(inst) else {
        return false;
    };
    let clash = reads.iter().any(|r| nw.contains(r)) || nr.contains(&dst) || nw.contains(&dst);
    let memory = match inst {
        Inst::Load { index, .. } => nest
            .body
            .0
            .iter()
            .any(|i| matches!(i, Inst::Store { index: s, .. } if s.array == index.array)),
        _ => false,
    };
    !clash && !memory && !nest.counters.contains(&dst)
}

/// Fuses the nests of one block (not of blocks nested in it): each with the nest before it,
/// or else with an earlier one past independent work ([`reorder`]).
fn fuse_block(block: &mut Block, f: &Function, accept: &Accept) {
    let mut out: Vec<Inst> = Vec::with_capacity(block.0.len());
    // The position in `out` of the last nest, and the register instructions after it.
    let mut last: Option<usize> = None;
    for inst in std::mem::take(&mut block.0) {
        let Some(next) = Nest::of(&inst) else {
            out.push(inst);
            continue;
        };
        if let Some(at) = last {
            if let Some(fused) = try_fuse(&out[at..], next.clone(), f, accept) {
                out.truncate(at);
                out.extend(fused.hoisted);
                last = Some(out.len());
                out.push(fused.nest.into_inst());
                continue;
            }
        }
        if reorder::fuse_into_earlier(&mut out, &next, f, accept) {
            continue;
        }
        last = Some(out.len());
        out.push(inst);
    }
    block.0 = out;
}

struct Fused {
    hoisted: Vec<Inst>,
    nest: Nest,
}

/// `tail[0]` (a nest) fused with `next`, the instructions between them hoisted above; `None`
/// where that changes what is computed or the backend refuses the fused body.
fn try_fuse(tail: &[Inst], next: Nest, f: &Function, accept: &Accept) -> Option<Fused> {
    let first = Nest::of(&tail[0])?;
    if first.counts != next.counts {
        return None;
    }
    let between = &tail[1..];
    let regs = body_regs(&first.body)?;
    if !between.iter().all(|i| may_hoist(i, &first, &regs)) {
        return None;
    }
    let renamed: HashMap<Reg, Reg> = next
        .counters
        .iter()
        .copied()
        .zip(first.counters.iter().copied())
        .collect();
    let mut second = next.body;
    second.0.iter_mut().for_each(|i| rename_reads(i, &renamed));
    if !may_interleave(&first.body, &second, &first.counters) {
        return None;
    }
    let mut body = first.body.clone();
    body.0.extend(second.0);
    let body = forward_stores(body);
    let innermost = *first.counters.last()?;
    if !accept(f, innermost, &body) {
        return None;
    }
    Some(Fused {
        hoisted: between.to_vec(),
        nest: Nest {
            counters: first.counters,
            counts: first.counts,
            body,
        },
    })
}

/// A load of the element the same trip stored just before becomes the stored register, and
/// a store the same trip overwrites before anything loads the array goes.
fn forward_stores(body: Block) -> Block {
    let mut out: Vec<Option<Inst>> = Vec::with_capacity(body.0.len());
    // Per array: the last store of this trip (its position in `out`, element, register),
    // and whether a load may have read it since.
    let mut stored: HashMap<ArrayId, (usize, ElementIndex, Reg, bool)> = HashMap::new();
    let mut renamed: HashMap<Reg, Reg> = HashMap::new();
    for mut inst in body.0 {
        rename_reads(&mut inst, &renamed);
        match &inst {
            Inst::Load { dst, index } => match stored.get_mut(&index.array) {
                Some((_, at, src, _)) if at == index => {
                    renamed.insert(*dst, *src);
                    continue;
                }
                Some((_, _, _, read)) => *read = true,
                None => {}
            },
            Inst::Store { index, src } => {
                if let Some((k, at, _, false)) = stored.get(&index.array) {
                    if at == index {
                        out[*k] = None;
                    }
                }
                stored.insert(index.array, (out.len(), index.clone(), *src, false));
            }
            _ => {}
        }
        out.push(Some(inst));
    }
    Block(out.into_iter().flatten().collect())
}

/// Drops the stores to scratch arrays nothing reads (values fusion now passes in
/// registers), then the instructions of element-loop bodies whose results nothing reads,
/// then loops left with no store.
fn drop_dead_stores(f: &mut Function) {
    let instructions = f.body.instructions();
    let mut read: HashSet<ArrayId> = HashSet::new();
    let mut reg_reads: HashMap<Reg, usize> = HashMap::new();
    for inst in &instructions {
        read.extend(inst.arrays_read());
        for r in inst.reads() {
            *reg_reads.entry(r).or_default() += 1;
        }
    }
    let dead: HashSet<ArrayId> = (0..f.arrays.len())
        .map(|a| ArrayId(a as u32))
        .filter(|a| f.arrays[a.index()].role == ArrayRole::Scratch && !read.contains(a))
        // A result is read by the caller.
        .filter(|a| !f.is_output(*a))
        .collect();
    if dead.is_empty() {
        return;
    }
    f.body.for_each_region_mut(|block| {
        block.0.retain_mut(|inst| match inst {
            Inst::Store { index, .. } => !dead.contains(&index.array),
            Inst::Loop { .. } => prune_nest(inst, &dead, &mut reg_reads),
            _ => true,
        })
    });
}

/// Prunes a nest's dead stores and the work only they read; whether anything is left.
fn prune_nest(inst: &mut Inst, dead: &HashSet<ArrayId>, reads: &mut HashMap<Reg, usize>) -> bool {
    let mut at = inst;
    while let Inst::Loop { body, .. } = at {
        if let [Inst::Loop { .. }] = &body.0[..] {
            at = &mut body.0[0];
            continue;
        }
        // Backwards, so an instruction's readers are judged before it.
        let mut kept: Vec<Inst> = Vec::with_capacity(body.0.len());
        for inst in std::mem::take(&mut body.0).into_iter().rev() {
            let live = match &inst {
                Inst::Store { index, .. } => !dead.contains(&index.array),
                other => match flat_regs(other) {
                    Some((_, Some(dst))) => reads.get(&dst).is_some_and(|n| *n > 0),
                    _ => true,
                },
            };
            if live {
                kept.push(inst);
            } else {
                for r in inst.reads() {
                    if let Some(n) = reads.get_mut(&r) {
                        *n = n.saturating_sub(1);
                    }
                }
            }
        }
        kept.reverse();
        let any_store = kept.iter().any(|i| matches!(i, Inst::Store { .. }));
        body.0 = kept;
        return any_store;
    }
    true
}

/// Merges adjacent levels of every nest that every access steps through evenly (the
/// outer level's step is the inner level's times its trip count), innermost first.
fn collapse_levels(body: &mut Block) {
    body.for_each_region_mut(|block| {
        for inst in block.0.iter_mut() {
            if let Some(nest) = Nest::of(inst) {
                *inst = collapse(nest).into_inst();
            }
        }
    });
}

fn collapse(mut nest: Nest) -> Nest {
    let indices = |b: &Block| -> Vec<ElementIndex> {
        b.0.iter()
            .filter_map(|i| match i {
                Inst::Load { index, .. } | Inst::Store { index, .. } => Some(index.clone()),
                _ => None,
            })
            .collect()
    };
    let step = |i: &ElementIndex, c: Reg| -> Option<u64> {
        let mut terms = i.terms.iter().filter(|t| t.start == c);
        let s = terms.next().map_or(0, |t| t.stride);
        terms.next().is_none().then_some(s)
    };
    let mut d = nest.counters.len();
    while d >= 2 {
        d -= 1;
        let (outer, inner, n) = (nest.counters[d - 1], nest.counters[d], nest.counts[d]);
        let all = indices(&nest.body);
        let even = all.iter().all(|i| match (step(i, outer), step(i, inner)) {
            (Some(o), Some(s)) => o == s.saturating_mul(n),
            _ => false,
        });
        // The body must not read the counters as values, only in indices.
        let as_value = nest.body.0.iter().any(|i| {
            !matches!(i, Inst::Load { .. } | Inst::Store { .. })
                && i.reads().iter().any(|r| *r == outer || *r == inner)
        });
        if !even || as_value {
            continue;
        }
        let count = nest.counts[d - 1].saturating_mul(n);
        for inst in nest.body.0.iter_mut() {
            if let Inst::Load { index, .. } | Inst::Store { index, .. } = inst {
                index.terms.retain(|t| t.start != outer);
                for t in index.terms.iter_mut().filter(|t| t.start == inner) {
                    t.max = count - 1;
                }
            }
        }
        nest.counters.remove(d - 1);
        nest.counts.remove(d - 1);
        nest.counts[d - 1] = count;
    }
    nest
}

mod back_edge_stores;
mod product_sums;
mod reorder;
#[cfg(test)]
mod tests;
