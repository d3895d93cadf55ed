//! Optimizers as optax-style gradient transformations over pytrees of arrays. `init` and
//! `update` are ordinary array functions, so a whole training step (loss, gradients, update)
//! can sit under one `jit`.

use crate::errors::{js_msg, IntoJsResult};
use crate::tree::{flatten, unflatten};
use quabla::optim::Optimizer as CoreOptimizer;
use quabla::Array;
use wasm_bindgen::prelude::*;

type R<T> = Result<T, JsValue>;

fn flat(v: &JsValue, what: &str) -> R<(crate::tree::Tree, Vec<Array>)> {
    let mut leaves = Vec::new();
    let t = flatten(v, &mut leaves).map_err(|e| js_msg(&format!("{what}: {e}")))?;
    Ok((t, leaves))
}

fn list(arrays: Vec<Array>) -> js_sys::Array {
    arrays
        .into_iter()
        .map(|a| JsValue::from(crate::array::NDArray::from(a)))
        .collect()
}

/// A gradient transformation: `state = opt.init(params)`, then
/// `[updates, state] = opt.update(grads, state, params)` and
/// `params = applyUpdates(params, updates)`.
#[wasm_bindgen]
pub struct Optimizer {
    inner: CoreOptimizer,
}

#[wasm_bindgen]
impl Optimizer {
    /// The optimizer state for `params` (a list of arrays).
    pub fn init(&self, params: JsValue) -> R<js_sys::Array> {
        let (_, p) = flat(&params, "params")?;
        Ok(list(self.inner.init(&p).js()?))
    }

    /// `[updates, newState]` from gradients (the structure of `params`), the state and the
    /// parameters.
    pub fn update(&self, grads: JsValue, state: JsValue, params: JsValue) -> R<js_sys::Array> {
        let (tree, g) = flat(&grads, "grads")?;
        let (_, s) = flat(&state, "state")?;
        let (ptree, p) = flat(&params, "params")?;
        if ptree != tree {
            return Err(js_msg(
                "update: grads and params must have the same structure",
            ));
        }
        let (updates, new_state) = self.inner.update(&g, &s, &p).js()?;
        let out = js_sys::Array::new();
        out.push(&unflatten(&tree, &mut updates.into_iter()));
        out.push(&list(new_state).into());
        Ok(out)
    }
}

/// Adam (optax defaults: b1 0.9, b2 0.999, eps 1e-8).
#[wasm_bindgen]
pub fn adam(learning_rate: f64, b1: Option<f64>, b2: Option<f64>, eps: Option<f64>) -> Optimizer {
    Optimizer {
        inner: quabla::optim::adam_with(
            learning_rate,
            b1.unwrap_or(0.9),
            b2.unwrap_or(0.999),
            eps.unwrap_or(1e-8),
        ),
    }
}

/// Gradient descent, with heavy-ball `momentum` when given.
#[wasm_bindgen]
pub fn sgd(learning_rate: f64, momentum: Option<f64>) -> Optimizer {
    Optimizer {
        inner: quabla::optim::sgd(learning_rate, momentum, false),
    }
}

/// `params + updates`, leaf by leaf, in the structure of `params`.
#[wasm_bindgen(js_name = applyUpdates)]
pub fn apply_updates(params: JsValue, updates: JsValue) -> R<JsValue> {
    let (tree, p) = flat(&params, "params")?;
    let (utree, u) = flat(&updates, "updates")?;
    if utree != tree {
        return Err(js_msg(
            "applyUpdates: updates must have the structure of params",
        ));
    }
    let out = quabla::optim::apply_updates(&p, &u).js()?;
    Ok(unflatten(&tree, &mut out.into_iter()))
}
