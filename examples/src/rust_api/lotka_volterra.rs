//! Lotka-Volterra predator-prey dynamics with `tree::odeint`: the state is a `(prey,
//! predators)` tuple and the rates `[alpha, beta, delta, gamma]` an array of scalars, both
//! trees, and `tree::grad` differentiates the prey at the end time through the solve.
//!
//! ```no_run
//! use quabla_examples::rust_api::lotka_volterra::{classic_rates, end_prey};
//! let g = quabla::tree::grad(end_prey)(&classic_rates()?, &())?;
//! println!("d prey(T) / d alpha = {}", g[0]);
//! # Ok::<(), quabla::Error>(())
//! ```

use quabla::{ode::OdeOptions, s, tree, Array, DType, ExprTree, Result};

/// The textbook rates `[alpha, beta, delta, gamma]` = (1.5, 1, 1, 3), in float64.
pub fn classic_rates() -> Result<[Array; 4]> {
    Array::scalars([1.5, 1.0, 1.0, 3.0])
}

/// `x' = alpha x - beta x z` (prey), `z' = delta x z - gamma z` (predators).
fn field((x, z): &(Array, Array), _t: &Array, rates: &[Array; 4]) -> Result<(Array, Array)> {
    let [alpha, beta, delta, gamma] = rates;
    (x * (alpha.ex() - beta * z), z * (delta.ex() * x - gamma)).get()
}

/// The populations `(prey, predators)` at 11 times on `[0, 5]`, from 10 prey and 1 predator.
pub fn trajectory(rates: &[Array; 4]) -> Result<(Array, Array)> {
    let y0 = (Array::scalar(10.0)?, Array::scalar(1.0)?);
    let t = Array::linspace(0.0, 5.0, 11, DType::F64)?;
    let opts = OdeOptions::default().rtol(1e-10).atol(1e-10);
    Ok(tree::odeint(field, &y0, &t, rates, &opts)?.0)
}

/// The prey at the end time: the scalar `tree::grad` differentiates.
pub fn end_prey(rates: &[Array; 4], _: &()) -> Result<Array> {
    trajectory(rates)?.0.index(&s![-1])
}
