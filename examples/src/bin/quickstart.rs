//! Loads the CPU backend plugin at run time, runs a small model eagerly and under `jit`, and
//! checks that both agree bit for bit.
//!
//! The model: one tanh layer over a grid of points and the mean of its square, with a few
//! Newton steps for sqrt(2) as a loop-free sanity check of the arithmetic.

use quabla::{default_device, jit, Array, Axes, Result};

fn layer(xs: &[Array]) -> Result<Vec<Array>> {
    let (x, w, b) = (&xs[0], &xs[1], &xs[2]);
    let h = (x.matmul(w)? + b)?.tanh()?;
    let energy = (&h * &h)?.mean(Axes::All, false)?;
    Ok(vec![h, energy])
}

fn grid(n: usize) -> Vec<f32> {
    (0..n * 2)
        .map(|i| {
            if i % 2 == 0 {
                (i / 2) as f32 / (n - 1) as f32
            } else {
                1.0 - (i / 2) as f32 / (n - 1) as f32
            }
        })
        .collect()
}

fn main() -> Result<()> {
    let dev = default_device()?;
    let path = dev
        .plugin()
        .path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "<static>".into());
    println!(
        "backend: {} {} (loaded from {path})",
        dev.platform(),
        dev.plugin().info().version
    );

    let n = 1024;
    let x = Array::from_slice(&grid(n), &[n, 2])?;
    let w = Array::from_slice(&[0.5f32, -1.0, 0.25, 2.0, 1.5, -0.75, 0.1, 0.3], &[2, 4])?;
    let b = Array::from_slice(&[0.0f32, 0.1, -0.2, 0.3], &[4])?;

    let f = jit(layer);
    println!(
        "\nQIR of the jitted function:\n{}",
        f.lower(&[x.clone(), w.clone(), b.clone()])?.to_text()
    );
    let compiled = f.call(&[x.clone(), w.clone(), b.clone()])?;
    let eager = layer(&[x, w, b])?;
    let (ce, ee) = (compiled[1].item::<f32>()?, eager[1].item::<f32>()?);
    let (ch, eh) = (compiled[0].to_vec::<f32>()?, eager[0].to_vec::<f32>()?);
    let identical =
        ce.to_bits() == ee.to_bits() && ch.iter().zip(&eh).all(|(a, b)| a.to_bits() == b.to_bits());
    println!(
        "mean tanh^2 over {n} points: jit {ce:.7}, eager {ee:.7}; bitwise identical: {identical}"
    );

    // Newton's iteration for sqrt(2) in f64, eagerly.
    let mut y = Array::from_slice(&[1.0f64], &[])?;
    for _ in 0..6 {
        let q = (y.full_like(2.0)? / &y)?;
        y = ((&y + &q)? * 0.5)?;
    }
    let s = y.item::<f64>()?;
    println!(
        "sqrt(2) by Newton: {s:.17} (error {:.1e})",
        (s - 2f64.sqrt()).abs()
    );
    if !identical {
        eprintln!("eager and jit results differ");
        std::process::exit(1);
    }
    Ok(())
}
