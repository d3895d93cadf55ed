//! Core-level ops that never reach a backend: `stop_gradient`, `custom_jvp`, `custom_vjp`
//! and `checkpoint` (remat), with all their rules. They are lowered away before compilation
//! (`passes::lower`).

use super::apply;
use super::control_flow::spread;
use crate::ad::jvp_support::{float_tangents, tangent_region};
use crate::ad::rules::TransposeArgs;
use crate::array::Array;
use crate::batching::{batch_region, BatchArgs};
use crate::error::Result;
use crate::eval::eval_program;
use crate::trace::trace_function;
use quabla_abi::qir::{Node, Op, Program};
use quabla_abi::TensorType;

fn float_types(ts: &[TensorType]) -> Vec<TensorType> {
    ts.iter().filter(|t| t.dtype.is_float()).cloned().collect()
}

impl Array {
    /// The same value, with a zero derivative (gradients stop here).
    ///
    /// ```no_run
    /// # use quabla::{ad::grad, Array};
    /// let g = grad(|a: &[Array]| Ok(vec![(&a[0] * &a[0].stop_gradient()?)?]), &[0]);
    /// let x = Array::from_slice(&[3.0f64], &[]).unwrap();
    /// assert_eq!(g(&[x]).unwrap()[0].item::<f64>().unwrap(), 3.0);
    /// ```
    pub fn stop_gradient(&self) -> Result<Array> {
        Ok(apply(Op::StopGradient, &[self], vec![])?.remove(0))
    }
}

fn types_of(args: &[Array]) -> Vec<TensorType> {
    args.iter().map(|a| a.tensor_type().clone()).collect()
}

/// A function with a user-defined JVP, as `jax.custom_jvp` with `defjvp`.
///
/// `rule(primals, tangents)` gets one tangent per float argument and returns the outputs and
/// one tangent per float output. The rule must be linear in the tangents for reverse mode to
/// transpose it; higher derivatives differentiate the rule itself.
///
/// ```no_run
/// # use quabla::{ad::grad, custom_jvp, Array};
/// // log(1 + e^x) with a stable derivative logistic(x).
/// let softplus = custom_jvp(
///     |a: &[Array]| Ok(vec![a[0].exp()?.log1p()?]),
///     |p: &[Array], t: &[Array]| Ok((vec![p[0].exp()?.log1p()?], vec![(&t[0] * &p[0].logistic()?)?])),
/// );
/// let g = grad(&softplus, &[0])(&[Array::from_slice(&[1000.0f64], &[]).unwrap()]).unwrap();
/// assert_eq!(g[0].item::<f64>().unwrap(), 1.0);
/// ```
pub fn custom_jvp<F, R>(f: F, rule: R) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
    R: Fn(&[Array], &[Array]) -> Result<(Vec<Array>, Vec<Array>)>,
{
    move |args: &[Array]| {
        let device = crate::ad::device_of(args)?;
        let types = types_of(args);
        let call = trace_function(&device, &types, &f)?;
        let n = args.len();
        let mut rule_types = types.clone();
        rule_types.extend(float_types(&types));
        let nfo = float_types(&call.output_types()).len();
        let jvp = trace_function(&device, &rule_types, |a: &[Array]| {
            let (outs, touts) = rule(&a[..n], &a[n..])?;
            if touts.len() != nfo {
                return Err(crate::Error::value(format!("custom_jvp rule returned {} tangents; it must return one per float output ({nfo})", touts.len())));
            }
            Ok([outs, touts].concat())
        })?;
        let refs: Vec<&Array> = args.iter().collect();
        let out_types = call.output_types();
        apply(
            Op::CustomJvp {
                call: Box::new(call),
                jvp: Box::new(jvp),
            },
            &refs,
            out_types,
        )
    }
}

