//! Which element loops of a loop-IR function may be spread over a block's threads: the
//! emitter (`emit.rs`) runs every element loop that is not inside another one with its
//! iterations shared out among the threads, with no barrier inside, so each iteration must
//! touch only what no other iteration touches. A sequential emitter (the CPU's) needs none
//! of this; a function whose loops fail the test stays on the host-driven plan.
//!
//! A loop nest passes when:
//! - it holds only element work (no library call or control flow inside);
//! - every register it reads that it also writes is written earlier in the same iteration
//!   (nothing carries from one iteration to the next), and nothing outside the nest reads
//!   a register it writes (no value leaves it but through memory);
//! - every array it stores to is read and written at one element index only, which steps
//!   through memory injectively in the spread counters (mixed radix: each counter's stride
//!   at least the span of the faster ones), the other terms being fixed during the nest.
//!
//! Matrix products and reductions, spread over their outputs, must not write over their
//! operands.

use quabla_abi::loop_ir::{Block, ElementIndex, Function, Inst, Reg};
use std::collections::{HashMap, HashSet};

/// The counters and trip counts of the perfect nest `inst` heads (each level's body that
/// one loop alone), outermost first, and its innermost body: the levels spread together.
pub(super) fn nest(inst: &Inst) -> Option<(Vec<(Reg, u64)>, &Block)> {
    let mut levels = Vec::new();
    let mut at = inst;
    loop {
        let Inst::Loop {
            counter,
            count,
            body,
        } = at
        else {
            return None;
        };
        levels.push((*counter, *count));
        match &body.0[..] {
            [inner @ Inst::Loop { .. }] => at = inner,
            _ => return Some((levels, body)),
        }
    }
}

/// `block`'s instructions in program order, nested element loops' bodies in place (an
/// explicit stack: a loop nest is as deep as an array's rank).
fn in_order(block: &Block) -> Vec<&Inst> {
    let mut out = Vec::new();
    let mut stack: Vec<std::slice::Iter<'_, Inst>> = vec![block.0.iter()];
    while let Some(top) = stack.last_mut() {
        match top.next() {
            None => {
                stack.pop();
            }
            Some(inst) => {
                out.push(inst);
                if let Inst::Loop { body, .. } = inst {
                    stack.push(body.0.iter());
                }
            }
        }
    }
    out
}

/// Checks every element loop of `f` outside other element loops (the ones `emit.rs`
/// spreads); the reason for the first that fails.
pub fn check(f: &Function) -> Result<(), String> {
    // Every element loop outside others, and who reads each register: `None` for code
    // outside those loops, `Some(k)` for loop `k`.
    let mut loops: Vec<&Inst> = Vec::new();
    let mut readers: HashMap<Reg, HashSet<Option<usize>>> = HashMap::new();
    let mut pending: Vec<&Block> = vec![&f.body];
    for r in &f.results {
        readers.entry(*r).or_default().insert(None);
    }
    while let Some(b) = pending.pop() {
        for inst in &b.0 {
            if let Inst::Loop { .. } = inst {
                let k = loops.len();
                loops.push(inst);
                for i in in_order(&Block(vec![inst.clone()])) {
                    if !i.regions().is_empty() {
                        return Err("control flow inside an element loop".into());
                    }
                    for r in i.reads() {
                        readers.entry(r).or_default().insert(Some(k));
                    }
                }
                continue;
            }
            for r in inst.reads() {
                readers.entry(r).or_default().insert(None);
            }
            pending.extend(inst.regions());
        }
    }
    for (k, l) in loops.iter().enumerate() {
        check_loop(l, k, &readers)?;
    }
    // Products and reductions are spread over their outputs too: none may read what
    // another thread writes.
    for inst in f.body.instructions() {
        let library = matches!(inst, Inst::Dot { .. } | Inst::Reduce { .. });
        let read = inst.arrays_read();
        if library && inst.arrays_written().iter().any(|w| read.contains(w)) {
            return Err("a product or reduction writing over its operand".into());
        }
    }
    Ok(())
}

