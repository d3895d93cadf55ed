//! `vmap`: vectorising a function over a batch axis as a program transformation.
//!
//! Inside the transformation every batched value carries its batch axis first; each
//! primitive's batching rule (beside its other rules in `ops/`) maps batched operands to
//! batched results. Regions are handled in `control_flow.rs`: a `cond` on a batched index
//! becomes a select over all branches, and a `while` with a batched predicate runs until
//! every element is done, freezing the carries of finished elements.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::eval::eval_program;
use crate::ops::{self, apply_at};
use crate::trace::trace_function;
use quabla_abi::qir::{Node, Program};
use quabla_abi::TensorType;

/// A batching rule's view of one node: operands with their batch flags (batch axis 0).
pub(crate) struct BatchArgs<'a> {
    pub node: &'a Node,
    pub args: &'a [Array],
    pub batched: &'a [bool],
    pub size: usize,
}

impl BatchArgs<'_> {
    /// Operand `i` with a batch axis (broadcast when it had none).
    pub fn batched_arg(&self, i: usize) -> Result<Array> {
        with_batch(&self.args[i], self.batched[i], self.size)
    }

    /// A node result type with the batch axis in front.
    pub fn result_type(&self, r: usize) -> TensorType {
        batched_type(&self.node.results[r], self.size)
    }
}

pub(crate) fn batched_type(t: &TensorType, size: usize) -> TensorType {
    let mut shape = vec![size];
    shape.extend_from_slice(&t.shape);
    TensorType::new(t.dtype, shape)
}

/// `a` with a leading batch axis of `size` (broadcast if it has none).
pub(crate) fn with_batch(a: &Array, batched: bool, size: usize) -> Result<Array> {
    if batched {
        return Ok(a.clone());
    }
    let mut shape = vec![size];
    shape.extend_from_slice(a.shape());
    a.broadcast_in_dim(&shape, &(1..=a.ndim()).collect::<Vec<_>>())
}

fn rule(a: &BatchArgs) -> Result<Vec<(Array, bool)>> {
    match ops::family(&a.node.op) {
        ops::Family::Elementwise => ops::elementwise::batch(a),
        ops::Family::Shape => ops::shape::batch(a),
        ops::Family::Reduction => ops::reduction::batch(a),
        ops::Family::Contraction => ops::contraction::batch(a),
        ops::Family::Indexing => ops::indexing::batch(a),
        ops::Family::ControlFlow => ops::control_flow::batch(a),
        ops::Family::Custom => ops::custom::batch(a),
        ops::Family::LinearSolve => ops::linear_solve::batch(a),
        ops::Family::Linalg => ops::linalg::batch(a),
        ops::Family::Sort => ops::sort::batch(a),
        ops::Family::Host => ops::host_callback::batch(a),
        ops::Family::NamedAxis => ops::named_axis::batch(a),
        ops::Family::Creation => unreachable!("nullary ops are never batched"),
    }
}

/// Runs `p` on `args` (batched ones with the batch axis first), emitting batched code.
pub(crate) fn batch_walk(
    p: &Program,
    args: &[Array],
    batched: &[bool],
    size: usize,
) -> Result<(Vec<Array>, Vec<bool>)> {
    let mut env: Vec<Array> = args.to_vec();
    let mut flags: Vec<bool> = batched.to_vec();
    for node in &p.nodes {
        let ins: Vec<Array> = node
            .operands
            .iter()
            .map(|o| env[o.index()].clone())
            .collect();
        let fl: Vec<bool> = node.operands.iter().map(|o| flags[o.index()]).collect();
        // A collective over this vmap's own axis is rewritten even when nothing it reads
        // is batched (a sum over the axis of a shared value counts the elements).
        if let Some(outs) = ops::named_axis::batch_bound(node, &ins, &fl, args.first())? {
            for (a, f) in outs {
                env.push(a);
                flags.push(f);
            }
            continue;
        }
        if !fl.iter().any(|b| *b) {
            let refs: Vec<&Array> = ins.iter().collect();
            let outs = apply_at(args.first(), node.op.clone(), &refs, node.results.clone())?;
            flags.extend(outs.iter().map(|_| false));
            env.extend(outs);
            continue;
        }
        for (a, f) in rule(&BatchArgs {
            node,
            args: &ins,
            batched: &fl,
            size,
        })? {
            env.push(a);
            flags.push(f);
        }
    }
    Ok((
        p.outputs.iter().map(|o| env[o.index()].clone()).collect(),
        p.outputs.iter().map(|o| flags[o.index()]).collect(),
    ))
}