/// A function with a user-defined VJP, as `jax.custom_vjp` with `defvjp(fwd, bwd)`.
///
/// `fwd(args)` returns the outputs and residuals; `bwd(residuals, cotangents)` gets one
/// cotangent per float output and returns one per float argument. Forward mode through such
/// a function is an error, as in JAX.
///
/// ```no_run
/// # use quabla::{ad::grad, custom_vjp, Array};
/// // sqrt with a cotangent that stays finite at 0: bwd returns ct / (2 sqrt(x) + 1e-12).
/// let safe_sqrt = custom_vjp(
///     |a: &[Array]| Ok(vec![a[0].sqrt()?]),
///     |a: &[Array]| {
///         let y = a[0].sqrt()?;
///         Ok((vec![y.clone()], vec![y]))
///     },
///     |res: &[Array], ct: &[Array]| Ok(vec![(&ct[0] / &(&(&res[0] * 2.0)? + 1e-12)?)?]),
/// );
/// let g = grad(safe_sqrt, &[0])(&[Array::from_slice(&[0.0f64], &[])?])?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn custom_vjp<F, Fw, Bw>(f: F, fwd: Fw, bwd: Bw) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
    Fw: Fn(&[Array]) -> Result<(Vec<Array>, Vec<Array>)>,
    Bw: Fn(&[Array], &[Array]) -> Result<Vec<Array>>,
{
    move |args: &[Array]| {
        let device = crate::ad::device_of(args)?;
        let types = types_of(args);
        let call = trace_function(&device, &types, &f)?;
        let k = call.outputs.len();
        let fwd_p = trace_function(&device, &types, |a: &[Array]| {
            let (outs, res) = fwd(a)?;
            if outs.len() != k {
                return Err(crate::Error::value(format!(
                    "custom_vjp fwd returned {} outputs, the function returns {k}",
                    outs.len()
                )));
            }
            Ok([outs, res].concat())
        })?;
        let res_types = fwd_p.output_types()[k..].to_vec();
        let mut bwd_types = res_types.clone();
        bwd_types.extend(float_types(&call.output_types()));
        let nr = res_types.len();
        let nfa = float_types(&types).len();
        let bwd_p = trace_function(&device, &bwd_types, |a: &[Array]| {
            let cts = bwd(&a[..nr], &a[nr..])?;
            if cts.len() != nfa {
                return Err(crate::Error::value(format!("custom_vjp bwd returned {} cotangents; it must return one per float argument ({nfa})", cts.len())));
            }
            Ok(cts)
        })?;
        let refs: Vec<&Array> = args.iter().collect();
        let out_types = call.output_types();
        apply(
            Op::CustomVjp {
                call: Box::new(call),
                fwd: Box::new(fwd_p),
                bwd: Box::new(bwd_p),
            },
            &refs,
            out_types,
        )
    }
}

/// `f` with rematerialisation: reverse mode recomputes `f`'s intermediate values from its
/// inputs in the backward pass instead of storing them (`jax.checkpoint`).
///
/// ```no_run
/// # use quabla::{ad::grad, checkpoint, Array, Axes};
/// // The backward pass recomputes the tanh chain instead of storing it.
/// let block = checkpoint(|a: &[Array]| Ok(vec![a[0].tanh()?.tanh()?.sum(Axes::All, false)?]));
/// let g = grad(block, &[0])(&[Array::from_slice(&[0.5f64, 1.0], &[2])?])?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn checkpoint<F>(f: F) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    move |args: &[Array]| {
        let device = crate::ad::device_of(args)?;
        let call = trace_function(&device, &types_of(args), &f)?;
        let refs: Vec<&Array> = args.iter().collect();
        let out_types = call.output_types();
        apply(
            Op::Checkpoint {
                call: Box::new(call),
            },
            &refs,
            out_types,
        )
    }
}

/// Primal outputs and output tangents of a custom op or checkpoint.
pub(crate) fn jvp(
    node: &Node,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    let like = &primals[0];
    let k = node.results.len();
    let fts = float_tangents(primals, tangents)?;
    let with_tangents = || [primals.to_vec(), fts.clone()].concat();
    match &node.op {
        Op::CustomJvp { jvp, .. } => {
            // The primal outputs are the node's own, so a further derivative of them uses
            // this rule again, as JAX's rules that call the function do. The rule's own
            // primal outputs are the plain function's: differentiated again, a branch its
            // `where`s mask (a reflection formula's log(0) at the poles) would leak NaN
            // through 0 * inf. They are dead code unless the tangents read them.
            let refs: Vec<&Array> = primals.iter().collect();
            let outs = apply(node.op.clone(), &refs, node.results.clone())?;
            let touts = eval_program(jvp, &with_tangents())?.split_off(k);
            Ok((outs, spread(&node.results, touts)))
        }
        Op::CustomVjp { fwd, bwd, .. } => {
            let mut outs = eval_program(fwd, primals)?;
            let residuals = outs.split_off(k);
            let operands = [residuals, fts.clone()].concat();
            let refs: Vec<&Array> = operands.iter().collect();
            let touts = apply(
                Op::CustomVjpLinear { bwd: bwd.clone() },
                &refs,
                float_types(&node.results),
            )?;
            Ok((outs, spread(&node.results, touts)))
        }
        Op::Checkpoint { call } => {
            let refs: Vec<&Array> = primals.iter().collect();
            let outs = apply(node.op.clone(), &refs, node.results.clone())?;
            let tangent_call = tangent_region(call, like)?;
            let operands = with_tangents();
            let refs: Vec<&Array> = operands.iter().collect();
            let touts = apply(
                Op::Checkpoint {
                    call: Box::new(tangent_call),
                },
                &refs,
                float_types(&node.results),
            )?;
            Ok((outs, spread(&node.results, touts)))
        }
        Op::CustomVjpLinear { .. } => Err(crate::Error::Value(
            crate::passes::CUSTOM_VJP_FORWARD.into(),
        )),
        _ => unreachable!("dispatched for custom ops"),
    }
}

