//! An MLP fitted to `sin(3x)` with Adam, as a user writes it in their own crate: parameters
//! in a struct deriving `Tree`, trained by `tree::Trainer` (one compiled step: loss,
//! gradient, update), no index bookkeeping. Shared by the out-of-tree crate (its `main`) and
//! the workspace's examples (run in CI).

use quabla::optim::adam;
use quabla::random::{key, normal, split2};
use quabla::tree::{Trainer, Tree};
use quabla::{Array, Axes, DType, Result};

#[derive(Clone, Tree)]
pub struct Mlp {
    pub w1: Array,
    pub b1: Array,
    pub w2: Array,
    pub b2: Array,
}

pub fn init(width: usize) -> Result<Mlp> {
    let [k1, k2] = split2(&key(0)?)?;
    Ok(Mlp {
        w1: normal(&k1, &[1, width], DType::F32)?,
        b1: Array::zeros(&[width], DType::F32)?,
        w2: (normal(&k2, &[width, 1], DType::F32)? / (width as f64).sqrt())?,
        b2: Array::zeros(&[1], DType::F32)?,
    })
}

pub fn predict(p: &Mlp, x: &Array) -> Result<Array> {
    ((x.ex().matmul(&p.w1) + &p.b1).tanh().matmul(&p.w2) + &p.b2).get()
}

pub fn loss(p: &Mlp, (x, y): &(Array, Array)) -> Result<Array> {
    let r = (predict(p, x)? - y)?;
    (r.ex() * &r).mean(Axes::All, false).get()
}

/// `steps` Adam steps on 64 points of `sin(3x)`: the loss before and after, and the device.
pub fn fit(steps: usize) -> Result<(f32, f32, String)> {
    let x = Array::linspace(-1.0, 1.0, 64, DType::F32)?.reshape(&[64, 1])?;
    let data = (x.clone(), (3.0 * x.ex()).sin().get()?);
    let params = init(16)?;
    let first = loss(&params, &data)?.item::<f32>()?;
    let mut trainer = Trainer::new(loss, params, adam(1e-2))?;
    trainer.run(steps, &data, false)?;
    let last = loss(&trainer.params()?, &data)?.item::<f32>()?;
    Ok((first, last, x.device().platform().to_string()))
}
