//! The region primitives `cond` and `while`: their JVP, transpose and batching rules. (The
//! user-facing `cond`, `switch`, `while_loop`, `fori_loop` and `scan` build on these.)
//!
//! - JVP of `cond`: the primal `cond` plus a tangent `cond` whose branches compute the
//!   output tangents from `(args, tangents)`; the tangent `cond` is linear in the tangents,
//!   and its transpose is a `cond` over the branches' transposes, so reverse mode runs only
//!   the selected branch (a NaN in another branch never leaks into values or gradients).
//! - JVP of `while`: one loop carrying tangents beside the primal carry (forward mode only).
//! - Batching: a batched `cond` index becomes a select over every branch; a batched `while`
//!   predicate runs until every element is done, freezing finished elements' carries.

use super::apply;
use crate::ad::jvp_support::{float_tangents, jvp_region, tangent_region};
use crate::ad::rules::TransposeArgs;
use crate::array::Array;
use crate::batching::{batch_region, with_batch, BatchArgs};
use crate::error::{Error, Result};
use crate::eval::eval_program;
use crate::trace::trace_function;
use quabla_abi::qir::{Node, Op, Program, ReduceKind};
use quabla_abi::TensorType;

fn float_types(ts: &[TensorType]) -> Vec<TensorType> {
    ts.iter().filter(|t| t.dtype.is_float()).cloned().collect()
}

/// Spreads tangents of the float outputs back over all outputs (`None` for the others).
pub(crate) fn spread(results: &[TensorType], float_tangents: Vec<Array>) -> Vec<Option<Array>> {
    let mut it = float_tangents.into_iter();
    results
        .iter()
        .map(|t| if t.dtype.is_float() { it.next() } else { None })
        .collect()
}

/// Primal outputs and output tangents of a `cond` or `while` node.
pub(crate) fn jvp(
    node: &Node,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    let like = &primals[0];
    match &node.op {
        Op::Cond { branches } => {
            let refs: Vec<&Array> = primals.iter().collect();
            let outs = apply(node.op.clone(), &refs, node.results.clone())?;
            let tbranches = branches
                .iter()
                .map(|b| tangent_region(b, like))
                .collect::<Result<Vec<_>>>()?;
            let mut operands = primals.to_vec();
            operands.extend(float_tangents(&primals[1..], &tangents[1..])?);
            let refs: Vec<&Array> = operands.iter().collect();
            let touts = apply(
                Op::Cond {
                    branches: tbranches,
                },
                &refs,
                float_types(&node.results),
            )?;
            Ok((outs, spread(&node.results, touts)))
        }
        Op::While { cond, body } => {
            let body = jvp_region(body, like)?;
            // The loop condition ignores the tangent half of the carry.
            let mut types = cond.inputs.clone();
            types.extend(float_types(&cond.inputs));
            let n = cond.inputs.len();
            let cond = trace_function(like.device(), &types, |args: &[Array]| {
                eval_program(cond, &args[..n])
            })?;
            let mut operands = primals.to_vec();
            operands.extend(float_tangents(primals, tangents)?);
            let refs: Vec<&Array> = operands.iter().collect();
            let mut declared = node.results.clone();
            declared.extend(float_types(&node.results));
            let mut outs = apply(
                Op::While {
                    cond: Box::new(cond),
                    body: Box::new(body),
                },
                &refs,
                declared,
            )?;
            let touts = outs.split_off(node.results.len());
            Ok((outs, spread(&node.results, touts)))
        }
        _ => unreachable!("dispatched for cond and while"),
    }
}

/// Transpose of a tangent `cond`: operands `(index, known..., linear...)`.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let Op::Cond { branches } = &a.node.op else {
        return crate::ad::rules::no_rule("transpose", &a.node.op);
    };
    if a.operands[0].is_linear() {
        return Err(Error::Type(
            "cond: the branch index cannot be linear".into(),
        ));
    }
    let index = a.operands[0].known("cond")?;
    let like = index;
    let known: Vec<bool> = a.operands[1..].iter().map(|o| !o.is_linear()).collect();
    let tbranches = branches
        .iter()
        .map(|b| crate::ad::transpose_region(like.device(), b, &known))
        .collect::<Result<Vec<_>>>()?;
    let mut operands = vec![index.clone()];
    for o in a.operands[1..].iter().filter(|o| !o.is_linear()) {
        operands.push(o.known("cond")?.clone());
    }
    for (ct, t) in a.cts.iter().zip(&a.node.results) {
        operands.push(match ct {
            Some(c) => c.clone(),
            None => crate::ops::zeros_typed(like, t)?,
        });
    }
    let refs: Vec<&Array> = operands.iter().collect();
    let lin_types: Vec<TensorType> = a.operands[1..]
        .iter()
        .filter(|o| o.is_linear())
        .map(|o| o.ty().clone())
        .collect();
    let mut cts = apply(
        Op::Cond {
            branches: tbranches,
        },
        &refs,
        lin_types,
    )?
    .into_iter();
    Ok(a.operands
        .iter()
        .map(|o| if o.is_linear() { cts.next() } else { None })
        .collect())
}

