//! Compiling a validated program into an execution plan: elementwise chains grouped into
//! fused steps, regions compiled once, and the step after which each value can be freed.

use crate::tensor::Storage;
use quabla_abi::qir::{Node, Op, Program, ValueId};
use std::collections::HashSet;
use std::sync::Arc;

/// A chain of elementwise nodes over one shape, run tile by tile with no full-size
/// temporaries for values used only inside the chain.
pub struct FusedGroup {
    /// Node indices, in program order.
    pub nodes: Vec<usize>,
    /// Element count shared by every node of the group.
    pub len: usize,
    /// Values defined in the group that later steps or the outputs need.
    pub exports: Vec<ValueId>,
}

pub enum Step {
    Fused(FusedGroup),
    Node(usize),
}

pub struct Plan {
    pub program: Program,
    /// First result id of each node.
    pub first_ids: Vec<ValueId>,
    pub steps: Vec<Step>,
    /// Values that die after each step.
    pub free_after: Vec<Vec<ValueId>>,
    /// Compiled regions of each node (empty for non-region nodes).
    pub regions: Vec<Vec<Plan>>,
    /// Each constant node's data, converted once (a loop body's constants are not rebuilt
    /// every iteration).
    pub constants: Vec<Option<Arc<Storage>>>,
}

fn group_key(node: &Node) -> Option<usize> {
    (node.op.is_elementwise() && node.results.len() == 1).then(|| node.results[0].num_elements())
}

impl Plan {
    pub fn new(program: Program) -> Plan {
        let first_ids = program.first_result_ids();
        let regions = program
            .nodes
            .iter()
            .map(|n| {
                n.op.regions()
                    .into_iter()
                    .map(|r| Plan::new(r.clone()))
                    .collect()
            })
            .collect();
        let mut steps = Vec::new();
        let mut open: Option<(usize, Vec<usize>)> = None;
        for (i, node) in program.nodes.iter().enumerate() {
            match (group_key(node), &mut open) {
                (Some(k), Some((gk, nodes))) if *gk == k => nodes.push(i),
                (Some(k), _) => {
                    if let Some((len, nodes)) = open.take() {
                        steps.push((len, nodes));
                    }
                    open = Some((k, vec![i]));
                }
                (None, _) => {
                    if let Some((len, nodes)) = open.take() {
                        steps.push((len, nodes));
                    }
                    steps.push((usize::MAX, vec![i]));
                }
            }
        }
        if let Some(g) = open.take() {
            steps.push(g);
        }
        let constants = program
            .nodes
            .iter()
            .map(|n| match &n.op {
                Op::Constant(h) => Some(Arc::new(Storage::from_host(h))),
                _ => None,
            })
            .collect();
        let mut plan = Plan {
            program,
            first_ids,
            steps: Vec::new(),
            free_after: Vec::new(),
            regions,
            constants,
        };
        plan.steps = steps
            .into_iter()
            .map(|(len, nodes)| plan.make_step(len, nodes))
            .collect();
        plan.free_after = plan.liveness();
        plan
    }

    fn make_step(&self, len: usize, nodes: Vec<usize>) -> Step {
        if len == usize::MAX {
            return Step::Node(nodes[0]);
        }
        let inside: HashSet<usize> = nodes.iter().copied().collect();
        let defined: Vec<ValueId> = nodes.iter().map(|&i| self.first_ids[i]).collect();
        let outputs: HashSet<ValueId> = self.program.outputs.iter().copied().collect();
        let exports = defined
            .into_iter()
            .filter(|v| {
                outputs.contains(v)
                    || self
                        .program
                        .nodes
                        .iter()
                        .enumerate()
                        .any(|(j, n)| !inside.contains(&j) && n.operands.contains(v))
            })
            .collect();
        Step::Fused(FusedGroup {
            nodes,
            len,
            exports,
        })
    }

    fn step_nodes(&self, s: &Step) -> Vec<usize> {
        match s {
            Step::Fused(g) => g.nodes.clone(),
            Step::Node(i) => vec![*i],
        }
    }

    fn liveness(&self) -> Vec<Vec<ValueId>> {
        let n = self.program.num_values();
        let mut last = vec![None; n];
        for (si, s) in self.steps.iter().enumerate() {
            for ni in self.step_nodes(s) {
                for o in &self.program.nodes[ni].operands {
                    last[o.index()] = Some(si);
                }
            }
        }
        for o in &self.program.outputs {
            last[o.index()] = None;
        }
        let mut free = vec![Vec::new(); self.steps.len()];
        for (v, l) in last.into_iter().enumerate() {
            if let Some(si) = l {
                free[si].push(ValueId(v as u32));
            }
        }
        free
    }
}
