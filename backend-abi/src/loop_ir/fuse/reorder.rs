//! Fusion across independent work: a nest may join an earlier nest of the same index space
//! when everything between them neither feeds it nor is fed by it. Forward mode traces each
//! op's primal and then its tangent, so a chain over the primal's index space and a chain
//! over the tangents' alternate; XLA fuses over the dataflow graph, where that order does
//! not matter. Only independent work changes places, so every value keeps its bits.

use super::{body_regs, flat_regs, try_fuse, Accept, Nest};
use crate::loop_ir::{ArrayId, Function, Inst, Reg};
use std::collections::HashSet;

/// How many instructions back a nest looks for a partner: the search is quadratic, and
/// the partners this serves (a primal and its tangent) are a few instructions apart.
const REACH: usize = 32;

/// What a nest's body reads and writes, registers (counters included) and arrays.
struct Footprint {
    reads: HashSet<Reg>,
    writes: HashSet<Reg>,
    loads: HashSet<ArrayId>,
    stores: HashSet<ArrayId>,
}

impl Footprint {
    fn of_nest(n: &Nest) -> Option<Footprint> {
        let (reads, mut writes) = body_regs(&n.body)?;
        writes.extend(n.counters.iter().copied());
        let mut fp = Footprint {
            reads,
            writes,
            loads: HashSet::new(),
            stores: HashSet::new(),
        };
        for i in &n.body.0 {
            fp.loads.extend(i.arrays_read());
            fp.stores.extend(i.arrays_written());
        }
        Some(fp)
    }

    /// Of one instruction outside element loops: a nest or a register instruction. `None`
    /// for what nothing moves past: control flow, and library calls (a sum after a loop
    /// may read its factors where the loop leaves them, `product_sums.rs`, which a nest
    /// moved above the sum could overwrite).
    fn of_inst(inst: &Inst) -> Option<Footprint> {
        if let Some(n) = Nest::of(inst) {
            return Footprint::of_nest(&n);
        }
        let (reads, dst) = flat_regs(inst)?;
        Some(Footprint {
            reads: reads.into_iter().collect(),
            writes: dst.into_iter().collect(),
            loads: inst.arrays_read().into_iter().collect(),
            stores: inst.arrays_written().into_iter().collect(),
        })
    }

    /// Whether the two may run in either order.
    fn independent(&self, other: &Footprint) -> bool {
        self.writes.is_disjoint(&other.reads)
            && self.writes.is_disjoint(&other.writes)
            && self.reads.is_disjoint(&other.writes)
            && self.stores.is_disjoint(&other.loads)
            && self.stores.is_disjoint(&other.stores)
            && self.loads.is_disjoint(&other.stores)
    }
}

/// Fuses `next` into the latest nest of `out` it may join, looking back past instructions
/// independent of it; whether it did (`out` is unchanged when not).
pub(super) fn fuse_into_earlier(
    out: &mut [Inst],
    next: &Nest,
    f: &Function,
    accept: &Accept,
) -> bool {
    let Some(mine) = Footprint::of_nest(next) else {
        return false;
    };
    for at in (out.len().saturating_sub(REACH)..out.len()).rev() {
        if let Some(partner) = Nest::of(&out[at]) {
            if partner.counts == next.counts {
                if let Some(fused) = try_fuse(&out[at..=at], next.clone(), f, accept) {
                    out[at] = fused.nest.into_inst();
                    return true;
                }
            }
        }
        match Footprint::of_inst(&out[at]) {
            Some(theirs) if mine.independent(&theirs) => {}
            _ => return false,
        }
    }
    false
}
