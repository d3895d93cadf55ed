//! `linear_solve`: `x = A⁻¹ b` with implicit derivatives, as `jax.lax.custom_linear_solve`.
//!
//! The solution of a linear system does not depend on how it was found, so derivatives never
//! go through the solver's iterations: the tangent of `x` solves `A dx = db - dA x` with the
//! same solver, and the transpose (reverse mode) solves with `Aᵀ`. Because the tangent and
//! transposed systems are `linear_solve` nodes again, derivatives compose to any order, and
//! batching keeps each element's own stopping test (a batched `while` freezes finished
//! elements). Iterative solvers (`linalg::cg`, `linalg::gmres`) and Newton's implicit
//! derivatives are built on it.

use super::apply;
use crate::ad::jvp_support::jvp_walk_pub as jvp_walk;
use crate::ad::rules::TransposeArgs;
use crate::array::Array;
use crate::batching::{batch_region, BatchArgs};
use crate::error::{Error, Result};
use crate::trace::trace_function_capturing;
use quabla_abi::qir::{Node, Op, Program};
use quabla_abi::{DType, TensorType};

/// A linear operator or solver over a list of arrays (a flattened pytree).
pub type LinearFn<'a> = &'a dyn Fn(&[Array]) -> Result<Vec<Array>>;

/// A solver region body: `(matvec, b) -> (x, info)`, where `matvec` applies the operator.
pub type SolverFn<'a> = &'a dyn Fn(LinearFn, &[Array]) -> Result<(Vec<Array>, Array)>;

/// Solves `A x = b` with `solve`, differentiating by the implicit function theorem.
///
/// `matvec` applies `A` and may close over traced values (gradients flow to them);
/// `solve(matvec, b)` returns the solution and an i32 `info` scalar, and may close over
/// values that do not change the exact solution (initial guesses, tolerances,
/// preconditioners), which receive no gradient. `transpose_solve` solves with `Aᵀ` (given
/// the transposed operator); leave it `None` when `A` is symmetric.
///
/// ```no_run
/// # use quabla::{linalg, Array, Result};
/// // A = diag(2, 4): the operator multiplies, the (exact) solver divides.
/// fn diag(v: &[Array]) -> Result<Vec<Array>> {
///     Ok(vec![(&v[0] * &Array::from_slice(&[2.0f64, 4.0], &[2])?)?])
/// }
/// fn exact(_: linalg::LinearFn, b: &[Array]) -> Result<(Vec<Array>, Array)> {
///     let x = (&b[0] / &Array::from_slice(&[2.0f64, 4.0], &[2])?)?;
///     Ok((vec![x], Array::scalar(0i32)?))
/// }
/// let b = Array::from_slice(&[1.0f64, 1.0], &[2])?;
/// let (x, _info) = linalg::linear_solve(&diag, &[b], &exact, None)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn linear_solve(
    matvec: LinearFn,
    b: &[Array],
    solve: SolverFn,
    transpose_solve: Option<SolverFn>,
) -> Result<(Vec<Array>, Array)> {
    let first = b
        .first()
        .ok_or_else(|| Error::Value("linear_solve needs a right-hand side".into()))?;
    if let Some(bad) = b.iter().find(|v| !v.dtype().is_float()) {
        return Err(Error::DType(format!(
            "linear_solve: the right-hand side must be floating point, got {}; convert it with astype",
            bad.tensor_type()
        )));
    }
    let device = first.device().clone();
    let types: Vec<TensorType> = b.iter().map(|v| v.tensor_type().clone()).collect();
    let n = types.len();
    let (mv, mv_caps) = trace_function_capturing(&device, &types, matvec)?;
    if mv.output_types() != types {
        return Err(Error::Shape(format!(
            "linear_solve: matvec must return arrays shaped like b {}, got {}; the operator must be square",
            crate::ops::show_types(&types),
            crate::ops::show_types(&mv.output_types())
        )));
    }
    // Inside a solver region the operator is `mv` on the region's copy of its captures.
    let mv = &mv;
    let solver_region = |s: SolverFn, transposed: bool| -> Result<(Program, Vec<Array>)> {
        let inputs = [types.clone(), mv.inputs[n..].to_vec()].concat();
        trace_function_capturing(&device, &inputs, |a: &[Array]| {
            let caps = &a[n..];
            let (x, info) = if transposed {
                let known: Vec<bool> = (0..a.len()).map(|i| i >= n).collect();
                let mvt = crate::ad::transpose_region(&device, mv, &known)?;
                let op = |v: &[Array]| crate::eval::eval_program(&mvt, &[caps, v].concat());
                s(&op, &a[..n])?
            } else {
                let op = |v: &[Array]| crate::eval::eval_program(mv, &[v, caps].concat());
                s(&op, &a[..n])?
            };
            check_solution(&x, &info, &types)?;
            let mut out = x;
            out.push(info);
            Ok(out)
        })
    };
    let (sp, s_caps) = solver_region(solve, false)?;
    let (tp, t_caps) = match transpose_solve {
        Some(t) => solver_region(t, true)?,
        None => (Program::default(), vec![]),
    };
    let (nm, ns, nt) = (mv_caps.len(), s_caps.len(), t_caps.len());
    let consts: Vec<Array> = [mv_caps, s_caps, t_caps].concat();
    let k = nm + ns + nt;
    let mut region_types: Vec<TensorType> =
        consts.iter().map(|c| c.tensor_type().clone()).collect();
    region_types.extend(types.iter().cloned());
    // Every region takes (all consts..., vector...) and picks its own: the operator's
    // captures, then the solver's.
    let matvec_r = crate::trace::trace_function(&device, &region_types, |a: &[Array]| {
        crate::eval::eval_program(mv, &[&a[k..], &a[..nm]].concat())
    })?;
    let solver_r = |p: &Program, own: std::ops::Range<usize>| {
        crate::trace::trace_function(&device, &region_types, |a: &[Array]| {
            crate::eval::eval_program(p, &[&a[k..], &a[..nm], &a[own.clone()]].concat())
        })
    };
    let solve_r = solver_r(&sp, nm..nm + ns)?;
    let symmetric = transpose_solve.is_none();
    let transpose_r = if symmetric {
        solve_r.clone()
    } else {
        solver_r(&tp, nm + ns..k)?
    };
    let operands: Vec<Array> = consts.into_iter().chain(b.iter().cloned()).collect();
    let refs: Vec<&Array> = operands.iter().collect();
    let mut out_types = types.clone();
    out_types.push(TensorType::scalar(DType::I32));
    let mut outs = apply(
        Op::LinearSolve {
            matvec: Box::new(matvec_r),
            solve: Box::new(solve_r),
            transpose_solve: Box::new(transpose_r),
            num_consts: k,
            symmetric,
        },
        &refs,
        out_types,
    )?;
    let info = outs
        .pop()
        .ok_or_else(|| Error::Internal("linear_solve lost its info".into()))?;
    Ok((outs, info))
}

