//! Dead-code elimination: drops nodes none of whose results reach an output and that have
//! no effect (`Op::has_effect`). Regions are pruned too (their parameters stay, so
//! signatures do not change).

use super::rebuild;
use quabla_abi::qir::{Op, Program};
use std::collections::HashMap;

/// Removes nodes whose results are never used.
///
/// ```
/// use quabla_abi::qir::Program;
/// let p = Program::parse("program(%0: f32[2]) {\n  %1 = exp(%0) : f32[2]\n  %2 = sin(%0) : f32[2]\n  return %2\n}\n").unwrap();
/// assert_eq!(quabla::passes::dce(&p).nodes.len(), 1);
/// ```
pub fn dce(p: &Program) -> Program {
    let first = p.first_result_ids();
    let mut live = vec![false; p.num_values()];
    for o in &p.outputs {
        live[o.index()] = true;
    }
    let mut keep = vec![false; p.nodes.len()];
    for ni in (0..p.nodes.len()).rev() {
        let node = &p.nodes[ni];
        if node.op.has_effect() || (0..node.results.len()).any(|r| live[first[ni].index() + r]) {
            keep[ni] = true;
            for o in &node.operands {
                live[o.index()] = true;
            }
        }
    }
    let mut out = rebuild(p, &keep, &HashMap::new());
    for node in &mut out.nodes {
        node.op = match std::mem::replace(&mut node.op, Op::Select) {
            Op::Cond { branches } => Op::Cond {
                branches: branches.iter().map(dce).collect(),
            },
            Op::While { cond, body } => Op::While {
                cond: Box::new(dce(&cond)),
                body: Box::new(dce(&body)),
            },
            op @ Op::BoundedWhile { .. } => {
                op.with_regions(op.regions().into_iter().map(dce).collect())
            }
            op => op,
        };
    }
    out
}
