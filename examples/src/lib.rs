//! Runnable examples; each lives in `src/bin/`. Run them with the CPU plugin on the search
//! path, e.g. `cargo xtask main`.

pub mod inverse_diffusion;
pub mod neural_ode;
pub mod pinn;
pub mod solver_problems;
