use quabla::linalg::{self, SolveOptions};
use quabla::{jit, Array, Result};

pub fn system(n: usize) -> Result<(Array, Array)> {
    let mut a = vec![0.0f64; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = 1.0 / (1.0 + (i as f64 - j as f64).abs());
        }
        a[i * n + i] += 1.0;
    }
    let b: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
    Ok((Array::from_slice(&a, &[n, n])?, Array::from_slice(&b, &[n])?))
}

pub fn solve(n: usize) -> Result<(Array, Array, Array)> {
    let (a, b) = system(n)?;
    let opts = SolveOptions {
        tol: 1e-10,
        ..Default::default()
    };
    let cg = jit(move |ab: &[Array]| {
        let (x, info) = linalg::cg(&linalg::dense(&ab[0]), &ab[1..2], None, None, &opts)?;
        Ok(vec![x[0].clone(), info])
    });
    let out = cg.call(&[a.clone(), b.clone()])?;
    Ok((out[0].clone(), out[1].clone(), linalg::solve(&a, &b)?))
}
