//! Sums of products: an element loop that stores `x * y` into scratch memory only a float
//! sum right after it reads becomes that sum reading `x` and `y` where the loop leaves them
//! ([`Inst::Reduce`]'s `times`), so the products are never written to memory and read back.
//! CG's `p . Ap` and `r . r` are two of these per iteration, as XLA fuses a reduction with
//! its elementwise producer.
//!
//! The sum folds the same products in the same fixed order, so the bits do not change.
//! Each factor must be an element the loop leaves in memory at the product's own index:
//! loaded from an array the loop does not write, or stored by the loop (its only store to
//! that array) at that index.

use super::{flat_regs, Nest};
use crate::loop_ir::{ArrayId, Block, ElementIndex, Function, Inst, Reg};
use crate::qir::{BinaryOp, ReduceKind};
use std::collections::HashMap;

/// Rewrites every such loop-and-sum pair of `f` (the stores of the products are then dead,
/// for `drop_dead_stores`).
pub(super) fn sum_products_in_place(f: &mut Function) {
    let reads = array_reads(&f.body);
    f.body.for_each_region_mut(|block| {
        for k in 1..block.0.len() {
            let (before, after) = block.0.split_at_mut(k);
            let (Some(nest), Some(sum)) = (Nest::of(&before[k - 1]), after.first_mut()) else {
                continue;
            };
            rewrite(&nest, sum, &reads);
        }
    });
}

/// How many instructions read each array.
fn array_reads(body: &Block) -> HashMap<ArrayId, usize> {
    let mut reads = HashMap::new();
    for a in body.instructions().into_iter().flat_map(Inst::arrays_read) {
        *reads.entry(a).or_default() += 1;
    }
    reads
}

/// Makes `sum` read the factors of the products `nest` stores, if it is a float sum of
/// exactly those products and nothing else reads them.
fn rewrite(nest: &Nest, sum: &mut Inst, reads: &HashMap<ArrayId, usize>) {
    let Inst::Reduce {
        kind: ReduceKind::Sum,
        dtype,
        src,
        times: times @ None,
        rows,
        len,
        ..
    } = sum
    else {
        return;
    };
    let elements: u64 = nest.counts.iter().product();
    let read_once = reads.get(&src.array) == Some(&1);
    if !dtype.is_float() || !src.terms.is_empty() || *rows * *len != elements || !read_once {
        return;
    }
    let Some((x, y)) = factors(nest, src) else {
        return;
    };
    *src = x;
    *times = Some(y);
}

/// Where the loop leaves the two factors of the product it stores densely at `products`,
/// if it does.
fn factors(nest: &Nest, products: &ElementIndex) -> Option<(ElementIndex, ElementIndex)> {
    let body = &nest.body.0;
    // Per-element work only: no control flow, no library call, no nested loop.
    if !body.iter().all(|i| flat_regs(i).is_some()) {
        return None;
    }
    let mut stores = body.iter().filter_map(|i| match i {
        Inst::Store { index, src } if index.array == products.array => Some((index, *src)),
        _ => None,
    });
    let (index, product) = stores.next()?;
    if stores.next().is_some() || dense_offset(index, nest) != Some(products.offset) {
        return None;
    }
    let [Inst::Binary {
        op: BinaryOp::Mul,
        a,
        b,
        ..
    }] = definitions(body, product)[..]
    else {
        return None;
    };
    let x = in_memory(nest, *a, products.array)?;
    let y = in_memory(nest, *b, products.array)?;
    Some((x, y))
}

/// Where the element register `r` of the loop is in memory once the loop ends, at its own
/// index: an array the loop reads it from and never writes, or the one array it stores it
/// to (its only store there). Never `products`, whose elements the sum replaces.
fn in_memory(nest: &Nest, r: Reg, products: ArrayId) -> Option<ElementIndex> {
    let body = &nest.body.0;
    let at = |index: &ElementIndex| {
        let offset = dense_offset(index, nest)?;
        (index.array != products).then(|| ElementIndex {
            array: index.array,
            offset,
            terms: Vec::new(),
        })
    };
    let written = |a: ArrayId| body.iter().filter(|i| stores_to(i, a)).count();
    match definitions(body, r)[..] {
        [Inst::Load { index, .. }] if written(index.array) == 0 => return at(index),
        [_] => {}
        _ => return None,
    }
    let mut stored = body.iter().filter_map(|i| match i {
        Inst::Store { index, src } if *src == r => Some(index),
        _ => None,
    });
    let index = stored.next()?;
    (written(index.array) == 1).then(|| at(index)).flatten()
}

/// The instructions of `body` that write `r`.
fn definitions(body: &[Inst], r: Reg) -> Vec<&Inst> {
    body.iter().filter(|i| writes(i) == Some(r)).collect()
}

fn stores_to(inst: &Inst, a: ArrayId) -> bool {
    matches!(inst, Inst::Store { index, .. } if index.array == a)
}

/// The register an element-loop instruction writes (`flat_regs`).
fn writes(inst: &Inst) -> Option<Reg> {
    flat_regs(inst).and_then(|(_, dst)| dst)
}

/// The offset of `index` if it walks the nest's elements in order, one element per
/// iteration (row-major over the nest's counters, each term unclamped).
pub(super) fn dense_offset(index: &ElementIndex, nest: &Nest) -> Option<u64> {
    if index.terms.len() != nest.counters.len() {
        return None;
    }
    let mut stride = 1u64;
    for ((term, counter), count) in index
        .terms
        .iter()
        .zip(&nest.counters)
        .zip(&nest.counts)
        .rev()
    {
        if term.start != *counter || term.stride != stride || term.max < count.saturating_sub(1) {
            return None;
        }
        stride = stride.checked_mul(*count)?;
    }
    Some(index.offset)
}