/// One spread loop nest (number `k`), given every register's readers.
fn check_loop(
    l: &Inst,
    k: usize,
    readers: &HashMap<Reg, HashSet<Option<usize>>>,
) -> Result<(), String> {
    let (spread, _) = nest(l).ok_or("not an element loop")?;
    let body = Block(vec![l.clone()]);
    let all = in_order(&body);
    let written: HashSet<Reg> = all.iter().flat_map(|i| i.writes()).collect();
    if let Some(r) = written.iter().find(|r| {
        readers
            .get(r)
            .is_some_and(|o| o.iter().any(|o| *o != Some(k)))
    }) {
        return Err(format!("register {} leaves an element loop", r.0));
    }
    let mut defined: HashSet<Reg> = HashSet::new();
    for inst in &all {
        if matches!(
            inst,
            Inst::Dot { .. } | Inst::Reduce { .. } | Inst::Linalg { .. }
        ) {
            return Err("a library call inside an element loop".into());
        }
        if let Some(r) = inst
            .reads()
            .into_iter()
            .find(|r| written.contains(r) && !defined.contains(r))
        {
            return Err(format!(
                "register {} carries from one iteration of an element loop to the next",
                r.0
            ));
        }
        defined.extend(inst.writes());
    }
    let counts: HashMap<Reg, u64> = all
        .iter()
        .filter_map(|i| match i {
            Inst::Loop { counter, count, .. } => Some((*counter, *count)),
            _ => None,
        })
        .collect();
    // Per array stored to, every index it is read or written at.
    let mut stored: HashMap<u32, Vec<&ElementIndex>> = HashMap::new();
    for inst in &all {
        if let Inst::Store { index, .. } = inst {
            stored.entry(index.array.0).or_default().push(index);
        }
    }
    for inst in &all {
        if let Inst::Load { index, .. } = inst {
            if let Some(v) = stored.get_mut(&index.array.0) {
                v.push(index);
            }
        }
    }
    for (array, indices) in &stored {
        let first = indices[0];
        if indices.iter().any(|i| *i != first) {
            return Err(format!(
                "array {array} is read and written at different elements in one element loop"
            ));
        }
        injective(first, &spread, &counts, &written)
            .map_err(|why| format!("array {array}'s stores in an element loop: {why}"))?;
    }
    Ok(())
}

