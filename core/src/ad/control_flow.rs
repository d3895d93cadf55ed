//! JVP of the region primitives: the regions are differentiated and the node re-emitted with
//! tangents as extra operands and results. Reverse mode through regions comes with the
//! control-flow work (a `while` has no transpose: use scan or fori_loop with static bounds).

use super::jvp::{instantiate, jvp_walk};
use crate::array::Array;
use crate::error::Result;
use crate::ops::apply;
use crate::trace::trace_function;
use quabla_abi::qir::{Node, Op, Program};
use quabla_abi::TensorType;

/// A region `(x..., t...) -> (y..., ty...)` for region `p`, with tangents for every float
/// input (zeros where the caller had none) and every float output.
fn jvp_region(p: &Program, like: &Array) -> Result<Program> {
    let floats: Vec<usize> = (0..p.inputs.len())
        .filter(|&i| p.inputs[i].dtype.is_float())
        .collect();
    let mut types = p.inputs.clone();
    types.extend(floats.iter().map(|&i| p.inputs[i].clone()));
    let n = p.inputs.len();
    trace_function(like.device(), &types, |args: &[Array]| {
        let mut tangents: Vec<Option<Array>> = vec![None; n];
        for (k, &i) in floats.iter().enumerate() {
            tangents[i] = Some(args[n + k].clone());
        }
        let (outs, touts) = jvp_walk(p, &args[..n], &tangents)?;
        let float_outs: Vec<usize> = (0..outs.len())
            .filter(|&i| outs[i].dtype().is_float())
            .collect();
        let touts = instantiate(&outs, touts)?;
        let mut res = outs;
        res.extend(float_outs.iter().map(|&i| touts[i].clone()));
        Ok(res)
    })
}

fn float_tangents(
    primals: &[Array],
    tangents: &[Option<Array>],
    from: usize,
) -> Result<Vec<Array>> {
    (from..primals.len())
        .filter(|&i| primals[i].dtype().is_float())
        .map(|i| {
            tangents[i]
                .clone()
                .map(Ok)
                .unwrap_or_else(|| primals[i].zeros_like())
        })
        .collect()
}

/// Primal outputs and output tangents of a `cond` or `while` node.
pub(crate) fn jvp(
    node: &Node,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    let like = &primals[0];
    let (op, operands) = match &node.op {
        Op::Cond { branches } => {
            let branches = branches
                .iter()
                .map(|b| jvp_region(b, like))
                .collect::<Result<Vec<_>>>()?;
            let mut operands = primals.to_vec();
            operands.extend(float_tangents(primals, tangents, 1)?);
            (Op::Cond { branches }, operands)
        }
        Op::While { cond, body } => {
            let body = jvp_region(body, like)?;
            // The loop condition ignores the tangent half of the carry.
            let mut types = cond.inputs.clone();
            types.extend(cond.inputs.iter().filter(|t| t.dtype.is_float()).cloned());
            let n = cond.inputs.len();
            let cond = trace_function(like.device(), &types, |args: &[Array]| {
                crate::eval::eval_program(cond, &args[..n])
            })?;
            let mut operands = primals.to_vec();
            operands.extend(float_tangents(primals, tangents, 0)?);
            (
                Op::While {
                    cond: Box::new(cond),
                    body: Box::new(body),
                },
                operands,
            )
        }
        _ => unreachable!("dispatched for regions only"),
    };
    let refs: Vec<&Array> = operands.iter().collect();
    let mut declared: Vec<TensorType> = node.results.clone();
    declared.extend(node.results.iter().filter(|t| t.dtype.is_float()).cloned());
    let mut outs = apply(op, &refs, declared)?;
    let n = node.results.len();
    let tangent_outs = outs.split_off(n);
    let mut k = 0;
    let out_t = (0..n)
        .map(|i| {
            node.results[i].dtype.is_float().then(|| {
                k += 1;
                tangent_outs[k - 1].clone()
            })
        })
        .collect();
    Ok((outs, out_t))
}
