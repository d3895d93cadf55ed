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
use quabla_abi::qir::{Node, Op, Program, ReduceKind, ValueId};
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
        Op::Scan { .. } => scan_jvp(node, primals, tangents),
        _ => unreachable!("dispatched for cond, while and scan"),
    }
}

/// Transpose of a tangent `cond`: operands `(index, known..., linear...)`.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let branches = match &a.node.op {
        Op::Cond { branches } => branches,
        Op::Scan { .. } => return scan_transpose(a),
        op => return crate::ad::rules::no_rule("transpose", op),
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
        Op::Scan { .. } => batch_scan(a),
        _ => unreachable!("dispatched for cond, while and scan"),
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

// ---- user API ---------------------------------------------------------------------------

use crate::trace::trace_function_capturing;

/// A region function over arrays.
pub type RegionFn<'a> = &'a dyn Fn(&[Array]) -> Result<Vec<Array>>;
/// A `fori_loop` body: `(i, carry) -> carry`.
pub type LoopBody<'a> = &'a dyn Fn(&Array, &[Array]) -> Result<Vec<Array>>;
/// A `scan` step: `(carry, x slices) -> (carry, y slices)`.
pub type ScanStep<'a> = &'a dyn Fn(&[Array], &[Array]) -> Result<(Vec<Array>, Vec<Array>)>;

