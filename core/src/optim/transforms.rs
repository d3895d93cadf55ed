//! The gradient transformations and the optimizers built from them.

use super::schedule::LearningRate;
use super::{chain, Optimizer};
use crate::array::Array;
use crate::error::Result;
use crate::Axes;
use quabla_abi::{DType, TensorType};

fn zeros(params: &[Array]) -> Result<Vec<Array>> {
    params.iter().map(|p| p.zeros_like()).collect()
}

fn count0(params: &[Array]) -> Result<Array> {
    let p = params
        .first()
        .ok_or_else(|| crate::Error::Value("an optimizer needs at least one parameter".into()))?;
    crate::ops::zeros_typed(p, &TensorType::scalar(DType::I32))
}

/// optax's `safe_int32_increment`: stops at i32::MAX instead of wrapping.
fn increment(count: &Array) -> Result<Array> {
    count.lt(i32::MAX)?.select(&(count + 1)?, count)
}

fn check_len(what: &str, a: &[Array], b: &[Array]) -> Result<()> {
    if a.len() != b.len() {
        return Err(crate::Error::value(format!(
            "{what}: {} gradients but {} parameters/state entries",
            a.len(),
            b.len()
        )));
    }
    Ok(())
}

/// Multiplies the updates by `factor`.
///
/// ```no_run
/// # use quabla::optim;
/// // Gradient ascent along Adam's direction: +1e-3, not -1e-3.
/// let ascend = optim::chain(vec![optim::scale_by_adam(0.9, 0.999, 1e-8, 0.0), optim::scale(1e-3)]);
/// ```
pub fn scale(factor: f64) -> Optimizer {
    Optimizer::new(
        |_| Ok(vec![]),
        move |g, _, _| Ok((g.iter().map(|u| u * factor).collect::<Result<_>>()?, vec![])),
        |_| 0,
    )
}

/// `-lr * updates`; a schedule keeps its own step count (one i32 scalar of state).
///
/// ```no_run
/// # use quabla::optim;
/// let opt = optim::chain(vec![optim::scale_by_rms(0.9, 1e-8), optim::scale_by_learning_rate(1e-3)]);
/// ```
pub fn scale_by_learning_rate(lr: impl Into<LearningRate>) -> Optimizer {
    match lr.into() {
        LearningRate::Constant(v) => scale(-v),
        LearningRate::Schedule(s) => Optimizer::new(
            |params| Ok(vec![count0(params)?]),
            move |g, state, _| {
                let count = &state[0];
                let mut out = Vec::with_capacity(g.len());
                for u in g {
                    let step = s(count, u.dtype())?;
                    out.push((u * &step.neg()?)?);
                }
                Ok((out, vec![increment(count)?]))
            },
            |_| 1,
        ),
    }
}

/// Adam's moment estimates (optax `scale_by_adam`); state `(count, mu..., nu...)`.
///
/// ```no_run
/// # use quabla::optim;
/// // optax.adam(1e-3) spelled out.
/// let opt = optim::chain(vec![optim::scale_by_adam(0.9, 0.999, 1e-8, 0.0), optim::scale_by_learning_rate(1e-3)]);
/// ```
pub fn scale_by_adam(b1: f64, b2: f64, eps: f64, eps_root: f64) -> Optimizer {
    Optimizer::new(
        |params| {
            let mut s = vec![count0(params)?];
            s.extend(zeros(params)?);
            s.extend(zeros(params)?);
            Ok(s)
        },
        move |g, state, _| {
            let n = g.len();
            check_len("scale_by_adam", g, &state[1..1 + n])?;
            let count = increment(&state[0])?;
            let (mu, nu) = (&state[1..1 + n], &state[1 + n..]);
            let mut updates = Vec::with_capacity(n);
            let mut new_mu = Vec::with_capacity(n);
            let mut new_nu = Vec::with_capacity(n);
            for i in 0..n {
                let gi = g[i].astype(mu[i].dtype())?;
                let m = (&(&gi * (1.0 - b1))? + &(&mu[i] * b1)?)?;
                let v = (&(&(&gi * &gi)? * (1.0 - b2))? + &(&nu[i] * b2)?)?;
                let c = count.astype(m.dtype())?;
                let bc1 = (c.full_like(b1)?.pow(&c)?.neg()? + 1.0)?;
                let bc2 = (c.full_like(b2)?.pow(&c)?.neg()? + 1.0)?;
                let m_hat = (&m / &bc1)?;
                let v_hat = (&v / &bc2)?;
                updates.push((&m_hat / &((&v_hat + eps_root)?.sqrt()? + eps)?)?);
                new_mu.push(m);
                new_nu.push(v);
            }
            let mut s = vec![count];
            s.extend(new_mu);
            s.extend(new_nu);
            Ok((updates, s))
        },
        |n| 1 + 2 * n,
    )
}

/// RMS scaling (optax `scale_by_rms`, initial scale 0): `g / sqrt(nu + eps)` with
/// `nu = (1 - decay) g^2 + decay nu`.
///
/// ```no_run
/// # use quabla::optim;
/// let opt = optim::chain(vec![optim::scale_by_rms(0.99, 1e-8), optim::scale_by_learning_rate(1e-3)]);
/// ```
pub fn scale_by_rms(decay: f64, eps: f64) -> Optimizer {
    Optimizer::new(
        zeros,
        move |g, state, _| {
            check_len("scale_by_rms", g, state)?;
            let mut updates = Vec::with_capacity(g.len());
            let mut new = Vec::with_capacity(g.len());
            for (gi, nu) in g.iter().zip(state) {
                let v = (&(&(gi * gi)? * (1.0 - decay))? + &(nu * decay)?)?;
                updates.push((gi * &(&v + eps)?.rsqrt()?)?);
                new.push(v);
            }
            Ok((updates, new))
        },
        |n| n,
    )
}

