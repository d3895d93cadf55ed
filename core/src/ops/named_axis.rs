//! Collectives over a named `vmap` axis, JAX's `psum`, `pmax`, `pmin` and `axis_index`, with
//! all their rules: one `named_axis` op carries the interned axis name; the `vmap` that bound
//! the name ([`crate::batching::vmap_named`]) rewrites it, while it batches its function,
//! into a reduction over the batch axis (or an iota); another `vmap` treats it as an
//! elementwise op (it belongs to an enclosing axis). The sum is linear (its JVP and
//! transpose are the sum again, as JAX's); max and min have no derivative, as in JAX. Used
//! anywhere no such `vmap` encloses it, it is an error naming the axis.

use super::apply;
use crate::ad::rules::{no_rule, JvpArgs, TransposeArgs};
use crate::array::{Array, Repr};
use crate::batching::BatchArgs;
use crate::error::{Error, Result};
use crate::ops::Axes;
use quabla_abi::qir::{NamedAxisKind, Node, Op};
use quabla_abi::{DType, TensorType};
use std::cell::RefCell;
use std::sync::Mutex;

/// Axis names, interned: the op holds an index so QIR stays plain data.
static NAMES: Mutex<Vec<String>> = Mutex::new(Vec::new());

thread_local! {
    /// The axes of the `vmap`s batching right now on this thread (innermost last), with
    /// their sizes.
    static BATCHING: RefCell<Vec<(u32, usize)>> = const { RefCell::new(Vec::new()) };
}

pub(crate) fn intern(name: &str) -> u32 {
    let mut names = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = names.iter().position(|n| n == name) {
        return i as u32;
    }
    names.push(name.to_string());
    (names.len() - 1) as u32
}

pub(crate) fn name_of(axis: u32) -> String {
    NAMES
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(axis as usize)
        .cloned()
        .unwrap_or_else(|| format!("#{axis}"))
}

/// Keeps a named axis on the batching stack while its `vmap` batches.
pub(crate) struct Batching;

impl Batching {
    pub(crate) fn push(axis: u32, size: usize) -> Batching {
        BATCHING.with(|b| b.borrow_mut().push((axis, size)));
        Batching
    }
}

impl Drop for Batching {
    fn drop(&mut self) {
        BATCHING.with(|b| {
            b.borrow_mut().pop();
        });
    }
}

/// The size of `axis` when the innermost `vmap` batching now is the one that named it.
fn batching_here(axis: u32) -> Option<usize> {
    BATCHING.with(|b| {
        b.borrow()
            .last()
            .and_then(|&(a, n)| (a == axis).then_some(n))
    })
}

fn unbound(axis: u32, kind: NamedAxisKind) -> Error {
    let name = name_of(axis);
    Error::Value(format!(
        "{}: unbound axis name '{name}': call it inside vmap(..., axis_name='{name}')",
        function_name(kind)
    ))
}

fn function_name(kind: NamedAxisKind) -> &'static str {
    match kind {
        NamedAxisKind::Sum => "psum",
        NamedAxisKind::Max => "pmax",
        NamedAxisKind::Min => "pmin",
        NamedAxisKind::Index => "axis_index",
    }
}

/// The reduction of `x` across the named axis: recorded in the innermost trace (a
/// concrete `x` inside a traced function is captured into it).
fn collective(x: &Array, axis_name: &str, kind: NamedAxisKind) -> Result<Array> {
    let axis = intern(axis_name);
    if x.dtype() == DType::Bool {
        return Err(Error::Value(format!(
            "{}: convert a bool operand to a number first",
            function_name(kind)
        )));
    }
    let op = Op::NamedAxis { axis, kind };
    match &x.repr {
        Repr::Traced { .. } => Ok(apply(op, &[x], vec![])?.remove(0)),
        Repr::Concrete { buffer, .. } => {
            let trace = crate::trace::innermost_active().ok_or_else(|| unbound(axis, kind))?;
            let v = trace.capture(buffer, || x.to_host())?;
            let ty = x.tensor_type().clone();
            let out = trace.push(op, vec![v], vec![ty.clone()]);
            Ok(Array::traced(trace, out[0], ty))
        }
    }
}

/// The sum of `x` over the batch axis that an enclosing [`crate::batching::vmap_named`]
/// named `axis_name`, the same on every element (`jax.lax.psum`).
///
/// ```no_run
/// # use quabla::{batching::vmap_named, lax::psum, Array};
/// let share = vmap_named(|a: &[Array]| Ok(vec![(&a[0] / &psum(&a[0], "i")?)?]), &[Some(0)], &[Some(0)], "i");
/// let x = Array::from_slice(&[1.0f64, 3.0], &[2]).unwrap();
/// assert_eq!(share(&[x]).unwrap()[0].to_vec::<f64>().unwrap(), vec![0.25, 0.75]);
/// ```
pub fn psum(x: &Array, axis_name: &str) -> Result<Array> {
    collective(x, axis_name, NamedAxisKind::Sum)
}

/// The maximum of `x` over a named `vmap` axis (`jax.lax.pmax`; no derivative, as in JAX).
///
/// ```no_run
/// # use quabla::{batching::vmap_named, lax, Array};
/// // Each row divided by the largest row sum in the batch.
/// let f = |a: &[Array]| {
///     let s = a[0].sum(quabla::Axes::All, false)?;
///     Ok(vec![(&a[0] / &lax::pmax(&s, "rows")?)?])
/// };
/// let scaled = vmap_named(f, &[Some(0)], &[Some(0)], "rows");
/// let y = scaled(&[Array::from_slice(&[1.0f64, 1.0, 2.0, 2.0], &[2, 2])?])?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn pmax(x: &Array, axis_name: &str) -> Result<Array> {
    collective(x, axis_name, NamedAxisKind::Max)
}

