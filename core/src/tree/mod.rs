//! Parameter trees, as JAX's pytrees: a value made of arrays (a struct of layers, a tuple, a
//! `Vec`, a map) flattens to its leaves in a fixed order and rebuilds from new leaves, so
//! transformations and optimizers take and return the user's own types.
//!
//! [`Tree`] is implemented for [`Array`], `()`, tuples up to eight, `[T; N]`, `Vec<T>`,
//! `Option<T>` (`None` has no leaves), `Box<T>`, and `BTreeMap` / `HashMap` (leaves in key
//! order); `#[derive(Tree)]` (from the `quabla-derive` crate, re-exported here) implements it
//! for structs whose fields are trees, in field order.
//!
//! The transformations take and return trees: [`value_and_grad`], [`grad`], [`jacfwd`] and
//! [`jacrev`] of `f(params, data)` (differentiating the parameters), [`vmap`] of
//! `f(batched, shared)`, [`jit`], the control flow [`fori_loop`], [`while_loop`], [`scan`]
//! and [`cond`], [`odeint`], the solvers [`cg`] and [`gmres`], and a [`Trainer`]; the
//! optimizers and [`crate::optim::apply_updates`] take trees through [`AsTree`].
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
//!
//! # What the derive refuses
//! Each of these is a compile error (the derive's messages are unit-tested in
//! `quabla-derive`). An enum, which has no fixed leaves:
//! ```compile_fail
//! #[derive(Clone, quabla::tree::Tree)]
//! enum Shape { Circle(quabla::Array), Square(quabla::Array) }
//! ```
//! A field that is not a tree and not marked `#[tree(static)]`:
//! ```compile_fail
//! #[derive(Clone, quabla::tree::Tree)]
//! struct Layer { w: quabla::Array, width: usize }
//! ```
//! Any `tree` attribute but `static`:
//! ```compile_fail
//! #[derive(Clone, quabla::tree::Tree)]
//! struct Layer { #[tree(skip)] w: quabla::Array }
//! ```
//! The same struct with the count marked static compiles:
//! ```
//! #[derive(Clone, quabla::tree::Tree)]
//! struct Layer { w: quabla::Array, #[tree(static)] width: usize }
//! ```

use crate::array::Array;
use crate::error::{Error, Result};
use std::collections::{BTreeMap, HashMap};

pub use quabla_derive::Tree;

mod control_flow;
mod jit;
mod linalg;
mod ode;
mod trainer;
mod transform;

pub use control_flow::{cond, fori_loop, scan, while_loop};
pub use jit::{jit, TreeJit};
pub use linalg::{cg, cg_with, gmres, gmres_with};
pub use ode::odeint;
pub use trainer::Trainer;
pub use transform::{grad, jacfwd, jacrev, value_and_grad, vmap};

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
for_each_tuple_arity!(tuple_tree);

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