/// A region run per batch element: inputs flagged in `batched` carry the batch axis; outputs
/// flagged in `force` are made batched; returns the program and which outputs are batched.
pub(crate) fn batch_region(
    p: &Program,
    batched: &[bool],
    size: usize,
    force: &[bool],
    like: &Array,
) -> Result<(Program, Vec<bool>)> {
    let types: Vec<TensorType> = p
        .inputs
        .iter()
        .zip(batched)
        .map(|(t, b)| if *b { batched_type(t, size) } else { t.clone() })
        .collect();
    let final_flags = std::cell::RefCell::new(Vec::new());
    let prog = trace_function(like.device(), &types, |a: &[Array]| {
        let (outs, f) = batch_walk(p, a, batched, size)?;
        let want: Vec<bool> = f.iter().zip(force).map(|(x, y)| *x || *y).collect();
        let res = outs
            .iter()
            .zip(&f)
            .zip(&want)
            .map(|((o, has), w)| {
                if *w {
                    with_batch(o, *has, size)
                } else {
                    Ok(o.clone())
                }
            })
            .collect();
        *final_flags.borrow_mut() = want;
        res
    })?;
    let final_flags = final_flags.into_inner();
    Ok((prog, final_flags))
}

fn move_axis(a: &Array, from: usize, to: usize) -> Result<Array> {
    if from == to {
        return Ok(a.clone());
    }
    let mut perm: Vec<usize> = (0..a.ndim()).filter(|&d| d != from).collect();
    perm.insert(to, from);
    a.transpose(&perm)
}

/// Vectorises `f` over the axes `in_axes` of its arguments (`None`: not batched; a missing
/// entry means axis 0) and puts the batch axis of each output at `out_axes` (default 0).
///
/// ```no_run
/// # use quabla::{vmap, Array, Axes};
/// let rows = vmap(|a: &[Array]| Ok(vec![a[0].sum(Axes::All, false)?]), &[Some(0)], &[]);
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// assert_eq!(rows(&[x]).unwrap()[0].to_vec::<f32>().unwrap(), vec![3.0, 7.0]);
/// ```
pub fn vmap<F>(
    f: F,
    in_axes: &[Option<usize>],
    out_axes: &[Option<usize>],
) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let out_axes = out_axes.to_vec();
    vmap_with_out_axes(f, in_axes, move |_n: usize| Ok(out_axes.clone()))
}

/// [`vmap`] whose output axes are decided after `f` has been traced: `out_axes(n)` gets the
/// number of outputs and returns one entry per output (a missing entry means axis 0). Front
/// ends whose outputs are trees (the Python package) learn the tree's shape only by tracing.
///
/// ```no_run
/// # use quabla::{batching::vmap_with_out_axes, Array, Axes};
/// let f = vmap_with_out_axes(
///     |a: &[Array]| Ok(vec![a[0].sum(Axes::All, false)?]),
///     &[Some(0)],
///     |n| Ok(vec![Some(0); n]),
/// );
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
/// assert_eq!(f(&[x]).unwrap()[0].to_vec::<f32>().unwrap(), vec![3.0, 7.0]);
/// ```
pub fn vmap_with_out_axes<F, O>(
    f: F,
    in_axes: &[Option<usize>],
    out_axes: O,
) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
    O: Fn(usize) -> Result<Vec<Option<usize>>>,
{
    vmap_with_axis_name(f, in_axes, out_axes, None)
}

/// [`vmap`] whose batch axis is named `axis_name`, so that `f` may call the collectives over
/// it ([`crate::lax::psum`], [`crate::lax::pmax`], [`crate::lax::pmin`],
/// [`crate::lax::axis_index`]), as `jax.vmap(..., axis_name=...)`. An inner `vmap_named`
/// of the same name hides an outer one.
///
/// ```no_run
/// # use quabla::{batching::vmap_named, lax::psum, Array};
/// let centred = vmap_named(
///     |a: &[Array]| Ok(vec![(&a[0] - &(&psum(&a[0], "batch")? / 3.0)?)?]),
///     &[Some(0)],
///     &[Some(0)],
///     "batch",
/// );
/// let x = Array::from_slice(&[1.0f64, 2.0, 6.0], &[3]).unwrap();
/// assert_eq!(centred(&[x]).unwrap()[0].to_vec::<f64>().unwrap(), vec![-2.0, -1.0, 3.0]);
/// ```
pub fn vmap_named<F>(
    f: F,
    in_axes: &[Option<usize>],
    out_axes: &[Option<usize>],
    axis_name: &str,
) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let out_axes = out_axes.to_vec();
    vmap_with_axis_name(
        f,
        in_axes,
        move |_n: usize| Ok(out_axes.clone()),
        Some(axis_name),
    )
}

