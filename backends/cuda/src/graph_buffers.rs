//! Which buffer each kernel result of a program's CUDA graph is written to: a buffer is used
//! again once every value held in it has been read for the last time, so a graph holds its
//! program's peak of live values, not the sum of all its values (the PINN step at 16,384
//! points: 190 MB instead of 397 in f32). The kernels of a graph
//! run one after another on one stream, so a buffer is free from the step after its last
//! reader; the outputs keep theirs (they are copied out after the launch). Buffers are
//! reused by exact size, which the many same-shaped values of a training step fill.

use crate::plan::{Plan, Step};
use std::collections::BTreeMap;

/// Per value, the buffer holding it (kernel results and their aliases; None for inputs and
/// constants), and each buffer's size in bytes.
#[derive(Debug)]
pub struct Assignment {
    pub of_value: Vec<Option<usize>>,
    pub sizes: Vec<usize>,
}

impl Assignment {
    /// The bytes the buffers take.
    pub fn bytes(&self) -> usize {
        self.sizes.iter().sum()
    }
}

/// The buffers of `plan`'s kernel results, shared where lifetimes allow; None for a plan
/// with steps other than constants, kernels and aliases (a loop's regions keep a buffer per
/// value).
pub fn assign(plan: &Plan) -> Option<Assignment> {
    let n = plan.types.len();
    // The last step reading each value (an alias reads its source); outputs: never freed.
    let mut last = vec![0usize; n];
    for (p, s) in plan.steps.iter().enumerate() {
        match s {
            Step::Kernel(k) => k.reads.iter().for_each(|&v| last[v] = last[v].max(p)),
            Step::Alias { from, .. } => last[*from] = last[*from].max(p),
            Step::Update { kernel, target, .. } => {
                kernel.reads.iter().for_each(|&v| last[v] = last[v].max(p));
                last[*target] = last[*target].max(p);
            }
            Step::Constant { .. } => {}
            Step::Linalg { .. }
            | Step::HostCallback { .. }
            | Step::Speculate { .. }
            | Step::Cond { .. }
            | Step::While { .. } => return None,
        }
    }
    for &o in &plan.outputs {
        last[o] = usize::MAX;
    }
    let mut of_value: Vec<Option<usize>> = vec![None; n];
    let mut sizes: Vec<usize> = Vec::new();
    // Per buffer, the last step that reads a value in it; free buffers by size.
    let mut busy_until: Vec<usize> = Vec::new();
    let mut free: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    let mut held: Vec<usize> = Vec::new();
    for (p, s) in plan.steps.iter().enumerate() {
        // Buffers whose values were all read before this step are free for its results.
        held.retain(|&b| {
            if busy_until[b] < p {
                free.entry(sizes[b]).or_default().push(b);
                false
            } else {
                true
            }
        });
        match s {
            Step::Kernel(k) => {
                for &w in &k.writes {
                    let size = plan.types[w].size_bytes();
                    let b = take(&mut free, &mut sizes, &mut busy_until, size);
                    // A result nobody reads is still written: busy for this step at least.
                    busy_until[b] = last[w].max(p);
                    of_value[w] = Some(b);
                    held.push(b);
                }
            }
            Step::Alias { from, to } => {
                if let Some(b) = of_value[*from] {
                    busy_until[b] = busy_until[b].max(last[*to]);
                    of_value[*to] = Some(b);
                }
            }
            // The result is written in its target's buffer where that is a kernel
            // result's, which it then holds; an input target is copied into a buffer of
            // the result's first (`graph::record`), the rule `graph::place` follows for
            // every plan (a loop's carry must stay as it is).
            Step::Update { target, result, .. } => match of_value[*target] {
                Some(b) => {
                    busy_until[b] = busy_until[b].max(last[*result]);
                    of_value[*result] = Some(b);
                }
                None => {
                    let b = take(
                        &mut free,
                        &mut sizes,
                        &mut busy_until,
                        plan.types[*result].size_bytes(),
                    );
                    busy_until[b] = last[*result].max(p);
                    of_value[*result] = Some(b);
                    held.push(b);
                }
            },
            // Refused above; constants live in uploads of their own.
            Step::Constant { .. }
            | Step::Linalg { .. }
            | Step::HostCallback { .. }
            | Step::Speculate { .. }
            | Step::Cond { .. }
            | Step::While { .. } => {}
        }
    }
    Some(Assignment { of_value, sizes })
}

