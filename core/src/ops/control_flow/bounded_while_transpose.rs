//! Transpose of a `bounded_while` that is linear in some carries (the tangent loop of its
//! JVP): the backward pass walks the trips the loop took, last first, and nothing else.
//!
//! The carry splits into known carries (the primal part, and tangents that never meet a
//! linear value) and linear ones. One trip's body splits by partial evaluation into
//! `fwd: known -> (known', residuals)` and `bwd: (residuals, ct of linear') -> ct of
//! linear`. The schedule (see `BoundedWhileOptions`) decides which known carries are kept:
//! - every trip's: one pass runs the known part forward again from the known operands,
//!   counting the trips `n` and keeping each trip's carry; the trips are then transposed
//!   from their carries, last first;
//! - two levels: that pass keeps the carry every `s` trips and every carry of the segment
//!   it is in, so the last segment is transposed at once; each earlier segment is run
//!   forward from its checkpoint keeping its carries, then transposed;
//! - binomial: a pass only counts the trips; `revolve.rs` then places the budget's carries.
//!
//! Each loop is a `bounded_while` (bounded by the span it walks), so the backward pass is
//! itself differentiable in both modes. Known carries the body passes through unchanged
//! (captured parameters) are carried beside the loops, never copied into the checkpoints;
//! so are those no trip's residuals need (`needed.rs`: an output buffer the loop only
//! writes), which keep their value from before the loop.

mod needed;
mod revolve;

use super::bounded_while::{bounded_while_fn, rows, schedule, CheckpointSchedule};
use super::loop_linearity::{linear_carries, linear_outputs, reordered};
use crate::ad::rules::TransposeArgs;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::eval::eval_program;
use quabla_abi::qir::{Op, Program, ValueId};
use quabla_abi::{DType, TensorType};

/// Cotangents of the linear operands of a `bounded_while` node.
pub(super) fn bounded_transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let Op::BoundedWhile {
        cond,
        body,
        max_steps,
        checkpoints,
    } = &a.node.op
    else {
        unreachable!("bounded_while only")
    };
    let plan = Plan::new(a, cond, body, *max_steps, *checkpoints)?;
    let known: Vec<Array> = plan
        .known
        .iter()
        .map(|&i| a.operands[i].known("bounded_while").cloned())
        .collect::<Result<_>>()?;
    let like = known
        .first()
        .cloned()
        .or_else(|| a.cts.iter().flatten().next().cloned())
        .ok_or_else(|| Error::Internal("bounded_while transpose without values".into()))?;
    let cts: Vec<Array> = plan
        .linear
        .iter()
        .map(|&i| match &a.cts[i] {
            Some(c) => Ok(c.clone()),
            None => crate::ops::zeros_typed(&like, &a.node.results[i]),
        })
        .collect::<Result<_>>()?;
    let cts = plan.backward(&like, known, cts)?;
    let mut out: Vec<Option<Array>> = vec![None; a.operands.len()];
    for (ct, &i) in cts.into_iter().zip(&plan.linear) {
        // Carries made linear only by the fixed point start known: no cotangent for them.
        if a.operands[i].is_linear() {
            out[i] = Some(ct);
        }
    }
    Ok(out)
}

/// The split of one loop and its schedule.
struct Plan<'a> {
    cond: &'a Program,
    /// Carry positions of the known and the linear carries.
    known: Vec<usize>,
    linear: Vec<usize>,
    /// Of the known carries (by their index in `known`): those the body changes and the
    /// backward pass needs, which the checkpoints keep, and the others (passed through
    /// unchanged here).
    varying: Vec<usize>,
    fixed: Vec<usize>,
    /// One trip's known part without residuals, and its residuals alone: both take the
    /// known carries.
    fwd_known: Program,
    fwd_residuals: Program,
    /// `(residuals, ct of the linear carries after a trip) -> their ct before it`.
    bwd: Program,
    max_steps: usize,
    schedule: CheckpointSchedule,
    carry_types: Vec<TensorType>,
}

fn with_outputs(p: &Program, outputs: &[quabla_abi::qir::ValueId]) -> Program {
    crate::passes::dce(&Program {
        inputs: p.inputs.clone(),
        nodes: p.nodes.clone(),
        outputs: outputs.to_vec(),
    })
}

