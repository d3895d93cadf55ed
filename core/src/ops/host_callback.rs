//! The `host_callback` primitive and its rules: a call from a running program into a host
//! function (JAX's `pure_callback`, `debug.callback`, `debug.print`).
//!
//! The function is registered in the process-wide table of `quabla_abi::host::callbacks`;
//! the op names it by id. On concrete arrays the function is called at once, on the host; in
//! a trace the op is recorded and the backend calls back when the program runs (an optional
//! capability: a backend without it refuses the program, naming the op).
//!
//! Rules: an effectful call has zero tangents (it sees the primal values, once, as JAX's
//! debug callbacks do); a pure call has no derivative, as in JAX (wrap it in `custom_jvp`
//! or `custom_vjp`). Nothing is linear in a call, so there is no transpose rule. Batching
//! follows the call's [`VmapMethod`]; effectful calls run once per batch element.

use super::apply;
use crate::ad::rules::{no_rule, JvpArgs, TransposeArgs};
use crate::array::{Array, Repr};
use crate::batching::BatchArgs;
use crate::error::{Error, Result};
use quabla_abi::host::callbacks;
use quabla_abi::qir::Op;
use quabla_abi::{HostArray, HostView, TensorType};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// How a host call runs under `vmap` (JAX's `vmap_method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmapMethod {
    /// Once per batch element, in order (a loop).
    Sequential,
    /// Once, with the batch axis in front of every batched argument and a size-1 axis in
    /// front of the others; the function returns results with the batch axis in front.
    ExpandDims,
    /// Once, with every argument broadcast to the batch axis in front.
    BroadcastAll,
    /// Refused under `vmap` (JAX's `vmap_method=None`).
    Refuse,
}

/// How a host call behaves.
#[derive(Clone, Debug)]
pub struct HostCallbackOptions {
    /// Runs even when no result is used, and never merged with another call (debug
    /// callbacks); otherwise the call is pure and may be dropped when unused.
    pub effectful: bool,
    pub vmap: VmapMethod,
    /// Named in error messages (`pure_callback`, `debug.print`...).
    pub name: String,
}

/// A host function: the arguments' values and the declared result types (with the batch
/// axis under `vmap`'s `expand_dims` and `broadcast_all`) in, the results out.
pub type HostFn = dyn Fn(&[HostView<'_>], &[TensorType]) -> std::result::Result<Vec<HostArray>, String>
    + Send
    + Sync;

fn options_table() -> &'static Mutex<HashMap<u64, HostCallbackOptions>> {
    static TABLE: OnceLock<Mutex<HashMap<u64, HostCallbackOptions>>> = OnceLock::new();
    TABLE.get_or_init(Default::default)
}

fn options_of(id: u64) -> Result<HostCallbackOptions> {
    options_table()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&id)
        .cloned()
        .ok_or_else(|| {
            Error::Value(format!(
                "host callback {id} was not registered by this process's core"
            ))
        })
}

/// Calls `f` on the values of `args`, returning arrays of the `results` types: at once on
/// concrete arrays, or, in a trace, whenever the traced program runs.
///
/// ```no_run
/// # use quabla::{host_callback, Array, HostCallbackOptions, VmapMethod};
/// # use quabla_abi::{HostArray, TensorType};
/// let double = std::sync::Arc::new(|a: &[quabla_abi::HostView<'_>], _: &[TensorType]| {
///     let v: Vec<f32> = a[0].to_array().to_vec().map_err(|e| e.to_string())?;
///     HostArray::from_slice(a[0].ty.shape.clone(), &v.iter().map(|x| 2.0 * x).collect::<Vec<_>>())
///         .map(|h| vec![h])
/// });
/// let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
/// let opts = HostCallbackOptions { effectful: false, vmap: VmapMethod::Sequential, name: "double".into() };
/// let y = host_callback(double, &[x.clone()], &[x.tensor_type().clone()], opts).unwrap();
/// assert_eq!(y[0].to_vec::<f32>().unwrap(), vec![2.0, 4.0]);
/// ```
pub fn host_callback(
    f: Arc<HostFn>,
    args: &[Array],
    results: &[TensorType],
    options: HostCallbackOptions,
) -> Result<Vec<Array>> {
    let effectful = options.effectful;
    let traced = args.iter().any(|a| matches!(a.repr, Repr::Traced { .. }));
    // An effect without arguments inside a traced function belongs to that function's
    // program (`debug.print("step")` in a jitted loop prints on every trip).
    let enclosing = match (args.is_empty() && effectful, traced) {
        (true, false) => crate::trace::innermost_active(),
        _ => None,
    };
    if !traced && enclosing.is_none() {
        return call_now(f.as_ref(), args, results, &options.name);
    }
    let id = callbacks::register(f);
    options_table()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, options);
    let op = Op::HostCallback {
        callback: id,
        effectful,
    };
    match enclosing {
        Some(trace) => Ok(push_into(&trace, op, results.to_vec())),
        None => call_registered(id, effectful, args, results),
    }
}

fn push_into(trace: &Arc<crate::trace::Trace>, op: Op, results: Vec<TensorType>) -> Vec<Array> {
    let ids = trace.push(op, vec![], results.clone());
    ids.into_iter()
        .zip(results)
        .map(|(v, ty)| Array::traced(trace.clone(), v, ty))
        .collect()
}