/// The minimum of `x` over a named `vmap` axis (`jax.lax.pmin`; no derivative, as in JAX).
///
/// ```no_run
/// # use quabla::{batching::vmap_named, lax, Array};
/// let f = |a: &[Array]| Ok(vec![(&a[0] - &lax::pmin(&a[0], "i")?)?]);
/// let shifted = vmap_named(f, &[Some(0)], &[Some(0)], "i");
/// let y = shifted(&[Array::from_slice(&[3.0f64, 1.0, 2.0], &[3])?])?; // [2, 0, 1]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn pmin(x: &Array, axis_name: &str) -> Result<Array> {
    collective(x, axis_name, NamedAxisKind::Min)
}

/// Each element's position along the named `vmap` axis, an i32 scalar
/// (`jax.lax.axis_index`).
///
/// ```no_run
/// # use quabla::{batching::vmap_named, lax::axis_index, Array};
/// let f = vmap_named(|a: &[Array]| Ok(vec![axis_index("i")?]), &[Some(0)], &[Some(0)], "i");
/// let x = Array::from_slice(&[5.0f32, 6.0, 7.0], &[3]).unwrap();
/// assert_eq!(f(&[x]).unwrap()[0].to_vec::<i32>().unwrap(), vec![0, 1, 2]);
/// ```
pub fn axis_index(axis_name: &str) -> Result<Array> {
    let axis = intern(axis_name);
    let kind = NamedAxisKind::Index;
    let trace = crate::trace::innermost_active().ok_or_else(|| unbound(axis, kind))?;
    let ty = TensorType::new(DType::I32, vec![]);
    let out = trace.push(Op::NamedAxis { axis, kind }, vec![], vec![ty.clone()]);
    Ok(Array::traced(trace, out[0], ty))
}

/// The rewrite of a `named_axis` node by the `vmap` that named its axis (`None` for any
/// other node): operands carry the batch axis first where `batched`.
pub(crate) fn batch_bound(
    node: &Node,
    args: &[Array],
    batched: &[bool],
    like: Option<&Array>,
) -> Result<Option<Vec<(Array, bool)>>> {
    let Op::NamedAxis { axis, kind } = &node.op else {
        return Ok(None);
    };
    let Some(size) = batching_here(*axis) else {
        return Ok(None);
    };
    let out = match kind {
        NamedAxisKind::Index => {
            let like = like.ok_or_else(|| Error::Internal("axis_index outside a trace".into()))?;
            (super::iota_like(like, DType::I32, &[size], 0)?, true)
        }
        NamedAxisKind::Sum if !batched[0] => {
            // The same value on every element: `size` copies of it.
            let n = super::constant_like(
                &args[0],
                super::creation::filled(args[0].dtype(), &[], crate::Scalar::Int(size as i64)),
            )?;
            ((&args[0] * &n)?, false)
        }
        NamedAxisKind::Max | NamedAxisKind::Min if !batched[0] => (args[0].clone(), false),
        NamedAxisKind::Sum => (args[0].sum(Axes::Some(&[0]), false)?, false),
        NamedAxisKind::Max => (args[0].max(Axes::Some(&[0]), false)?, false),
        NamedAxisKind::Min => (args[0].min(Axes::Some(&[0]), false)?, false),
    };
    Ok(Some(vec![out]))
}

/// Batching by a `vmap` of another axis: the op is elementwise in every axis but its own,
/// so it applies to the batched operand unchanged.
pub(crate) fn batch(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
    let x = a.batched_arg(0)?;
    Ok(vec![(
        apply(a.node.op.clone(), &[&x], vec![])?.remove(0),
        true,
    )])
}

/// The sum is linear; max, min and the index have no tangent rule (JAX has none either).
pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    let Op::NamedAxis { kind, .. } = &a.node.op else {
        return no_rule("jvp", &a.node.op);
    };
    match (kind, a.tangents.first().and_then(Option::as_ref)) {
        (_, None) | (NamedAxisKind::Index, _) => Ok(vec![None]),
        (NamedAxisKind::Sum, Some(t)) => Ok(vec![Some(
            apply(a.node.op.clone(), &[t], vec![])?.remove(0),
        )]),
        (NamedAxisKind::Max | NamedAxisKind::Min, Some(_)) => Err(Error::Value(format!(
            "{} has no derivative (as in JAX)",
            function_name(*kind)
        ))),
    }
}

/// The sum's transpose is the sum: every element's cotangent gathers all of theirs.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    match (&a.node.op, a.cts.first().and_then(Option::as_ref)) {
        (
            Op::NamedAxis {
                kind: NamedAxisKind::Sum,
                ..
            },
            Some(ct),
        ) => Ok(vec![Some(
            apply(a.node.op.clone(), &[ct], vec![])?.remove(0),
        )]),
        (
            Op::NamedAxis {
                kind: NamedAxisKind::Sum,
                ..
            },
            None,
        ) => Ok(vec![None]),
        _ => no_rule("transpose", &a.node.op),
    }
}

/// Why a program still holding a `named_axis` op cannot be compiled.
pub(crate) fn unbound_in_program(op: &Op) -> Error {
    match op {
        Op::NamedAxis { axis, kind } => unbound(*axis, *kind),
        other => Error::Internal(format!("{} is not a named_axis op", other.name())),
    }
}
