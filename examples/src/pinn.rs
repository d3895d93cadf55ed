//! The 2D Poisson PINN problem shared by the main job (`pinn_poisson`) and the benchmark
//! suite (`bench_suite`): -(u_xx + u_yy) = 2 pi^2 sin(pi x) sin(pi y) on [0, 1]^2, u = 0 on the
//! boundary, an MLP 2 -> 64 -> 64 -> 64 -> 1 (tanh), the Laplacian by forward-over-reverse AD
//! per collocation point.

use quabla::ad::{grad, hessian, jvp};
use quabla::{vmap, Array, Axes, DType, Result};
use std::f64::consts::PI;

/// Layer sizes of the MLP.
pub const LAYERS: [(usize, usize); 4] = [(2, 64), (64, 64), (64, 64), (64, 1)];
/// Parameter arrays of the MLP (a weight and a bias per layer).
pub const NUM_PARAMS: usize = 2 * LAYERS.len();

/// Glorot-uniform weights and zero biases from a fixed seed (a 64-bit LCG, not JAX's
/// threefry: the numbers differ from JAX's, the distribution does not), in `dtype`.
///
/// ```no_run
/// let p = quabla_examples::pinn::init(0, quabla::DType::F32).unwrap();
/// assert_eq!(p.len(), quabla_examples::pinn::NUM_PARAMS);
/// ```
pub fn init(seed: u64, dtype: DType) -> Result<Vec<Array>> {
    let mut s = seed;
    let mut out = Vec::new();
    for (fan_in, fan_out) in LAYERS {
        let lim = (6.0 / (fan_in + fan_out) as f64).sqrt();
        let w: Vec<f32> = (0..fan_in * fan_out)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * lim) as f32
            })
            .collect();
        out.push(Array::from_slice(&w, &[fan_in, fan_out])?.astype(dtype)?);
        out.push(Array::zeros(&[fan_out], dtype)?);
    }
    Ok(out)
}

/// The network at points `x` (`[m, 2]` -> `[m, 1]`).
pub fn mlp(params: &[Array], x: &Array) -> Result<Array> {
    let mut h = x.clone();
    for l in 0..LAYERS.len() - 1 {
        h = (h.matmul(&params[2 * l])? + &params[2 * l + 1])?.tanh()?;
    }
    h.matmul(&params[6])? + &params[7]
}

/// Collocation points from the R2 low-discrepancy sequence, and 64 points per boundary side.
pub fn points(n: usize) -> (Vec<f32>, Vec<f32>) {
    let (a1, a2) = (0.754_877_666_246_692_7, 0.569_840_290_998_053_3);
    let inner: Vec<f32> = (0..n)
        .flat_map(|i| {
            [
                ((0.5 + a1 * i as f64) % 1.0) as f32,
                ((0.5 + a2 * i as f64) % 1.0) as f32,
            ]
        })
        .collect();
    let mut bnd = Vec::with_capacity(512);
    for k in 0..64 {
        let t = (k as f32 + 0.5) / 64.0;
        bnd.extend_from_slice(&[t, 0.0, t, 1.0, 0.0, t, 1.0, t]);
    }
    (inner, bnd)
}

/// The residual and boundary terms of the loss from the Laplacian at each interior point.
fn loss_from_laplacian(p: &[Array], xs: &Array, xb: &Array, lap: &Array) -> Result<Vec<Array>> {
    let m = xs.shape()[0];
    let (x, y) = (
        xs.slice(&[0, 0], &[m, 1], &[1, 1])?.reshape(&[-1])?,
        xs.slice(&[0, 1], &[m, 2], &[1, 1])?.reshape(&[-1])?,
    );
    let f = ((&(x * PI)?.sin()? * &(y * PI)?.sin()?)? * (2.0 * PI * PI))?;
    let res = (lap + &f)?;
    let ub = mlp(p, xb)?;
    Ok(vec![
        (&(&res * &res)?.mean(Axes::All, false)? + &(&ub * &ub)?.mean(Axes::All, false)?)?,
    ])
}

/// The loss: mean squared PDE residual at the collocation points plus mean squared u on the
/// boundary. `a` is the parameters followed by the interior and boundary points.
pub fn loss(a: &[Array]) -> Result<Vec<Array>> {
    let np = NUM_PARAMS;
    let (p, xs, xb) = (&a[..np], &a[np], &a[np + 1]);
    let u = |q: &[Array]| Ok(vec![mlp(p, &q[0].reshape(&[1, 2])?)?.reshape(&[])?]);
    let h = vmap(hessian(u, &[0]), &[Some(0)], &[])(std::slice::from_ref(xs))?.remove(0);
    let m = xs.shape()[0];
    let uxx = h
        .slice(&[0, 0, 0], &[m, 1, 1], &[1, 1, 1])?
        .reshape(&[-1])?;
    let uyy = h
        .slice(&[0, 1, 1], &[m, 2, 2], &[1, 1, 1])?
        .reshape(&[-1])?;
    loss_from_laplacian(p, xs, xb, &(&uxx + &uyy)?)
}

/// [`loss`] with the Laplacian as JAX's fastest formulation writes it: per point, the
/// directional derivative of the gradient along each axis (jvp of grad), the diagonal only,
/// instead of the whole Hessian.
///
/// ```no_run
/// # use quabla_examples::pinn;
/// # use quabla::{Array, DType};
/// let (inner, bnd) = pinn::points(8);
/// let mut a = pinn::init(0, DType::F64).unwrap();
/// a.push(Array::from_slice(&inner, &[8, 2]).unwrap().astype(DType::F64).unwrap());
/// a.push(Array::from_slice(&bnd, &[256, 2]).unwrap().astype(DType::F64).unwrap());
/// let l = pinn::loss_jvp_of_grad(&a).unwrap()[0].item::<f64>().unwrap();
/// ```
pub fn loss_jvp_of_grad(a: &[Array]) -> Result<Vec<Array>> {
    let np = NUM_PARAMS;
    let (p, xs, xb) = (&a[..np], &a[np], &a[np + 1]);
    let u = |q: &[Array]| Ok(vec![mlp(p, &q[0].reshape(&[1, 2])?)?.reshape(&[])?]);
    let du = grad(u, &[0]);
    let dtype = xs.dtype();
    let laplacian = |q: &[Array]| -> Result<Vec<Array>> {
        // d^2 u / dx_k^2: component k of the gradient's derivative along axis k.
        let second = |k: usize| -> Result<Array> {
            let mut e = [0.0f64; 2];
            e[k] = 1.0;
            let e = Array::from_slice(&e, &[2])?.astype(dtype)?;
            let (_, t) = jvp(&du, &q[..1], &[e])?;
            t[0].slice(&[k], &[k + 1], &[1])?.reshape(&[])
        };
        Ok(vec![(&second(0)? + &second(1)?)?])
    };
    let lap = vmap(laplacian, &[Some(0)], &[])(std::slice::from_ref(xs))?.remove(0);
    loss_from_laplacian(p, xs, xb, &lap)
}