fn show(ts: &[TensorType]) -> String {
    format!(
        "({})",
        ts.iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn device_for(args: &[&Array]) -> Result<std::sync::Arc<crate::runtime::Device>> {
    match args.first() {
        Some(a) => Ok(a.device().clone()),
        None => crate::runtime::default_device(),
    }
}

/// Traces each branch on `types` (closures may capture outer traced values) and returns
/// branch programs that all take `(operands..., every capture...)`, with the captures.
fn branch_programs(
    device: &std::sync::Arc<crate::runtime::Device>,
    fns: &[RegionFn],
    types: &[TensorType],
) -> Result<(Vec<Program>, Vec<Array>)> {
    let traced: Vec<(Program, Vec<Array>)> = fns
        .iter()
        .map(|f| trace_function_capturing(device, types, f))
        .collect::<Result<_>>()?;
    let out0 = traced[0].0.output_types();
    for (i, (p, _)) in traced.iter().enumerate() {
        let out = p.output_types();
        if out != out0 {
            return Err(Error::Type(format!(
                "cond/switch branches must return the same structure, shapes and dtypes: branch {i} returns {} but branch 0 returns {}",
                show(&out),
                show(&out0)
            )));
        }
    }
    let all: Vec<Array> = traced.iter().flat_map(|(_, c)| c.iter().cloned()).collect();
    let mut all_types = types.to_vec();
    all_types.extend(all.iter().map(|a| a.tensor_type().clone()));
    let n = types.len();
    let mut offset = n;
    let mut progs = Vec::new();
    for (p, caps) in &traced {
        let (start, len) = (offset, caps.len());
        offset += len;
        progs.push(crate::trace::trace_function(
            device,
            &all_types,
            |a: &[Array]| {
                let mut args = a[..n].to_vec();
                args.extend(a[start..start + len].iter().cloned());
                eval_program(p, &args)
            },
        )?);
    }
    Ok((progs, all))
}

fn run_cond(index: Array, fns: &[RegionFn], operands: &[Array]) -> Result<Vec<Array>> {
    let mut all: Vec<&Array> = vec![&index];
    all.extend(operands);
    let device = device_for(&all)?;
    let types: Vec<TensorType> = operands.iter().map(|a| a.tensor_type().clone()).collect();
    let (progs, caps) = branch_programs(&device, fns, &types)?;
    let out_types = progs[0].output_types();
    let mut args = vec![index];
    args.extend(operands.iter().cloned());
    args.extend(caps);
    let refs: Vec<&Array> = args.iter().collect();
    apply(Op::Cond { branches: progs }, &refs, out_types)
}

fn scalar_index(a: &Array, what: &str) -> Result<Array> {
    if a.ndim() != 0 {
        return Err(Error::Type(format!(
            "{what} must be a scalar, got {}",
            a.tensor_type()
        )));
    }
    if a.dtype().is_float() {
        return Err(Error::Type(format!(
            "{what} must be bool or integer, got {}",
            a.dtype()
        )));
    }
    a.astype(quabla_abi::DType::I32)
}

/// Runs `true_fn(operands)` if `pred` is true, else `false_fn(operands)`; only the selected
/// branch runs (so a NaN in the other never reaches values or gradients). Both branches must
/// return the same shapes and dtypes. The functions may close over traced values.
///
/// ```no_run
/// # use quabla::{lax, Array};
/// let x = Array::from_slice(&[-2.0f32], &[]).unwrap();
/// let p = x.gt(0.0).unwrap();
/// let y = lax::cond(&p, &|a: &[Array]| Ok(vec![a[0].log()?]), &|a: &[Array]| Ok(vec![a[0].neg()?]), &[x]).unwrap();
/// assert_eq!(y[0].item::<f32>().unwrap(), 2.0);
/// ```
pub fn cond(
    pred: &Array,
    true_fn: RegionFn,
    false_fn: RegionFn,
    operands: &[Array],
) -> Result<Vec<Array>> {
    run_cond(
        scalar_index(pred, "cond's predicate")?,
        &[false_fn, true_fn],
        operands,
    )
}

/// Runs `branches[index](operands)`, with `index` clamped into range (as `jax.lax.switch`).
pub fn switch(index: &Array, branches: &[RegionFn], operands: &[Array]) -> Result<Vec<Array>> {
    if branches.is_empty() {
        return Err(Error::Type("switch needs at least one branch".into()));
    }
    let i = scalar_index(index, "switch's index")?
        .maximum(0)?
        .minimum(branches.len() as i32 - 1)?;
    run_cond(i, branches, operands)
}

/// `while cond_fn(carry): carry = body_fn(carry)`. Forward-mode differentiable; reverse mode
/// needs static bounds (`fori_loop` with constant bounds, or `scan`).
pub fn while_loop(cond_fn: RegionFn, body_fn: RegionFn, init: &[Array]) -> Result<Vec<Array>> {
    let device = device_for(&init.iter().collect::<Vec<_>>())?;
    let types: Vec<TensorType> = init.iter().map(|a| a.tensor_type().clone()).collect();
    let (cprog, ccaps) = trace_function_capturing(&device, &types, cond_fn)?;
    if cprog.output_types() != vec![TensorType::scalar(quabla_abi::DType::Bool)] {
        return Err(Error::Type(format!(
            "while_loop's cond_fn must return one bool scalar, got {}",
            show(&cprog.output_types())
        )));
    }
    let (bprog, bcaps) = trace_function_capturing(&device, &types, body_fn)?;
    if bprog.output_types() != types {
        return Err(Error::Type(format!(
            "while_loop's body_fn must return the carry's structure, shapes and dtypes {}, got {}",
            show(&types),
            show(&bprog.output_types())
        )));
    }
    let (n, nc) = (init.len(), ccaps.len());
    let mut carry_types = types.clone();
    carry_types.extend(ccaps.iter().chain(&bcaps).map(|a| a.tensor_type().clone()));
    let cond_r = crate::trace::trace_function(&device, &carry_types, |c: &[Array]| {
        eval_program(&cprog, &[&c[..n], &c[n..n + nc]].concat())
    })?;
    let body_r = crate::trace::trace_function(&device, &carry_types, |c: &[Array]| {
        let mut out = eval_program(&bprog, &[&c[..n], &c[n + nc..]].concat())?;
        out.extend(c[n..].iter().cloned());
        Ok(out)
    })?;
    let mut carry = init.to_vec();
    carry.extend(ccaps);
    carry.extend(bcaps);
    let refs: Vec<&Array> = carry.iter().collect();
    let mut outs = apply(
        Op::While {
            cond: Box::new(cond_r),
            body: Box::new(body_r),
        },
        &refs,
        carry_types,
    )?;
    outs.truncate(n);
    Ok(outs)
}

/// A loop bound: a static integer (the loop becomes a `scan`, reverse-differentiable) or a
/// traced scalar (a `while_loop`, forward mode only), as JAX's `fori_loop`.
pub enum Bound {
    Static(i64),
    Traced(Array),
}

impl From<i64> for Bound {
    fn from(v: i64) -> Bound {
        Bound::Static(v)
    }
}
impl From<i32> for Bound {
    fn from(v: i32) -> Bound {
        Bound::Static(v as i64)
    }
}
impl From<usize> for Bound {
    fn from(v: usize) -> Bound {
        Bound::Static(v as i64)
    }
}
impl From<&Array> for Bound {
    fn from(a: &Array) -> Bound {
        Bound::Traced(a.clone())
    }
}

/// `for i in lower..upper: carry = body(i, carry)`, with `i` an i32 scalar.
pub fn fori_loop(
    lower: impl Into<Bound>,
    upper: impl Into<Bound>,
    body: LoopBody,
    init: &[Array],
) -> Result<Vec<Array>> {
    match (lower.into(), upper.into()) {
        (Bound::Static(lo), Bound::Static(hi)) => {
            let n = (hi - lo).max(0) as usize;
            let like = init
                .first()
                .ok_or_else(|| Error::Type("fori_loop needs a carry".into()))?;
            let idx = (crate::ops::iota_like(like, quabla_abi::DType::I32, &[n], 0)? + lo as i32)?;
            let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
                Ok((body(&x[0], c)?, vec![]))
            };
            Ok(scan(&step, init, &[idx], Some(n), false, 1)?.0)
        }
        (lo, hi) => {
            let as_array = |b: Bound, like: &Array| -> Result<Array> {
                match b {
                    Bound::Static(v) => {
                        crate::ops::zeros_typed(like, &TensorType::scalar(quabla_abi::DType::I32))?
                            + v as i32
                    }
                    Bound::Traced(a) => scalar_index(&a, "fori_loop's bound"),
                }
            };
            let like = init
                .first()
                .ok_or_else(|| Error::Type("fori_loop needs a carry".into()))?
                .clone();
            let (lo, hi) = (as_array(lo, &like)?, as_array(hi, &like)?);
            let n = init.len();
            let mut carry = vec![lo];
            carry.extend(init.iter().cloned());
            let c = |a: &[Array]| Ok(vec![a[0].lt(&hi)?]);
            let b = |a: &[Array]| {
                let mut next = vec![(&a[0] + 1)?];
                next.extend(body(&a[0], &a[1..=n])?);
                Ok(next)
            };
            Ok(while_loop(&c, &b, &carry)?.split_off(1))
        }
    }
}

/// `jax.lax.scan`: `f(carry, x) -> (carry, y)` over the leading axis of `xs`, returning the
/// final carry and the stacked `y`s. With `reverse` the steps run from the end. Reverse
/// mode differentiates it (the loop is recomputed in the backward pass, see the rules).
pub fn scan(
    f: ScanStep,
    init: &[Array],
    xs: &[Array],
    length: Option<usize>,
    reverse: bool,
    unroll: usize,
) -> Result<(Vec<Array>, Vec<Array>)> {
    if unroll == 0 {
        return Err(Error::Type("scan: unroll must be at least 1".into()));
    }
    let rows = match xs.first() {
        Some(x) => Some(
            *x.shape()
                .first()
                .ok_or_else(|| Error::Type("scan: every xs needs a leading axis".into()))?,
        ),
        None => None,
    };
    let length = match (length, rows) {
        (Some(m), Some(l)) if m != l => {
            return Err(Error::Type(format!(
                "scan: length {m} but xs have {l} rows"
            )))
        }
        (_, Some(l)) | (Some(l), None) => l,
        (None, None) => return Err(Error::Type("scan needs xs or a length".into())),
    };
    if xs.iter().any(|x| x.shape().first() != Some(&length)) {
        return Err(Error::Type(format!(
            "scan: every xs must have {length} rows"
        )));
    }
    let mut refs: Vec<&Array> = init.iter().collect();
    refs.extend(xs);
    let device = device_for(&refs)?;
    let carry_types: Vec<TensorType> = init.iter().map(|a| a.tensor_type().clone()).collect();
    let mut types = carry_types.clone();
    types.extend(
        xs.iter()
            .map(|x| TensorType::new(x.dtype(), x.shape()[1..].to_vec())),
    );
    let ncar = init.len();
    let ys_count = std::cell::Cell::new(0);
    let (prog, caps) = trace_function_capturing(&device, &types, |a: &[Array]| {
        let (c, y) = f(&a[..ncar], &a[ncar..])?;
        ys_count.set(y.len());
        Ok([c, y].concat())
    })?;
    let out = prog.output_types();
    if out[..ncar] != carry_types[..] {
        return Err(Error::Type(format!(
            "scan: f must return the carry {} first, got {}",
            show(&carry_types),
            show(&out[..ncar.min(out.len())])
        )));
    }
    // Body layout (consts, carry, x): the captures become consts.
    let mut body_types: Vec<TensorType> = caps.iter().map(|a| a.tensor_type().clone()).collect();
    body_types.extend(types.iter().cloned());
    let nc = caps.len();
    let body = crate::trace::trace_function(&device, &body_types, |a: &[Array]| {
        eval_program(&prog, &[&a[nc..], &a[..nc]].concat())
    })?;
    let mut operands: Vec<Array> = caps;
    operands.extend(init.iter().cloned());
    operands.extend(xs.iter().cloned());
    let refs: Vec<&Array> = operands.iter().collect();
    let mut res = scan_results(&body, length, ncar);
    let outs = apply(
        Op::Scan {
            body: Box::new(body),
            length,
            reverse,
            num_consts: nc,
            num_carry: ncar,
            unroll,
        },
        &refs,
        std::mem::take(&mut res),
    )?;
    let mut carry = outs;
    let ys = carry.split_off(ncar);
    debug_assert_eq!(ys.len(), ys_count.get());
    Ok((carry, ys))
}

fn scan_results(body: &Program, length: usize, ncar: usize) -> Vec<TensorType> {
    let out = body.output_types();
    let mut res = out[..ncar].to_vec();
    res.extend(
        out[ncar..]
            .iter()
            .map(|y| TensorType::new(y.dtype, [vec![length], y.shape.clone()].concat())),
    );
    res
}

/// The `while` loop a `scan` lowers to: the index, consts, carry, xs and the ys being filled
/// travel in the loop carry; each step reads its x slices and writes its y slices in place.
pub(crate) fn scan_as_while(
    device: &std::sync::Arc<crate::runtime::Device>,
    op: &Op,
    types: &[TensorType],
) -> Result<Program> {
    let Op::Scan {
        body,
        length,
        reverse,
        num_consts: nc,
        num_carry: ncar,
        unroll,
    } = op
    else {
        unreachable!("scan only")
    };
    let (length, reverse, nc, ncar, unroll) = (*length, *reverse, *nc, *ncar, (*unroll).max(1));
    let nx = types.len() - nc - ncar;
    let results = scan_results(body, length, ncar);
    let ys_types: Vec<TensorType> = results[ncar..].to_vec();
    crate::trace::trace_function(device, types, |ops: &[Array]| {
        let like = ops
            .first()
            .cloned()
            .ok_or_else(|| Error::Type("a scan needs at least one operand".into()))?;
        let i0 = crate::ops::zeros_typed(&like, &TensorType::scalar(quabla_abi::DType::I32))?;
        let mut carry = vec![i0];
        carry.extend(ops.iter().cloned());
        for t in &ys_types {
            carry.push(crate::ops::zeros_typed(&like, t)?);
        }
        let carry_types: Vec<TensorType> = carry.iter().map(|c| c.tensor_type().clone()).collect();
        // `unroll` steps per iteration over the whole blocks, then single steps for the rest;
        // the loop counter in the carry is the step index, so both loops continue it.
        let blocks = (length / unroll) * unroll;
        let mut loops = Vec::new();
        if blocks > 0 {
            loops.push((unroll, blocks));
        }
        if blocks < length {
            loops.push((1, length));
        }
        for (steps_per_iter, end) in loops {
            let cond = crate::trace::trace_function(device, &carry_types, |c: &[Array]| {
                Ok(vec![c[0].lt(end as i32)?])
            })?;
            let step = crate::trace::trace_function(device, &carry_types, |c: &[Array]| {
                let mut c = c.to_vec();
                for _ in 0..steps_per_iter {
                    c = scan_step(body, &c, length, reverse, nc, ncar, nx)?;
                }
                Ok(c)
            })?;
            let refs: Vec<&Array> = carry.iter().collect();
            carry = apply(
                Op::While {
                    cond: Box::new(cond),
                    body: Box::new(step),
                },
                &refs,
                carry_types.clone(),
            )?;
        }
        let mut res: Vec<Array> = carry[1 + nc..1 + nc + ncar].to_vec();
        res.extend(carry[1 + nc + ncar + nx..].iter().cloned());
        Ok(res)
    })
}

/// One step of a lowered scan on the loop carry `(i, consts, carry, xs, ys being filled)`.
fn scan_step(
    body: &Program,
    c: &[Array],
    length: usize,
    reverse: bool,
    nc: usize,
    ncar: usize,
    nx: usize,
) -> Result<Vec<Array>> {
    let i = &c[0];
    let idx = if reverse {
        (i.neg()? + (length as i32 - 1))?
    } else {
        i.clone()
    };
    let zero = i.zeros_like()?;
    let (consts, st) = (&c[1..1 + nc], &c[1 + nc..1 + nc + ncar]);
    let xs = &c[1 + nc + ncar..1 + nc + ncar + nx];
    let ys = &c[1 + nc + ncar + nx..];
    let mut args: Vec<Array> = consts.to_vec();
    args.extend(st.iter().cloned());
    for x in xs {
        let starts: Vec<&Array> = std::iter::once(&idx)
            .chain(std::iter::repeat_n(&zero, x.ndim() - 1))
            .collect();
        let sizes: Vec<usize> = std::iter::once(1)
            .chain(x.shape()[1..].iter().copied())
            .collect();
        let rest: Vec<isize> = x.shape()[1..].iter().map(|&d| d as isize).collect();
        args.push(x.dynamic_slice(&starts, &sizes)?.reshape(&rest)?);
    }
    let outs = eval_program(body, &args)?;
    let mut next = vec![(i + 1)?];
    next.extend(consts.iter().cloned());
    next.extend(outs[..ncar].iter().cloned());
    next.extend(xs.iter().cloned());
    for (acc, y) in ys.iter().zip(&outs[ncar..]) {
        let starts: Vec<&Array> = std::iter::once(&idx)
            .chain(std::iter::repeat_n(&zero, acc.ndim() - 1))
            .collect();
        next.push(acc.dynamic_update_slice(&y.expand_dims(0)?, &starts)?);
    }
    Ok(next)
}

// ---- scan rules ---------------------------------------------------------------------------

use crate::ad::jvp_support::instantiate_all;

/// Which outputs of `p` depend on the inputs flagged in `linear`.
fn linear_outputs(p: &Program, linear: &[bool]) -> Vec<bool> {
    let mut lin = linear.to_vec();
    for n in &p.nodes {
        let l = n.operands.iter().any(|o| lin[o.index()]);
        lin.extend(n.results.iter().map(|_| l));
    }
    p.outputs.iter().map(|o| lin[o.index()]).collect()
}

fn split_scan(op: &Op) -> (&Program, usize, bool, usize, usize) {
    let Op::Scan {
        body,
        length,
        reverse,
        num_consts,
        num_carry,
        ..
    } = op
    else {
        unreachable!("scan only")
    };
    (body, *length, *reverse, *num_consts, *num_carry)
}

/// JVP of a scan: the primal scan plus a tangent scan over the differentiated body, with
/// layout `(consts, tangent consts | carry, tangent carry | xs, tangent xs)`.
fn scan_jvp(
    node: &Node,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    let (body, length, reverse, nc, ncar) = split_scan(&node.op);
    let like = &primals[0];
    let refs: Vec<&Array> = primals.iter().collect();
    let outs = apply(node.op.clone(), &refs, node.results.clone())?;
    let n = primals.len();
    let groups = [(0, nc), (nc, nc + ncar), (nc + ncar, n)];
    let fl = |r: (usize, usize)| -> Vec<usize> {
        (r.0..r.1)
            .filter(|&i| body.inputs[i].dtype.is_float())
            .collect()
    };
    let (fc, fcar, fx) = (fl(groups[0]), fl(groups[1]), fl(groups[2]));
    // Body inputs: consts, t consts, carry, t carry, x, t x.
    let mut types = Vec::new();
    for (r, f) in groups.iter().zip([&fc, &fcar, &fx]) {
        types.extend(body.inputs[r.0..r.1].iter().cloned());
        types.extend(f.iter().map(|&i| body.inputs[i].clone()));
    }
    let body_out = body.output_types();
    let ny = body_out.len() - ncar;
    let fy: Vec<usize> = (0..ny)
        .filter(|&k| body_out[ncar + k].dtype.is_float())
        .collect();
    let tbody = crate::trace::trace_function(like.device(), &types, |a: &[Array]| {
        let mut prim = Vec::with_capacity(n);
        let mut tans: Vec<Option<Array>> = vec![None; n];
        let mut pos = 0;
        for (r, f) in groups.iter().zip([&fc, &fcar, &fx]) {
            prim.extend(a[pos..pos + (r.1 - r.0)].iter().cloned());
            pos += r.1 - r.0;
            for &i in f.iter() {
                tans[i] = Some(a[pos].clone());
                pos += 1;
            }
        }
        let (o, t) = crate::ad::jvp_support::jvp_walk_pub(body, &prim, &tans)?;
        let t = instantiate_all(&o, t)?;
        let mut res: Vec<Array> = o[..ncar].to_vec();
        res.extend(fcar.iter().map(|&i| t[i - nc].clone()));
        res.extend(o[ncar..].iter().cloned());
        res.extend(fy.iter().map(|&k| t[ncar + k].clone()));
        Ok(res)
    })?;
    let ft = |r: &[usize]| -> Result<Vec<Array>> {
        r.iter()
            .map(|&i| {
                tangents[i]
                    .clone()
                    .map(Ok)
                    .unwrap_or_else(|| primals[i].zeros_like())
            })
            .collect()
    };
    let mut operands = primals[..nc].to_vec();
    operands.extend(ft(&fc)?);
    operands.extend(primals[nc..nc + ncar].iter().cloned());
    operands.extend(ft(&fcar)?);
    operands.extend(primals[nc + ncar..].iter().cloned());
    operands.extend(ft(&fx)?);
    let tnc = nc + fc.len();
    let tncar = ncar + fcar.len();
    let op = Op::Scan {
        body: Box::new(tbody),
        length,
        reverse,
        num_consts: tnc,
        num_carry: tncar,
        unroll: 1,
    };
    let refs: Vec<&Array> = operands.iter().collect();
    let tb = op.regions()[0].clone();
    let touts = apply(op, &refs, scan_results(&tb, length, tncar))?;
    // Results: carry, t carry, ys, t ys.
    let mut t_out: Vec<Option<Array>> = vec![None; node.results.len()];
    for (k, &i) in fcar.iter().enumerate() {
        t_out[i - nc] = Some(touts[ncar + k].clone());
    }
    for (k, &j) in fy.iter().enumerate() {
        t_out[ncar + j] = Some(touts[tncar + ny + k].clone());
    }
    Ok((outs, t_out))
}

/// Transpose of a scan that is linear in some operands: the known part of the body is run
/// forward again (inside the backward pass) to produce each step's residuals, then the
/// transposed linear part runs backward over the steps, accumulating the cotangents of
/// linear consts in its carry.
fn scan_transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let (body, length, reverse, nc, ncar) = split_scan(&a.node.op);
    let n = a.operands.len();
    let mut lin: Vec<bool> = a.operands.iter().map(|o| o.is_linear()).collect();
    // A carry is linear if it starts linear or its update reads anything linear.
    loop {
        let out = linear_outputs(body, &lin);
        let mut changed = false;
        for c in 0..ncar {
            if out[c] && !lin[nc + c] {
                lin[nc + c] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let out_lin = linear_outputs(body, &lin);
    let ny = out_lin.len() - ncar;
    let known_in: Vec<usize> = (0..n).filter(|&i| !lin[i]).collect();
    let lin_in: Vec<usize> = (0..n).filter(|&i| lin[i]).collect();
    let known_out: Vec<usize> = (0..ncar + ny).filter(|&k| !out_lin[k]).collect();
    let lin_out: Vec<usize> = (0..ncar + ny).filter(|&k| out_lin[k]).collect();
    let known_vals: Vec<Array> = known_in
        .iter()
        .map(|&i| a.operands[i].known("scan").cloned())
        .collect::<Result<_>>()?;
    let like = known_vals
        .first()
        .cloned()
        .or_else(|| a.cts.iter().flatten().next().cloned())
        .ok_or_else(|| Error::Type("scan transpose without values".into()))?;
    let device = like.device().clone();
    // The body reordered: known inputs then linear; known outputs then linear.
    let order: Vec<usize> = known_in.iter().chain(&lin_in).copied().collect();
    let types: Vec<TensorType> = order.iter().map(|&i| body.inputs[i].clone()).collect();
    let reordered = crate::trace::trace_function(&device, &types, |x: &[Array]| {
        let mut args: Vec<Option<Array>> = vec![None; n];
        for (pos, &i) in order.iter().enumerate() {
            args[i] = Some(x[pos].clone());
        }
        let outs = eval_program(body, &args.into_iter().flatten().collect::<Vec<_>>())?;
        Ok(known_out
            .iter()
            .chain(&lin_out)
            .map(|&k| outs[k].clone())
            .collect())
    })?;
    let (fwd, bwd) =
        crate::ad::partial_eval_transpose(&device, &reordered, known_in.len(), known_out.len())?;
    // Forward: known consts, known carries, known xs -> known carries, (known ys, residuals).
    let count = |r: std::ops::Range<usize>| known_in.iter().filter(|i| r.contains(i)).count();
    let (kc, kcar) = (count(0..nc), count(nc..nc + ncar));
    let nres = fwd.outputs.len() - known_out.len();
    let nko = known_out.len();
    // Residuals that depend only on the consts are loop-invariant: computed once, passed to
    // the backward loop as consts, never stacked per step.
    let varying_in: Vec<bool> = (0..fwd.inputs.len()).map(|i| i >= kc).collect();
    let varying = linear_outputs(&fwd, &varying_in);
    let inv: Vec<usize> = (0..nres).filter(|&r| !varying[nko + r]).collect();
    let var: Vec<usize> = (0..nres).filter(|&r| varying[nko + r]).collect();
    let keep_outputs = |outs: Vec<ValueId>| {
        crate::passes::dce(&Program {
            inputs: fwd.inputs.clone(),
            nodes: fwd.nodes.clone(),
            outputs: outs,
        })
    };
    let fwd_var = keep_outputs(
        fwd.outputs[..nko]
            .iter()
            .chain(var.iter().map(|&r| &fwd.outputs[nko + r]))
            .copied()
            .collect(),
    );
    let invariant: Vec<Array> = if inv.is_empty() {
        vec![]
    } else {
        let hoisted = keep_outputs(inv.iter().map(|&r| fwd.outputs[nko + r]).collect());
        let mut args: Vec<Array> = known_vals[..kc].to_vec();
        for t in &fwd.inputs[kc..] {
            args.push(crate::ops::zeros_typed(&like, t)?);
        }
        eval_program(&hoisted, &args)?
    };
    let checkpointed = length >= CHECKPOINT_MIN_LENGTH
        && std::env::var("QUABLA_SCAN_TAPE").map_or(true, |v| v != "full");
    let residual_stacks: Vec<Array> = if checkpointed {
        vec![]
    } else {
        let fwd_op = Op::Scan {
            body: Box::new(fwd_var.clone()),
            length,
            reverse,
            num_consts: kc,
            num_carry: kcar,
            unroll: 1,
        };
        let refs: Vec<&Array> = known_vals.iter().collect();
        let fouts = apply(fwd_op, &refs, scan_results(&fwd_var, length, kcar))?;
        fouts[fouts.len() - var.len()..].to_vec()
    };
    if !checkpointed {
        record_tape(&residual_stacks);
    }
    // Backward over the steps, in the opposite order.
    let lin_c: Vec<usize> = lin_in.iter().copied().filter(|&i| i < nc).collect();
    let lin_car: Vec<usize> = lin_in
        .iter()
        .copied()
        .filter(|&i| (nc..nc + ncar).contains(&i))
        .collect();
    let lin_y: Vec<usize> = lin_out.iter().copied().filter(|&k| k >= ncar).collect();
    let ct_or_zero = |k: usize| -> Result<Array> {
        match &a.cts[k] {
            Some(c) => Ok(c.clone()),
            None => crate::ops::zeros_typed(&like, &a.node.results[k]),
        }
    };
    let mut init: Vec<Array> = lin_c
        .iter()
        .map(|&i| crate::ops::zeros_typed(&like, &body.inputs[i]))
        .collect::<Result<_>>()?;
    for &i in &lin_car {
        init.push(ct_or_zero(i - nc)?);
    }
    let ct_y_stacks: Vec<Array> = lin_y
        .iter()
        .map(|&k| ct_or_zero(k))
        .collect::<Result<_>>()?;
    let (nlc, nlcar, ninv, nvar) = (lin_c.len(), lin_car.len(), inv.len(), var.len());
    let mut btypes: Vec<TensorType> = invariant.iter().map(|c| c.tensor_type().clone()).collect();
    btypes.extend(init.iter().map(|c| c.tensor_type().clone()));
    // Per-step slices: the varying residuals, then the output cotangents.
    btypes.extend(fwd_var.output_types()[nko..].iter().cloned());
    btypes.extend(
        ct_y_stacks
            .iter()
            .map(|x| TensorType::new(x.dtype(), x.shape()[1..].to_vec())),
    );
    let back_body = crate::trace::trace_function(&device, &btypes, |c: &[Array]| {
        let (consts, c) = c.split_at(ninv);
        let (acc, ct_car) = (&c[..nlc], &c[nlc..nlc + nlcar]);
        let (res_var, ct_y) = (
            &c[nlc + nlcar..nlc + nlcar + nvar],
            &c[nlc + nlcar + nvar..],
        );
        // bwd takes (residuals in its order, cotangents of the linear outputs).
        let mut res: Vec<Option<Array>> = vec![None; nres];
        for (k, &r) in inv.iter().enumerate() {
            res[r] = Some(consts[k].clone());
        }
        for (k, &r) in var.iter().enumerate() {
            res[r] = Some(res_var[k].clone());
        }
        let mut args: Vec<Array> = res.into_iter().flatten().collect();
        args.extend(ct_car.iter().cloned());
        args.extend(ct_y.iter().cloned());
        let cts = eval_program(&bwd, &args)?;
        let mut next: Vec<Array> = acc
            .iter()
            .zip(&cts[..nlc])
            .map(|(x, y)| x + y)
            .collect::<Result<_>>()?;
        next.extend(cts[nlc..nlc + nlcar].iter().cloned());
        next.extend(cts[nlc + nlcar..].iter().cloned());
        Ok(next)
    })?;
    let bouts = if checkpointed {
        let plan = Checkpointed {
            length,
            reverse,
            kc,
            kcar,
            nvar,
            ninv,
            nlc,
            nlcar,
            nko,
        };
        plan.backward(
            &device,
            &like,
            &fwd_var,
            &back_body,
            &known_vals,
            &invariant,
            init,
            ct_y_stacks,
        )?
    } else {
        let back_op = Op::Scan {
            body: Box::new(back_body.clone()),
            length,
            reverse: !reverse,
            num_consts: ninv,
            num_carry: nlc + nlcar,
            unroll: 1,
        };
        let mut ops = invariant;
        ops.extend(init);
        ops.extend(residual_stacks);
        ops.extend(ct_y_stacks);
        let refs: Vec<&Array> = ops.iter().collect();
        apply(
            back_op,
            &refs,
            scan_results(&back_body, length, nlc + nlcar),
        )?
    };
    let mut out: Vec<Option<Array>> = vec![None; n];
    for (k, &i) in lin_c.iter().chain(&lin_car).enumerate() {
        out[i] = Some(bouts[k].clone());
    }
    for (k, &i) in lin_in.iter().filter(|&&i| i >= nc + ncar).enumerate() {
        out[i] = Some(bouts[nlc + nlcar + k].clone());
    }
    // Operands made linear only by the fixed point (known inputs) get no cotangent.
    Ok(out
        .into_iter()
        .zip(a.operands)
        .map(|(c, o)| if o.is_linear() { c } else { None })
        .collect())
}

/// Batching a scan: batched xs are scanned along their second axis, batched ys come out
/// with the batch axis first; carries are batched to a fixed point as in `while`.
fn batch_scan(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
    let (body, length, reverse, nc, ncar) = split_scan(&a.node.op);
    let like = &a.args[0];
    let size = a.size;
    let mut flags = a.batched.to_vec();
    let nout = body.outputs.len();
    loop {
        let mut force = vec![false; nout];
        force[..ncar].copy_from_slice(&flags[nc..nc + ncar]);
        let (_, f) = crate::batching::batch_region(body, &flags, size, &force, like)?;
        let mut changed = false;
        for c in 0..ncar {
            if f[c] && !flags[nc + c] {
                flags[nc + c] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut force = vec![false; nout];
    force[..ncar].copy_from_slice(&flags[nc..nc + ncar]);
    let (bbody, out_flags) = crate::batching::batch_region(body, &flags, size, &force, like)?;
    let mut ops = Vec::with_capacity(a.args.len());
    for (i, x) in a.args.iter().enumerate() {
        ops.push(if i >= nc + ncar && flags[i] {
            // [B, T, ...] -> [T, B, ...]: the scan walks axis 0.
            let mut perm: Vec<usize> = (0..x.ndim()).collect();
            perm.swap(0, 1);
            x.transpose(&perm)?
        } else if flags[i] {
            with_batch(x, a.batched[i], size)?
        } else {
            x.clone()
        });
    }
    let refs: Vec<&Array> = ops.iter().collect();
    let op = Op::Scan {
        body: Box::new(bbody.clone()),
        length,
        reverse,
        num_consts: nc,
        num_carry: ncar,
        unroll: 1,
    };
    let outs = apply(op, &refs, scan_results(&bbody, length, ncar))?;
    outs.into_iter()
        .enumerate()
        .map(|(k, o)| {
            let b = out_flags[k];
            if k >= ncar && b {
                let mut perm: Vec<usize> = (0..o.ndim()).collect();
                perm.swap(0, 1);
                Ok((o.transpose(&perm)?, true))
            } else {
                Ok((o, b))
            }
        })
        .collect()
}

/// Loops at least this long keep a sqrt(T) checkpointed tape in reverse mode (set
/// `QUABLA_SCAN_TAPE=full` to store every step's residuals instead).
const CHECKPOINT_MIN_LENGTH: usize = 64;

thread_local! {
    /// Set by the transformation on the thread that builds the backward pass.
    static LAST_TAPE_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn bytes_of(arrays: &[Array]) -> usize {
    arrays.iter().map(|a| a.tensor_type().size_bytes()).sum()
}

fn record_tape(arrays: &[Array]) {
    LAST_TAPE_BYTES.with(|c| c.set(bytes_of(arrays)));
}

/// Bytes of loop state the last reverse-mode `scan` kept for its backward pass (the carry
/// checkpoints plus one segment's residuals when checkpointed, every step's residuals
/// otherwise), as built by the transformation. A diagnostic for memory measurements.
pub fn last_scan_tape_bytes() -> usize {
    LAST_TAPE_BYTES.with(|c| c.get())
}

/// The sqrt(T) checkpointed backward pass of a scan: carries are kept at the start of each
/// of S = ceil(T / K) segments of K = ceil(sqrt(T)) steps; going backward, each segment's
/// residuals are recomputed from its checkpoint, then its steps are transposed. Storage is
/// O(sqrt(T)) carries and residuals; the known part is recomputed once (2x forward work).
/// Steps past T (padding to S * K) leave carries and cotangents unchanged.
struct Checkpointed {
    length: usize,
    reverse: bool,
    kc: usize,
    kcar: usize,
    nvar: usize,
    ninv: usize,
    nlc: usize,
    nlcar: usize,
    nko: usize,
}

fn flip0(x: &Array) -> Result<Array> {
    x.flip(&[0])
}

fn pad_rows(x: &Array, rows: usize) -> Result<Array> {
    let extra = rows - x.shape()[0];
    if extra == 0 {
        return Ok(x.clone());
    }
    let mut high = vec![0i64; x.ndim()];
    high[0] = extra as i64;
    x.pad(0, &vec![0; x.ndim()], &high, &vec![0; x.ndim()])
}

fn segments(x: &Array, s: usize, k: usize) -> Result<Array> {
    let shape: Vec<isize> = [s as isize, k as isize]
        .into_iter()
        .chain(x.shape()[1..].iter().map(|&d| d as isize))
        .collect();
    x.reshape(&shape)
}

fn slice_type(t: &TensorType) -> TensorType {
    TensorType::new(t.dtype, t.shape[1..].to_vec())
}

impl Checkpointed {
    #[allow(clippy::too_many_arguments)]
    fn backward(
        &self,
        device: &std::sync::Arc<crate::runtime::Device>,
        like: &Array,
        fwd: &Program,
        back: &Program,
        known_vals: &[Array],
        invariant: &[Array],
        init: Vec<Array>,
        ct_ys: Vec<Array>,
    ) -> Result<Vec<Array>> {
        let Checkpointed {
            length: t,
            reverse,
            kc,
            kcar,
            nvar,
            ninv,
            nlc,
            nlcar,
            nko,
        } = *self;
        let k = (t as f64).sqrt().ceil() as usize;
        let s = t.div_ceil(k);
        let p = s * k;
        let (consts, carries) = (&known_vals[..kc], &known_vals[kc..kc + kcar]);
        let order = |x: &Array| if reverse { flip0(x) } else { Ok(x.clone()) };
        let kxs: Vec<Array> = known_vals[kc + kcar..]
            .iter()
            .map(|x| segments(&pad_rows(&order(x)?, p)?, s, k))
            .collect::<Result<_>>()?;
        let cty: Vec<Array> = ct_ys
            .iter()
            .map(|x| segments(&pad_rows(&order(x)?, p)?, s, k))
            .collect::<Result<_>>()?;
        let steps = segments(
            &crate::ops::iota_like(like, quabla_abi::DType::I32, &[p], 0)?,
            s,
            k,
        )?;
        let nkx = kxs.len();
        let i32s = TensorType::scalar(quabla_abi::DType::I32);
        // One known step with masking: (consts, carries, x, step) -> (carries, residuals).
        let mut ftypes: Vec<TensorType> = fwd.inputs.clone();
        ftypes.push(i32s.clone());
        let known_step = crate::trace::trace_function(device, &ftypes, |a: &[Array]| {
            let (args, step) = a.split_at(a.len() - 1);
            let out = eval_program(fwd, args)?;
            let valid = step[0].lt(t as i32)?;
            let mut res = Vec::with_capacity(kcar + nvar);
            for c in 0..kcar {
                res.push(
                    valid
                        .broadcast_in_dim(out[c].shape(), &[])?
                        .select(&out[c], &args[kc + c])?,
                );
            }
            res.extend(out[nko..].iter().cloned());
            Ok(res)
        })?;
        let carries_only = crate::passes::dce(&Program {
            inputs: known_step.inputs.clone(),
            nodes: known_step.nodes.clone(),
            outputs: known_step.outputs[..kcar].to_vec(),
        });
        let seg_types = |xs: &[Array]| -> Vec<TensorType> {
            xs.iter().map(|x| slice_type(x.tensor_type())).collect()
        };
        // Phase A: carries at every segment start.
        let mut atypes: Vec<TensorType> = known_vals[..kc + kcar]
            .iter()
            .map(|v| v.tensor_type().clone())
            .collect();
        atypes.extend(seg_types(&kxs));
        atypes.push(slice_type(steps.tensor_type()));
        let seg_forward = crate::trace::trace_function(device, &atypes, |a: &[Array]| {
            let op = Op::Scan {
                body: Box::new(carries_only.clone()),
                length: k,
                reverse: false,
                num_consts: kc,
                num_carry: kcar,
                unroll: 1,
            };
            let refs: Vec<&Array> = a.iter().collect();
            let mut out = apply(op, &refs, scan_results(&carries_only, k, kcar))?;
            out.truncate(kcar);
            out.extend(a[kc..kc + kcar].iter().cloned());
            Ok(out)
        })?;
        let mut ops: Vec<Array> = known_vals[..kc + kcar].to_vec();
        ops.extend(kxs.iter().cloned());
        ops.push(steps.clone());
        let refs: Vec<&Array> = ops.iter().collect();
        let a_out = apply(
            Op::Scan {
                body: Box::new(seg_forward.clone()),
                length: s,
                reverse: false,
                num_consts: kc,
                num_carry: kcar,
                unroll: 1,
            },
            &refs,
            scan_results(&seg_forward, s, kcar),
        )?;
        let checkpoints: Vec<Array> = a_out[kcar..].to_vec();
        // One backward step with masking.
        let mut btypes: Vec<TensorType> = back.inputs.clone();
        btypes.push(i32s);
        let back_step = crate::trace::trace_function(device, &btypes, |a: &[Array]| {
            let (args, step) = a.split_at(a.len() - 1);
            let out = eval_program(back, args)?;
            let valid = step[0].lt(t as i32)?;
            let mut res = Vec::with_capacity(out.len());
            for (j, o) in out.iter().enumerate() {
                res.push(if j < nlc + nlcar {
                    valid
                        .broadcast_in_dim(o.shape(), &[])?
                        .select(o, &args[ninv + j])?
                } else {
                    o.clone()
                });
            }
            Ok(res)
        })?;
        // Phase B: segments backward; each recomputes its residuals from its checkpoint.
        let state: Vec<TensorType> = init.iter().map(|v| v.tensor_type().clone()).collect();
        let mut otypes: Vec<TensorType> = consts
            .iter()
            .chain(invariant)
            .map(|v| v.tensor_type().clone())
            .collect();
        otypes.extend(state.iter().cloned());
        otypes.extend(seg_types(&checkpoints));
        otypes.extend(seg_types(&kxs));
        otypes.extend(seg_types(&cty));
        otypes.push(slice_type(steps.tensor_type()));
        let ncty = cty.len();
        let seg_backward = crate::trace::trace_function(device, &otypes, |a: &[Array]| {
            let (cs, rest) = a.split_at(kc);
            let (inv, rest) = rest.split_at(ninv);
            let (st, rest) = rest.split_at(nlc + nlcar);
            let (ck, rest) = rest.split_at(kcar);
            let (xs, rest) = rest.split_at(nkx);
            let (cy, step) = rest.split_at(ncty);
            let mut fops: Vec<Array> = cs.to_vec();
            fops.extend(ck.iter().cloned());
            fops.extend(xs.iter().cloned());
            fops.push(step[0].clone());
            let refs: Vec<&Array> = fops.iter().collect();
            let f = apply(
                Op::Scan {
                    body: Box::new(known_step.clone()),
                    length: k,
                    reverse: false,
                    num_consts: kc,
                    num_carry: kcar,
                    unroll: 1,
                },
                &refs,
                scan_results(&known_step, k, kcar),
            )?;
            let res_stacks = &f[kcar..];
            let mut bops: Vec<Array> = inv.to_vec();
            bops.extend(st.iter().cloned());
            bops.extend(res_stacks.iter().cloned());
            bops.extend(cy.iter().cloned());
            bops.push(step[0].clone());
            let refs: Vec<&Array> = bops.iter().collect();
            apply(
                Op::Scan {
                    body: Box::new(back_step.clone()),
                    length: k,
                    reverse: true,
                    num_consts: ninv,
                    num_carry: nlc + nlcar,
                    unroll: 1,
                },
                &refs,
                scan_results(&back_step, k, nlc + nlcar),
            )
        })?;
        let mut ops: Vec<Array> = consts.to_vec();
        ops.extend(invariant.iter().cloned());
        ops.extend(init);
        ops.extend(checkpoints.iter().cloned());
        ops.extend(kxs);
        ops.extend(cty);
        ops.push(steps);
        let refs: Vec<&Array> = ops.iter().collect();
        let nstate = nlc + nlcar;
        let b_out = apply(
            Op::Scan {
                body: Box::new(seg_backward.clone()),
                length: s,
                reverse: true,
                num_consts: kc + ninv,
                num_carry: nstate,
                unroll: 1,
            },
            &refs,
            scan_results(&seg_backward, s, nstate),
        )?;
        // Stored between the passes: the checkpoints, and one segment's residuals at a time.
        let seg_res: usize = known_step.output_types()[kcar..]
            .iter()
            .map(|t| t.size_bytes())
            .sum::<usize>()
            * k;
        LAST_TAPE_BYTES.with(|c| c.set(bytes_of(&checkpoints) + seg_res));
        let mut out = b_out[..nstate].to_vec();
        for g in &b_out[nstate..] {
            let rows: Vec<isize> = std::iter::once(p as isize)
                .chain(g.shape()[2..].iter().map(|&d| d as isize))
                .collect();
            let flat = g.reshape(&rows)?;
            let mut start = vec![0; flat.ndim()];
            let mut limit = flat.shape().to_vec();
            start[0] = 0;
            limit[0] = t;
            let kept = flat.slice(&start, &limit, &vec![1; flat.ndim()])?;
            out.push(if reverse { flip0(&kept)? } else { kept });
        }
        let _ = carries;
        Ok(out)
    }
}
