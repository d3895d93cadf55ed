//! Which known carries the backward pass needs. A carry the loop only writes (an output
//! buffer filled one row per trip, read by nothing else in the body) is part of the loop's
//! result but of no trip's residuals: keeping it in every checkpoint and recomputing it
//! costs memory and copies for nothing.

use quabla_abi::qir::{Op, Program, ValueId};

/// Of `p`'s inputs, those that `outputs` or an effect of `p` read. A `cond` reads its
/// index and, of its other operands, those its branches read for the results wanted (the
/// body of a solver's loop is one `cond` over the whole carry); other nodes read all their
/// operands.
pub(super) fn inputs_read(p: &Program, outputs: &[ValueId]) -> Vec<bool> {
    let first = p.first_result_ids();
    let mut live = vec![false; p.num_values()];
    for o in outputs {
        live[o.index()] = true;
    }
    for (ni, node) in p.nodes.iter().enumerate().rev() {
        let wanted: Vec<usize> = (0..node.results.len())
            .filter(|&r| live[first[ni].index() + r])
            .collect();
        let read = match &node.op {
            Op::Cond { branches } if !node.op.has_effect() => {
                let mut read = vec![false; node.operands.len()];
                read[0] = !wanted.is_empty();
                for b in branches {
                    let outs: Vec<ValueId> = wanted.iter().map(|&r| b.outputs[r]).collect();
                    for (j, r) in inputs_read(b, &outs).into_iter().enumerate() {
                        read[1 + j] |= r;
                    }
                }
                read
            }
            op => vec![!wanted.is_empty() || op.has_effect(); node.operands.len()],
        };
        for (o, r) in node.operands.iter().zip(read) {
            live[o.index()] |= r;
        }
    }
    live.truncate(p.inputs.len());
    live
}

/// Flags the known carries the backward pass needs, to a fixed point: those the residuals
/// `bwd` reads and the loop's predicate read, and those the updates of needed carries read.
/// `fwd` takes the `nk` known carries and returns their updates, then the residuals; `bwd`
/// takes the residuals first; `cond` takes the whole carry, the known ones at the positions
/// `known`.
pub(super) fn needed_known(
    cond: &Program,
    known: &[usize],
    fwd: &Program,
    bwd: &Program,
    nk: usize,
) -> Vec<bool> {
    let by_cond = inputs_read(cond, &cond.outputs);
    let mut needed: Vec<bool> = known.iter().map(|&i| by_cond[i]).collect();
    let residuals_read = inputs_read(bwd, &bwd.outputs);
    let residuals: Vec<ValueId> = fwd.outputs[nk..]
        .iter()
        .zip(&residuals_read)
        .filter(|(_, &r)| r)
        .map(|(&v, _)| v)
        .collect();
    let by_residuals = inputs_read(fwd, &residuals);
    for (n, r) in needed.iter_mut().zip(by_residuals) {
        *n |= r;
    }
    loop {
        let updates: Vec<ValueId> = (0..nk)
            .filter(|&k| needed[k])
            .map(|k| fwd.outputs[k])
            .collect();
        let read = inputs_read(fwd, &updates);
        let grown: Vec<usize> = (0..nk).filter(|&k| read[k] && !needed[k]).collect();
        if grown.is_empty() {
            return needed;
        }
        for k in grown {
            needed[k] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(text: &str) -> Program {
        Program::parse(text).expect("a valid test program")
    }

    #[test]
    fn a_carry_only_its_own_update_reads_is_not_needed() {
        // Carries: x (read by the residual), out (written from x, read by nothing else),
        // n (the predicate's counter).
        let fwd = program(
            "program(%0: f32[], %1: f32[2], %2: i32[]) {\n  %3 = sin(%0) : f32[]\n  \
             %4 = broadcast_in_dim[dims=[]](%0) : f32[2]\n  %5 = add(%1, %4) : f32[2]\n  \
             %6 = cos(%0) : f32[]\n  return %3, %5, %2, %6\n}\n",
        );
        let cond = program(
            "program(%0: f32[], %1: f32[2], %2: i32[]) {\n  \
             %3 = constant[value=[3]]() : i32[]\n  %4 = compare[dir=lt](%2, %3) : bool[]\n  \
             return %4\n}\n",
        );
        let bwd = program(
            "program(%0: f32[], %1: f32[]) {\n  %2 = mul(%0, %1) : f32[]\n  return %2\n}\n",
        );
        assert_eq!(
            needed_known(&cond, &[0, 1, 2], &fwd, &bwd, 3),
            [true, false, true]
        );
    }

    #[test]
    fn a_carry_feeding_a_needed_one_is_needed() {
        // The residual reads x; x's update reads y; y's update reads only y.
        let fwd = program(
            "program(%0: f32[], %1: f32[]) {\n  %2 = add(%0, %1) : f32[]\n  \
             %3 = exp(%1) : f32[]\n  %4 = sin(%0) : f32[]\n  return %2, %3, %4\n}\n",
        );
        let cond = program(
            "program(%0: f32[], %1: f32[]) {\n  %2 = constant[value=[true]]() : bool[]\n  \
             return %2\n}\n",
        );
        let bwd = program(
            "program(%0: f32[], %1: f32[]) {\n  %2 = mul(%0, %1) : f32[]\n  return %2\n}\n",
        );
        assert_eq!(needed_known(&cond, &[0, 1], &fwd, &bwd, 2), [true, true]);
    }

    #[test]
    fn residuals_the_backward_pass_ignores_need_nothing() {
        // Residuals: sin(x) (read by bwd) and y itself (not read).
        let fwd = program(
            "program(%0: f32[], %1: f32[]) {\n  %2 = sin(%0) : f32[]\n  \
             %3 = exp(%1) : f32[]\n  return %0, %3, %2, %1\n}\n",
        );
        let bwd = program(
            "program(%0: f32[], %1: f32[], %2: f32[]) {\n  %3 = mul(%0, %2) : f32[]\n  \
             return %3\n}\n",
        );
        let cond = program(
            "program(%0: f32[], %1: f32[]) {\n  %2 = constant[value=[true]]() : bool[]\n  \
             return %2\n}\n",
        );
        assert_eq!(needed_known(&cond, &[0, 1], &fwd, &bwd, 2), [true, false]);
    }

    #[test]
    fn a_cond_reads_only_what_its_branches_read_for_the_results_wanted() {
        // Result 0 reads operand x in one branch; result 1 (not wanted) reads y.
        let p = program(
            "program(%0: i32[], %1: f32[], %2: f32[]) {\n  \
             %3, %4 = cond(%0, %1, %2) : f32[], f32[] {\n    \
             branch(%0: f32[], %1: f32[]) {\n      %2 = sin(%0) : f32[]\n      \
             return %2, %1\n    }\n    \
             branch(%0: f32[], %1: f32[]) {\n      %2 = exp(%1) : f32[]\n      \
             return %0, %2\n    }\n  }\n  return %3\n}\n",
        );
        assert_eq!(inputs_read(&p, &p.outputs), [true, true, false]);
        assert_eq!(inputs_read(&p, &[]), [false, false, false]);
    }
}
