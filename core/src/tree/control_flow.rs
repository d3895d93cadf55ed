//! `lax`'s control flow over trees: carries, operands, scanned slices and results of any
//! [`Tree`], with the structure rebuilt around the flat forms in [`crate::lax`].

use super::Tree;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::control_flow::{self as flat, Bound};
use std::cell::RefCell;

/// `f` rebuilt as a function of leaves whose result's structure is kept in `structure` (the
/// last trace's; every trace of one region has the same).
fn keeping<'a, T: Tree, O: Tree>(
    like: &'a T,
    structure: &'a RefCell<Option<O>>,
    f: impl Fn(&T) -> Result<O> + 'a,
) -> impl Fn(&[Array]) -> Result<Vec<Array>> + 'a {
    move |leaves: &[Array]| {
        let out = f(&like.with_leaves(leaves.to_vec())?)?;
        let flat = out.leaves();
        *structure.borrow_mut() = Some(out);
        Ok(flat)
    }
}

fn rebuilt<O: Tree>(structure: RefCell<Option<O>>, leaves: Vec<Array>, what: &str) -> Result<O> {
    structure
        .into_inner()
        .ok_or_else(|| Error::internal(format!("{what}: a region was never traced")))?
        .with_leaves(leaves)
}

/// `for i in lower..upper { carry = body(i, carry) }` as [`crate::lax::fori_loop`], with a
/// carry of any tree; `body` returns the carry in the same structure.
///
/// ```no_run
/// # use quabla::{tree, Array};
/// let init = (Array::from_slice(&[1.0f64], &[])?, Array::from_slice(&[0.0f64], &[])?);
/// // (a, b) -> (2a, b + a), five times.
/// let (a, b) = tree::fori_loop(0, 5, |_i, (a, b): &(Array, Array)| Ok(((a * 2.0)?, (b + a)?)), &init)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn fori_loop<C: Tree>(
    lower: impl Into<Bound>,
    upper: impl Into<Bound>,
    body: impl Fn(&Array, &C) -> Result<C>,
    init: &C,
) -> Result<C> {
    let step = |i: &Array, c: &[Array]| -> Result<Vec<Array>> {
        Ok(body(i, &init.with_leaves(c.to_vec())?)?.leaves())
    };
    init.with_leaves(flat::fori_loop(lower, upper, &step, &init.leaves())?)
}

/// `while cond(carry) { carry = body(carry) }` as [`crate::lax::while_loop`], with a carry of
/// any tree; `cond` returns a bool scalar.
///
/// ```no_run
/// # use quabla::{tree, Array};
/// let init = vec![Array::from_slice(&[1.0f64], &[])?];
/// let doubled = tree::while_loop(
///     |c: &Vec<Array>| c[0].lt(&Array::from_slice(&[100.0f64], &[])?),
///     |c: &Vec<Array>| Ok(vec![(&c[0] * 2.0)?]),
///     &init,
/// )?; // [128]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn while_loop<C: Tree>(
    cond: impl Fn(&C) -> Result<Array>,
    body: impl Fn(&C) -> Result<C>,
    init: &C,
) -> Result<C> {
    let test =
        |c: &[Array]| -> Result<Vec<Array>> { Ok(vec![cond(&init.with_leaves(c.to_vec())?)?]) };
    let step =
        |c: &[Array]| -> Result<Vec<Array>> { Ok(body(&init.with_leaves(c.to_vec())?)?.leaves()) };
    init.with_leaves(flat::while_loop(&test, &step, &init.leaves())?)
}

/// JAX's `lax.scan` over trees: `f(carry, x) -> (carry, y)` over the slices along axis 0 of
/// every leaf of `xs`; returns the final carry and the `y`s stacked along a new axis 0.
///
/// ```no_run
/// # use quabla::{tree, Array};
/// let xs = Array::from_slice(&[1.0f64, 2.0, 3.0], &[3])?;
/// let zero = Array::from_slice(&[0.0f64], &[])?;
/// // Running sums: carry 6, ys [1, 3, 6].
/// let (total, sums) = tree::scan(|c: &Array, x: &Array| { let s = (c + x)?; Ok((s.clone(), s)) }, &zero, &xs)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn scan<C: Tree, X: Tree, Y: Tree>(
    f: impl Fn(&C, &X) -> Result<(C, Y)>,
    init: &C,
    xs: &X,
) -> Result<(C, Y)> {
    let ys_like: RefCell<Option<Y>> = Default::default();
    let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
        let (c, y) = f(&init.with_leaves(c.to_vec())?, &xs.with_leaves(x.to_vec())?)?;
        let y_leaves = y.leaves();
        *ys_like.borrow_mut() = Some(y);
        Ok((c.leaves(), y_leaves))
    };
    let (carry, ys) = flat::scan(&step, &init.leaves(), &xs.leaves(), None, false, 1)?;
    Ok((
        init.with_leaves(carry)?,
        rebuilt(ys_like, ys, "tree::scan")?,
    ))
}

/// `if pred { true_fn(operands) } else { false_fn(operands) }` as [`crate::lax::cond`], on
/// trees; both branches return the same structure and types.
///
/// ```no_run
/// # use quabla::{tree, Array};
/// let x = (Array::from_slice(&[2.0f64], &[])?,);
/// let pred = Array::from_slice(&[true], &[])?;
/// let y = tree::cond(&pred, |x: &(Array,)| Ok((&x.0 * 3.0)?), |x: &(Array,)| x.0.neg(), &x)?; // 6
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn cond<T: Tree, O: Tree>(
    pred: &Array,
    true_fn: impl Fn(&T) -> Result<O>,
    false_fn: impl Fn(&T) -> Result<O>,
    operands: &T,
) -> Result<O> {
    let structure: RefCell<Option<O>> = Default::default();
    let on_true = keeping(operands, &structure, true_fn);
    let on_false = keeping(operands, &structure, false_fn);
    let out = flat::cond(pred, &on_true, &on_false, &operands.leaves())?;
    drop((on_true, on_false));
    rebuilt(structure, out, "tree::cond")
}
