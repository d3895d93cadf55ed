//! Parameter trees, as JAX's pytrees: a value made of arrays (a struct of layers, a tuple, a
//! `Vec`, a map) flattens to its leaves in a fixed order and rebuilds from new leaves, so
//! transformations and optimizers take and return the user's own types.
//!
//! [`Tree`] is implemented for [`Array`], `()`, tuples up to eight, `[T; N]`, `Vec<T>`,
//! `Option<T>` (`None` has no leaves), `Box<T>`, and `BTreeMap` / `HashMap` (leaves in key
//! order); `#[derive(Tree)]` (from the `quabla-derive` crate, re-exported here) implements it
//! for structs whose fields are trees, in field order.
//!
//! ```no_run
//! use quabla::tree::{self, Tree};
//! use quabla::{Array, Axes, Result};
//!
//! #[derive(Clone, Tree)]
//! struct Line {
//!     w: Array,
//!     b: Array,
//! }
//!
//! let p = Line { w: Array::from_slice(&[2.0f64], &[])?, b: Array::from_slice(&[0.5f64], &[])? };
//! let x = Array::from_slice(&[1.0f64, 2.0, 3.0], &[3])?;
//! let loss = |p: &Line, x: &Array| -> Result<Array> {
//!     let r = (&(x * &p.w)? + &p.b)?;
//!     (&r * &r)?.sum(Axes::All, false)
//! };
//! let (value, g) = tree::value_and_grad(loss)(&p, &x)?;
//! println!("{value} {} {}", g.w, g.b);
//! # Ok::<(), quabla::Error>(())
//! ```

use crate::array::Array;
use crate::error::{Error, Result};
use std::collections::{BTreeMap, HashMap};

pub use quabla_derive::Tree;

/// A value made of arrays, flattened to its leaves in a fixed order and rebuilt from new
/// ones (the same structure, other arrays).
pub trait Tree: Sized {
    /// Appends the leaves, in order.
    fn flatten_into(&self, leaves: &mut Vec<Array>);

    /// A tree shaped like `self` whose leaves are the next ones `leaves` yields.
    fn unflatten_like(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self>;

    /// The leaves, in order.
    ///
    /// ```no_run
    /// # use quabla::{tree::Tree, Array};
    /// let a = Array::from_slice(&[1.0f32], &[1]).unwrap();
    /// assert_eq!((a.clone(), vec![a.clone(), a]).leaves().len(), 3);
    /// ```
    fn leaves(&self) -> Vec<Array> {
        let mut v = Vec::new();
        self.flatten_into(&mut v);
        v
    }

    /// A tree shaped like `self` with `leaves` (exactly as many as `self` has).
    ///
    /// ```no_run
    /// # use quabla::{tree::Tree, Array};
    /// let a = Array::from_slice(&[1.0f32], &[1]).unwrap();
    /// let t = (a.clone(), a.clone()).with_leaves(vec![a.clone(), a]).unwrap();
    /// ```
    fn with_leaves(&self, leaves: Vec<Array>) -> Result<Self> {
        let n = leaves.len();
        let mut it = leaves.into_iter();
        let out = self.unflatten_like(&mut it)?;
        let left = it.count();
        if left > 0 {
            return Err(Error::value(format!(
                "with_leaves: the tree has {} leaves, {n} were given",
                n - left
            )));
        }
        Ok(out)
    }

    /// The tree with `f` applied to every leaf (JAX's `tree.map`; named apart from the
    /// `map` of `Option` and of arrays).
    ///
    /// ```no_run
    /// # use quabla::{tree::Tree, Array};
    /// let a = Array::from_slice(&[1.0f32], &[1]).unwrap();
    /// let doubled = (a.clone(), a).map_leaves(|x| x * 2.0).unwrap();
    /// ```
    fn map_leaves(&self, f: impl FnMut(&Array) -> Result<Array>) -> Result<Self> {
        let leaves = self.leaves().iter().map(f).collect::<Result<Vec<_>>>()?;
        self.with_leaves(leaves)
    }

    /// The tree with `f` applied to matching leaves of `self` and `other` (a tree of the
    /// same structure).
    ///
    /// ```no_run
    /// # use quabla::{tree::Tree, Array};
    /// let a = Array::from_slice(&[1.0f32], &[1]).unwrap();
    /// let sum = vec![a.clone()].zip_map(&vec![a], |x, y| x + y).unwrap();
    /// ```
    fn zip_map(
        &self,
        other: &Self,
        mut f: impl FnMut(&Array, &Array) -> Result<Array>,
    ) -> Result<Self> {
        let (a, b) = (self.leaves(), other.leaves());
        if a.len() != b.len() {
            return Err(Error::value(format!(
                "zip_map: the trees have {} and {} leaves; they must have one structure",
                a.len(),
                b.len()
            )));
        }
        let leaves = a
            .iter()
            .zip(&b)
            .map(|(x, y)| f(x, y))
            .collect::<Result<Vec<_>>>()?;
        self.with_leaves(leaves)
    }
}

fn next_leaf(leaves: &mut dyn Iterator<Item = Array>) -> Result<Array> {
    leaves
        .next()
        .ok_or_else(|| Error::value("a tree was rebuilt from fewer leaves than it has"))
}

impl Tree for Array {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        leaves.push(self.clone());
    }