/// [`vmap_with_out_axes`] with an optional axis name (see [`vmap_named`]): the general form
/// the front ends call.
///
/// ```no_run
/// # use quabla::{batching::vmap_with_axis_name, lax, Array};
/// // Centre each element on the batch mean, batch axis out in front.
/// let f = |a: &[Array]| Ok(vec![(&a[0] - &(&lax::psum(&a[0], "b")? / 3.0)?)?]);
/// let centred = vmap_with_axis_name(f, &[Some(0)], |_| Ok(vec![Some(0)]), Some("b"));
/// let y = centred(&[Array::from_slice(&[1.0f64, 2.0, 6.0], &[3])?])?; // [-2, -1, 3]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn vmap_with_axis_name<F, O>(
    f: F,
    in_axes: &[Option<usize>],
    out_axes: O,
    axis_name: Option<&str>,
) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
    O: Fn(usize) -> Result<Vec<Option<usize>>>,
{
    let in_axes = in_axes.to_vec();
    let axis = axis_name.map(ops::named_axis::intern);
    move |args: &[Array]| {
        let axes: Vec<Option<usize>> = (0..args.len())
            .map(|i| in_axes.get(i).copied().unwrap_or(Some(0)))
            .collect();
        let mut size = None;
        for (i, (a, ax)) in args.iter().zip(&axes).enumerate() {
            if let Some(ax) = ax {
                let n = *a.shape().get(*ax).ok_or_else(|| {
                    Error::Value(format!(
                        "vmap: in_axes[{i}] = {ax} but argument {i} has rank {}",
                        a.ndim()
                    ))
                })?;
                match size {
                    None => size = Some(n),
                    Some(m) if m != n => {
                        return Err(crate::Error::value(format!(
                            "vmap: batch sizes differ ({m} and {n}, argument {i})"
                        )))
                    }
                    _ => {}
                }
            }
        }
        let Some(size) = size else {
            return Err(crate::Error::value(
                "vmap needs at least one batched argument (in_axes all None)",
            ));
        };
        let device = crate::ad::device_of(args)?;
        let full: Vec<TensorType> = args.iter().map(|a| a.tensor_type().clone()).collect();
        let (program, outer) =
            crate::trace::trace_function_capturing(&device, &full, |t: &[Array]| {
                let moved: Vec<Array> = t
                    .iter()
                    .zip(&axes)
                    .map(|(a, ax)| {
                        ax.map(|x| move_axis(a, x, 0))
                            .unwrap_or_else(|| Ok(a.clone()))
                    })
                    .collect::<Result<_>>()?;
                let per_example: Vec<TensorType> = moved
                    .iter()
                    .zip(&axes)
                    .map(|(a, ax)| {
                        if ax.is_some() {
                            TensorType::new(a.dtype(), a.shape()[1..].to_vec())
                        } else {
                            a.tensor_type().clone()
                        }
                    })
                    .collect();
                // Closed-over traced values become unbatched inputs after the arguments.
                let (inner, caps) =
                    crate::trace::trace_function_capturing(&device, &per_example, &f)?;
                let mut flags: Vec<bool> = axes.iter().map(Option::is_some).collect();
                flags.extend(caps.iter().map(|_| false));
                let moved: Vec<Array> = moved.into_iter().chain(caps).collect();
                let _bound = axis.map(|a| ops::named_axis::Batching::push(a, size));
                let (outs, out_flags) = batch_walk(&inner, &moved, &flags, size)?;
                let out_axes = out_axes(outs.len())?;
                outs.iter()
                    .zip(out_flags)
                    .enumerate()
                    .map(
                        |(k, (o, b))| match out_axes.get(k).copied().unwrap_or(Some(0)) {
                            Some(ax) => move_axis(&with_batch(o, b, size)?, 0, ax),
                            None if !b => Ok(o.clone()),
                            None => Err(crate::Error::value(format!(
                                "vmap: output {k} depends on the batch but out_axes[{k}] is None"
                            ))),
                        },
                    )
                    .collect()
            })?;
        eval_program(
            &program,
            &args.iter().chain(&outer).cloned().collect::<Vec<_>>(),
        )
    }
}
