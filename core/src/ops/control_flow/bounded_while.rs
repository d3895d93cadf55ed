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
//! - transpose (of a tangent loop): the known part runs forward again, counting the trips
//!   `n` and, under the two-level schedule, keeping the known carry every `s` trips and the
//!   last segment's carries; the backward pass then walks the trips taken, last first, a
//!   segment at a time (each segment before the last recomputed from its checkpoint),
//!   transposing one trip at a time. Budgets too small for two levels follow Griewank's
//!   binomial schedule over the `n` trips (`bounded_while_transpose/revolve.rs`). Its loops
//!   are `bounded_while`s themselves, so higher derivatives compose;
//! - batching: as `while`, a batched predicate runs until every element is done and freezes
//!   finished elements (each element's trips stay under the bound).
//!
//! Costs for `n` trips taken with the default two-level schedule (segments of `s`, about
//! `sqrt(max_steps)` trips): forward `n` body evaluations; reverse the forward pass, `n`
//! more to rebuild the checkpoints, `n` to recompute each trip's residuals, and under `n`
//! to recompute the segments before the last one (none when the loop ends within `s`
//! trips), plus `n` backward steps; the binomial schedule of `k` carries recomputes
//! `t n - C(k + t, t - 1)` trips instead (`t` the least with `C(k + t, t) >= n`). Nothing is
//! done for trips not taken. Memory: the budget `checkpoints` (about `2 sqrt(max_steps)`
//! carries by default).

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
/// `checkpoints` is how many carries reverse mode may keep (memory `O(checkpoints)`); the
/// schedule ([`BoundedWhileOptions::schedule`]) follows from it:
/// - `checkpoints >= max_steps`: every trip's carry, nothing recomputed;
/// - two levels when they fit (from about `2 sqrt(max_steps)` carries up): the carry every
///   `s` trips and the carries of one segment of `s` trips, `s` as long as the budget
///   allows. Going backward each segment but the last is recomputed from its checkpoint, so
///   a loop that ends within its first `s` trips recomputes nothing;
/// - below that, Griewank's binomial schedule ("revolve") over exactly `checkpoints`
///   carries, placed once a pass has counted the trips `n`: it then recomputes the fewest
///   trips any schedule with that many carries can, `t n - C(k + t, t - 1)` for `k` carries, `t` the
///   least with `C(k + t, t) >= n` (each trip recomputed at most `t` times; one carry
///   recomputes `n (n - 1) / 2`).
///
/// Unset: two levels with `s` about `sqrt(max_steps)` (about `2 sqrt(max_steps)` carries).
/// Values, forward-mode results and gradients (bit for bit) do not depend on it.
///
/// ```no_run
/// # use quabla::{lax, Array};
/// let x = Array::from_slice(&[5.0f64], &[]).unwrap();
/// // Up to 4,096 trips; reverse mode keeps at most 40 carries (the binomial schedule).
/// let opts = lax::BoundedWhileOptions { checkpoints: Some(40), ..lax::BoundedWhileOptions::new(4096) };
/// assert_eq!(opts.schedule(), lax::CheckpointSchedule::Binomial { snapshots: 40 });
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
    /// How many carries reverse mode may keep, at least 1 (unset: about
    /// `2 sqrt(max_steps)`, two levels); see [`BoundedWhileOptions::schedule`].
    pub checkpoints: Option<usize>,
}

impl BoundedWhileOptions {
    /// At most `max_steps` trips, with the default schedule.
    ///
    /// ```no_run
    /// # use quabla::lax::BoundedWhileOptions;
    /// let opts = BoundedWhileOptions { checkpoints: Some(8), ..BoundedWhileOptions::new(1000) };
    /// ```
    pub fn new(max_steps: usize) -> Self {
        BoundedWhileOptions {
            max_steps,
            checkpoints: None,
        }
    }

    /// The carries reverse mode may keep: the option, or the two-level schedule's least.
    ///
    /// ```no_run
    /// # use quabla::lax::BoundedWhileOptions;
    /// assert_eq!(BoundedWhileOptions::new(4096).resolved_checkpoints(), 129);
    /// ```
    pub fn resolved_checkpoints(&self) -> usize {
        let m = self.max_steps.max(1);
        self.checkpoints.unwrap_or_else(|| {
            let s = ceil_root(m, 2);
            memory(m, &[s, 1]).min(m)
        })
    }

