//! Lowering the core-level ops away before compilation: `checkpoint`, `custom_jvp_call` and
//! `custom_vjp_call` are replaced by their `call` region inlined, `stop_gradient` by its
//! operand, `scan` by a `while` loop over dynamic slices, `bounded_while` by a `while` that
//! counts its trips. A `custom_vjp_linear` left in a program means forward mode was asked of a
//! `custom_vjp` function, which (as in JAX) is not supported; a `named_axis` left means a
//! collective (`psum`...) outside the `vmap` that names its axis.

use crate::error::{Error, Result};
use crate::runtime::Device;
use quabla_abi::qir::{Node, Op, Program, ValueId};
use std::sync::Arc;

/// Why a `custom_vjp_linear` cannot run.
pub const CUSTOM_VJP_FORWARD: &str =
    "forward-mode differentiation (jvp, jacfwd, hessian) of a custom_vjp function is not \
     supported; define its rule with custom_jvp instead, or use reverse mode";

/// The program with every core-level op lowered, regions included.
///
/// ```no_run
/// # use quabla::{lax, Array};
/// let x = Array::from_slice(&[1.0f32], &[1])?;
/// let f = |a: &[Array]| {
///     let body = |c: &[Array], _: &[Array]| Ok((vec![c[0].sin()?], vec![]));
///     Ok(lax::scan(&body, a, &[], Some(4), false, 1)?.0)
/// };
/// let p = quabla::make_program(f, &[x])?;
/// let plain = quabla::passes::lower(&p, &quabla::default_device()?)?; // scan as a while loop
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn lower(p: &Program, device: &Arc<Device>) -> Result<Program> {
    if !has_core_ops(p) {
        return Ok(p.clone());
    }
    let mut out = Program {
        inputs: p.inputs.clone(),
        nodes: Vec::new(),
        outputs: Vec::new(),
    };
    let mut map: Vec<ValueId> = (0..p.inputs.len() as u32).map(ValueId).collect();
    let mut next = p.inputs.len() as u32;
    for node in &p.nodes {
        let operands: Vec<ValueId> = node.operands.iter().map(|o| map[o.index()]).collect();
        match &node.op {
            Op::StopGradient => map.push(operands[0]),
            Op::Checkpoint { .. }
            | Op::CustomJvp { .. }
            | Op::CustomVjp { .. }
            | Op::LinearSolve { .. }
            | Op::Scan { .. }
            | Op::BoundedWhile { .. } => {
                let call = match &node.op {
                    Op::Checkpoint { call }
                    | Op::CustomJvp { call, .. }
                    | Op::CustomVjp { call, .. }
                    | Op::LinearSolve { solve: call, .. } => lower(call, device)?,
                    _ => {
                        let types: Vec<_> = node
                            .operands
                            .iter()
                            .map(|o| p.value_types()[o.index()].clone())
                            .collect();
                        let as_while = match &node.op {
                            Op::Scan { .. } => crate::ops::control_flow::scan_as_while,
                            _ => crate::ops::control_flow::bounded_while_as_while,
                        };
                        lower(&as_while(device, &node.op, &types)?, device)?
                    }
                };
                let mut inner: Vec<ValueId> = operands.clone();
                for n in &call.nodes {
                    let ops = n.operands.iter().map(|o| inner[o.index()]).collect();
                    out.nodes.push(Node {
                        op: n.op.clone(),
                        operands: ops,
                        results: n.results.clone(),
                    });
                    for _ in &n.results {
                        inner.push(ValueId(next));
                        next += 1;
                    }
                }
                map.extend(call.outputs.iter().map(|o| inner[o.index()]));
            }
            Op::CustomVjpLinear { .. } => return Err(Error::Value(CUSTOM_VJP_FORWARD.into())),
            Op::NamedAxis { .. } => {
                return Err(crate::ops::named_axis::unbound_in_program(&node.op))
            }
            op => {
                let regions = op
                    .regions()
                    .into_iter()
                    .map(|r| lower(r, device))
                    .collect::<Result<Vec<_>>>()?;
                let op = if regions.is_empty() {
                    op.clone()
                } else {
                    op.with_regions(regions)
                };
                out.nodes.push(Node {
                    op,
                    operands,
                    results: node.results.clone(),
                });
                for _ in &node.results {
                    map.push(ValueId(next));
                    next += 1;
                }
            }
        }
    }
    out.outputs = p.outputs.iter().map(|o| map[o.index()]).collect();
    Ok(out)
}

fn has_core_ops(p: &Program) -> bool {
    p.nodes
        .iter()
        .any(|n| n.op.is_core_only() || n.op.regions().into_iter().any(has_core_ops))
}
