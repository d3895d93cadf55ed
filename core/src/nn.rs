//! Layers for the networks of scientific machine learning (a PINN's solution, a neural ODE's
//! field): [`Linear`] and [`Mlp`], parameter trees (`#[derive(Tree)]`) that `tree::grad`,
//! the optimizers and [`crate::tree::Trainer`] take as they are.
//!
//! Initialised as equinox's `nn.Linear` and `nn.MLP`: weights and biases uniform in
//! `±1/sqrt(fan_in)`, one key per layer from [`random::split`]. A weight is `[fan_in,
//! fan_out]`, so a layer is `x W + b` on rows `x` (equinox stores the transpose).
//!
//! ```no_run
//! use quabla::nn::{Activation, Mlp};
//! use quabla::{random, Array, DType};
//! let net = Mlp::new(&random::key(0)?, &[2, 64, 64, 1], Activation::Tanh, DType::F32)?;
//! let x = Array::zeros(&[10, 2], DType::F32)?;
//! assert_eq!(net.apply(&x)?.shape(), &[10, 1]);
//! # Ok::<(), quabla::Error>(())
//! ```

use crate::array::Array;
use crate::error::{Error, Result};
use crate::random;
use crate::tree::Tree;
use quabla_abi::DType;

/// The nonlinearity between an [`Mlp`]'s layers. Kinks follow JAX's conventions: `relu`'s
/// derivative at 0 is 0, `softplus`'s is 1/2.
///
/// ```no_run
/// use quabla::nn::Activation;
/// let x = quabla::Array::from_slice(&[-1.0f64, 0.0, 2.0], &[3])?;
/// assert_eq!(Activation::Relu.apply(&x)?.to_vec::<f64>()?, [0.0, 0.0, 2.0]);
/// # Ok::<(), quabla::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// `tanh(x)`: smooth, so a PINN's Laplacian of the network exists.
    Tanh,
    /// `sin(x)`, as SIREN networks use.
    Sin,
    /// `max(x, 0)`.
    Relu,
    /// `1 / (1 + e^-x)`.
    Sigmoid,
    /// `log(1 + e^x)`, without overflow for large `x`.
    Softplus,
    /// `x / (1 + e^-x)` (swish).
    Silu,
}

impl Activation {
    /// The activation of each element of `x`.
    ///
    /// ```no_run
    /// use quabla::nn::Activation;
    /// let x = quabla::Array::from_slice(&[0.0f32], &[1])?;
    /// assert_eq!(Activation::Sigmoid.apply(&x)?.to_vec::<f32>()?, [0.5]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn apply(self, x: &Array) -> Result<Array> {
        match self {
            Activation::Tanh => x.tanh(),
            Activation::Sin => x.sin(),
            // A select, not max(x, 0): max shares the tangent at the tie, JAX's relu gives 0.
            Activation::Relu => x.gt(0.0)?.select(x, 0.0),
            Activation::Sigmoid => x.logistic(),
            Activation::Softplus => {
                // max(x, 0) + log1p(e^-|x|), each part picked by the sign of x, so that at 0
                // the derivative comes from log1p(e^x) alone: 1/2, as JAX's.
                let positive = x.gt(0.0)?;
                let relu = positive.select(x, 0.0)?;
                let minus_abs = positive.select(&x.neg()?, x)?;
                relu + minus_abs.exp()?.log1p()?
            }
            Activation::Silu => x * &x.logistic()?,
        }
    }
}

/// A dense layer: `x W + b` on the last axis of `x`.
///
/// ```no_run
/// use quabla::nn::Linear;
/// use quabla::{random, Array, DType};
/// let layer = Linear::new(&random::key(1)?, 3, 2, DType::F64)?;
/// let y = layer.apply(&Array::ones(&[5, 3], DType::F64)?)?;
/// assert_eq!(y.shape(), &[5, 2]);
/// # Ok::<(), quabla::Error>(())
/// ```
#[derive(Clone, Debug, Tree)]
pub struct Linear {
    /// `[fan_in, fan_out]`.
    pub weight: Array,
    /// `[fan_out]`.
    pub bias: Array,
}

