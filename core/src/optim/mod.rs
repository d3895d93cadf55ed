//! Optimizers in the style of optax: pure gradient transformations built from traced array
//! operations, so they run on any backend and inside `jit`.
//!
//! An [`Optimizer`] has `init(params) -> state` and
//! `update(grads, state, params) -> (updates, state)`; [`apply_updates`] adds the updates.
//! Parameters and gradients are trees ([`crate::tree::Tree`]: a struct deriving it, a tuple,
//! a `Vec<Array>`) or slices of arrays; states are flat lists of arrays; f32 parameters keep
//! f32 state. [`chain`] composes transformations in order.
//!
//! Order of operations (as optax): `adam` is `scale_by_adam` then `scale_by_learning_rate`:
//! `mu = (1 - b1) g + b1 mu`, `nu = (1 - b2) g^2 + b2 nu`, `count += 1`,
//! `mu_hat = mu / (1 - b1^count)`, `nu_hat = nu / (1 - b2^count)`,
//! `update = -lr * (mu_hat / (sqrt(nu_hat + eps_root) + eps))`. `adamw` inserts
//! `update + weight_decay * param` before the learning rate (decoupled decay).
//!
//! ```no_run
//! use quabla::optim::{adam, apply_updates};
//! # use quabla::Array;
//! let opt = adam(1e-3);
//! let params = vec![Array::from_slice(&[1.0f32, -2.0], &[2]).unwrap()];
//! let state = opt.init(&params).unwrap();
//! let grads = vec![Array::from_slice(&[0.5f32, 0.5], &[2]).unwrap()];
//! let (updates, state) = opt.update(&grads, &state, &params).unwrap();
//! let params = apply_updates(&params, &updates).unwrap();
//! ```

mod lbfgs;
mod schedule;
mod trainer;
mod transforms;

pub use lbfgs::{Lbfgs, LbfgsStep};
pub use schedule::{
    constant, cosine_decay, exponential_decay, piecewise_constant, warmup_cosine_decay,
    LearningRate, Schedule,
};
pub use trainer::Trainer;
pub use transforms::{
    adam, adam_with, adamw, add_decayed_weights, clip_by_global_norm, rmsprop, scale,
    scale_by_adam, scale_by_learning_rate, scale_by_rms, sgd, trace,
};

use crate::array::Array;
use crate::error::Result;
use crate::tree::AsTree;
use std::sync::Arc;

/// `init(params) -> state`.
pub type InitFn = Arc<dyn Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync>;
/// `update(grads, state, params) -> (updates, new state)`.
pub type UpdateFn =
    Arc<dyn Fn(&[Array], &[Array], &[Array]) -> Result<(Vec<Array>, Vec<Array>)> + Send + Sync>;

/// A gradient transformation (optax's `GradientTransformation`).
#[derive(Clone)]
pub struct Optimizer {
    pub init: InitFn,
    pub update: UpdateFn,
    /// How many state arrays `init` makes for this many parameters.
    pub state_len: Arc<dyn Fn(usize) -> usize + Send + Sync>,
}

impl Optimizer {
    /// Builds one from its functions.
    ///
    /// ```no_run
    /// # use quabla::{optim::Optimizer, Array};
    /// // Sign descent: stateless, updates -0.01 sign(g).
    /// let sign_sgd = Optimizer::new(
    ///     |_params: &[Array]| Ok(vec![]),
    ///     |grads: &[Array], state: &[Array], _params: &[Array]| {
    ///         let u = grads.iter().map(|g| g.sign()? * -0.01).collect::<quabla::Result<_>>()?;
    ///         Ok((u, state.to_vec()))
    ///     },
    ///     |_n_params| 0,
    /// );
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn new(
        init: impl Fn(&[Array]) -> Result<Vec<Array>> + Send + Sync + 'static,
        update: impl Fn(&[Array], &[Array], &[Array]) -> Result<(Vec<Array>, Vec<Array>)>
            + Send
            + Sync
            + 'static,
        state_len: impl Fn(usize) -> usize + Send + Sync + 'static,
    ) -> Optimizer {
        Optimizer {
            init: Arc::new(init),
            update: Arc::new(update),
            state_len: Arc::new(state_len),
        }
    }

