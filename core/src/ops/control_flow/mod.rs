//! The region primitives `cond` and `while`: their JVP, transpose and batching rules. (The
//! user-facing `cond`, `switch`, `while_loop`, `fori_loop` and `scan` build on these.)
//!
//! - JVP of `cond`: one `cond` whose branches compute the outputs and their tangents from
//!   `(args, tangents)`, so forward mode runs the selected branch once. It is linear in the
//!   tangents; reverse mode takes the primal outputs from its known part (`known_part`), and
//!   its transpose is a `cond` over the branches' transposes, so reverse mode runs only the
//!   selected branch (a NaN in another branch never leaks into values or gradients).
//! - JVP of `while`: one loop carrying tangents beside the primal carry (forward mode only;
//!   `bounded_while`, in its own module, is the loop reverse mode can transpose).
//! - Partial evaluation (`known_part`): the part of a region node that reads known operands
//!   only, as its own node (JAX's `partial_eval_jaxpr_custom` rules).
//! - Batching: a batched `cond` index becomes a select over the branches some element takes
//!   (each behind an unbatched `cond` on whether any does); a batched `while`
//!   predicate runs until every element is done, freezing finished elements' carries.

use super::apply;
use crate::ad::jvp_support::{float_tangents, jvp_region};
use crate::ad::rules::TransposeArgs;
use crate::array::Array;
use crate::batching::{batch_region, with_batch, BatchArgs};
use crate::error::{Error, Result};
use crate::eval::eval_program;
use crate::trace::trace_function;
use quabla_abi::qir::{Node, Op, Program, ReduceKind};
use quabla_abi::TensorType;

mod bounded_while;
mod bounded_while_transpose;
mod known_part;
mod loop_linearity;
mod scan;
mod scan_tape;

pub(crate) use bounded_while::bounded_while_as_while;
pub use bounded_while::{
    bounded_while_loop, bounded_while_loop_with, BoundedWhileOptions, CheckpointSchedule,
};
pub(crate) use known_part::{known_part, KnownPart};
pub use scan::scan;
pub(crate) use scan::scan_as_while;
use scan::{batch_scan, scan_jvp, scan_results, scan_transpose};
pub use scan_tape::{last_scan_tape_bytes, take_scan_tape_bytes};

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
            let jbranches = branches
                .iter()
                .map(|b| jvp_region(b, like))
                .collect::<Result<Vec<_>>>()?;
            let mut operands = primals.to_vec();
            operands.extend(float_tangents(&primals[1..], &tangents[1..])?);
            let refs: Vec<&Array> = operands.iter().collect();
            let mut declared = node.results.clone();
            declared.extend(float_types(&node.results));
            let mut outs = apply(
                Op::Cond {
                    branches: jbranches,
                },
                &refs,
                declared,
            )?;
            let touts = outs.split_off(node.results.len());
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
        Op::BoundedWhile { .. } => bounded_while::bounded_jvp(node, primals, tangents),
        _ => unreachable!("dispatched for cond, while and scan"),
    }
}

