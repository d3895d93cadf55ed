//! Program passes run before differentiation and before lowering to a backend. Each pass
//! keeps results bit for bit: nothing here reassociates or changes rounding.

mod cse;
mod dce;
mod lower;

pub use cse::cse;
pub use dce::dce;
pub use lower::{lower, CUSTOM_VJP_FORWARD};

use quabla_abi::qir::Program;

/// The passes every program goes through before it is compiled: CSE, then DCE.
pub fn optimize(p: &Program) -> Program {
    dce(&cse(p))
}

/// Renumbers `p` keeping the nodes `keep` (in order), with `alias` mapping values of dropped
/// nodes to the kept values that replace them.
pub(crate) fn rebuild(
    p: &Program,
    keep: &[bool],
    alias: &std::collections::HashMap<u32, u32>,
) -> Program {
    let first = p.first_result_ids();
    let mut map: Vec<Option<u32>> = vec![None; p.num_values()];
    for (i, m) in map.iter_mut().enumerate().take(p.inputs.len()) {
        *m = Some(i as u32);
    }
    let resolve = |map: &Vec<Option<u32>>, v: u32| -> u32 {
        let v = alias.get(&v).copied().unwrap_or(v);
        map[v as usize].expect("kept nodes only use kept values")
    };
    let mut next = p.inputs.len() as u32;
    let mut nodes = Vec::new();
    for (ni, node) in p.nodes.iter().enumerate() {
        if !keep[ni] {
            continue;
        }
        let operands = node
            .operands
            .iter()
            .map(|o| quabla_abi::qir::ValueId(resolve(&map, o.0)))
            .collect();
        for r in 0..node.results.len() {
            map[first[ni].index() + r] = Some(next);
            next += 1;
        }
        nodes.push(quabla_abi::qir::Node {
            op: node.op.clone(),
            operands,
            results: node.results.clone(),
        });
    }
    let outputs = p
        .outputs
        .iter()
        .map(|o| quabla_abi::qir::ValueId(resolve(&map, o.0)))
        .collect();
    Program {
        inputs: p.inputs.clone(),
        nodes,
        outputs,
    }
}
