//! An MLP fitted to `sin(3x)` with Adam, as a user writes it in their own crate: the network
//! is `nn::Mlp` (a parameter tree), trained by `tree::Trainer` (one compiled step: loss,
//! gradient, update), no index bookkeeping. Shared by the out-of-tree crate (its `main`) and
//! the workspace's examples (run in CI).

use quabla::nn::{Activation, Mlp};
use quabla::optim::adam;
use quabla::tree::Trainer;
use quabla::{random, Array, Axes, DType, Result};

pub fn loss(net: &Mlp, (x, y): &(Array, Array)) -> Result<Array> {
    let r = (net.apply(x)? - y)?;
    (r.ex() * &r).mean(Axes::All, false).get()
}

/// `steps` Adam steps on 64 points of `sin(3x)`: the loss before and after, and the device.
pub fn fit(steps: usize) -> Result<(f32, f32, String)> {
    let x = Array::linspace(-1.0, 1.0, 64, DType::F32)?.reshape(&[64, 1])?;
    let data = (x.clone(), (3.0 * x.ex()).sin().get()?);
    let net = Mlp::new(&random::key(0)?, &[1, 16, 1], Activation::Tanh, DType::F32)?;
    let first = loss(&net, &data)?.item::<f32>()?;
    let mut trainer = Trainer::new(loss, net, adam(1e-2))?;
    trainer.run(steps, &data, false)?;
    let last = loss(&trainer.params()?, &data)?.item::<f32>()?;
    Ok((first, last, x.device().platform().to_string()))
}