fn check_solution(x: &[Array], info: &Array, types: &[TensorType]) -> Result<()> {
    let got: Vec<TensorType> = x.iter().map(|v| v.tensor_type().clone()).collect();
    if got != types {
        return Err(Error::Shape(format!(
            "linear_solve: the solver returned {}, it must return arrays shaped like b {}",
            crate::ops::show_types(&got),
            crate::ops::show_types(types)
        )));
    }
    if info.tensor_type() != &TensorType::scalar(DType::I32) {
        return Err(Error::Shape(format!(
            "linear_solve: the solver's info must be an i32 scalar, got {}",
            info.tensor_type()
        )));
    }
    Ok(())
}

fn parts(op: &Op) -> (&Program, usize, bool) {
    match op {
        Op::LinearSolve {
            matvec,
            num_consts,
            symmetric,
            ..
        } => (matvec, *num_consts, *symmetric),
        _ => unreachable!("dispatched for linear_solve"),
    }
}

/// `x` and its tangent, which solves `A dx = db - (∂A/∂consts · dconsts) x`.
pub(crate) fn jvp(
    node: &Node,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    let (matvec, k, _) = parts(&node.op);
    let refs: Vec<&Array> = primals.iter().collect();
    let outs = apply(node.op.clone(), &refs, node.results.clone())?;
    let nb = primals.len() - k;
    let x = &outs[..nb];
    let mut rhs: Vec<Option<Array>> = tangents[k..].to_vec();
    if tangents[..k].iter().any(Option::is_some) {
        let mut mv_tangents = tangents[..k].to_vec();
        mv_tangents.extend(vec![None; nb]);
        let (_, dax) = jvp_walk(matvec, &[&primals[..k], x].concat(), &mv_tangents)?;
        for (r, d) in rhs.iter_mut().zip(dax) {
            if let Some(d) = d {
                *r = Some(match r.take() {
                    Some(db) => (&db - &d)?,
                    None => d.neg()?,
                });
            }
        }
    }
    if rhs.iter().all(Option::is_none) {
        return Ok((outs, vec![None; node.results.len()]));
    }
    let mut operands = primals[..k].to_vec();
    for (r, xi) in rhs.into_iter().zip(x) {
        operands.push(match r {
            Some(r) => r,
            None => xi.zeros_like()?,
        });
    }
    let refs: Vec<&Array> = operands.iter().collect();
    let mut dx = apply(node.op.clone(), &refs, node.results.clone())?;
    dx.pop();
    let mut touts: Vec<Option<Array>> = dx.into_iter().map(Some).collect();
    touts.push(None);
    Ok((outs, touts))
}

