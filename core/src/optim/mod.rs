//! Optimizers in the style of optax: pure gradient transformations built from traced array
//! operations, so they run on any backend and inside `jit`.
//!
//! An [`Optimizer`] has `init(params) -> state` and
//! `update(grads, state, params) -> (updates, state)`; [`apply_updates`] adds the updates.
//! States are flat lists of arrays (the Rust API has no pytrees); f32 parameters keep f32
//! state. [`chain`] composes transformations in order.
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
//! let opt = adam(1e-3.into());
//! let params = vec![Array::from_slice(&[1.0f32, -2.0], &[2]).unwrap()];
//! let state = (opt.init)(&params).unwrap();
//! let grads = vec![Array::from_slice(&[0.5f32, 0.5], &[2]).unwrap()];
//! let (updates, state) = (opt.update)(&grads, &state, &params).unwrap();
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
}

/// `params + updates`, leaf by leaf (updates cast to each parameter's dtype).
pub fn apply_updates(params: &[Array], updates: &[Array]) -> Result<Vec<Array>> {
    if params.len() != updates.len() {
        return Err(crate::Error::value(format!(
            "apply_updates: {} params but {} updates",
            params.len(),
            updates.len()
        )));
    }
    params
        .iter()
        .zip(updates)
        .map(|(p, u)| p + &u.astype(p.dtype())?)
        .collect()
}

/// Transformations applied one after the other; the state is the concatenation of theirs.
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
