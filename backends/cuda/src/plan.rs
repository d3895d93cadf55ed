//! A program as steps: constants, kernels (a fused elementwise run, or one other node),
//! aliases (a reshape is the same bytes), and `cond`/`while` decided on the host with their
//! regions planned alike (nesting is bounded by QIR's validation).

use crate::fusion::{fuse_run, last_uses, Kernel};
use crate::kernels::node_kernel;
use quabla_abi::qir::{Op, Program};
use quabla_abi::TensorType;

/// One step of a plan.
#[derive(Debug)]
pub enum Step {
    Constant {
        value: usize,
        bytes: Vec<u8>,
    },
    Kernel(Kernel),
    Alias {
        from: usize,
        to: usize,
    },
    /// Runs branch `index` (clamped to the last) on `operands`.
    Cond {
        index: usize,
        operands: Vec<usize>,
        branches: Vec<Plan>,
        results: Vec<usize>,
    },
    /// Runs `body` while `cond` says so, on the carry.
    While {
        carry: Vec<usize>,
        cond: Box<Plan>,
        body: Box<Plan>,
        results: Vec<usize>,
    },
}

/// A program's steps, with its value types and outputs.
#[derive(Debug)]
pub struct Plan {
    pub types: Vec<TensorType>,
    pub num_inputs: usize,
    pub steps: Vec<Step>,
    pub outputs: Vec<usize>,
}

impl Plan {
    /// Every kernel of the plan and its regions' plans, depth first.
    pub fn kernels(&self) -> Vec<&Kernel> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(p) = stack.pop() {
            for s in &p.steps {
                match s {
                    Step::Kernel(k) => out.push(k),
                    Step::Cond { branches, .. } => stack.extend(branches.iter()),
                    Step::While { cond, body, .. } => {
                        stack.push(cond);
                        stack.push(body);
                    }
                    Step::Constant { .. } | Step::Alias { .. } => {}
                }
            }
        }
        out
    }
}

/// The plan of `p`, or the name of the first op no kernel covers yet.
pub fn plan(p: &Program, prefix: &str) -> Result<Plan, String> {
    let (plan, missing) = steps(p, prefix, true)?;
    match missing.first() {
        Some(op) => Err(op.to_string()),
        None => Ok(plan),
    }
}

/// Every kernel of `p` itself this compiler covers (for the compile test, which walks the
/// regions on its own), skipping the rest.
pub fn kernels(p: &Program, prefix: &str) -> Result<Vec<Kernel>, String> {
    Ok(steps(p, prefix, false)?
        .0
        .steps
        .into_iter()
        .filter_map(|s| match s {
            Step::Kernel(k) => Some(k),
            _ => None,
        })
        .collect())
}

/// The steps this compiler can make, and the names of the ops it cannot (yet); regions are
/// planned when `regions`.
fn steps(p: &Program, prefix: &str, regions: bool) -> Result<(Plan, Vec<&'static str>), String> {
    let types = p.value_types();
    let first = p.first_result_ids();
    let last_use = last_uses(p, types.len());
    let outputs: Vec<usize> = p.outputs.iter().map(|o| o.index()).collect();
    let (mut steps, mut missing) = (Vec::new(), Vec::new());
    let mut k = 0;
    while k < p.nodes.len() {
        let node = &p.nodes[k];
        let id = first[k].index();
        let name = format!("{prefix}_{k}");
        if node.op.is_elementwise() {
            let (kernel, end) = fuse_run(p, k, &first, &types, &last_use, &outputs, &name)?;
            steps.push(Step::Kernel(kernel));
            k = end;
            continue;
        }
        let operands: Vec<usize> = node.operands.iter().map(|o| o.index()).collect();
        let results: Vec<usize> = (id..id + node.results.len()).collect();
        match &node.op {
            Op::Constant(h) => steps.push(Step::Constant {
                value: id,
                bytes: h.bytes.clone(),
            }),
            Op::Reshape => steps.push(Step::Alias {
                from: operands[0],
                to: id,
            }),
            Op::Cond { branches } if regions => {
                let branches = branches
                    .iter()
                    .enumerate()
                    .map(|(j, b)| plan(b, &format!("{name}b{j}")))
                    .collect::<Result<Vec<_>, _>>()?;
                steps.push(Step::Cond {
                    index: operands[0],
                    operands: operands[1..].to_vec(),
                    branches,
                    results,
                });
            }
            Op::While { cond, body } if regions => steps.push(Step::While {
                carry: operands,
                cond: Box::new(plan(cond, &format!("{name}c"))?),
                body: Box::new(plan(body, &format!("{name}w"))?),
                results,
            }),
            op => match node_kernel(&name, node, &operands, &types, id)? {
                Some(kernel) => steps.push(Step::Kernel(kernel)),
                None => missing.push(op.name()),
            },
        }
        k += 1;
    }
    Ok((
        Plan {
            types,
            num_inputs: p.inputs.len(),
            steps,
            outputs,
        },
        missing,
    ))
}