    fn unflatten_like(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        next_leaf(leaves)
    }
}

impl Tree for () {
    fn flatten_into(&self, _: &mut Vec<Array>) {}

    fn unflatten_like(&self, _: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        Ok(())
    }
}

impl<T: Tree> Tree for Vec<T> {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        self.iter().for_each(|t| t.flatten_into(leaves));
    }

    fn unflatten_like(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        self.iter().map(|t| t.unflatten_like(leaves)).collect()
    }
}

impl<T: Tree, const N: usize> Tree for [T; N] {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        self.iter().for_each(|t| t.flatten_into(leaves));
    }

    fn unflatten_like(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        let v = self
            .iter()
            .map(|t| t.unflatten_like(leaves))
            .collect::<Result<Vec<T>>>()?;
        v.try_into()
            .map_err(|_| Error::internal("an array tree rebuilt to another length"))
    }
}

impl<T: Tree> Tree for Option<T> {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        if let Some(t) = self {
            t.flatten_into(leaves);
        }
    }

    fn unflatten_like(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        self.as_ref().map(|t| t.unflatten_like(leaves)).transpose()
    }
}

impl<T: Tree> Tree for Box<T> {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        (**self).flatten_into(leaves);
    }

    fn unflatten_like(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        Ok(Box::new((**self).unflatten_like(leaves)?))
    }
}

impl<K: Ord + Clone, T: Tree> Tree for BTreeMap<K, T> {
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        self.values().for_each(|t| t.flatten_into(leaves));
    }

    fn unflatten_like(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        self.iter()
            .map(|(k, t)| Ok((k.clone(), t.unflatten_like(leaves)?)))
            .collect()
    }
}

/// Leaves in key order (a `HashMap` iterates in no fixed order).
impl<K: Ord + Clone + std::hash::Hash, T: Tree, S: std::hash::BuildHasher + Clone> Tree
    for HashMap<K, T, S>
{
    fn flatten_into(&self, leaves: &mut Vec<Array>) {
        let mut keys: Vec<&K> = self.keys().collect();
        keys.sort();
        keys.into_iter().for_each(|k| self[k].flatten_into(leaves));
    }

    fn unflatten_like(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
        let mut keys: Vec<&K> = self.keys().collect();
        keys.sort();
        let mut out = HashMap::with_capacity_and_hasher(self.len(), self.hasher().clone());
        for k in keys {
            out.insert(k.clone(), self[k].unflatten_like(leaves)?);
        }
        Ok(out)
    }
}

macro_rules! tuple_tree {
    ($($name:ident . $i:tt),+) => {
        impl<$($name: Tree),+> Tree for ($($name,)+) {
            fn flatten_into(&self, leaves: &mut Vec<Array>) {
                $(self.$i.flatten_into(leaves);)+
            }

            fn unflatten_like(&self, leaves: &mut dyn Iterator<Item = Array>) -> Result<Self> {
                Ok(($(self.$i.unflatten_like(leaves)?,)+))
            }
        }
    };
}
tuple_tree!(A.0);
tuple_tree!(A.0, B.1);
tuple_tree!(A.0, B.1, C.2);
tuple_tree!(A.0, B.1, C.2, D.3);
tuple_tree!(A.0, B.1, C.2, D.3, E.4);
tuple_tree!(A.0, B.1, C.2, D.3, E.4, F.5);
tuple_tree!(A.0, B.1, C.2, D.3, E.4, F.5, G.6);
tuple_tree!(A.0, B.1, C.2, D.3, E.4, F.5, G.6, H.7);

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
        let p = params.leaves();
        let n = p.len();
        let mut args = p;
        data.flatten_into(&mut args);
        let flat = |a: &[Array]| -> Result<Vec<Array>> {
            let (pa, da) = a.split_at(n);
            Ok(vec![f(
                &params.with_leaves(pa.to_vec())?,
                &data.with_leaves(da.to_vec())?,
            )?])
        };
        let argnums: Vec<usize> = (0..n).collect();
        let mut out = crate::ad::value_and_grad(flat, &argnums, false)(&args)?;
        let grads = out.split_off(1);
        let value = out
            .pop()
            .ok_or_else(|| Error::internal("value_and_grad returned no value"))?;
        Ok((value, params.with_leaves(grads)?))
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

/// What the optimizers and [`crate::optim::apply_updates`] accept as parameters: any
/// [`Tree`] (the result has its structure), or a slice of arrays (the result is a `Vec`).
pub trait AsTree {
    /// The type of a tree rebuilt like this one.
    type Rebuilt;
    /// The leaves, in order.
    fn tree_leaves(&self) -> Vec<Array>;
    /// A tree shaped like this one with `leaves`.
    fn rebuilt(&self, leaves: Vec<Array>) -> Result<Self::Rebuilt>;
}

