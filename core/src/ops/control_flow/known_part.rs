//! Partial evaluation of the region ops (`cond`, `while`, `bounded_while`, `scan`): the part
//! of a node that reads only known operands, as a node of its own.
//!
//! The JVP rules of these ops emit one node computing primal results and tangents together,
//! so forward mode runs the primal computation once. Reverse mode must then see the primal
//! results as known values: partial evaluation ([`crate::ad`]'s linearizer) asks
//! [`known_part`] for a node over the known operands alone, puts it in the forward program,
//! and takes the primal results from it; the whole node stays in the linear part, where only
//! its tangent results get cotangents. This is JAX's `partial_eval_jaxpr_custom` rule for
//! `while` and `cond`.

use super::loop_linearity::{linear_carries, linear_outputs};
use quabla_abi::qir::{Node, Op, Program, ValueId};
use quabla_abi::TensorType;

/// A node over some of another node's operands, giving some of its results.
pub(crate) struct KnownPart {
    pub op: Op,
    /// Positions of the original node's operands this node takes, in order.
    pub operands: Vec<usize>,
    /// Positions of the original node's results this node gives, in order.
    pub results: Vec<usize>,
}

/// Which operands the known part of a region node reads and which results it gives, for
/// operands linear where `linear` says: `None` when nothing is linear, no result is known,
/// or a loop predicate or branch index reads a linear value.
fn known_lists(node: &Node, linear: &[bool]) -> Option<(Vec<usize>, Vec<usize>)> {
    if !linear.iter().any(|l| *l) {
        return None;
    }
    match &node.op {
        Op::While { cond, body } | Op::BoundedWhile { cond, body, .. } => {
            let mut lin = linear.to_vec();
            let n = lin.len();
            linear_carries(body, &mut lin, 0, n);
            if linear_outputs(cond, &lin).first().copied().unwrap_or(true) {
                return None;
            }
            let keep: Vec<usize> = (0..n).filter(|&i| !lin[i]).collect();
            (!keep.is_empty()).then(|| (keep.clone(), keep))
        }
        Op::Scan {
            body,
            num_consts,
            num_carry,
            ..
        } => {
            let (nc, ncar) = (*num_consts, *num_carry);
            let mut lin = linear.to_vec();
            linear_carries(body, &mut lin, nc, ncar);
            let out_lin = linear_outputs(body, &lin);
            // A carry is known when it starts known and its update is (a trip count of zero
            // returns the start); a `ys` entry when its step is.
            let results: Vec<usize> = (0..out_lin.len())
                .filter(|&r| !out_lin[r] && (r >= ncar || !lin[nc + r]))
                .collect();
            let operands = (0..lin.len()).filter(|&i| !lin[i]).collect();
            (!results.is_empty()).then_some((operands, results))
        }
        Op::Cond { branches } => {
            if linear[0] {
                return None;
            }
            let lin = &linear[1..];
            let n_out = branches.first()?.outputs.len();
            let per_branch: Vec<Vec<bool>> =
                branches.iter().map(|b| linear_outputs(b, lin)).collect();
            let results: Vec<usize> = (0..n_out)
                .filter(|&r| per_branch.iter().all(|l| !l[r]))
                .collect();
            let mut operands = vec![0];
            operands.extend((0..lin.len()).filter(|&i| !lin[i]).map(|i| i + 1));
            (!results.is_empty()).then_some((operands, results))
        }
        _ => None,
    }
}

/// Per-result linearity of a node whose operands are linear where `linear` says: all
/// linear when any operand is, except the results of a region node's known part.
pub(super) fn result_linearity(node: &Node, linear: &[bool]) -> Vec<bool> {
    let any = linear.iter().any(|l| *l);
    let mut out = vec![any; node.results.len()];
    if any && !node.op.regions().is_empty() {
        if let Some((_, results)) = known_lists(node, linear) {
            for r in results {
                out[r] = false;
            }
        }
    }
    out
}