/// A host call without operands re-emitted beside `like` (a program's nodes replayed into
/// another trace): recorded in `like`'s trace, or made now when `like` is concrete.
pub(crate) fn emit_without_operands(
    like: &Array,
    op: Op,
    results: Vec<TensorType>,
) -> Result<Vec<Array>> {
    match &like.repr {
        Repr::Traced { trace, .. } => Ok(push_into(trace, op, results)),
        Repr::Concrete { device, .. } => {
            let (id, _) = attributes(&op, "evaluation")?;
            let out =
                callbacks::call(id, &[], &results).map_err(|e| Error::Value(e.to_string()))?;
            out.iter().map(|h| Array::from_host_on(device, h)).collect()
        }
    }
}

fn call_registered(
    id: u64,
    effectful: bool,
    args: &[Array],
    results: &[TensorType],
) -> Result<Vec<Array>> {
    let refs: Vec<&Array> = args.iter().collect();
    apply(
        Op::HostCallback {
            callback: id,
            effectful,
        },
        &refs,
        results.to_vec(),
    )
}

/// The eager path: the values come to the host, the function runs, its results go back
/// to the arguments' device (the default device without arguments).
fn call_now(f: &HostFn, args: &[Array], results: &[TensorType], name: &str) -> Result<Vec<Array>> {
    let hosts = args
        .iter()
        .map(Array::to_host)
        .collect::<Result<Vec<_>>>()?;
    let views: Vec<HostView<'_>> = hosts.iter().map(HostArray::view).collect();
    let out = f(&views, results).map_err(|m| Error::Value(format!("{name}: {m}")))?;
    if out.len() != results.len() {
        return Err(Error::Value(format!(
            "{name}: the function returned {} values; the call declared {}",
            out.len(),
            results.len()
        )));
    }
    let device = match args.first() {
        Some(a) => a.device().clone(),
        None => crate::runtime::default_device()?,
    };
    out.iter()
        .zip(results)
        .enumerate()
        .map(|(i, (h, t))| {
            if &h.ty != t {
                return Err(Error::Value(format!(
                    "{name}: result {i} is {}, the call declared {t}",
                    h.ty
                )));
            }
            Array::from_host_on(&device, h)
        })
        .collect()
}

fn attributes(op: &Op, rule: &str) -> Result<(u64, bool)> {
    match op {
        Op::HostCallback {
            callback,
            effectful,
        } => Ok((*callback, *effectful)),
        other => no_rule(rule, other),
    }
}

/// Effectful calls have zero tangents; a pure call with a nonzero tangent is an error, as
/// in JAX.
pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    let (id, effectful) = attributes(&a.node.op, "jvp")?;
    if !effectful && a.tangents.iter().any(Option::is_some) {
        let name = options_of(id)
            .map(|o| o.name)
            .unwrap_or_else(|_| "pure_callback".into());
        return Err(Error::Value(format!(
            "{name} has no derivative (as in JAX): wrap the call in custom_jvp or custom_vjp \
             to differentiate through it"
        )));
    }
    Ok(vec![None; a.outs.len()])
}

/// A call is not linear in anything; a linear program never holds one.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    no_rule("transpose", &a.node.op)
}

/// Batching by the call's [`VmapMethod`] (effectful calls: once per element).
pub(crate) fn batch(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
    let (id, effectful) = attributes(&a.node.op, "batching")?;
    let (method, name) = if effectful {
        (VmapMethod::Sequential, String::new())
    } else {
        let options = options_of(id)?;
        (options.vmap, options.name)
    };
    let batched_results: Vec<TensorType> = (0..a.node.results.len())
        .map(|r| a.result_type(r))
        .collect();
    let out = match method {
        VmapMethod::Refuse => {
            return Err(Error::Value(format!(
                "{name} under vmap needs a vmap_method (as in JAX): 'sequential', \
                 'expand_dims' or 'broadcast_all'"
            )))
        }
        VmapMethod::BroadcastAll => {
            let args = (0..a.args.len())
                .map(|i| a.batched_arg(i))
                .collect::<Result<Vec<_>>>()?;
            call_registered(id, effectful, &args, &batched_results)?
        }
        VmapMethod::ExpandDims => {
            let args = (0..a.args.len())
                .map(|i| match a.batched[i] {
                    true => Ok(a.args[i].clone()),
                    false => a.args[i].expand_dims(0),
                })
                .collect::<Result<Vec<_>>>()?;
            call_registered(id, effectful, &args, &batched_results)?
        }
        VmapMethod::Sequential => sequential(a, id, effectful)?,
    };
    Ok(out.into_iter().map(|r| (r, true)).collect())
}

/// One call per batch element: a scan over the batched arguments' leading axis, the others
/// captured as they are.
fn sequential(a: &BatchArgs, id: u64, effectful: bool) -> Result<Vec<Array>> {
    let xs: Vec<Array> = (0..a.args.len())
        .filter(|&i| a.batched[i])
        .map(|i| a.args[i].clone())
        .collect();
    let results = a.node.results.clone();
    let step = |_carry: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        let mut slices = x.iter();
        let args = (0..a.args.len())
            .map(|i| match a.batched[i] {
                true => slices.next().cloned().ok_or_else(|| {
                    Error::Internal("host_callback: a batched slice is missing".into())
                }),
                false => Ok(a.args[i].clone()),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((vec![], call_registered(id, effectful, &args, &results)?))
    };
    let (_, ys) = super::control_flow::scan(&step, &[], &xs, Some(a.size), false, 1)?;
    Ok(ys)
}
