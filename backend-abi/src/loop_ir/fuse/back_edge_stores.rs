//! Stores dead across a loop's back edge: in a `while` body, the last nest to touch a
//! scratch array may store elements that nothing reads before the next iteration's first
//! nest overwrites the whole array. CG writes `-alpha * Ap` over `Ap` this way (the update
//! of `r` reads it from a register in the same loop), a full pass of stores per iteration
//! that `drop_dead_stores`, which looks for arrays never read, keeps.
//!
//! Only stores go, and only where no read can see them, so the bits do not change.

use super::product_sums::dense_offset;
use super::{flat_regs, prune_nest, Nest};
use crate::loop_ir::{ArrayId, ArrayRole, Block, ElementIndex, Function, Inst};
use std::collections::{HashMap, HashSet};

/// Drops the stores of every `while` body's last nest into a scratch array the body
/// overwrites whole before reading it, that nothing else reads, and that lives in the body
/// alone.
pub(super) fn drop_stores_dead_across_iterations(f: &mut Function) {
    let all = f.body.instructions();
    let accesses = access_counts(&all);
    let mut reg_reads: HashMap<_, usize> = HashMap::new();
    for inst in &all {
        for r in inst.reads() {
            *reg_reads.entry(r).or_default() += 1;
        }
    }
    let scratch: Vec<(ArrayId, u64)> = f
        .arrays
        .iter()
        .enumerate()
        .filter(|(k, a)| a.role == ArrayRole::Scratch && !f.is_output(ArrayId(*k as u32)))
        .map(|(k, a)| (ArrayId(k as u32), a.len as u64))
        .collect();
    f.body.for_each_region_mut(|block| {
        for inst in block.0.iter_mut() {
            if let Inst::While { cond, body, .. } = inst {
                let in_body = access_counts(&body.instructions());
                let in_cond = access_counts(&cond.instructions());
                let mut touched: Vec<HashSet<ArrayId>> = body.0.iter().map(touched_by).collect();
                for &(array, len) in &scratch {
                    let local = in_body.get(&array) == accesses.get(&array)
                        && in_body.contains_key(&array)
                        && !in_cond.contains_key(&array);
                    if local {
                        drop_last_stores(body, &mut touched, array, len, &mut reg_reads);
                    }
                }
            }
        }
    });
}

/// Drops the stores into `array` (of `len` elements, touched by `body` alone) of the last
/// instruction of `body` touching it, if the first one overwrites it whole before any read.
/// `touched` holds the arrays each instruction of `body` touches, and is kept up to date.
fn drop_last_stores(
    body: &mut Block,
    touched: &mut Vec<HashSet<ArrayId>>,
    array: ArrayId,
    len: u64,
    reg_reads: &mut HashMap<crate::loop_ir::Reg, usize>,
) {
    let mut touching = (0..touched.len()).filter(|&k| touched[k].contains(&array));
    let (Some(first), Some(last)) = (touching.next(), touching.next_back()) else {
        return;
    };
    if !overwrites_whole(&body.0[first], array, len) {
        return;
    }
    let Some(nest) = Nest::of(&body.0[last]) else {
        return;
    };
    if !stores_unseen(&nest, array) {
        return;
    }
    let dead = HashSet::from([array]);
    if prune_nest(&mut body.0[last], &dead, reg_reads) {
        touched[last] = touched_by(&body.0[last]);
    } else {
        body.0.remove(last);
        touched.remove(last);
    }
}

/// How many instructions access each array.
fn access_counts(instructions: &[&Inst]) -> HashMap<ArrayId, usize> {
    let mut n = HashMap::new();
    for inst in instructions {
        for a in arrays(inst) {
            *n.entry(a).or_default() += 1;
        }
    }
    n
}

/// The arrays one instruction reads or writes (not those of blocks nested in it).
fn arrays(inst: &Inst) -> Vec<ArrayId> {
    let mut a = inst.arrays_read();
    a.extend(inst.arrays_written());
    a
}

/// The arrays `inst` and everything nested in it access.
fn touched_by(inst: &Inst) -> HashSet<ArrayId> {
    let nested = match inst {
        Inst::Loop { body, .. } => body.instructions(),
        other => other
            .regions()
            .iter()
            .flat_map(|b| b.instructions())
            .collect(),
    };
    std::iter::once(inst)
        .chain(nested)
        .flat_map(arrays)
        .collect()
}

/// Whether `inst` is a nest that stores every element of `array` (`len` of them) in order
/// and never reads it.
fn overwrites_whole(inst: &Inst, array: ArrayId, len: u64) -> bool {
    let Some(nest) = Nest::of(inst) else {
        return false;
    };
    let elements: u64 = nest.counts.iter().product();
    let reads = nest
        .body
        .0
        .iter()
        .any(|i| matches!(i, Inst::Load { index, .. } if index.array == array));
    let whole = nest.body.0.iter().any(|i| match i {
        Inst::Store { index, .. } => {
            index.array == array && dense_offset(index, &nest) == Some(0) && elements == len
        }
        _ => false,
    });
    whole && !reads && nest.body.0.iter().all(|i| flat_regs(i).is_some())
}

/// Whether no trip of `nest` reads what a store of it puts in `array`: the stores all
/// name one index, dense over the nest (so each trip its own element), and every load of
/// `array` names that index too and comes before the first store (reading the element
/// before this trip's store, which no other trip writes).
fn stores_unseen(nest: &Nest, array: ArrayId) -> bool {
    let body = &nest.body.0;
    if !body.iter().all(|i| flat_regs(i).is_some()) {
        return false;
    }
    let mut store_index: Option<&ElementIndex> = None;
    let mut loads: Vec<(usize, &ElementIndex)> = Vec::new();
    let mut first_store = None;
    for (k, inst) in body.iter().enumerate() {
        match inst {
            Inst::Store { index, .. } if index.array == array => {
                if store_index.is_some_and(|s| s != index) {
                    return false;
                }
                store_index = Some(index);
                first_store.get_or_insert(k);
            }
            Inst::Load { index, .. } if index.array == array => loads.push((k, index)),
            _ => {}
        }
    }
    let (Some(index), Some(first)) = (store_index, first_store) else {
        return false;
    };
    dense_offset(index, nest).is_some() && loads.iter().all(|(k, l)| *k < first && *l == index)
}
