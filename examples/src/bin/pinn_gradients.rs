//! The native reference for the browser build: the PINN loss and its parameter gradients
//! (f32, seed 0, the first `n` collocation points), as JSON on stdout. The wasm tests compare
//! every way of writing the Laplacian in JavaScript, eager and jitted, against these.
//!
//! `cargo run -p quabla-examples --bin pinn_gradients -- 32 > pinn_reference.json`

use quabla::ad::value_and_grad;
use quabla::{Array, DType};
use quabla_examples::pinn::{init, loss, points, NUM_PARAMS};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = match std::env::args().nth(1) {
        Some(a) => a
            .parse()
            .map_err(|_| format!("the point count must be a number, got `{a}`"))?,
        None => 32,
    };
    let mut args = init(0, DType::F32)?;
    let (inner, bnd) = points(n);
    args.push(Array::from_slice(&inner, &[n, 2])?);
    args.push(Array::from_slice(&bnd, &[bnd.len() / 2, 2])?);
    let params: Vec<usize> = (0..NUM_PARAMS).collect();
    let out = value_and_grad(loss, &params, false)(&args)?;
    let list = |v: Vec<f32>| {
        v.iter()
            .map(|x| format!("{x:e}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let grads: Vec<String> = out[1..]
        .iter()
        .map(|g| Ok(format!("[{}]", list(g.to_vec::<f32>()?))))
        .collect::<quabla::Result<_>>()?;
    println!(
        "{{\"points\":{n},\"loss\":{},\"grads\":[{}]}}",
        out[0].item::<f32>()?,
        grads.join(",")
    );
    Ok(())
}
