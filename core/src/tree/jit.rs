//! [`jit`] for functions of trees.

use super::Tree;
use crate::array::Array;
use crate::error::{Error, Result};
use std::collections::HashMap;

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
    ///
    /// ```no_run
    /// # use quabla::{tree, Array};
    /// let norm2 = tree::jit(|(x, y): &(Array, Array)| (x.ex() * x + y.ex() * y).sqrt().get());
    /// let r = norm2.call(&(Array::scalar(3.0f32)?, Array::scalar(4.0f32)?))?; // 5
    /// # Ok::<(), quabla::Error>(())
    /// ```
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
