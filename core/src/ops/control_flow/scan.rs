//! `scan`: the user API, its lowering to `while` + dynamic slices, and its JVP, transpose
//! and batching rules.

use super::loop_linearity::{linear_carries, linear_outputs, reordered};
use super::*;
use crate::ad::jvp_support::instantiate_all;
use quabla_abi::qir::ValueId;
use scan_tape::{checkpoints_tape, record_tape, Checkpointed};

/// `jax.lax.scan`: `f(carry, x) -> (carry, y)` over the leading axis of `xs`, returning the
/// final carry and the stacked `y`s. With `reverse` the steps run from the end. Reverse
/// mode differentiates it, storing every step's residuals, or sqrt(T) checkpoints when those
/// would pass 256 MiB (`QUABLA_SCAN_TAPE=full|sqrt` fixes the choice).
///
/// ```no_run
/// # use quabla::{lax, Array};
/// // A running sum: carry the total, emit it at every step.
/// let step = |c: &[Array], x: &[Array]| {
///     let total = (&c[0] + &x[0])?;
///     Ok((vec![total.clone()], vec![total]))
/// };
/// let xs = Array::from_slice(&[1.0f64, 2.0, 3.0], &[3])?;
/// let (carry, ys) = lax::scan(&step, &[Array::scalar(0.0f64)?], &[xs], None, false, 1)?;
/// // carry [6], ys [[1, 3, 6]]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn scan(
    f: ScanStep,
    init: &[Array],
    xs: &[Array],
    length: Option<usize>,
    reverse: bool,
    unroll: usize,
) -> Result<(Vec<Array>, Vec<Array>)> {
    if unroll == 0 {
        return Err(Error::Value("scan: unroll must be at least 1".into()));
    }
    let rows = match xs.first() {
        Some(x) => Some(
            *x.shape()
                .first()
                .ok_or_else(|| Error::Shape("scan: every xs needs a leading axis".into()))?,
        ),
        None => None,
    };
    let length = match (length, rows) {
        (Some(m), Some(l)) if m != l => {
            return Err(Error::Shape(format!(
                "scan: length {m} but xs have {l} rows"
            )))
        }
        (_, Some(l)) | (Some(l), None) => l,
        (None, None) => return Err(Error::Value("scan needs xs or a length".into())),
    };
    if xs.iter().any(|x| x.shape().first() != Some(&length)) {
        return Err(Error::Shape(format!(
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
        return Err(Error::Shape(format!(
            "scan: f must return the carry {} first, got {}",
            crate::ops::show_types(&carry_types),
            crate::ops::show_types(&out[..ncar.min(out.len())])
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

pub(super) fn scan_results(body: &Program, length: usize, ncar: usize) -> Vec<TensorType> {
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
            .ok_or_else(|| Error::Value("a scan needs at least one operand".into()))?;
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

fn scan_unroll(op: &Op) -> usize {
    match op {
        Op::Scan { unroll, .. } => *unroll,
        _ => 1,
    }
}

/// JVP of a scan: one scan over the differentiated body, with layout `(consts, tangent
/// consts | carry, tangent carry | xs, tangent xs)`, giving the primal results and the
/// tangents together (forward mode runs each step once; reverse mode takes the primal
/// results from its known part, `known_part`).
pub(super) fn scan_jvp(
    node: &Node,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    let (body, length, reverse, nc, ncar) = split_scan(&node.op);
    let like = &primals[0];
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
        unroll: scan_unroll(&node.op),
    };
    let refs: Vec<&Array> = operands.iter().collect();
    let tb = op.regions()[0].clone();
    let touts = apply(op, &refs, scan_results(&tb, length, tncar))?;
    // Results: carry, t carry, ys, t ys.
    let mut outs: Vec<Array> = touts[..ncar].to_vec();
    outs.extend(touts[tncar..tncar + ny].iter().cloned());
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
pub(super) fn scan_transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let (body, length, reverse, nc, ncar) = split_scan(&a.node.op);
    let n = a.operands.len();
    let mut lin: Vec<bool> = a.operands.iter().map(|o| o.is_linear()).collect();
    linear_carries(body, &mut lin, nc, ncar);
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
        .ok_or_else(|| Error::Internal("scan transpose without values".into()))?;
    let device = like.device().clone();
    // The body reordered: known inputs then linear; known outputs then linear.
    let order: Vec<usize> = known_in.iter().chain(&lin_in).copied().collect();
    let out_order: Vec<usize> = known_out.iter().chain(&lin_out).copied().collect();
    let reordered = reordered(&device, body, &order, &out_order)?;
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
    let step_bytes: usize = fwd_var.output_types()[nko..]
        .iter()
        .map(TensorType::size_bytes)
        .sum();
    let checkpointed = checkpoints_tape(length, step_bytes)?;
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
pub(super) fn batch_scan(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
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