/// A free buffer of `size` bytes, else a new one.
fn take(
    free: &mut BTreeMap<usize, Vec<usize>>,
    sizes: &mut Vec<usize>,
    busy_until: &mut Vec<usize>,
    size: usize,
) -> usize {
    match free.get_mut(&size).and_then(|v| v.pop()) {
        Some(b) => b,
        None => {
            sizes.push(size);
            busy_until.push(0);
            sizes.len() - 1
        }
    }
}

/// Runs `plan`'s steps over buffer contents: every kernel must find each value it reads in
/// its buffer (not overwritten since), and each output must be in its buffer at the end.
/// What the tests hold every assignment to (of the conformance programs too).
pub fn check(plan: &Plan, a: &Assignment) -> Result<(), String> {
    // The value each alias stands for.
    let mut canon: Vec<usize> = (0..plan.types.len()).collect();
    let mut content: Vec<Option<usize>> = vec![None; a.sizes.len()];
    let read = |v: usize, content: &[Option<usize>], canon: &[usize]| -> Result<(), String> {
        match a.of_value.get(v).copied().flatten() {
            Some(b) if content.get(b).copied().flatten() != canon.get(v).copied() => Err(format!(
                "%{v} read from buffer {b}, which holds {:?}",
                content.get(b)
            )),
            _ => Ok(()),
        }
    };
    for s in &plan.steps {
        match s {
            Step::Kernel(k) => {
                for &v in &k.reads {
                    read(v, &content, &canon)?;
                }
                for &w in &k.writes {
                    let b = a.of_value.get(w).copied().flatten();
                    let slot = b.and_then(|b| content.get_mut(b));
                    *slot.ok_or(format!("%{w} has no buffer"))? = Some(w);
                }
            }
            Step::Alias { from, to } => canon[*to] = canon[*from],
            Step::Update {
                kernel,
                target,
                result,
            } => {
                for &v in kernel.reads.iter().chain([target]) {
                    read(v, &content, &canon)?;
                }
                let b = a.of_value.get(*result).copied().flatten();
                let slot = b.and_then(|b| content.get_mut(b));
                *slot.ok_or(format!("%{result} has no buffer"))? = Some(*result);
            }
            Step::Constant { .. }
            | Step::Linalg { .. }
            | Step::HostCallback { .. }
            | Step::Speculate { .. }
            | Step::Cond { .. }
            | Step::While { .. } => {}
        }
    }
    for &o in &plan.outputs {
        read(o, &content, &canon)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_abi::qir::Program;

    #[test]
    fn a_buffer_is_reused_after_its_last_reader_and_outputs_keep_theirs() {
        // %2 dies at %3's kernel; %4 (same size) may take its buffer, never %3's (an output).
        // The products are too large to head a fused run (which would make them the
        // reductions' prologues, never stored).
        let p = Program::parse(
            "program(%0: f32[300], %1: f32[300]) {
  %2 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[], rhs_contract=[]](%0, %1) : f32[300,300]
  %3 = reduce[kind=sum, axes=[1]](%2) : f32[300]
  %4 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[], rhs_contract=[]](%3, %1) : f32[300,300]
  %5 = reduce[kind=sum, axes=[0]](%4) : f32[300]
  %6 = reshape(%5) : f32[2,150]
  return %3, %6
}",
        )
        .unwrap();
        let plan = crate::plan::plan(&p, "t").unwrap();
        let a = assign(&plan).unwrap();
        check(&plan, &a).unwrap();
        assert_eq!(a.of_value[2], a.of_value[4], "{a:?}");
        assert_ne!(a.of_value[3], a.of_value[5]);
        assert_eq!(
            a.of_value[6], a.of_value[5],
            "an alias shares its source's buffer"
        );
        assert_eq!(a.bytes(), 360_000 + 1_200 + 1_200);
    }

    #[test]
    fn the_checker_rejects_a_buffer_shared_by_live_values() {
        let p = Program::parse(
            "program(%0: f32[4]) {
  %1 = reduce[kind=sum, axes=[0]](%0) : f32[]
  %2 = reduce[kind=max, axes=[0]](%0) : f32[]
  %3 = reduce[kind=min, axes=[0]](%0) : f32[]
  return %1, %2, %3
}",
        )
        .unwrap();
        let plan = crate::plan::plan(&p, "t").unwrap();
        let mut a = assign(&plan).unwrap();
        check(&plan, &a).unwrap();
        // Outputs all live to the end: three buffers. Forcing two to share fails the check.
        assert_eq!(a.sizes.len(), 3);
        a.of_value[2] = a.of_value[1];
        assert!(check(&plan, &a).is_err());
    }
}