    /// The schedule reverse mode follows for this bound and budget.
    ///
    /// ```no_run
    /// # use quabla::lax::{BoundedWhileOptions, CheckpointSchedule};
    /// assert_eq!(BoundedWhileOptions::new(4096).schedule(), CheckpointSchedule::TwoLevel { stride: 65 });
    /// ```
    pub fn schedule(&self) -> CheckpointSchedule {
        schedule(self.max_steps, self.resolved_checkpoints())
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
                "{caller}: checkpoints must be at least 1 (the carries reverse mode may \
                 keep), got 0; leave it unset for about 2 sqrt(max_steps), or use max_steps to \
                 keep every trip's carry"
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

/// The smallest `b >= 2` with `b^levels >= m`.
fn ceil_root(m: usize, levels: u32) -> usize {
    let mut b = ((m as f64).powf(1.0 / levels as f64).floor() as usize).max(2);
    while b.checked_pow(levels).is_some_and(|p| p < m) {
        b += 1;
    }
    while b > 2 && (b - 1).checked_pow(levels).is_none_or(|p| p >= m) {
        b -= 1;
    }
    b
}

/// Rows of the buffer that keeps the carry every `stride` trips over `span` trips: slot
/// `ceil(t / stride)` ends up holding the carry at trip `slot * stride`.
pub(super) fn rows(span: usize, stride: usize) -> usize {
    if stride == 1 {
        span.max(1)
    } else {
        span.saturating_sub(1).div_ceil(stride) + 1
    }
}

/// Carries a schedule keeps over a bound of `m` trips.
fn memory(m: usize, strides: &[usize]) -> usize {
    let mut span = m;
    let mut total = 0;
    for &s in strides {
        total += rows(span, s);
        span = s;
    }
    total
}

/// How reverse mode through a bounded loop keeps carries ([`BoundedWhileOptions`]).
///
/// ```no_run
/// # use quabla::lax::{BoundedWhileOptions, CheckpointSchedule};
/// let small = BoundedWhileOptions { checkpoints: Some(8), ..BoundedWhileOptions::new(4096) };
/// assert_eq!(small.schedule(), CheckpointSchedule::Binomial { snapshots: 8 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointSchedule {
    /// Every trip's carry: nothing is recomputed.
    EveryTrip,
    /// The carry every `stride` trips, and the carries of one segment of `stride` trips.
    TwoLevel { stride: usize },
    /// Griewank's binomial schedule over `snapshots` carries (the first the loop's start).
    Binomial { snapshots: usize },
}

/// Reverse mode's schedule for a bound of `m` trips and a budget of `k` carries (see
/// [`BoundedWhileOptions`]).
pub(super) fn schedule(m: usize, k: usize) -> CheckpointSchedule {
    let m = m.max(1);
    if k >= m || m <= 2 {
        return CheckpointSchedule::EveryTrip;
    }
    // Two levels, with the longest segment the budget allows (the fewest recomputed).
    let root = ((k as f64 - 2.0).powi(2) - 4.0 * (m as f64 - 1.0))
        .max(0.0)
        .sqrt();
    let guess = ((k as f64 - 2.0 + root) / 2.0) as usize;
    let fits = |s: usize| (2..m).contains(&s) && memory(m, &[s, 1]) <= k;
    match (guess.saturating_sub(2)..=guess + 2)
        .rev()
        .find(|&s| fits(s))
    {
        Some(stride) => CheckpointSchedule::TwoLevel { stride },
        None => CheckpointSchedule::Binomial {
            snapshots: k.max(1),
        },
    }
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

/// JVP: one loop over `(carry, float tangents)` with the same bound, whose predicate ignores
/// the tangents, so forward mode runs the primal trips once. It is linear in its tangent
/// operands; reverse mode takes the primal carry from its known part (`known_part`) and
/// transposes the whole loop (`bounded_while_transpose`).
pub(super) fn bounded_jvp(
    node: &Node,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    let (cond, body, max_steps, checkpoints) = parts(&node.op);
    let like = primals
        .first()
        .ok_or_else(|| Error::Value("bounded_while needs a carry".into()))?;
    let tbody = jvp_region(body, like)?;
    let n = cond.inputs.len();
    let mut types = cond.inputs.clone();
    types.extend(super::float_types(&cond.inputs));
    let tcond = trace_function(like.device(), &types, |args: &[Array]| {
        eval_program(cond, &args[..n])
    })?;
    let mut carry = primals.to_vec();
    carry.extend(float_tangents(primals, tangents)?);
    let mut outs = bounded_while(tcond, tbody, &carry, max_steps, checkpoints)?;
    let touts = outs.split_off(n);
    Ok((outs, super::spread(&node.results, touts)))
}

#[cfg(test)]
mod tests {
    use super::{memory, schedule, BoundedWhileOptions, CheckpointSchedule};

    #[test]
    fn the_schedule_keeps_within_the_budget_with_two_levels_where_they_fit() {
        use CheckpointSchedule::{Binomial, EveryTrip, TwoLevel};
        for (m, k, want) in [
            (4096, 4096, EveryTrip),
            (4096, 10_000, EveryTrip),
            (1, 1, EveryTrip),
            (2, 1, EveryTrip),
            // Two levels: the longest segment that fits.
            (4096, 129, TwoLevel { stride: 65 }),
            (4096, 200, TwoLevel { stride: 175 }),
            // Below 2 sqrt(m) (130 at 4107): the binomial schedule over the budget.
            (4107, 129, Binomial { snapshots: 129 }),
            (4096, 40, Binomial { snapshots: 40 }),
            (4096, 1, Binomial { snapshots: 1 }),
        ] {
            let got = schedule(m, k);
            assert_eq!(got, want, "m {m}, k {k}");
            if let TwoLevel { stride } = got {
                assert!(memory(m, &[stride, 1]) <= k, "m {m}, k {k}");
            }
        }
    }

    #[test]
    fn the_default_is_two_levels_of_sqrt_max_steps() {
        for (m, s) in [(4096usize, 65usize), (4107, 66), (100, 11), (65536, 257)] {
            let opts = BoundedWhileOptions::new(m);
            assert_eq!(
                opts.schedule(),
                CheckpointSchedule::TwoLevel { stride: s },
                "m {m}"
            );
            assert!(opts.resolved_checkpoints() <= 2 * s, "m {m}");
        }
        assert_eq!(
            BoundedWhileOptions::new(2).schedule(),
            CheckpointSchedule::EveryTrip
        );
    }
}