impl Linear {
    /// A layer from `fan_in` to `fan_out` features of a float `dtype`, its weight and bias
    /// uniform in `±1/sqrt(fan_in)` from two keys split from `key` (equinox's rule).
    ///
    /// ```no_run
    /// let layer = quabla::nn::Linear::new(&quabla::random::key(0)?, 4, 8, quabla::DType::F32)?;
    /// assert_eq!(layer.weight.shape(), &[4, 8]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn new(key: &Array, fan_in: usize, fan_out: usize, dtype: DType) -> Result<Linear> {
        if fan_in == 0 || fan_out == 0 {
            return Err(Error::value(format!(
                "a Linear layer needs at least one input and one output feature, got \
                 {fan_in} -> {fan_out}"
            )));
        }
        let limit = 1.0 / (fan_in as f64).sqrt();
        let [kw, kb] = random::split2(key)?;
        Ok(Linear {
            weight: random::uniform_range(&kw, &[fan_in, fan_out], dtype, -limit, limit)?,
            bias: random::uniform_range(&kb, &[fan_out], dtype, -limit, limit)?,
        })
    }

    /// `x W + b`: `x` is `[..., fan_in]` (one point or a batch of rows), the result
    /// `[..., fan_out]`.
    ///
    /// ```no_run
    /// use quabla::nn::Linear;
    /// use quabla::{random, Array, DType};
    /// let layer = Linear::new(&random::key(0)?, 2, 3, DType::F32)?;
    /// assert_eq!(layer.apply(&Array::zeros(&[2], DType::F32)?)?.shape(), &[3]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn apply(&self, x: &Array) -> Result<Array> {
        let fan_in = self.weight.shape().first().copied().unwrap_or(0);
        if x.shape().last() != Some(&fan_in) {
            return Err(Error::shape(format!(
                "a Linear layer of {fan_in} input features got an input of shape {:?}; its \
                 last axis must have {fan_in}",
                x.shape()
            )));
        }
        x.matmul(&self.weight)? + &self.bias
    }
}

/// A multilayer perceptron: [`Linear`] layers with an [`Activation`] between them (none
/// after the last).
///
/// ```no_run
/// use quabla::nn::{Activation, Mlp};
/// use quabla::{random, tree, Array, Axes, DType, Result};
/// let net = Mlp::new(&random::key(0)?, &[1, 16, 1], Activation::Tanh, DType::F64)?;
/// let x = Array::linspace(-1.0, 1.0, 8, DType::F64)?.reshape(&[8, 1])?;
/// let loss = |p: &Mlp, x: &Array| -> Result<Array> { p.apply(x)?.sum(Axes::All, false) };
/// let g = tree::grad(loss)(&net, &x)?; // an Mlp of gradients
/// assert_eq!(g.layers[0].weight.shape(), &[1, 16]);
/// # Ok::<(), quabla::Error>(())
/// ```
#[derive(Clone, Debug, Tree)]
pub struct Mlp {
    /// The layers, input first.
    pub layers: Vec<Linear>,
    /// The activation between layers (not a parameter: no gradient, not optimised). A
    /// static field: a `tree::jit` or `Trainer` keeps the activation it first traced, so
    /// give a network with another activation its own.
    #[tree(static)]
    pub activation: Activation,
}

impl Mlp {
    /// Layers through `sizes` (`[inputs, hidden..., outputs]`, at least two), each from
    /// its own key split from `key`, of a float `dtype`.
    ///
    /// ```no_run
    /// use quabla::nn::{Activation, Mlp};
    /// let net = Mlp::new(&quabla::random::key(0)?, &[2, 32, 32, 2], Activation::Tanh, quabla::DType::F32)?;
    /// assert_eq!(net.layers.len(), 3);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn new(key: &Array, sizes: &[usize], activation: Activation, dtype: DType) -> Result<Mlp> {
        if sizes.len() < 2 {
            return Err(Error::value(format!(
                "an Mlp needs at least an input and an output size, got {sizes:?}"
            )));
        }
        let keys = random::split(key, &[sizes.len() - 1])?;
        let layers = sizes
            .windows(2)
            .enumerate()
            .map(|(i, pair)| Linear::new(&keys.at(i as isize)?, pair[0], pair[1], dtype))
            .collect::<Result<Vec<_>>>()?;
        Ok(Mlp { layers, activation })
    }

    /// The network at `x` (`[..., inputs]` to `[..., outputs]`).
    ///
    /// ```no_run
    /// use quabla::nn::{Activation, Mlp};
    /// use quabla::{random, Array, DType};
    /// let net = Mlp::new(&random::key(0)?, &[3, 8, 1], Activation::Silu, DType::F64)?;
    /// assert_eq!(net.apply(&Array::ones(&[4, 3], DType::F64)?)?.shape(), &[4, 1]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn apply(&self, x: &Array) -> Result<Array> {
        let (last, hidden) = self
            .layers
            .split_last()
            .ok_or_else(|| Error::value("an Mlp without layers has no output"))?;
        let mut h = x.clone();
        for layer in hidden {
            h = self.activation.apply(&layer.apply(&h)?)?;
        }
        last.apply(&h)
    }
}
