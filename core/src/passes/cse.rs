//! Common-subexpression elimination keyed on the op with its attributes (constants by their
//! exact bits), the operands and the result types. Region ops are never merged.

use super::rebuild;
use quabla_abi::qir::{Op, Program};
use std::collections::HashMap;

/// Merges nodes that compute the same thing from the same values.
///
/// ```
/// use quabla_abi::qir::Program;
/// let p = Program::parse("program(%0: f32[2]) {\n  %1 = exp(%0) : f32[2]\n  %2 = exp(%0) : f32[2]\n  %3 = add(%1, %2) : f32[2]\n  return %3\n}\n").unwrap();
/// assert_eq!(quabla::passes::cse(&p).nodes.len(), 2);
/// ```
pub fn cse(p: &Program) -> Program {
    let first = p.first_result_ids();
    let mut alias: HashMap<u32, u32> = HashMap::new();
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut keep = vec![true; p.nodes.len()];
    for (ni, node) in p.nodes.iter().enumerate() {
        if !node.op.regions().is_empty() || node.op.has_effect() {
            continue;
        }
        let operands: Vec<u32> = node
            .operands
            .iter()
            .map(|o| alias.get(&o.0).copied().unwrap_or(o.0))
            .collect();
        // The serialised op holds every attribute and a constant's exact bytes.
        let Ok(mut key) = postcard_key(&node.op) else {
            continue;
        };
        for o in &operands {
            key.extend_from_slice(&o.to_le_bytes());
        }
        for t in &node.results {
            key.extend_from_slice(t.to_string().as_bytes());
        }
        match seen.get(&key) {
            Some(&prev) => {
                keep[ni] = false;
                for r in 0..node.results.len() as u32 {
                    alias.insert(first[ni].0 + r, first[prev].0 + r);
                }
            }
            None => {
                seen.insert(key, ni);
            }
        }
    }
    let mut out = rebuild(p, &keep, &alias);
    for node in &mut out.nodes {
        node.op = match std::mem::replace(&mut node.op, Op::Select) {
            Op::Cond { branches } => Op::Cond {
                branches: branches.iter().map(cse).collect(),
            },
            Op::While { cond, body } => Op::While {
                cond: Box::new(cse(&cond)),
                body: Box::new(cse(&body)),
            },
            op @ Op::BoundedWhile { .. } => {
                op.with_regions(op.regions().into_iter().map(cse).collect())
            }
            op => op,
        };
    }
    out
}

fn postcard_key(op: &Op) -> Result<Vec<u8>, ()> {
    let p = Program {
        inputs: vec![],
        nodes: vec![quabla_abi::qir::Node {
            op: op.clone(),
            operands: vec![],
            results: vec![],
        }],
        outputs: vec![],
    };
    quabla_abi::qir::encode(&p, quabla_abi::qir::QIR_VERSION).map_err(|_| ())
}
