//! A `while` loop with a bound on its trips, differentiable in reverse mode, whose cost
//! follows the trips it takes (equinox's `while_loop(kind="checkpointed", max_steps=...)`;
//! JAX's `while_loop` refuses reverse mode).
//!
//! It is built from primitives that carry every rule already, so forward mode, `vmap`,
//! nesting, and `cond`, `checkpoint` or custom rules in the body compose as they do for
//! them:
//! - one guarded step is a `cond`: `cond(carry) and count < max_steps` runs `body`, else the
//!   carry passes through. A `cond` transposes into the selected branch only, so the skipped
//!   steps cost neither a body evaluation nor a backward step;
//! - `K = ceil(sqrt(max_steps))` guarded steps make a segment (a `scan`), wrapped in
//!   `checkpoint`: reverse mode keeps only the segment's input and recomputes its steps'
//!   residuals when it gets there;
//! - `ceil(max_steps / K)` segments make the loop (an outer `scan`), each behind a `cond` on
//!   the same predicate, so a finished loop skips whole segments at the cost of the
//!   predicate alone.
//!
//! Costs, for `n` trips taken: forward `n` body evaluations plus at most `K` skipped steps
//! and `max_steps / K` skipped segments; reverse about three more forward passes over the
//! `n` trips (the outer scan's recomputation, each segment's rematerialisation) and `n`
//! backward steps; memory `max_steps / K` carries plus one segment's residuals, O(sqrt of
//! the bound), since shapes are static.

use super::{cond, scan, RegionFn};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::eval::eval_program;
use crate::trace::trace_function_capturing;
use quabla_abi::{DType, TensorType};

/// `while cond_fn(carry): carry = body_fn(carry)`, stopping after `max_steps` trips at the
/// latest, and differentiable in reverse mode as well as forward mode. The bound sizes the
/// loop's storage (O(sqrt(max_steps)) carries); the time is that of the trips taken.
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
    let like = init
        .first()
        .ok_or_else(|| Error::Value("bounded_while_loop needs a carry".into()))?;
    if max_steps > i32::MAX as usize / 2 {
        return Err(Error::Value(format!(
            "bounded_while_loop: max_steps must be below 2^30, got {max_steps}"
        )));
    }
    let device = super::device_for(&init.iter().collect::<Vec<_>>())?;
    let types: Vec<TensorType> = init.iter().map(|a| a.tensor_type().clone()).collect();
    // The regions are traced once, and what they capture travels in the loop state:
    // `checkpoint` re-traces the segment and must not capture values of an outer trace.
    let (cprog, ccaps) = trace_function_capturing(&device, &types, cond_fn)?;
    if cprog.output_types() != vec![TensorType::scalar(DType::Bool)] {
        return Err(Error::DType(format!(
            "bounded_while_loop's cond_fn must return one bool scalar, got {}",
            crate::ops::show_types(&cprog.output_types())
        )));
    }
    let (bprog, bcaps) = trace_function_capturing(&device, &types, body_fn)?;
    if bprog.output_types() != types {
        return Err(Error::Shape(format!(
            "bounded_while_loop's body_fn must return the carry's structure, shapes and dtypes \
             {}, got {}",
            crate::ops::show_types(&types),
            crate::ops::show_types(&bprog.output_types())
        )));
    }
    if max_steps == 0 {
        return Ok(init.to_vec());
    }
    let (n, nc) = (init.len(), ccaps.len());
    let per_segment = (max_steps as f64).sqrt().ceil().max(1.0) as usize;
    let segments = max_steps.div_ceil(per_segment);
    let bound = max_steps as i32;
    // The loop state: the carry, the trips taken so far, then cond's and body's captures.
    let going = |state: &[Array]| -> Result<Array> {
        let caps = &state[n + 1..n + 1 + nc];
        let go = eval_program(&cprog, &[&state[..n], caps].concat())?.remove(0);
        go.bitwise_and(&state[n].lt(bound)?)
    };
    let step = |state: &[Array]| -> Result<Vec<Array>> {
        let caps = &state[n + 1 + nc..];
        let mut next = eval_program(&bprog, &[&state[..n], caps].concat())?;
        next.push((&state[n] + 1)?);
        next.extend(state[n + 1..].iter().cloned());
        Ok(next)
    };
    let unchanged = |state: &[Array]| -> Result<Vec<Array>> { Ok(state.to_vec()) };
    let guarded =
        |state: &[Array]| -> Result<Vec<Array>> { cond(&going(state)?, &step, &unchanged, state) };
    let segment = |state: &[Array]| -> Result<Vec<Array>> {
        let inner = |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            Ok((guarded(c)?, vec![]))
        };
        Ok(scan(&inner, state, &[], Some(per_segment), false, 1)?.0)
    };
    let remat = crate::checkpoint(segment);
    let outer = |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        Ok((cond(&going(c)?, &remat, &unchanged, c)?, vec![]))
    };
    let mut state = init.to_vec();
    state.push(crate::ops::zeros_typed(
        like,
        &TensorType::scalar(DType::I32),
    )?);
    state.extend(ccaps);
    state.extend(bcaps);
    let mut out = scan(&outer, &state, &[], Some(segments), false, 1)?.0;
    out.truncate(n);
    Ok(out)
}
