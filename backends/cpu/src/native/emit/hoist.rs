//! Loop-invariant address arithmetic, done once before each element loop instead of once
//! per element: an element index's clamped dynamic starts, outer counters and base pointer
//! were most of an inner loop's instructions (the RNN gradient's 64x64 weight
//! accumulation: 30 x86 instructions per four lanes, 16 after, 4 of them the hoisted
//! addresses' stack loads).
//!
//! Only the address moves: every load and store still happens where it did, so the bits
//! cannot change.
//!
//! Each hoisted address goes through a stack slot: Cranelift's e-graph places a pure value
//! next to its use (rematerialising `x + constant`, and with it everything computed from
//! it), which put the whole computation back inside the loop; a stack load is not pure,
//! so the computation stays before the loop and each trip pays one load.

use super::{element_bytes, Emitter};
use cranelift_codegen::ir::{InstBuilder, StackSlot, StackSlotData, StackSlotKind, Value};
use quabla_abi::loop_ir::{Block, ElementIndex, IndexTerm, Inst, Reg};
use std::collections::HashMap;

/// An element index's address without the terms that move inside the loop being emitted:
/// `base + (offset + sum of the fixed terms) * bytes`, and which terms those were (bit
/// `k` for term `k`).
#[derive(Clone, Copy)]
pub(super) struct Hoisted {
    pre: StackSlot,
    fixed: u64,
}

/// What [`Emitter::hoist_addresses`] replaced, for [`Emitter::restore_addresses`].
pub(super) type Saved = Vec<(usize, Option<Hoisted>)>;

/// The key of an element index: where it lives in the function being emitted (which
/// outlives the emitter's use of it).
fn key(index: &ElementIndex) -> usize {
    index as *const ElementIndex as usize
}

impl Emitter<'_, '_> {
    /// Before an element loop over `counter`: each element index in `body` (nested loops
    /// included) gets the part of its address that no trip changes, computed here.
    pub(super) fn hoist_addresses(&mut self, counter: Reg, body: &Block) -> Saved {
        let mut moves: HashMap<Reg, bool> = HashMap::new();
        let mut saved = Vec::new();
        for inst in body.instructions() {
            let index = match inst {
                Inst::Load { index, .. } | Inst::Store { index, .. } => index,
                _ => continue,
            };
            if index.terms.len() > 64 {
                continue;
            }
            let mut fixed = 0u64;
            for (k, t) in index.terms.iter().enumerate() {
                let moving = *moves
                    .entry(t.start)
                    .or_insert_with(|| t.start == counter || body.writes(t.start));
                if !moving {
                    fixed |= 1 << k;
                }
            }
            // With no fixed term the address is the base plus moving terms: nothing to
            // save, and a stack load to pay.
            if fixed == 0 {
                continue;
            }
            let p = self.pointer;
            let mut at = self.b.ins().iconst(p, index.offset as i64);
            for (k, t) in index.terms.iter().enumerate() {
                if fixed & (1 << k) != 0 {
                    let s = self.term(t);
                    at = self.b.ins().iadd(at, s);
                }
            }
            let bytes = element_bytes(self.f.arrays[index.array.index()].dtype);
            let at = self.b.ins().imul_imm_s(at, bytes);
            let pre = self.b.ins().iadd(self.bases[index.array.index()], at);
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                p.bytes(),
                3,
            ));
            self.b.ins().stack_store(p, pre, slot, 0);
            let pre = slot;
            let old = self.hoisted.insert(key(index), Hoisted { pre, fixed });
            saved.push((key(index), old));
        }
        saved
    }

    /// Undoes [`Emitter::hoist_addresses`] once its loop is emitted.
    pub(super) fn restore_addresses(&mut self, saved: Saved) {
        for (k, old) in saved.into_iter().rev() {
            match old {
                Some(h) => self.hoisted.insert(k, h),
                None => self.hoisted.remove(&k),
            };
        }
    }

    /// The address of element `index`: `base + (offset + sum clamp(start, 0, max) *
    /// stride) * element size` in the pointer width (`Function::check` bounds it by the
    /// array), from its hoisted part if it has one plus its other terms.
    pub(super) fn address(&mut self, index: &ElementIndex) -> Value {
        let bytes = element_bytes(self.f.arrays[index.array.index()].dtype);
        if let Some(h) = self.hoisted.get(&key(index)).copied() {
            let mut at = self
                .b
                .ins()
                .stack_load(self.pointer, self.pointer, h.pre, 0);
            for (k, t) in index.terms.iter().enumerate() {
                if h.fixed & (1 << k) == 0 {
                    let s = self.term(t);
                    let s = self.b.ins().imul_imm_s(s, bytes);
                    at = self.b.ins().iadd(at, s);
                }
            }
            return at;
        }
        let p = self.pointer;
        let mut at = self.b.ins().iconst(p, index.offset as i64);
        for t in &index.terms {
            let s = self.term(t);
            at = self.b.ins().iadd(at, s);
        }
        let at = self.b.ins().imul_imm_s(at, bytes);
        self.b.ins().iadd(self.bases[index.array.index()], at)
    }

    /// `clamp(start, 0, max) * stride` in elements, pointer-sized.
    fn term(&mut self, t: &IndexTerm) -> Value {
        let p = self.pointer;
        let s = self.get(t.start);
        let s = self.b.ins().sextend(p, s);
        // An enclosing element loop's counter is in [0, count), inside the clamp
        // (`Function::check`: only the loop writes it).
        let in_range = self.counters.get(&t.start).is_some_and(|&n| n <= t.max + 1);
        let s = if in_range {
            s
        } else {
            let zero = self.b.ins().iconst(p, 0);
            let s = self.b.ins().smax(s, zero);
            let max = self.b.ins().iconst(p, t.max as i64);
            self.b.ins().smin(s, max)
        };
        self.b.ins().imul_imm_s(s, t.stride as i64)
    }
}
