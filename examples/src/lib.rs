//! Runnable examples; each lives in `src/bin/`. Run them with the CPU plugin on the search
//! path, e.g. `cargo xtask main`.

pub mod figure;
pub mod inverse_diffusion;
pub mod neural_ode;
pub mod ode_workloads;
pub mod pinn;
pub mod rust_api;
pub mod solver_problems;

/// The value after `--name` on the command line, parsed, or `default`.
///
/// ```no_run
/// let steps: usize = quabla_examples::arg("--steps", 600);
/// ```
pub fn arg<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
