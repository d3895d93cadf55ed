//! Batching rules of the region primitives.

use super::{batch_region, with_batch, BatchArgs};
use crate::array::Array;
use crate::error::Result;
use crate::ops::apply;
use quabla_abi::qir::{Op, Program, ReduceKind};
use quabla_abi::DType;

pub(crate) fn batch(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
    match &a.node.op {
        Op::Cond { branches } => batch_cond(a, branches),
        Op::While { cond, body } => batch_while(a, cond, body),
        _ => unreachable!("dispatched for regions only"),
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
    // A batched index: run every branch and select per element (out-of-range: last branch).
    let n = progs.len() as i32;
    let idx = &a.args[0];
    let bad = idx.lt(0)?.bitwise_or(&idx.ge(n)?)?;
    let idx = bad.select(&idx.full_like(n - 1)?, idx)?;
    let args = &a.args[1..];
    let mut results: Vec<Array> = crate::eval::eval_program(&progs[progs.len() - 1], args)?;
    for k in (0..progs.len() - 1).rev() {
        let outs = crate::eval::eval_program(&progs[k], args)?;
        let pick = idx.eq(k as i32)?;
        results = outs
            .iter()
            .zip(&results)
            .map(|(o, r)| {
                let p = pick.broadcast_in_dim(o.shape(), &[0])?;
                p.select(o, r)
            })
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
    let any_cond = crate::trace::trace_function(like.device(), &types, |c: &[Array]| {
        let p = crate::eval::eval_program(&cprog, c)?;
        Ok(vec![crate::ops::apply1(
            Op::Reduce {
                kind: ReduceKind::Or,
                axes: vec![0],
            },
            &[&p[0]],
            vec![],
        )?])
    })?;
    let frozen_body = crate::trace::trace_function(like.device(), &types, |c: &[Array]| {
        let go = crate::eval::eval_program(&cprog, c)?.remove(0);
        let next = crate::eval::eval_program(&bprog, c)?;
        next.iter()
            .zip(c)
            .map(|(n, old)| go.broadcast_in_dim(n.shape(), &[0])?.select(n, old))
            .collect()
    })?;
    debug_assert_eq!(any_cond.output_types()[0].dtype, DType::Bool);
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