/// The known part of a region node whose operands are linear where `linear` says (see
/// [`known_lists`] for when there is none).
pub(crate) fn known_part(node: &Node, linear: &[bool]) -> Option<KnownPart> {
    let (operands, results) = known_lists(node, linear)?;
    let op = match &node.op {
        Op::While { cond, body } => Op::While {
            cond: Box::new(known_program(cond, &operands, &[0])?),
            body: Box::new(known_program(body, &operands, &results)?),
        },
        Op::BoundedWhile {
            cond,
            body,
            max_steps,
            checkpoints,
        } => Op::BoundedWhile {
            cond: Box::new(known_program(cond, &operands, &[0])?),
            body: Box::new(known_program(body, &operands, &results)?),
            max_steps: *max_steps,
            checkpoints: *checkpoints,
        },
        Op::Scan {
            body,
            length,
            reverse,
            num_consts,
            num_carry,
            unroll,
        } => Op::Scan {
            body: Box::new(known_program(body, &operands, &results)?),
            length: *length,
            reverse: *reverse,
            num_consts: operands.iter().filter(|&&i| i < *num_consts).count(),
            num_carry: results.iter().filter(|&&r| r < *num_carry).count(),
            unroll: *unroll,
        },
        Op::Cond { branches } => {
            let inputs: Vec<usize> = operands[1..].iter().map(|i| i - 1).collect();
            Op::Cond {
                branches: branches
                    .iter()
                    .map(|b| known_program(b, &inputs, &results))
                    .collect::<Option<Vec<_>>>()?,
            }
        }
        _ => return None,
    };
    Some(KnownPart {
        op,
        operands,
        results,
    })
}

/// `p` taking only its inputs `inputs` (the known ones) and giving its outputs `outputs`
/// (positions in `p`'s lists): the nodes those outputs need, inner region nodes replaced by
/// their known parts, and every effect that reads known values. `None` when an output is
/// not known.
pub(crate) fn known_program(p: &Program, inputs: &[usize], outputs: &[usize]) -> Option<Program> {
    let first = p.first_result_ids();
    let mut known: Vec<Option<ValueId>> = vec![None; p.num_values()];
    for (new, &old) in inputs.iter().enumerate() {
        *known.get_mut(old)? = Some(ValueId(new as u32));
    }
    // Every node over known values (unneeded ones are removed below).
    let mut nodes: Vec<Node> = Vec::new();
    let mut next = inputs.len() as u32;
    for (ni, node) in p.nodes.iter().enumerate() {
        let r0 = first[ni].index();
        let ops: Vec<Option<ValueId>> = node.operands.iter().map(|o| known[o.index()]).collect();
        let (op, operands, results) = if ops.iter().all(Option::is_some) {
            let all: Vec<usize> = (0..node.results.len()).collect();
            (node.op.clone(), ops.into_iter().flatten().collect(), all)
        } else {
            let lin: Vec<bool> = ops.iter().map(Option::is_none).collect();
            let Some(part) = known_part(node, &lin) else {
                continue;
            };
            let operands = part
                .operands
                .iter()
                .map(|&i| ops[i])
                .collect::<Option<_>>()?;
            (part.op, operands, part.results)
        };
        for (k, &r) in results.iter().enumerate() {
            known[r0 + r] = Some(ValueId(next + k as u32));
        }
        next += results.len() as u32;
        nodes.push(Node {
            op,
            operands,
            results: results.iter().map(|&r| node.results[r].clone()).collect(),
        });
    }
    let outs = outputs
        .iter()
        .map(|&k| known[p.outputs.get(k)?.index()])
        .collect::<Option<Vec<_>>>()?;
    let types = inputs.iter().map(|&i| p.inputs[i].clone()).collect();
    Some(dead_code_removed(types, nodes, outs))
}

