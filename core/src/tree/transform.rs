//! Differentiation and vectorisation of functions of trees: the flat transformations of
//! [`crate::ad`] and [`crate::batching`] with the leaves split and rebuilt around them.

use super::Tree;
use crate::array::Array;
use crate::error::{Error, Result};

/// `(f(params, data), df/dparams)` for a scalar `f` of a parameter tree and a data tree
/// (not differentiated); the gradient has the parameters' structure.
///
/// ```no_run
/// # use quabla::{tree, Array, Axes};
/// let p = (Array::from_slice(&[1.0f64, 2.0], &[2]).unwrap(),);
/// let f = |p: &(Array,), _: &()| (&p.0 * &p.0)?.sum(Axes::All, false);
/// let (v, (g,)) = tree::value_and_grad(f)(&p, &()).unwrap(); // 5, [2, 4]
/// ```
pub fn value_and_grad<P, D, F>(f: F) -> impl Fn(&P, &D) -> Result<(Array, P)>
where
    P: Tree,
    D: Tree,
    F: Fn(&P, &D) -> Result<Array>,
{
    move |params: &P, data: &D| {
        let (args, n) = joined(params, data);
        let argnums: Vec<usize> = (0..n).collect();
        let mut out =
            crate::ad::value_and_grad(split(&f, params, data, n), &argnums, false)(&args)?;
        let grads = out.split_off(1);
        let value = out
            .pop()
            .ok_or_else(|| Error::internal("value_and_grad returned no value"))?;
        Ok((value, params.with_leaves(grads)?))
    }
}

/// The leaves of `params` then of `data`, and how many are the parameters'.
fn joined<P: Tree, D: Tree>(params: &P, data: &D) -> (Vec<Array>, usize) {
    let mut args = params.leaves();
    let n = args.len();
    data.flatten_into(&mut args);
    (args, n)
}

/// `f` as a function of the joined leaves (the first `n` the parameters').
fn split<'a, P: Tree, D: Tree, F: Fn(&P, &D) -> Result<Array>>(
    f: &'a F,
    params: &'a P,
    data: &'a D,
    n: usize,
) -> impl Fn(&[Array]) -> Result<Vec<Array>> + 'a {
    move |a: &[Array]| {
        let (pa, da) = a.split_at(n.min(a.len()));
        Ok(vec![f(
            &params.with_leaves(pa.to_vec())?,
            &data.with_leaves(da.to_vec())?,
        )?])
    }
}

/// The gradient of a scalar `f` of a parameter tree and a data tree, with the parameters'
/// structure.
///
/// ```no_run
/// # use quabla::{tree, Array, Axes};
/// let p = vec![Array::from_slice(&[3.0f64], &[]).unwrap()];
/// let g = tree::grad(|p: &Vec<Array>, _: &()| &p[0] * &p[0])(&p, &()).unwrap(); // [6]
/// ```
pub fn grad<P, D, F>(f: F) -> impl Fn(&P, &D) -> Result<P>
where
    P: Tree,
    D: Tree,
    F: Fn(&P, &D) -> Result<Array>,
{
    let vg = value_and_grad(f);
    move |params: &P, data: &D| Ok(vg(params, data)?.1)
}

/// The Jacobian of an array-valued `f` of a parameter tree (and a data tree, not
/// differentiated) by forward passes, one per parameter element (in chunks): a tree shaped
/// like the parameters whose leaf for parameter `p` has shape `out.shape ++ p.shape`.
/// Cheaper than [`jacrev`] when there are fewer parameters than outputs.
///
/// ```no_run
/// # use quabla::{tree, Array};
/// let p = (Array::from_slice(&[1.0f64, 2.0], &[2])?, Array::from_slice(&[3.0f64], &[])?);
/// let f = |p: &(Array, Array), _: &()| &p.0 * &p.1; // [3, 6]
/// let (d0, d1) = tree::jacfwd(f)(&p, &())?; // [[3, 0], [0, 3]] and [1, 2]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn jacfwd<P, D, F>(f: F) -> impl Fn(&P, &D) -> Result<P>
where
    P: Tree,
    D: Tree,
    F: Fn(&P, &D) -> Result<Array>,
{
    move |params: &P, data: &D| jacobian(&f, params, data, true)
}

