use quabla::ode::{odeint, OdeOptions};
use quabla::{Array, Result};

// rates: alpha, beta, delta, gamma
pub fn classic_rates() -> Result<Vec<Array>> {
    Ok(vec![
        Array::from_slice(&[1.5f64], &[])?,
        Array::from_slice(&[1.0f64], &[])?,
        Array::from_slice(&[1.0f64], &[])?,
        Array::from_slice(&[3.0f64], &[])?,
    ])
}

fn field(y: &[Array], _t: &Array, r: &[Array]) -> Result<Vec<Array>> {
    let (x, z) = (&y[0], &y[1]);
    let dx = (x * &(&r[0] - &(&r[1] * z)?)?)?;
    let dz = (z * &(&(&r[2] * x)? - &r[3])?)?;
    Ok(vec![dx, dz])
}

// returns [prey, predators], each with 11 times
pub fn trajectory(r: &[Array]) -> Result<Vec<Array>> {
    let y0 = vec![
        Array::from_slice(&[10.0f64], &[])?,
        Array::from_slice(&[1.0f64], &[])?,
    ];
    let ts: Vec<f64> = (0..11).map(|i| i as f64 * 0.5).collect();
    let t = Array::from_slice(&ts, &[11])?;
    let opts = OdeOptions {
        rtol: 1e-10,
        atol: 1e-10,
        ..Default::default()
    };
    Ok(odeint(&field, &y0, &t, r, &opts)?.ys)
}

pub fn end_prey(r: &[Array]) -> Result<Vec<Array>> {
    let ys = trajectory(r)?;
    Ok(vec![ys[0].slice(&[10], &[11], &[1])?.reshape(&[])?])
}
