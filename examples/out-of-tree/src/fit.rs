//! An MLP fitted to `sin(3x)` with Adam, as a user writes it in their own crate: parameters
//! in a struct deriving `Tree`, one jitted training step over trees, no index bookkeeping.
//! Shared by the out-of-tree crate (its `main`) and the workspace's examples (run in CI).

use quabla::optim::{adam, apply_updates};
use quabla::tree::{self, Tree};
use quabla::{Array, Axes, DType, Result};

#[derive(Clone, Tree)]
pub struct Mlp {
    pub w1: Array,
    pub b1: Array,
    pub w2: Array,
    pub b2: Array,
}

pub fn init(width: usize) -> Result<Mlp> {
    let k = quabla::random::key(0)?;
    let [k1, k2] = quabla::random::split2(&k)?;
    Ok(Mlp {
        w1: quabla::random::normal(&k1, &[1, width], DType::F32)?,
        b1: Array::zeros(&[width], DType::F32)?,
        w2: (quabla::random::normal(&k2, &[width, 1], DType::F32)? / (width as f64).sqrt())?,
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
    let y = (3.0 * x.ex()).sin().get()?;
    let data = (x, y);
    let opt = adam(1e-2);
    let params = init(16)?;
    let state = opt.init(&params)?;
    let step = tree::jit(move |(p, s, d): &(Mlp, Vec<Array>, (Array, Array))| {
        let (l, g) = tree::value_and_grad(loss)(p, d)?;
        let (u, s) = opt.update(&g, s, p)?;
        Ok((apply_updates(p, &u)?, s, l))
    });
    let mut carry = (params, state);
    let first = loss(&carry.0, &data)?.item::<f32>()?;
    for _ in 0..steps {
        let (p, s, _) = step.call(&(carry.0, carry.1, data.clone()))?;
        carry = (p, s);
    }
    let last = loss(&carry.0, &data)?.item::<f32>()?;
    Ok((first, last, data.0.device().platform().to_string()))
}