pub(crate) fn batch(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
    match &a.node.op {
        Op::Cond { branches } => batch_cond(a, branches),
        Op::While { cond, body } => batch_while(a, cond, body),
        _ => unreachable!("dispatched for cond and while"),
    }
}

fn batch_cond(a: &BatchArgs, branches: &[Program]) -> Result<Vec<(Array, bool)>> {
    let like = &a.args[0];
    let arg_flags = &a.batched[1..];
    let nout = a.node.results.len();
    // Outputs batched in any branch are batched in all.
    let mut force = vec![a.batched[0]; nout];
    for b in branches {
        let (_, f) = batch_region(b, arg_flags, a.size, &force, like)?;
        force.iter_mut().zip(f).for_each(|(x, y)| *x |= y);
    }
    let progs: Vec<Program> = branches
        .iter()
        .map(|b| batch_region(b, arg_flags, a.size, &force, like).map(|r| r.0))
        .collect::<Result<_>>()?;
    let out_types: Vec<_> = progs[0].output_types();
    if !a.batched[0] {
        let refs: Vec<&Array> = a.args.iter().collect();
        let outs = apply(Op::Cond { branches: progs }, &refs, out_types)?;
        return Ok(outs.into_iter().zip(force).collect());
    }
    // A batched index: run every branch and select per element (out of range: last branch).
    let n = progs.len() as i32;
    let idx = &a.args[0];
    let bad = idx.lt(0)?.bitwise_or(&idx.ge(n)?)?;
    let idx = bad.select(&idx.full_like(n - 1)?, idx)?;
    let args = &a.args[1..];
    let mut results: Vec<Array> = eval_program(&progs[progs.len() - 1], args)?;
    for k in (0..progs.len() - 1).rev() {
        let outs = eval_program(&progs[k], args)?;
        let pick = idx.eq(k as i32)?;
        results = outs
            .iter()
            .zip(&results)
            .map(|(o, r)| pick.broadcast_in_dim(o.shape(), &[0])?.select(o, r))
            .collect::<Result<_>>()?;
    }
    Ok(results.into_iter().map(|r| (r, true)).collect())
}

fn batch_while(a: &BatchArgs, cond: &Program, body: &Program) -> Result<Vec<(Array, bool)>> {
    let like = &a.args[0];
    let size = a.size;
    // Carries become batched when the body mixes batched values into them: iterate to a
    // fixed point.
    let mut flags = a.batched.to_vec();
    loop {
        let (_, f) = batch_region(body, &flags, size, &flags, like)?;
        if f == flags {
            break;
        }
        flags = f;
    }
    let (cprog, pf) = batch_region(cond, &flags, size, &[false], like)?;
    if !pf[0] {
        let (bprog, _) = batch_region(body, &flags, size, &flags, like)?;
        let carry: Vec<Array> = (0..a.args.len())
            .map(|i| {
                if flags[i] {
                    with_batch(&a.args[i], a.batched[i], size)
                } else {
                    Ok(a.args[i].clone())
                }
            })
            .collect::<Result<_>>()?;
        let refs: Vec<&Array> = carry.iter().collect();
        let types = carry.iter().map(|c| c.tensor_type().clone()).collect();
        let outs = apply(
            Op::While {
                cond: Box::new(cprog),
                body: Box::new(bprog),
            },
            &refs,
            types,
        )?;
        return Ok(outs.into_iter().zip(flags).collect());
    }
    // A batched predicate: every carry is batched; loop while any element continues, and
    // freeze the carries of finished elements.
    let all = vec![true; flags.len()];
    let (cprog, _) = batch_region(cond, &all, size, &[true], like)?;
    let (bprog, _) = batch_region(body, &all, size, &all, like)?;
    // `with_batch` broadcasts the carries that have no batch axis yet.
    let carry: Vec<Array> = a
        .args
        .iter()
        .zip(a.batched)
        .map(|(x, has)| with_batch(x, *has, size))
        .collect::<Result<_>>()?;
    let types: Vec<_> = carry.iter().map(|c| c.tensor_type().clone()).collect();
    let any_cond = trace_function(like.device(), &types, |c: &[Array]| {
        let p = eval_program(&cprog, c)?;
        Ok(vec![super::apply1(
            Op::Reduce {
                kind: ReduceKind::Or,
                axes: vec![0],
            },
            &[&p[0]],
            vec![],
        )?])
    })?;
    let frozen_body = trace_function(like.device(), &types, |c: &[Array]| {
        let go = eval_program(&cprog, c)?.remove(0);
        let next = eval_program(&bprog, c)?;
        next.iter()
            .zip(c)
            .map(|(n, old)| go.broadcast_in_dim(n.shape(), &[0])?.select(n, old))
            .collect()
    })?;
    let refs: Vec<&Array> = carry.iter().collect();
    let outs = apply(
        Op::While {
            cond: Box::new(any_cond),
            body: Box::new(frozen_body),
        },
        &refs,
        types,
    )?;
    Ok(outs.into_iter().map(|o| (o, true)).collect())
}
