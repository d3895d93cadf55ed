//! The sqrt(T) checkpointed tape of a reverse-mode `scan`.

use super::*;

/// Loops at least this long may keep a sqrt(T) checkpointed tape in reverse mode (see
/// [`checkpoints_tape`]).
const CHECKPOINT_MIN_LENGTH: usize = 64;

/// The largest tape, in bytes, a reverse-mode `scan` stores in full by default: every step's
/// residuals, as JAX stores them. Past it the tape is sqrt(T) checkpointed, which costs a
/// second forward pass (measured: 1.5x the time of the full tape for a 10k-step RNN) but
/// keeps long loops over big carries within memory.
const FULL_TAPE_BUDGET_BYTES: usize = 256 << 20;

/// Whether a reverse-mode `scan` of `length` steps whose residuals take `step_bytes` per
/// step keeps a sqrt(T) checkpointed tape rather than every step's residuals. The default
/// stores the tape in full up to [`FULL_TAPE_BUDGET_BYTES`]; `QUABLA_SCAN_TAPE=full` or
/// `=sqrt` fixes the choice for every loop (`sqrt` still stores loops shorter than 64 steps
/// in full: their checkpoints would cost as much as the tape).
pub(super) fn checkpoints_tape(length: usize, step_bytes: usize) -> Result<bool> {
    let long = length >= CHECKPOINT_MIN_LENGTH;
    match std::env::var("QUABLA_SCAN_TAPE").as_deref() {
        Err(_) | Ok("") | Ok("auto") => {
            Ok(long && length.saturating_mul(step_bytes) > FULL_TAPE_BUDGET_BYTES)
        }
        Ok("full") => Ok(false),
        Ok("sqrt") => Ok(long),
        Ok(other) => Err(Error::Value(format!(
            "QUABLA_SCAN_TAPE={other:?} is not a tape policy: use `auto` (the default: every \
             step's residuals up to 256 MiB, sqrt(T) checkpoints past it), `full` or `sqrt`"
        ))),
    }
}

thread_local! {
    /// Set by the transformation on the thread that builds the backward pass.
    static LAST_TAPE_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Summed over the backward passes built on this thread since the last reset.
    static TOTAL_TAPE_BYTES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn bytes_of(arrays: &[Array]) -> usize {
    arrays.iter().map(|a| a.tensor_type().size_bytes()).sum()
}

pub(super) fn record_tape(arrays: &[Array]) {
    record_tape_bytes(bytes_of(arrays));
}

fn record_tape_bytes(bytes: usize) {
    LAST_TAPE_BYTES.with(|c| c.set(bytes));
    TOTAL_TAPE_BYTES.with(|c| c.set(c.get().saturating_add(bytes)));
}

/// Bytes of loop state every reverse-mode `scan` and bounded `while` built on this thread
/// since the last call kept for its backward pass (a bounded loop's checkpoints and
/// segment), and a reset to zero. Each nested loop's backward pass is built once, so for
/// nested loops this bounds the tape live at once. A diagnostic for memory measurements.
///
/// ```no_run
/// let _ = quabla::lax::take_scan_tape_bytes(); // reset
/// // ... build a reverse-mode program (grad, make_program) ...
/// let bytes = quabla::lax::take_scan_tape_bytes();
/// ```
pub fn take_scan_tape_bytes() -> usize {
    TOTAL_TAPE_BYTES.with(|c| c.replace(0))
}

/// Bytes of loop state the last reverse-mode `scan` kept for its backward pass (the carry
/// checkpoints plus one segment's residuals when checkpointed, every step's residuals
/// otherwise), as built by the transformation. A diagnostic for memory measurements.
///
/// ```no_run
/// # use quabla::{ad::grad, lax, Array, Axes};
/// let f = |a: &[Array]| {
///     let body = |c: &[Array], _: &[Array]| Ok((vec![c[0].sin()?], vec![]));
///     Ok(vec![lax::scan(&body, a, &[], Some(100), false, 1)?.0[0].sum(Axes::All, false)?])
/// };
/// quabla::make_program(grad(f, &[0]), &[Array::from_slice(&[0.5f64; 8], &[8])?])?;
/// println!("{} bytes kept", lax::last_scan_tape_bytes());
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn last_scan_tape_bytes() -> usize {
    LAST_TAPE_BYTES.with(|c| c.get())
}

/// The sqrt(T) checkpointed backward pass of a scan: carries are kept at the start of each
/// of S = ceil(T / K) segments of K = ceil(sqrt(T)) steps; going backward, each segment's
/// residuals are recomputed from its checkpoint, then its steps are transposed. Storage is
/// O(sqrt(T)) carries and residuals; the known part is recomputed once (2x forward work).
/// Steps past T (padding to S * K) leave carries and cotangents unchanged.
pub(super) struct Checkpointed {
    pub(super) length: usize,
    pub(super) reverse: bool,
    pub(super) kc: usize,
    pub(super) kcar: usize,
    pub(super) nvar: usize,
    pub(super) ninv: usize,
    pub(super) nlc: usize,
    pub(super) nlcar: usize,
    pub(super) nko: usize,
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
    pub(super) fn backward(
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
        record_tape_bytes(bytes_of(&checkpoints) + seg_res);
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
