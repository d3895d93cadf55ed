//! Constant folding: a node whose operands are all constants is evaluated once, on the
//! target device, so the folded value has exactly the rounding the backend would give it.
//! Only small results are folded (a broadcast of a scalar stays a broadcast rather than
//! becoming a large literal). The single-node executables are not cached.

use crate::runtime::Device;
use quabla_abi::qir::{Node, Op, Program, ValueId};
use std::collections::HashMap;
use std::sync::Arc;

/// Results up to this many elements are folded.
const MAX_FOLDED_ELEMENTS: usize = 16;

/// Folds constant subexpressions of `p` by running them on `device`. A node that fails to
/// evaluate is left in place (the error will surface when the program runs).
///
/// ```no_run
/// # use quabla::Array;
/// let x = Array::from_slice(&[1.0f32], &[1])?;
/// let c = Array::from_slice(&[2.0f32], &[1])?;
/// let p = quabla::make_program(move |a: &[Array]| Ok(vec![(&a[0] * &c.exp()?)?]), &[x])?;
/// let folded = quabla::passes::fold_constants(&p, &quabla::default_device()?); // exp(2) computed once
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn fold_constants(p: &Program, device: &Arc<Device>) -> Program {
    let first = p.first_result_ids();
    let mut constants: HashMap<ValueId, quabla_abi::HostArray> = HashMap::new();
    let mut nodes = p.nodes.clone();
    for (ni, node) in p.nodes.iter().enumerate() {
        if let Op::Constant(h) = &node.op {
            constants.insert(first[ni], h.clone());
            continue;
        }
        let foldable = !node.operands.is_empty()
            && node.results.len() == 1
            && node.results[0].num_elements() <= MAX_FOLDED_ELEMENTS
            && node.op.regions().is_empty()
            && !node.op.is_core_only()
            // A host call is never made at compile time.
            && !matches!(node.op, Op::HostCallback { .. })
            && node.operands.iter().all(|o| constants.contains_key(o));
        if !foldable {
            continue;
        }
        let inputs: Vec<Node> = node
            .operands
            .iter()
            .map(|o| Node {
                op: Op::Constant(constants[o].clone()),
                operands: vec![],
                results: vec![constants[o].ty.clone()],
            })
            .collect();
        let n = inputs.len() as u32;
        let mut single = Program {
            inputs: vec![],
            nodes: inputs,
            outputs: vec![ValueId(n)],
        };
        single.nodes.push(Node {
            op: node.op.clone(),
            operands: (0..n).map(ValueId).collect(),
            results: node.results.clone(),
        });
        // Compiled once and dropped: one executable per folded node would fill the cache.
        let value = device
            .compile_once(&single)
            .ok()
            .and_then(|exe| exe.run(&[]).ok())
            .and_then(|mut outs| outs.pop()?.to_host().ok());
        if let Some(h) = value {
            constants.insert(first[ni], h.clone());
            nodes[ni] = Node {
                op: Op::Constant(h),
                operands: vec![],
                results: node.results.clone(),
            };
        }
    }
    Program {
        inputs: p.inputs.clone(),
        nodes,
        outputs: p.outputs.clone(),
    }
}