/// Momentum (optax `trace`): `t = g + decay t`; updates `t`, or `g + decay t` with Nesterov.
///
/// ```no_run
/// # use quabla::optim;
/// // Heavy-ball momentum 0.9 at rate 0.01 (sgd(0.01, Some(0.9), false)).
/// let opt = optim::chain(vec![optim::trace(0.9, false), optim::scale_by_learning_rate(0.01)]);
/// ```
pub fn trace(decay: f64, nesterov: bool) -> Optimizer {
    Optimizer::new(
        zeros,
        move |g, state, _| {
            check_len("trace", g, state)?;
            let mut updates = Vec::with_capacity(g.len());
            let mut new = Vec::with_capacity(g.len());
            for (gi, t) in g.iter().zip(state) {
                let nt = (gi + &(t * decay)?)?;
                updates.push(if nesterov {
                    (gi + &(&nt * decay)?)?
                } else {
                    nt.clone()
                });
                new.push(nt);
            }
            Ok((updates, new))
        },
        |n| n,
    )
}

/// Adds `weight_decay * params` to the updates (decoupled weight decay).
///
/// ```no_run
/// # use quabla::optim;
/// let opt = optim::chain(vec![optim::add_decayed_weights(1e-4), optim::sgd(0.1, None, false)]);
/// ```
pub fn add_decayed_weights(weight_decay: f64) -> Optimizer {
    Optimizer::new(
        |_| Ok(vec![]),
        move |g, _, params| {
            check_len("add_decayed_weights", g, params)?;
            Ok((
                g.iter()
                    .zip(params)
                    .map(|(u, p)| u + &(p * weight_decay)?)
                    .collect::<Result<_>>()?,
                vec![],
            ))
        },
        |_| 0,
    )
}

/// Rescales all updates together when their global L2 norm exceeds `max_norm`.
///
/// ```no_run
/// # use quabla::optim;
/// let opt = optim::chain(vec![optim::clip_by_global_norm(1.0), optim::adam(1e-3)]);
/// ```
pub fn clip_by_global_norm(max_norm: f64) -> Optimizer {
    Optimizer::new(
        |_| Ok(vec![]),
        move |g, _, _| {
            let first = g
                .first()
                .ok_or_else(|| crate::Error::Value("clip_by_global_norm: no updates".into()))?;
            let mut sq = first
                .astype(first.dtype())?
                .mul(first)?
                .sum(Axes::All, false)?;
            for u in &g[1..] {
                sq = (&sq + &(u * u)?.sum(Axes::All, false)?.astype(sq.dtype())?)?;
            }
            let norm = sq.sqrt()?;
            let keep = norm.lt(max_norm)?;
            let out = g
                .iter()
                .map(|u| {
                    let scaled = (&(u / &norm.astype(u.dtype())?)? * max_norm)?;
                    keep.broadcast_in_dim(u.shape(), &[])?.select(u, &scaled)
                })
                .collect::<Result<_>>()?;
            Ok((out, vec![]))
        },
        |_| 0,
    )
}

/// Adam (optax `adam`): `scale_by_adam(b1, b2, eps)` then the learning rate. Defaults as
/// optax: b1 0.9, b2 0.999, eps 1e-8 — see [`adam_with`] to set them.
///
/// ```no_run
/// # use quabla::{optim, Array};
/// let params = vec![Array::from_slice(&[1.0f32, -2.0], &[2])?];
/// let opt = optim::adam(1e-3);
/// let state = opt.init(&params)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn adam(lr: impl Into<LearningRate>) -> Optimizer {
    adam_with(lr, 0.9, 0.999, 1e-8)
}

/// Adam with explicit hyperparameters.
///
/// ```no_run
/// # use quabla::optim;
/// let opt = optim::adam_with(1e-3, 0.9, 0.99, 1e-6);
/// ```
pub fn adam_with(lr: impl Into<LearningRate>, b1: f64, b2: f64, eps: f64) -> Optimizer {
    chain(vec![
        scale_by_adam(b1, b2, eps, 0.0),
        scale_by_learning_rate(lr),
    ])
}

/// AdamW (optax `adamw`): Adam's step plus `weight_decay * params`, then the learning rate
/// (optax's default weight decay is 1e-4).
///
/// ```no_run
/// # use quabla::optim;
/// let opt = optim::adamw(1e-3, 1e-4);
/// ```
pub fn adamw(lr: impl Into<LearningRate>, weight_decay: f64) -> Optimizer {
    chain(vec![
        scale_by_adam(0.9, 0.999, 1e-8, 0.0),
        add_decayed_weights(weight_decay),
        scale_by_learning_rate(lr),
    ])
}

/// RMSProp (optax `rmsprop`, decay 0.9, eps 1e-8).
///
/// ```no_run
/// # use quabla::optim;
/// let opt = optim::rmsprop(1e-3, 0.9, 1e-8);
/// ```
pub fn rmsprop(lr: impl Into<LearningRate>, decay: f64, eps: f64) -> Optimizer {
    chain(vec![scale_by_rms(decay, eps), scale_by_learning_rate(lr)])
}

/// SGD with optional momentum (Nesterov or not), as optax `sgd`.
///
/// ```no_run
/// # use quabla::optim;
/// let plain = optim::sgd(0.1, None, false);
/// let nesterov = optim::sgd(0.1, Some(0.9), true);
/// ```
pub fn sgd(lr: impl Into<LearningRate>, momentum: Option<f64>, nesterov: bool) -> Optimizer {
    match momentum {
        Some(m) => chain(vec![trace(m, nesterov), scale_by_learning_rate(lr)]),
        None => scale_by_learning_rate(lr),
    }
}