impl<T: Tree> AsTree for T {
    type Rebuilt = T;

    fn tree_leaves(&self) -> Vec<Array> {
        self.leaves()
    }

    fn rebuilt(&self, leaves: Vec<Array>) -> Result<T> {
        self.with_leaves(leaves)
    }
}

impl AsTree for [Array] {
    type Rebuilt = Vec<Array>;

    fn tree_leaves(&self) -> Vec<Array> {
        self.to_vec()
    }

    fn rebuilt(&self, leaves: Vec<Array>) -> Result<Vec<Array>> {
        if leaves.len() != self.len() {
            return Err(Error::value(format!(
                "{} arrays where {} were expected",
                leaves.len(),
                self.len()
            )));
        }
        Ok(leaves)
    }
}

/// A function of trees compiled as [`crate::jit`] compiles one of arrays: traced once per
/// input signature (the leaves' dtypes and shapes), run compiled after that. Made by
/// [`jit`].
pub struct TreeJit<I, O, F> {
    f: F,
    compiled: crate::jit::Jit<FlatCall>,
    /// The input being called with (the traced function rebuilds it from its leaves).
    current: std::sync::Arc<std::sync::Mutex<Option<I>>>,
    /// The output's structure for each input signature, from its trace.
    outputs: std::sync::Arc<std::sync::Mutex<HashMap<Vec<quabla_abi::TensorType>, O>>>,
    /// Held through a call, so concurrent calls cannot swap `current` under a trace.
    calling: std::sync::Mutex<()>,
}

type FlatCall = Box<dyn Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static>;

fn locked<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic elsewhere cannot leave these maps half-written: each write is one insert.
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Compiles `f`, a function from a tree to a tree, as [`crate::jit`] does for arrays: a
/// training step `(params, opt_state, batch) -> (params, opt_state, loss)` in one program.
/// Compiled programs are kept per signature of the leaves; the structure around them, and
/// static fields (`#[tree(static)]`), are read when a signature is first traced, as values
/// a closure captures are: give each setting of a static field its own `tree::jit`.
///
/// ```no_run
/// # use quabla::{tree, Array};
/// let step = tree::jit(|(w, x): &(Array, Array)| (x * w)?.sin());
/// let w = Array::from_slice(&[2.0f32], &[]).unwrap();
/// let x = Array::from_slice(&[0.5f32, 1.0], &[2]).unwrap();
/// let y = step.call(&(w, x)).unwrap();
/// ```
pub fn jit<I, O, F>(f: F) -> TreeJit<I, O, std::sync::Arc<F>>
where
    I: Tree + Clone + Send + 'static,
    O: Tree + Clone + Send + 'static,
    F: Fn(&I) -> Result<O> + Send + Sync + 'static,
{
    let f = std::sync::Arc::new(f);
    let current: std::sync::Arc<std::sync::Mutex<Option<I>>> = Default::default();
    let outputs: std::sync::Arc<std::sync::Mutex<HashMap<_, O>>> = Default::default();
    let (g, cur, outs) = (f.clone(), current.clone(), outputs.clone());
    let flat: FlatCall = Box::new(move |leaves: &[Array]| {
        let like = locked(&cur)
            .clone()
            .ok_or_else(|| Error::internal("tree::jit traced without an input"))?;
        let out = g(&like.with_leaves(leaves.to_vec())?)?;
        let sig = leaves.iter().map(|a| a.tensor_type().clone()).collect();
        locked(&outs).insert(sig, out.clone());
        Ok(out.leaves())
    });
    TreeJit {
        f,
        compiled: crate::jit::jit(flat),
        current,
        outputs,
        calling: std::sync::Mutex::new(()),
    }
}

impl<I, O, F> TreeJit<I, O, std::sync::Arc<F>>
where
    I: Tree + Clone,
    O: Tree + Clone,
    F: Fn(&I) -> Result<O>,
{
    /// Runs the compiled function on `input` (tracing it first for a new signature); called
    /// with traced leaves (inside another transformation) it runs the function itself.
    pub fn call(&self, input: &I) -> Result<O> {
        let leaves = input.leaves();
        if leaves.iter().any(Array::is_traced) {
            return (self.f)(input);
        }
        let _one_call_at_a_time = locked(&self.calling);
        *locked(&self.current) = Some(input.clone());
        let out = self.compiled.call(&leaves);
        *locked(&self.current) = None;
        let out = out?;
        let sig: Vec<_> = leaves.iter().map(|a| a.tensor_type().clone()).collect();
        let like = locked(&self.outputs)
            .get(&sig)
            .cloned()
            .ok_or_else(|| Error::internal("tree::jit: no output structure for a compiled call"))?;
        like.with_leaves(out)
    }
}
