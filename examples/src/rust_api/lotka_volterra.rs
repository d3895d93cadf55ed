//! Lotka-Volterra predator-prey dynamics with `tree::odeint`: the state and the four rates
//! are structs, and `tree::grad` differentiates the prey at the end time through the solve.
//!
//! ```no_run
//! use quabla_examples::rust_api::lotka_volterra::{end_prey, Rates};
//! let g = quabla::tree::grad(end_prey)(&Rates::classic()?, &())?;
//! println!("d prey(T) / d alpha = {}", g.alpha);
//! # Ok::<(), quabla::Error>(())
//! ```

use quabla::ode::OdeOptions;
use quabla::tree::{self, Tree};
use quabla::{Array, DType, Result};

#[derive(Clone, Tree)]
pub struct Populations {
    pub prey: Array,
    pub predators: Array,
}

/// `prey' = alpha prey - beta prey predators`, `predators' = delta prey predators - gamma
/// predators`.
#[derive(Clone, Tree)]
pub struct Rates {
    pub alpha: Array,
    pub beta: Array,
    pub delta: Array,
    pub gamma: Array,
}

impl Rates {
    /// The textbook rates (1.5, 1, 1, 3), in float64.
    pub fn classic() -> Result<Rates> {
        Ok(Rates {
            alpha: Array::scalar(1.5)?,
            beta: Array::scalar(1.0)?,
            delta: Array::scalar(1.0)?,
            gamma: Array::scalar(3.0)?,
        })
    }
}

fn field(y: &Populations, _t: &Array, r: &Rates) -> Result<Populations> {
    let (x, z) = (&y.prey, &y.predators);
    Ok(Populations {
        prey: (x * (r.alpha.ex() - &r.beta * z)).get()?,
        predators: (z * (r.delta.ex() * x - &r.gamma)).get()?,
    })
}

/// The populations at 11 times on `[0, 5]`, from 10 prey and 1 predator.
pub fn trajectory(r: &Rates) -> Result<Populations> {
    let y0 = Populations {
        prey: Array::scalar(10.0)?,
        predators: Array::scalar(1.0)?,
    };
    let t = Array::linspace(0.0, 5.0, 11, DType::F64)?;
    let opts = OdeOptions {
        rtol: 1e-10,
        atol: 1e-10,
        ..Default::default()
    };
    Ok(tree::odeint(field, &y0, &t, r, &opts)?.0)
}

/// The prey at the end time: the scalar `tree::grad` differentiates.
pub fn end_prey(r: &Rates, _: &()) -> Result<Array> {
    trajectory(r)?.prey.index(&quabla::s![-1])
}