/// The Jacobian of an array-valued `f` of a parameter tree by reverse passes, one per
/// output element (in chunks); the same result as [`jacfwd`], cheaper when there are fewer
/// outputs than parameters.
///
/// ```no_run
/// # use quabla::{tree, Array, Axes};
/// let p = vec![Array::from_slice(&[1.0f64, 2.0], &[2])?];
/// let f = |p: &Vec<Array>, _: &()| (&p[0] * &p[0])?.sum(Axes::All, false);
/// let j = tree::jacrev(f)(&p, &())?; // [[2, 4]]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn jacrev<P, D, F>(f: F) -> impl Fn(&P, &D) -> Result<P>
where
    P: Tree,
    D: Tree,
    F: Fn(&P, &D) -> Result<Array>,
{
    move |params: &P, data: &D| jacobian(&f, params, data, false)
}

/// Vectorises `f` over axis 0 of every leaf of `batched`, passing `shared` whole to every
/// element (JAX's `vmap(f, in_axes=(0, None))`); each leaf of the result gains a leading
/// batch axis. Every batched leaf must have the same length along axis 0.
///
/// ```no_run
/// # use quabla::{tree, Array, Axes};
/// let xs = (Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?,);
/// let w = Array::from_slice(&[10.0f32], &[])?;
/// let f = |x: &(Array,), w: &Array| Ok((x.0.sum(Axes::All, false)? * w)?);
/// let sums = tree::vmap(f)(&xs, &w)?; // [30, 70]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn vmap<B, S, O, F>(f: F) -> impl Fn(&B, &S) -> Result<O>
where
    B: Tree,
    S: Tree,
    O: Tree + Clone,
    F: Fn(&B, &S) -> Result<O>,
{
    move |batched: &B, shared: &S| {
        let (args, n) = joined(batched, shared);
        if n == 0 {
            return Err(Error::value(
                "tree::vmap: the batched tree has no leaves, so there is no axis to map over",
            ));
        }
        // The result's structure is known once `f` has run on one (traced) element.
        let structure: std::cell::RefCell<Option<O>> = Default::default();
        let flat = |a: &[Array]| -> Result<Vec<Array>> {
            let (ba, sa) = a.split_at(n.min(a.len()));
            let out = f(
                &batched.with_leaves(ba.to_vec())?,
                &shared.with_leaves(sa.to_vec())?,
            )?;
            let leaves = out.leaves();
            *structure.borrow_mut() = Some(out);
            Ok(leaves)
        };
        let in_axes: Vec<Option<usize>> = (0..args.len()).map(|i| (i < n).then_some(0)).collect();
        let out = crate::batching::vmap(flat, &in_axes, &[])(&args)?;
        let like = structure
            .into_inner()
            .ok_or_else(|| Error::internal("tree::vmap: f never ran"))?;
        like.with_leaves(out)
    }
}

/// The Jacobian of `f` in the parameters by the flat `jacfwd` (`forward`) or `jacrev`.
fn jacobian<P, D, F>(f: &F, params: &P, data: &D, forward: bool) -> Result<P>
where
    P: Tree,
    D: Tree,
    F: Fn(&P, &D) -> Result<Array>,
{
    let (args, n) = joined(params, data);
    let argnums: Vec<usize> = (0..n).collect();
    let flat = split(f, params, data, n);
    let jac = if forward {
        crate::ad::jacfwd(flat, &argnums)(&args)?
    } else {
        crate::ad::jacrev(flat, &argnums)(&args)?
    };
    params.with_leaves(jac)
}