impl<'a> Plan<'a> {
    fn new(
        a: &TransposeArgs,
        cond: &'a Program,
        body: &Program,
        max_steps: usize,
        checkpoints: usize,
    ) -> Result<Plan<'a>> {
        let n = a.operands.len();
        let mut lin: Vec<bool> = a.operands.iter().map(|o| o.is_linear()).collect();
        linear_carries(body, &mut lin, 0, n);
        if linear_outputs(cond, &lin)[0] {
            return Err(Error::Value(
                "bounded_while: the loop's predicate reads a value being differentiated, so \
                 the loop is not linear in it and cannot be transposed"
                    .into(),
            ));
        }
        let known: Vec<usize> = (0..n).filter(|&i| !lin[i]).collect();
        let linear: Vec<usize> = (0..n).filter(|&i| lin[i]).collect();
        let like = a
            .operands
            .iter()
            .find_map(|o| o.known("bounded_while").ok())
            .or_else(|| a.cts.iter().flatten().next())
            .ok_or_else(|| Error::Internal("bounded_while transpose without values".into()))?;
        let order: Vec<usize> = known.iter().chain(&linear).copied().collect();
        let reordered = reordered(like.device(), body, &order, &order)?;
        let nk = known.len();
        let (fwd, bwd) = crate::ad::partial_eval_transpose(like.device(), &reordered, nk, nk)?;
        // A carry nothing needed reads keeps its value from before the loop in every pass
        // here (its update is dropped), and no checkpoint holds it.
        let needed = needed::needed_known(cond, &known, &fwd, &bwd, nk);
        let updates: Vec<ValueId> = (0..nk)
            .map(|k| match needed[k] {
                true => fwd.outputs[k],
                false => ValueId(k as u32),
            })
            .collect();
        let (varying, fixed): (Vec<usize>, Vec<usize>) =
            (0..nk).partition(|&k| needed[k] && body.outputs[known[k]].index() != known[k]);
        Ok(Plan {
            cond,
            fwd_known: with_outputs(&fwd, &updates),
            fwd_residuals: with_outputs(&fwd, &fwd.outputs[nk..]),
            bwd,
            known,
            linear,
            varying,
            fixed,
            max_steps,
            schedule: schedule(max_steps, checkpoints),
            carry_types: body.inputs.clone(),
        })
    }

    /// The known carry from its varying part and the fixed part.
    fn known_carry(&self, varying: &[Array], fixed: &[Array]) -> Vec<Array> {
        let mut out: Vec<Option<Array>> = vec![None; self.known.len()];
        for (v, &k) in varying.iter().zip(&self.varying) {
            out[k] = Some(v.clone());
        }
        for (v, &k) in fixed.iter().zip(&self.fixed) {
            out[k] = Some(v.clone());
        }
        out.into_iter().flatten().collect()
    }

    fn varying_of(&self, known: &[Array]) -> Vec<Array> {
        self.varying.iter().map(|&k| known[k].clone()).collect()
    }

    /// Buffers of `rows` copies of each varying known carry.
    fn buffers(&self, like: &Array, rows: usize) -> Result<Vec<Array>> {
        self.varying
            .iter()
            .map(|&k| {
                let t = &self.carry_types[self.known[k]];
                let shape = [vec![rows], t.shape.clone()].concat();
                crate::ops::zeros_typed(like, &TensorType::new(t.dtype, shape))
            })
            .collect()
    }

    /// The loop's predicate on the known carry (it reads no linear carry).
    fn going(&self, known: &[Array], like: &Array) -> Result<Array> {
        let mut args: Vec<Option<Array>> = vec![None; self.carry_types.len()];
        for (v, &i) in known.iter().zip(&self.known) {
            args[i] = Some(v.clone());
        }
        for &i in &self.linear {
            args[i] = Some(crate::ops::zeros_typed(like, &self.carry_types[i])?);
        }
        Ok(eval_program(self.cond, &args.into_iter().flatten().collect::<Vec<_>>())?.remove(0))
    }

    fn backward(&self, like: &Array, known: Vec<Array>, cts: Vec<Array>) -> Result<Vec<Array>> {
        let fixed: Vec<Array> = self.fixed.iter().map(|&k| known[k].clone()).collect();
        let stride = match self.schedule {
            CheckpointSchedule::Binomial { snapshots } => {
                return self.binomial_backward(like, &known, &fixed, cts, snapshots)
            }
            CheckpointSchedule::EveryTrip => 1,
            CheckpointSchedule::TwoLevel { stride } => stride,
        };
        let (trips, checkpoints, last) = self.checkpoint_pass(like, &known, stride)?;
        super::scan_tape::record_tape(&[checkpoints.clone(), last.clone()].concat());
        if stride == 1 {
            return self.transpose_trips(&checkpoints, &trips, self.max_steps, &fixed, cts);
        }
        let s = i32_of(stride)?;
        // Segments 0..=g_last; the last holds trips g_last * s .. n, whose carries the
        // first pass kept.
        let g_last = (int_div(&(&trips + (s - 1))?, s)? - 1)?.maximum(0)?;
        let last_len = (&trips - &(&g_last * s)?)?;
        let cts = self.transpose_trips(&last, &last_len, stride, &fixed, cts)?;
        self.earlier_segments(&g_last, &checkpoints, last, &fixed, cts, stride)
    }

    /// Step 1: `(trips taken, checkpoint buffers, last segment's buffers)`: the carry
    /// every `stride` trips and, for a stride above 1, every carry of the current segment.
    fn checkpoint_pass(
        &self,
        like: &Array,
        known: &[Array],
        stride: usize,
    ) -> Result<(Array, Vec<Array>, Vec<Array>)> {
        let (nk, nv) = (known.len(), self.varying.len());
        let s = i32_of(stride)?;
        let keep_last = stride > 1;
        let mut init = vec![crate::ops::zeros_typed(
            like,
            &TensorType::scalar(DType::I32),
        )?];
        init.extend(known.iter().cloned());
        init.extend(self.buffers(like, rows(self.max_steps, stride))?);
        if keep_last {
            init.extend(self.buffers(like, stride)?);
        }
        let cond = |c: &[Array]| self.going(&c[1..1 + nk], &c[0]);
        let body = |c: &[Array]| -> Result<Vec<Array>> {
            let (t, k) = (&c[0], &c[1..1 + nk]);
            let var = self.varying_of(k);
            // Slot ceil(t / s) ends up holding the carry at trip `slot * s`.
            let slot = int_div(&(t + (s - 1))?, s)?;
            let mut next = vec![(t + 1)?];
            next.extend(eval_program(&self.fwd_known, k)?);
            for (buf, v) in c[1 + nk..1 + nk + nv].iter().zip(&var) {
                next.push(write_row(buf, v, &slot)?);
            }
            if keep_last {
                let row = t.rem(s)?;
                for (buf, v) in c[1 + nk + nv..].iter().zip(&var) {
                    next.push(write_row(buf, v, &row)?);
                }
            }
            Ok(next)
        };
        let mut out = bounded_while_fn(like, cond, body, &init, self.max_steps)?;
        let last = out.split_off(1 + nk + nv);
        let checkpoints = out.split_off(1 + nk);
        Ok((out.swap_remove(0), checkpoints, last))
    }

    /// The innermost loop: transposes trips `len - 1` down to 0 of a buffer of known
    /// carries (`bound` rows).
    fn transpose_trips(
        &self,
        buffers: &[Array],
        len: &Array,
        bound: usize,
        fixed: &[Array],
        cts: Vec<Array>,
    ) -> Result<Vec<Array>> {
        let (nl, nv) = (cts.len(), buffers.len());
        let mut init = vec![(len - 1)?];
        init.extend(cts);
        init.extend(buffers.iter().cloned());
        init.extend(fixed.iter().cloned());
        let cond = |c: &[Array]| c[0].ge(0);
        let body = |c: &[Array]| -> Result<Vec<Array>> {
            let m = &c[0];
            let ct = &c[1..1 + nl];
            let var = read_rows(&c[1 + nl..1 + nl + nv], m)?;
            let known = self.known_carry(&var, &c[1 + nl + nv..]);
            let mut args = eval_program(&self.fwd_residuals, &known)?;
            args.extend(ct.iter().cloned());
            let mut next = vec![(m - 1)?];
            next.extend(eval_program(&self.bwd, &args)?);
            next.extend(c[1 + nl..].iter().cloned());
            Ok(next)
        };
        let like = init[0].clone();
        let out = bounded_while_fn(&like, cond, body, &init, bound)?;
        Ok(out[1..1 + nl].to_vec())
    }

    /// Step 2: segments `g_last - 1` down to 0, each of `stride` trips from its
    /// checkpoint, run forward into `segment` (one segment's buffers) and transposed.
    fn earlier_segments(
        &self,
        g_last: &Array,
        checkpoints: &[Array],
        segment: Vec<Array>,
        fixed: &[Array],
        cts: Vec<Array>,
        stride: usize,
    ) -> Result<Vec<Array>> {
        let (nl, nv, nb) = (cts.len(), checkpoints.len(), segment.len());
        let mut init = vec![(g_last - 1)?];
        init.extend(cts);
        init.extend(segment);
        init.extend(checkpoints.iter().cloned());
        init.extend(fixed.iter().cloned());
        let s = i32_of(stride)?;
        let cond = |c: &[Array]| c[0].ge(0);
        let body = |c: &[Array]| -> Result<Vec<Array>> {
            let g = &c[0];
            let ct = c[1..1 + nl].to_vec();
            let segment = c[1 + nl..1 + nl + nb].to_vec();
            let chk = &c[1 + nl + nb..1 + nl + nb + nv];
            let fixed = &c[1 + nl + nb + nv..];
            let start = read_rows(chk, g)?;
            let len = (g.zeros_like()? + s)?;
            let kept = self.run_keeping(&start, &len, stride, segment, fixed)?;
            let ct = self.transpose_trips(&kept, &len, stride, fixed, ct)?;
            let mut next = vec![(g - 1)?];
            next.extend(ct);
            next.extend(kept);
            next.extend(c[1 + nl + nb..].iter().cloned());
            Ok(next)
        };
        let like = init[0].clone();
        let out = bounded_while_fn(&like, cond, body, &init, rows(self.max_steps, stride))?;
        Ok(out[1..1 + nl].to_vec())
    }

    /// Runs the `len` trips (at most `span`) from the known carry `start`, keeping every
    /// trip's carry in `bufs` (row `t` the carry before trip `t`); returns the buffers. The
    /// last trip's successor is not computed.
    fn run_keeping(
        &self,
        start: &[Array],
        len: &Array,
        span: usize,
        bufs: Vec<Array>,
        fixed: &[Array],
    ) -> Result<Vec<Array>> {
        let nv = start.len();
        if nv == 0 {
            return Ok(bufs);
        }
        let zero = len.zeros_like()?;
        let bufs: Vec<Array> = bufs
            .iter()
            .zip(start)
            .map(|(b, v)| write_row(b, v, &zero))
            .collect::<Result<_>>()?;
        let mut init = vec![(&zero + 1)?];
        init.extend(start.iter().cloned());
        init.extend(bufs);
        init.extend(fixed.iter().cloned());
        init.push(len.clone());
        let cond = |c: &[Array]| c[0].lt(&c[c.len() - 1]);
        let body = |c: &[Array]| -> Result<Vec<Array>> {
            let t = &c[0];
            let known = self.known_carry(&c[1..1 + nv], &c[1 + 2 * nv..c.len() - 1]);
            let var = self.varying_of(&eval_program(&self.fwd_known, &known)?);
            let mut next = vec![(t + 1)?];
            next.extend(var.iter().cloned());
            for (b, v) in c[1 + nv..1 + 2 * nv].iter().zip(&var) {
                next.push(write_row(b, v, t)?);
            }
            next.extend(c[1 + 2 * nv..].iter().cloned());
            Ok(next)
        };
        let out = bounded_while_fn(&zero, cond, body, &init, span.saturating_sub(1))?;
        Ok(out[1 + nv..1 + 2 * nv].to_vec())
    }
}