/// The program of `nodes` over `inputs` (value ids numbered densely in that order), keeping
/// what `outputs` need and every effect, renumbered.
fn dead_code_removed(inputs: Vec<TensorType>, nodes: Vec<Node>, outputs: Vec<ValueId>) -> Program {
    let n_in = inputs.len();
    let total = n_in + nodes.iter().map(|n| n.results.len()).sum::<usize>();
    let mut needed = vec![false; total];
    for o in &outputs {
        needed[o.index()] = true;
    }
    let mut starts = Vec::with_capacity(nodes.len());
    let mut at = n_in;
    for n in &nodes {
        starts.push(at);
        at += n.results.len();
    }
    let mut keep = vec![false; nodes.len()];
    for (i, n) in nodes.iter().enumerate().rev() {
        let r0 = starts[i];
        if n.op.has_effect() || (r0..r0 + n.results.len()).any(|v| needed[v]) {
            keep[i] = true;
            for o in &n.operands {
                needed[o.index()] = true;
            }
        }
    }
    let mut map: Vec<ValueId> = (0..n_in as u32).map(ValueId).collect();
    map.resize(total, ValueId(u32::MAX));
    let mut next = n_in as u32;
    let mut kept = Vec::new();
    for (i, n) in nodes.into_iter().enumerate() {
        if !keep[i] {
            continue;
        }
        for r in 0..n.results.len() {
            map[starts[i] + r] = ValueId(next + r as u32);
        }
        next += n.results.len() as u32;
        kept.push(Node {
            operands: n.operands.iter().map(|o| map[o.index()]).collect(),
            ..n
        });
    }
    Program {
        inputs,
        nodes: kept,
        outputs: outputs.iter().map(|o| map[o.index()]).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::{known_part, known_program};
    use quabla_abi::qir::{Node, Op, Program, ValueId};
    use quabla_abi::{DType, TensorType};

    fn f32s() -> TensorType {
        TensorType::scalar(DType::F32)
    }

    /// `(x, t) -> (x * x, t * x)`: output 0 reads only input 0.
    fn square_and_scale() -> Program {
        use quabla_abi::qir::BinaryOp::Mul;
        Program {
            inputs: vec![f32s(), f32s()],
            nodes: vec![
                Node {
                    op: Op::Binary(Mul),
                    operands: vec![ValueId(0), ValueId(0)],
                    results: vec![f32s()],
                },
                Node {
                    op: Op::Binary(Mul),
                    operands: vec![ValueId(1), ValueId(0)],
                    results: vec![f32s()],
                },
            ],
            outputs: vec![ValueId(2), ValueId(3)],
        }
    }

    #[test]
    fn a_known_program_keeps_what_the_outputs_need_and_refuses_linear_outputs() {
        let p = square_and_scale();
        let q = known_program(&p, &[0], &[0]).expect("output 0 reads input 0 only");
        assert_eq!(q.inputs.len(), 1);
        assert_eq!(q.nodes.len(), 1);
        assert_eq!(q.outputs, vec![ValueId(1)]);
        assert!(
            known_program(&p, &[0], &[1]).is_none(),
            "output 1 reads input 1"
        );
    }

    #[test]
    fn a_scan_splits_off_its_known_carry_and_a_cond_its_known_output() {
        let body = square_and_scale();
        let scan = Node {
            op: Op::Scan {
                body: Box::new(body.clone()),
                length: 3,
                reverse: false,
                num_consts: 0,
                num_carry: 2,
                unroll: 1,
            },
            operands: vec![ValueId(0), ValueId(1)],
            results: vec![f32s(), f32s()],
        };
        let k = known_part(&scan, &[false, true]).expect("carry 0 is known");
        assert_eq!((k.operands, k.results), (vec![0], vec![0]));
        assert!(matches!(k.op, Op::Scan { num_carry: 1, .. }));
        assert!(
            known_part(&scan, &[true, false]).is_none(),
            "carry 0 is linear"
        );
        assert!(
            known_part(&scan, &[false, false]).is_none(),
            "nothing linear"
        );

        let cond = Node {
            op: Op::Cond {
                branches: vec![body.clone(), body],
            },
            operands: vec![ValueId(0), ValueId(1), ValueId(2)],
            results: vec![f32s(), f32s()],
        };
        let k = known_part(&cond, &[false, false, true]).expect("output 0 is known");
        assert_eq!((k.operands, k.results), (vec![0, 1], vec![0]));
        assert!(
            known_part(&cond, &[true, false, true]).is_none(),
            "a linear index"
        );
    }
}
