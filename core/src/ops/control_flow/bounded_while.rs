//! A `while` loop with a bound on its trips, differentiable in reverse mode, whose cost
//! follows the trips it takes (equinox's `while_loop(kind="checkpointed", max_steps=...)`;
//! JAX's `while_loop` refuses reverse mode).
//!
//! It is the primitive `bounded_while` (`cond` and `body` regions over the carry, as
//! `while`, plus `max_steps` and `checkpoints`), with all its rules here and in
//! `bounded_while_transpose`:
//! - evaluation: lowered to a `while` whose carry counts the trips and whose predicate adds
//!   `trips < max_steps`, so the primal costs the trips taken;
//! - JVP: the primal loop, and a tangent loop carrying tangents beside the carry, with the
//!   same bound (linear in the tangents);
//! - transpose (of a tangent loop): the known part runs forward again, keeping the known
//!   carry at `checkpoints` evenly spaced trips and the last segment's carries; the
//!   backward pass then walks the trips taken, last first, a segment at a time (each
//!   segment before the last recomputed from its checkpoint), transposing one trip at a
//!   time. Its loops are `bounded_while`s themselves, so higher derivatives compose;
//! - batching: as `while`, a batched predicate runs until every element is done and freezes
//!   finished elements (each element's trips stay under the bound).
//!
//! Costs for `n` trips taken, `k` checkpoints and segments of `s = ceil(max_steps / k)`
//! trips: forward `n` body evaluations; reverse the forward pass, `n` more to rebuild the
//! checkpoints, `n` to recompute each trip's residuals, and `n - s` (at most) to recompute
//! the segments before the last one, plus `n` backward steps. Nothing is done for trips
//! not taken. Memory: `k + s` known carries (`2 sqrt(max_steps)` by default).

use super::RegionFn;
use crate::ad::jvp_support::{float_tangents, jvp_region};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::eval::eval_program;
use crate::trace::trace_function;
use quabla_abi::qir::{Node, Op, Program};
use quabla_abi::{DType, TensorType};

/// `while cond_fn(carry): carry = body_fn(carry)`, stopping after `max_steps` trips at the
/// latest, and differentiable in reverse mode as well as forward mode. The bound sizes the
/// reverse pass's storage; the time is that of the trips taken.
/// [`bounded_while_loop_with`] chooses how reverse mode trades memory for recomputation.
///
/// ```no_run
/// # use quabla::{lax, Array};
/// // Halve x until it is below 1: 3 trips from 5.
/// let x = Array::from_slice(&[5.0f64], &[]).unwrap();
/// let out = lax::bounded_while_loop(
///     &|c: &[Array]| Ok(vec![c[0].ge(1.0)?]),
///     &|c: &[Array]| Ok(vec![(&c[0] * 0.5)?]),
///     &[x],
///     100,
/// )
/// .unwrap();
/// assert_eq!(out[0].item::<f64>().unwrap(), 0.625);
/// ```
pub fn bounded_while_loop(
    cond_fn: RegionFn,
    body_fn: RegionFn,
    init: &[Array],
    max_steps: usize,
) -> Result<Vec<Array>> {
    bounded_while_loop_with(cond_fn, body_fn, init, &BoundedWhileOptions::new(max_steps))
}

/// A bounded loop's bound and its reverse-mode schedule.
///
/// Reverse mode keeps the loop's carry at `checkpoints` trips spaced
/// `s = ceil(max_steps / checkpoints)` apart, and the carries of one segment of `s` trips:
/// `checkpoints + s` carries in all. Unset, `checkpoints` is `ceil(sqrt(max_steps))`, the
/// least memory (`2 sqrt(max_steps)` carries). Going backward, each segment but the last is
/// recomputed from its checkpoint, so the fewer trips a loop takes compared with `s`, the
/// less it recomputes: a loop that ends within the first segment recomputes nothing.
/// `checkpoints >= max_steps` keeps every trip's carry (a segment is one trip: no
/// recomputation, `max_steps` carries of memory). Values and forward-mode results do not
/// depend on it, and gradients only to rounding.
///
/// ```no_run
/// # use quabla::{lax, Array};
/// let x = Array::from_slice(&[5.0f64], &[]).unwrap();
/// // Up to 4,096 trips; reverse mode keeps 64 checkpoints and a segment of 64 carries.
/// let opts = lax::BoundedWhileOptions { checkpoints: Some(64), ..lax::BoundedWhileOptions::new(4096) };
/// let out = lax::bounded_while_loop_with(
///     &|c: &[Array]| Ok(vec![c[0].ge(1.0)?]),
///     &|c: &[Array]| Ok(vec![(&c[0] * 0.5)?]),
///     &[x],
///     &opts,
/// )
/// .unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundedWhileOptions {
    /// The most trips the loop takes (below 2^30).
    pub max_steps: usize,
    /// Carries reverse mode keeps at evenly spaced trips, at least 1 (unset:
    /// `ceil(sqrt(max_steps))`).
    pub checkpoints: Option<usize>,
}