/// Transpose of a tangent `cond`: operands `(index, known..., linear...)`.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let branches = match &a.node.op {
        Op::Cond { branches } => branches,
        Op::Scan { .. } => return scan_transpose(a),
        Op::BoundedWhile { .. } => return bounded_while_transpose::bounded_transpose(a),
        op => return crate::ad::rules::no_rule("transpose", op),
    };
    if a.operands[0].is_linear() {
        return Err(Error::Internal(
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
        Op::While { cond, body } | Op::BoundedWhile { cond, body, .. } => {
            batch_while(a, cond, body)
        }
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
    // A batched index: run the branches some element takes and select per element (out of
    // range: last branch). A branch no element takes is skipped behind an unbatched `cond`,
    // so a loop whose elements have all finished stops paying for its guarded steps.
    let n = progs.len() as i32;
    let idx = &a.args[0];
    let bad = idx.lt(0)?.bitwise_or(&idx.ge(n)?)?;
    let idx = bad.select(&idx.full_like(n - 1)?, idx)?;
    let args = &a.args[1..];
    let run_if_taken = |k: usize| -> Result<Vec<Array>> {
        let taken = super::apply1(
            Op::Reduce {
                kind: ReduceKind::Or,
                axes: vec![0],
            },
            &[&idx.eq(k as i32)?],
            vec![],
        )?;
        let branch = |x: &[Array]| eval_program(&progs[k], x);
        let skipped = |_: &[Array]| -> Result<Vec<Array>> {
            out_types
                .iter()
                .map(|t| crate::ops::zeros_typed(like, t))
                .collect()
        };
        cond(&taken, &branch, &skipped, args)
    };
    let mut results: Vec<Array> = run_if_taken(progs.len() - 1)?;
    for k in (0..progs.len() - 1).rev() {
        let outs = run_if_taken(k)?;
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
        let outs = apply(a.node.op.with_regions(vec![cprog, bprog]), &refs, types)?;
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
    // A bounded loop keeps its bound: an element's trips are at most the loop's.
    let op = a.node.op.with_regions(vec![any_cond, frozen_body]);
    let outs = apply(op, &refs, types)?;
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
            return Err(Error::Shape(format!(
                "cond/switch branches must return the same structure, shapes and dtypes: branch {i} returns {} but branch 0 returns {}",
                crate::ops::show_types(&out),
                crate::ops::show_types(&out0)
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
        return Err(Error::Shape(format!(
            "{what} must be a scalar, got {}",
            a.tensor_type()
        )));
    }
    if a.dtype().is_float() {
        return Err(Error::DType(format!(
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
///
/// ```no_run
/// # use quabla::{lax, Array};
/// let double = |a: &[Array]| Ok(vec![(&a[0] * 2.0)?]);
/// let negate = |a: &[Array]| Ok(vec![a[0].neg()?]);
/// let x = Array::from_slice(&[3.0f32], &[1])?;
/// let y = lax::switch(&Array::scalar(1i32)?, &[&double, &negate], &[x])?; // [-3]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn switch(index: &Array, branches: &[RegionFn], operands: &[Array]) -> Result<Vec<Array>> {
    if branches.is_empty() {
        return Err(Error::Value("switch needs at least one branch".into()));
    }
    let i = scalar_index(index, "switch's index")?
        .maximum(0)?
        .minimum(branches.len() as i32 - 1)?;
    run_cond(i, branches, operands)
}

/// A loop's traced `cond` and `body` regions with what each captures, checked against the
/// carry's types (`what` names the loop in errors).
pub(super) struct LoopRegions {
    pub(super) cond: Program,
    pub(super) cond_captures: Vec<Array>,
    pub(super) body: Program,
    pub(super) body_captures: Vec<Array>,
}

impl LoopRegions {
    pub(super) fn trace(
        what: &str,
        device: &std::sync::Arc<crate::runtime::Device>,
        types: &[TensorType],
        cond_fn: RegionFn,
        body_fn: RegionFn,
    ) -> Result<LoopRegions> {
        let (cond, cond_captures) = trace_function_capturing(device, types, cond_fn)?;
        if cond.output_types() != vec![TensorType::scalar(quabla_abi::DType::Bool)] {
            return Err(Error::DType(format!(
                "{what}'s cond_fn must return one bool scalar, got {}",
                crate::ops::show_types(&cond.output_types())
            )));
        }
        let (body, body_captures) = trace_function_capturing(device, types, body_fn)?;
        if body.output_types() != types {
            return Err(Error::Shape(format!(
                "{what}'s body_fn must return the carry's structure, shapes and dtypes {}, got {}",
                crate::ops::show_types(types),
                crate::ops::show_types(&body.output_types())
            )));
        }
        Ok(LoopRegions {
            cond,
            cond_captures,
            body,
            body_captures,
        })
    }

    /// The loop over one carry `(init..., cond's captures..., body's captures...)`, the
    /// captures passed through unchanged, as `while` takes it: `(carry, cond, body)`.
    pub(super) fn over_one_carry(
        self,
        device: &std::sync::Arc<crate::runtime::Device>,
        init: &[Array],
    ) -> Result<(Vec<Array>, Program, Program)> {
        let (n, nc) = (init.len(), self.cond_captures.len());
        let mut carry = init.to_vec();
        carry.extend(self.cond_captures);
        carry.extend(self.body_captures);
        let types: Vec<TensorType> = carry.iter().map(|a| a.tensor_type().clone()).collect();
        let (cprog, bprog) = (self.cond, self.body);
        let cond = crate::trace::trace_function(device, &types, |c: &[Array]| {
            eval_program(&cprog, &[&c[..n], &c[n..n + nc]].concat())
        })?;
        let body = crate::trace::trace_function(device, &types, |c: &[Array]| {
            let mut out = eval_program(&bprog, &[&c[..n], &c[n + nc..]].concat())?;
            out.extend(c[n..].iter().cloned());
            Ok(out)
        })?;
        Ok((carry, cond, body))
    }
}

/// `while cond_fn(carry): carry = body_fn(carry)`. Forward-mode differentiable; reverse mode
/// needs a bound ([`bounded_while_loop`], whose cost follows the trips taken) or static
/// bounds (`fori_loop` with constant bounds, or `scan`).
///
/// ```no_run
/// # use quabla::{lax, Array};
/// // Doubles until at least 100: 3 -> 192.
/// let keep = |c: &[Array]| Ok(vec![c[0].lt(100.0)?]);
/// let double = |c: &[Array]| Ok(vec![(&c[0] * 2.0)?]);
/// let out = lax::while_loop(&keep, &double, &[Array::scalar(3.0f64)?])?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn while_loop(cond_fn: RegionFn, body_fn: RegionFn, init: &[Array]) -> Result<Vec<Array>> {
    let device = device_for(&init.iter().collect::<Vec<_>>())?;
    let types: Vec<TensorType> = init.iter().map(|a| a.tensor_type().clone()).collect();
    let regions = LoopRegions::trace("while_loop", &device, &types, cond_fn, body_fn)?;
    let (carry, cond_r, body_r) = regions.over_one_carry(&device, init)?;
    let refs: Vec<&Array> = carry.iter().collect();
    let carry_types = carry.iter().map(|c| c.tensor_type().clone()).collect();
    let mut outs = apply(
        Op::While {
            cond: Box::new(cond_r),
            body: Box::new(body_r),
        },
        &refs,
        carry_types,
    )?;
    outs.truncate(init.len());
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
///
/// ```no_run
/// # use quabla::{lax, Array};
/// // Σ_{i<10} i = 45.
/// let add_i = |i: &Array, c: &[Array]| Ok(vec![(&c[0] + &i.astype(quabla::DType::F64)?)?]);
/// let out = lax::fori_loop(0, 10, &add_i, &[Array::scalar(0.0f64)?])?;
/// # Ok::<(), quabla::Error>(())
/// ```
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
                .ok_or_else(|| Error::Value("fori_loop needs a carry".into()))?;
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
                .ok_or_else(|| Error::Value("fori_loop needs a carry".into()))?
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