/// Whether `index` names a different element in every iteration of the spread counters
/// `spread`, whatever the other counters of the nest (`counts`) do, the terms that are no
/// counter being fixed in the nest (none of `written`).
fn injective(
    index: &ElementIndex,
    spread: &[(Reg, u64)],
    counts: &HashMap<Reg, u64>,
    written: &HashSet<Reg>,
) -> Result<(), String> {
    // (stride, values the term takes) of each counter term.
    let mut radix: Vec<(u64, u64)> = Vec::new();
    for t in &index.terms {
        match counts.get(&t.start) {
            Some(&n) => {
                let values = t.max.min(n.saturating_sub(1)).saturating_add(1);
                if t.stride > 0 && values > 1 {
                    radix.push((t.stride, values));
                }
            }
            None if written.contains(&t.start) => {
                return Err("an index computed inside the loop".into())
            }
            None => {}
        }
    }
    for (c, n) in spread {
        let full = index.terms.iter().filter(|t| t.start == *c).count() == 1
            && index
                .terms
                .iter()
                .any(|t| t.start == *c && t.stride > 0 && t.max >= n.saturating_sub(1));
        if *n > 1 && !full {
            return Err("a spread counter that does not step through the index once".into());
        }
    }
    radix.sort_unstable();
    let mut span = 1u64;
    for (stride, values) in radix {
        if stride < span {
            return Err("terms whose elements overlap".into());
        }
        span = stride.saturating_mul(values);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_abi::loop_ir::{ArrayId, IndexTerm};

    fn index(terms: &[(u32, u64, u64)]) -> ElementIndex {
        ElementIndex {
            array: ArrayId(0),
            offset: 0,
            terms: terms
                .iter()
                .map(|&(r, max, stride)| IndexTerm {
                    start: Reg(r),
                    max,
                    stride,
                })
                .collect(),
        }
    }

    /// `a[i] = body(a[i])` over 8 elements: registers 0 (the counter, i32), 1 and 2 (f32).
    fn element_loop(body: Vec<Inst>, results: Vec<Reg>) -> Function {
        use quabla_abi::loop_ir::{ArrayDecl, ArrayRole, Operand};
        use quabla_abi::DType;
        let scalars = results.len();
        Function {
            regs: vec![DType::I32, DType::F32, DType::F32],
            params: Vec::new(),
            arrays: vec![ArrayDecl {
                dtype: DType::F32,
                len: 8,
                written: true,
                role: ArrayRole::Operand,
            }],
            operands: vec![Operand::Array(ArrayId(0))],
            body: Block(vec![Inst::Loop {
                counter: Reg(0),
                count: 8,
                body: Block(body),
            }]),
            results,
            outputs: std::iter::once(Operand::Array(ArrayId(0)))
                .chain(std::iter::repeat_n(Operand::Scalar, scalars))
                .collect(),
        }
    }

    #[test]
    fn loops_whose_iterations_meet_are_refused() {
        use quabla_abi::qir::BinaryOp;
        let at = |terms: &[(u32, u64, u64)]| index(terms);
        let load = |dst: u32, i: ElementIndex| Inst::Load {
            dst: Reg(dst),
            index: i,
        };
        let store = |src: u32, i: ElementIndex| Inst::Store {
            index: i,
            src: Reg(src),
        };
        let double = Inst::Binary {
            dst: Reg(1),
            op: BinaryOp::Add,
            a: Reg(2),
            b: Reg(2),
        };
        // a[i] = a[i] + a[i]: independent.
        let ok = element_loop(
            vec![
                load(2, at(&[(0, 7, 1)])),
                double.clone(),
                store(1, at(&[(0, 7, 1)])),
            ],
            vec![],
        );
        assert_eq!(ok.check(), Ok(()));
        assert_eq!(check(&ok), Ok(()));
        // A running sum: register 1 carries from one iteration to the next.
        let sum = Inst::Binary {
            dst: Reg(1),
            op: BinaryOp::Add,
            a: Reg(1),
            b: Reg(2),
        };
        let carried = element_loop(
            vec![load(2, at(&[(0, 7, 1)])), sum, store(1, at(&[(0, 7, 1)]))],
            vec![],
        );
        assert!(check(&carried).unwrap_err().contains("carries"));
        // The last element's value read after the loop.
        let leaves = element_loop(
            vec![
                load(2, at(&[(0, 7, 1)])),
                double.clone(),
                store(1, at(&[(0, 7, 1)])),
            ],
            vec![Reg(1)],
        );
        assert!(check(&leaves).unwrap_err().contains("leaves"));
        // a[0] written by every iteration.
        let same = element_loop(
            vec![load(2, at(&[(0, 7, 1)])), double.clone(), store(1, at(&[]))],
            vec![],
        );
        assert!(check(&same).is_err());
        // a[i] = 2 a[7 - i]-like reads of another element than the one written.
        let shifted = element_loop(
            vec![
                load(2, at(&[(0, 6, 1)])),
                double,
                store(1, at(&[(0, 7, 1)])),
            ],
            vec![],
        );
        assert!(check(&shifted).unwrap_err().contains("different elements"));
    }

    #[test]
    fn row_major_steps_are_injective_and_overlaps_are_not() {
        let counts: HashMap<Reg, u64> = [(Reg(0), 4), (Reg(1), 8)].into();
        let spread = [(Reg(0), 4), (Reg(1), 8)];
        let none = HashSet::new();
        // x[i, j] of a 4x8 array, and its transpose's layout: both injective.
        assert!(injective(&index(&[(0, 3, 8), (1, 7, 1)]), &spread, &counts, &none).is_ok());
        assert!(injective(&index(&[(0, 3, 1), (1, 7, 4)]), &spread, &counts, &none).is_ok());
        // x[i + j]: iterations (0, 1) and (1, 0) meet.
        assert!(injective(&index(&[(0, 3, 1), (1, 7, 1)]), &spread, &counts, &none).is_err());
        // x[j]: every i writes the same elements.
        assert!(injective(&index(&[(1, 7, 1)]), &spread, &counts, &none).is_err());
        // A clamp that folds counter values together.
        assert!(injective(&index(&[(0, 3, 8), (1, 2, 1)]), &spread, &counts, &none).is_err());
        // A fixed offset from a register the loop does not write moves nothing.
        let shifted = index(&[(0, 3, 8), (1, 7, 1), (9, 5, 32)]);
        assert!(injective(&shifted, &spread, &counts, &none).is_ok());
        let written: HashSet<Reg> = [Reg(9)].into();
        assert!(injective(&shifted, &spread, &counts, &written).is_err());
    }
}