impl BoundedWhileOptions {
    /// At most `max_steps` trips, with the default schedule.
    pub fn new(max_steps: usize) -> Self {
        BoundedWhileOptions {
            max_steps,
            checkpoints: None,
        }
    }

    /// The checkpoint count the loop uses: the option, or `ceil(sqrt(max_steps))`, and never
    /// more than the bound (at least 1).
    pub fn resolved_checkpoints(&self) -> usize {
        let k = self
            .checkpoints
            .unwrap_or_else(|| (self.max_steps as f64).sqrt().ceil() as usize);
        k.clamp(1, self.max_steps.max(1))
    }

    fn check(&self, caller: &str) -> Result<()> {
        if self.max_steps > i32::MAX as usize / 2 {
            return Err(Error::Value(format!(
                "{caller}: max_steps must be below 2^30, got {}",
                self.max_steps
            )));
        }
        if self.checkpoints == Some(0) {
            return Err(Error::Value(format!(
                "{caller}: checkpoints must be at least 1 (the carries reverse mode keeps), \
                 got 0; leave it unset for ceil(sqrt(max_steps)), or use max_steps to keep \
                 every trip's carry"
            )));
        }
        Ok(())
    }
}

/// [`bounded_while_loop`] with its reverse-mode schedule chosen by
/// [`BoundedWhileOptions::checkpoints`].
///
/// ```no_run
/// # use quabla::{lax, Array};
/// let x = Array::from_slice(&[5.0f64], &[]).unwrap();
/// let out = lax::bounded_while_loop_with(
///     &|c: &[Array]| Ok(vec![c[0].ge(1.0)?]),
///     &|c: &[Array]| Ok(vec![(&c[0] * 0.5)?]),
///     &[x],
///     &lax::BoundedWhileOptions { max_steps: 100, checkpoints: Some(100) },
/// )
/// .unwrap();
/// assert_eq!(out[0].item::<f64>().unwrap(), 0.625);
/// ```
pub fn bounded_while_loop_with(
    cond_fn: RegionFn,
    body_fn: RegionFn,
    init: &[Array],
    opts: &BoundedWhileOptions,
) -> Result<Vec<Array>> {
    if init.is_empty() {
        return Err(Error::Value("bounded_while_loop needs a carry".into()));
    }
    opts.check("bounded_while_loop")?;
    let device = super::device_for(&init.iter().collect::<Vec<_>>())?;
    let types: Vec<TensorType> = init.iter().map(|a| a.tensor_type().clone()).collect();
    let regions =
        super::LoopRegions::trace("bounded_while_loop", &device, &types, cond_fn, body_fn)?;
    if opts.max_steps == 0 {
        return Ok(init.to_vec());
    }
    let (carry, cond, body) = regions.over_one_carry(&device, init)?;
    let mut outs = bounded_while(
        cond,
        body,
        &carry,
        opts.max_steps,
        opts.resolved_checkpoints(),
    )?;
    outs.truncate(init.len());
    Ok(outs)
}

/// Emits a `bounded_while` node over `carry` (regions taking the whole carry).
pub(super) fn bounded_while(
    cond: Program,
    body: Program,
    carry: &[Array],
    max_steps: usize,
    checkpoints: usize,
) -> Result<Vec<Array>> {
    let refs: Vec<&Array> = carry.iter().collect();
    let types = carry.iter().map(|c| c.tensor_type().clone()).collect();
    super::apply(
        Op::BoundedWhile {
            cond: Box::new(cond),
            body: Box::new(body),
            max_steps,
            checkpoints,
        },
        &refs,
        types,
    )
}