/// Cotangents of `b`: the same solve with `Aᵀ` (`matvec` transposed, the solvers swapped).
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let (matvec, k, symmetric) = parts(&a.node.op);
    if a.operands[..k].iter().any(|o| o.is_linear()) {
        return Err(Error::Value(
            "linear_solve is not linear in its operator's parameters".into(),
        ));
    }
    let consts: Vec<Array> = a.operands[..k]
        .iter()
        .map(|o| o.known("linear_solve").cloned())
        .collect::<Result<_>>()?;
    let nb = a.node.results.len() - 1;
    let like = consts
        .first()
        .or_else(|| a.cts.iter().flatten().next())
        .ok_or_else(|| Error::Internal("linear_solve: transpose without values".into()))?
        .clone();
    let mut operands = consts;
    for (ct, t) in a.cts[..nb].iter().zip(&a.node.results) {
        operands.push(match ct {
            Some(c) => c.clone(),
            None => crate::ops::zeros_typed(&like, t)?,
        });
    }
    let op = if symmetric {
        a.node.op.clone()
    } else {
        let (solve, transpose_solve) = match &a.node.op {
            Op::LinearSolve {
                solve,
                transpose_solve,
                ..
            } => (solve.clone(), transpose_solve.clone()),
            _ => unreachable!("dispatched for linear_solve"),
        };
        let known: Vec<bool> = (0..k + nb).map(|i| i < k).collect();
        Op::LinearSolve {
            matvec: Box::new(crate::ad::transpose_region(like.device(), matvec, &known)?),
            solve: transpose_solve,
            transpose_solve: solve,
            num_consts: k,
            symmetric,
        }
    };
    let refs: Vec<&Array> = operands.iter().collect();
    let mut cts = apply(op, &refs, a.node.results.clone())?;
    cts.pop();
    let mut out: Vec<Option<Array>> = vec![None; k];
    out.extend(cts.into_iter().zip(&a.operands[k..]).map(|(c, o)| {
        if o.is_linear() {
            Some(c)
        } else {
            None
        }
    }));
    Ok(out)
}

/// Batching: unbatched operator parameters stay unbatched; the vectors and results get the
/// batch axis, and each element's solver loop stops at its own tolerance.
pub(crate) fn batch(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
    let (_, k, _) = parts(&a.node.op);
    let like = &a.args[0];
    let mut flags = a.batched[..k].to_vec();
    flags.extend(vec![true; a.args.len() - k]);
    let args: Vec<Array> = (0..a.args.len())
        .map(|i| {
            if flags[i] {
                a.batched_arg(i)
            } else {
                Ok(a.args[i].clone())
            }
        })
        .collect::<Result<_>>()?;
    let regions = a
        .node
        .op
        .regions()
        .into_iter()
        .map(|p| {
            let force = vec![true; p.outputs.len()];
            Ok(batch_region(p, &flags, a.size, &force, like)?.0)
        })
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&Array> = args.iter().collect();
    let types: Vec<TensorType> = (0..a.node.results.len())
        .map(|r| a.result_type(r))
        .collect();
    let outs = apply(a.node.op.with_regions(regions), &refs, types)?;
    Ok(outs.into_iter().map(|o| (o, true)).collect())
}