fn i32_of(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::Value(format!("bounded_while: {n} trips is too many")))
}

/// Row `row` of each buffer.
fn read_rows(bufs: &[Array], row: &Array) -> Result<Vec<Array>> {
    bufs.iter().map(|b| read_row(b, row)).collect()
}

/// `x / d` rounded toward zero, for non-negative i32 `x`.
fn int_div(x: &Array, d: i32) -> Result<Array> {
    x.binary(quabla_abi::qir::BinaryOp::Div, d)
}

/// `buf[row] = value` for a buffer of rows shaped like `value`.
fn write_row(buf: &Array, value: &Array, row: &Array) -> Result<Array> {
    let zero = row.zeros_like()?;
    let starts: Vec<&Array> = std::iter::once(row)
        .chain(std::iter::repeat_n(&zero, value.ndim()))
        .collect();
    buf.dynamic_update_slice(&value.expand_dims(0)?, &starts)
}

/// `buf[row]`.
fn read_row(buf: &Array, row: &Array) -> Result<Array> {
    let zero = row.zeros_like()?;
    let starts: Vec<&Array> = std::iter::once(row)
        .chain(std::iter::repeat_n(&zero, buf.ndim() - 1))
        .collect();
    let sizes: Vec<usize> = std::iter::once(1)
        .chain(buf.shape()[1..].iter().copied())
        .collect();
    let rest: Vec<isize> = buf.shape()[1..].iter().map(|&d| d as isize).collect();
    buf.dynamic_slice(&starts, &sizes)?.reshape(&rest)
}