/// Transposes of the linear custom nodes: a custom VJP's tangent map runs `bwd`; a tangent
/// checkpoint recomputes its known part and transposes the rest.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let name = a.node.op.name();
    let known_mask: Vec<bool> = a.operands.iter().map(|o| !o.is_linear()).collect();
    let (region, known_count) = match &a.node.op {
        // Residuals are known; every tangent operand gets bwd's cotangent.
        Op::CustomVjpLinear { bwd } => ((**bwd).clone(), bwd.inputs.len() - a.node.results.len()),
        Op::Checkpoint { call } => {
            let like = a.operands.iter().find_map(|o| {
                if o.is_linear() {
                    None
                } else {
                    o.known(name).ok()
                }
            });
            let device = match like {
                Some(l) => l.device().clone(),
                None => crate::runtime::default_device()?,
            };
            (
                crate::ad::transpose_region(&device, call, &known_mask)?,
                known_mask.iter().filter(|k| **k).count(),
            )
        }
        op => return crate::ad::rules::no_rule("transpose", op),
    };
    let known: Vec<Array> = match &a.node.op {
        Op::CustomVjpLinear { .. } => a.operands[..known_count]
            .iter()
            .map(|o| o.known(name).cloned())
            .collect::<Result<_>>()?,
        _ => a
            .operands
            .iter()
            .filter(|o| !o.is_linear())
            .map(|o| o.known(name).cloned())
            .collect::<Result<_>>()?,
    };
    let like = known
        .first()
        .or_else(|| a.cts.iter().flatten().next())
        .ok_or_else(|| crate::Error::Internal("transpose without values".into()))?
        .clone();
    let mut cts = Vec::with_capacity(a.cts.len());
    for (ct, t) in a.cts.iter().zip(&a.node.results) {
        cts.push(match ct {
            Some(c) => c.clone(),
            None => crate::ops::zeros_typed(&like, t)?,
        });
    }
    let lin = eval_program(&region, &[known, cts].concat())?;
    Ok(match &a.node.op {
        Op::CustomVjpLinear { .. } => {
            let mut out: Vec<Option<Array>> = vec![None; known_count];
            out.extend(lin.into_iter().map(Some));
            out
        }
        _ => {
            let mut it = lin.into_iter();
            a.operands
                .iter()
                .map(|o| if o.is_linear() { it.next() } else { None })
                .collect()
        }
    })
}

/// Batching: the regions are batched with every output batched.
pub(crate) fn batch(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
    let like = &a.args[0];
    let size = a.size;
    if let Op::StopGradient = a.node.op {
        return Ok(vec![(
            apply(Op::StopGradient, &[&a.args[0]], vec![])?.remove(0),
            true,
        )]);
    }
    let args: Vec<Array> = (0..a.args.len())
        .map(|i| a.batched_arg(i))
        .collect::<Result<_>>()?;
    let batched = |p: &Program| -> Result<Program> {
        let flags = vec![true; p.inputs.len()];
        let force = vec![true; p.outputs.len()];
        Ok(batch_region(p, &flags, size, &force, like)?.0)
    };
    let op = a.node.op.with_regions(
        a.node
            .op
            .regions()
            .into_iter()
            .map(batched)
            .collect::<Result<Vec<_>>>()?,
    );
    let refs: Vec<&Array> = args.iter().collect();
    let types: Vec<TensorType> = (0..a.node.results.len())
        .map(|r| a.result_type(r))
        .collect();
    let outs = apply(op, &refs, types)?;
    Ok(outs.into_iter().map(|o| (o, true)).collect())
}
