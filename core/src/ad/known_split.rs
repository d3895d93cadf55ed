//! Before partial evaluation: region nodes that compute primal results and tangents together
//! get their known part as a node of its own, so the primal results are known values.

use crate::ops::control_flow::{known_part, KnownPart};
use quabla_abi::qir::{Node, Program, ValueId};
use std::borrow::Cow;

/// `j` (inputs: `n` known, then linear) with a known-part node inserted before every region
/// node that has one, and the uses of that node's known results redirected to it. The region
/// node itself stays (it reads linear values); only its tangent results are still used.
/// Borrowed back unchanged when no node splits.
pub(crate) fn split_known_parts(j: &Program, n: usize) -> Cow<'_, Program> {
    let first = j.first_result_ids();
    let mut linear = vec![false; j.num_values()];
    for l in linear.iter_mut().take(j.inputs.len()).skip(n) {
        *l = true;
    }
    let mut parts: Vec<Option<KnownPart>> = Vec::with_capacity(j.nodes.len());
    for (ni, node) in j.nodes.iter().enumerate() {
        let lin: Vec<bool> = node.operands.iter().map(|o| linear[o.index()]).collect();
        let part = if node.op.regions().is_empty() {
            None
        } else {
            known_part(node, &lin)
        };
        let any = lin.iter().any(|l| *l);
        for r in 0..node.results.len() {
            let known = part.as_ref().is_some_and(|p| p.results.contains(&r));
            linear[first[ni].index() + r] = any && !known;
        }
        parts.push(part);
    }
    if parts.iter().all(Option::is_none) {
        return Cow::Borrowed(j);
    }
    // Old value -> new value; input ids are unchanged.
    let mut map: Vec<ValueId> = (0..j.inputs.len() as u32).map(ValueId).collect();
    map.resize(j.num_values(), ValueId(u32::MAX));
    let mut next = j.inputs.len() as u32;
    let mut nodes = Vec::with_capacity(j.nodes.len() + parts.len());
    for ((ni, node), part) in j.nodes.iter().enumerate().zip(parts) {
        let operands: Vec<ValueId> = node.operands.iter().map(|o| map[o.index()]).collect();
        let r0 = first[ni].index();
        let mut known_at: Vec<Option<ValueId>> = vec![None; node.results.len()];
        if let Some(p) = part {
            for (k, &r) in p.results.iter().enumerate() {
                known_at[r] = Some(ValueId(next + k as u32));
            }
            next += p.results.len() as u32;
            nodes.push(Node {
                op: p.op,
                operands: p.operands.iter().map(|&i| operands[i]).collect(),
                results: p.results.iter().map(|&r| node.results[r].clone()).collect(),
            });
        }
        for (r, known) in known_at.into_iter().enumerate() {
            map[r0 + r] = known.unwrap_or(ValueId(next + r as u32));
        }
        next += node.results.len() as u32;
        nodes.push(Node {
            op: node.op.clone(),
            operands,
            results: node.results.clone(),
        });
    }
    Cow::Owned(Program {
        inputs: j.inputs.clone(),
        outputs: j.outputs.iter().map(|o| map[o.index()]).collect(),
        nodes,
    })
}