/// Traces `cond` and `body` over a carry of `types` and emits a `bounded_while` on `init`;
/// the closures may not capture values of an outer trace (the rules call this with
/// programs' values only).
pub(super) fn bounded_while_fn(
    like: &Array,
    cond: impl Fn(&[Array]) -> Result<Array>,
    body: impl Fn(&[Array]) -> Result<Vec<Array>>,
    init: &[Array],
    max_steps: usize,
) -> Result<Vec<Array>> {
    let types: Vec<TensorType> = init.iter().map(|c| c.tensor_type().clone()).collect();
    let cond_p = trace_function(like.device(), &types, |c: &[Array]| Ok(vec![cond(c)?]))?;
    let body_p = trace_function(like.device(), &types, body)?;
    let k = BoundedWhileOptions::new(max_steps).resolved_checkpoints();
    bounded_while(cond_p, body_p, init, max_steps, k)
}

fn parts(op: &Op) -> (&Program, &Program, usize, usize) {
    let Op::BoundedWhile {
        cond,
        body,
        max_steps,
        checkpoints,
    } = op
    else {
        unreachable!("bounded_while only")
    };
    (cond, body, *max_steps, *checkpoints)
}

/// The `while` a `bounded_while` lowers to: the trip count travels in the carry, and the
/// loop goes on while `cond` holds and fewer than `max_steps` trips are done.
pub(crate) fn bounded_while_as_while(
    device: &std::sync::Arc<crate::runtime::Device>,
    op: &Op,
    types: &[TensorType],
) -> Result<Program> {
    let (cond, body, max_steps, _) = parts(op);
    let bound = i32::try_from(max_steps)
        .map_err(|_| Error::Value(format!("bounded_while: max_steps {max_steps} is too large")))?;
    let n = types.len();
    let mut carry_types = types.to_vec();
    carry_types.push(TensorType::scalar(DType::I32));
    let cond_w = trace_function(device, &carry_types, |c: &[Array]| {
        let go = eval_program(cond, &c[..n])?.remove(0);
        Ok(vec![go.bitwise_and(&c[n].lt(bound)?)?])
    })?;
    let body_w = trace_function(device, &carry_types, |c: &[Array]| {
        let mut next = eval_program(body, &c[..n])?;
        next.push((&c[n] + 1)?);
        Ok(next)
    })?;
    trace_function(device, types, |ops: &[Array]| {
        let like = ops
            .first()
            .ok_or_else(|| Error::Value("bounded_while needs a carry".into()))?;
        let mut carry = ops.to_vec();
        carry.push(crate::ops::zeros_typed(
            like,
            &TensorType::scalar(DType::I32),
        )?);
        let refs: Vec<&Array> = carry.iter().collect();
        let mut outs = super::apply(
            Op::While {
                cond: Box::new(cond_w.clone()),
                body: Box::new(body_w.clone()),
            },
            &refs,
            carry_types.clone(),
        )?;
        outs.truncate(n);
        Ok(outs)
    })
}

/// JVP: the primal loop, and a tangent loop over `(carry, float tangents)` with the same
/// bound, whose predicate ignores the tangents. The tangent loop is linear in its tangent
/// operands; reverse mode transposes it (`bounded_while_transpose`).
pub(super) fn bounded_jvp(
    node: &Node,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    let (cond, body, max_steps, checkpoints) = parts(&node.op);
    let like = primals
        .first()
        .ok_or_else(|| Error::Value("bounded_while needs a carry".into()))?;
    let refs: Vec<&Array> = primals.iter().collect();
    let outs = super::apply(node.op.clone(), &refs, node.results.clone())?;
    let tbody = jvp_region(body, like)?;
    let n = cond.inputs.len();
    let mut types = cond.inputs.clone();
    types.extend(super::float_types(&cond.inputs));
    let tcond = trace_function(like.device(), &types, |args: &[Array]| {
        eval_program(cond, &args[..n])
    })?;
    let mut carry = primals.to_vec();
    carry.extend(float_tangents(primals, tangents)?);
    let touts = bounded_while(tcond, tbody, &carry, max_steps, checkpoints)?.split_off(n);
    Ok((outs, super::spread(&node.results, touts)))
}