    /// The optimizer state for `params`: a parameter tree ([`crate::tree::Tree`]: a
    /// struct deriving it, a tuple, a `Vec<Array>`) or a slice of arrays.
    ///
    /// ```no_run
    /// # use quabla::{optim, Array};
    /// let params = vec![Array::from_slice(&[1.0f32], &[1]).unwrap()];
    /// let state = optim::sgd(0.1, Some(0.9), false).init(&params).unwrap();
    /// ```
    pub fn init<P: AsTree + ?Sized>(&self, params: &P) -> Result<Vec<Array>> {
        (self.init)(&params.tree_leaves())
    }

    /// `(updates, new state)` from the gradients, the state and the parameters (gradients
    /// and parameters of one structure; the updates have it too); add the updates with
    /// [`apply_updates`].
    ///
    /// ```no_run
    /// # use quabla::{optim, Array};
    /// let opt = optim::adam(1e-2);
    /// let p = vec![Array::from_slice(&[1.0f32], &[1]).unwrap()];
    /// let g = vec![Array::from_slice(&[0.5f32], &[1]).unwrap()];
    /// let (u, s) = opt.update(&g, &opt.init(&p).unwrap(), &p).unwrap();
    /// let p = optim::apply_updates(&p, &u).unwrap();
    /// ```
    pub fn update<P: AsTree + ?Sized>(
        &self,
        grads: &P,
        state: &[Array],
        params: &P,
    ) -> Result<(P::Rebuilt, Vec<Array>)> {
        let (updates, state) = (self.update)(&grads.tree_leaves(), state, &params.tree_leaves())?;
        Ok((params.rebuilt(updates)?, state))
    }
}

/// `params + updates`, leaf by leaf (updates cast to each parameter's dtype), for a
/// parameter tree or a slice of arrays (updates of the same structure).
///
/// ```no_run
/// # use quabla::{optim, Array};
/// let p = (Array::from_slice(&[1.0f32], &[]).unwrap(), Array::from_slice(&[2.0f32], &[]).unwrap());
/// let u = (Array::from_slice(&[0.5f32], &[]).unwrap(), Array::from_slice(&[0.5f32], &[]).unwrap());
/// let p = optim::apply_updates(&p, &u).unwrap(); // (1.5, 2.5)
/// ```
pub fn apply_updates<P: AsTree + ?Sized>(params: &P, updates: &P) -> Result<P::Rebuilt> {
    let (p, u) = (params.tree_leaves(), updates.tree_leaves());
    if p.len() != u.len() {
        return Err(crate::Error::value(format!(
            "apply_updates: {} params but {} updates",
            p.len(),
            u.len()
        )));
    }
    let sums = p
        .iter()
        .zip(&u)
        .map(|(p, u)| p + &u.astype(p.dtype())?)
        .collect::<Result<Vec<_>>>()?;
    params.rebuilt(sums)
}

/// Transformations applied one after the other; the state is the concatenation of theirs.
///
/// ```no_run
/// # use quabla::optim;
/// // Clip, then Adam: optax's `chain(clip_by_global_norm(1.0), adam(1e-3))`.
/// let opt = optim::chain(vec![optim::clip_by_global_norm(1.0), optim::adam(1e-3)]);
/// ```
pub fn chain(parts: Vec<Optimizer>) -> Optimizer {
    let parts = Arc::new(parts);
    let (p2, p3) = (parts.clone(), parts.clone());
    Optimizer::new(
        move |params| {
            let mut state = Vec::new();
            for p in parts.iter() {
                state.extend((p.init)(params)?);
            }
            Ok(state)
        },
        move |grads, state, params| {
            let mut offset = 0;
            let mut updates = grads.to_vec();
            let mut new_state = Vec::with_capacity(state.len());
            for p in p2.iter() {
                let n = (p.state_len)(params.len());
                if offset + n > state.len() {
                    return Err(crate::Error::value(
                        "chain: the state does not come from this chain's init",
                    ));
                }
                let (u, s) = (p.update)(&updates, &state[offset..offset + n], params)?;
                updates = u;
                new_state.extend(s);
                offset += n;
            }
            Ok((updates, new_state))
        },
        move |n| p3.iter().map(|p| (p.state_len)(n)).sum(),
    )
}
