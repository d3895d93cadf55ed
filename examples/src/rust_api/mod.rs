//! Three programs a Rust scientist writes first, in the API's own style (issue 25's): an MLP
//! fitted with Adam under `jit`, Lotka-Volterra with `odeint` and the gradient of the end
//! state in the rates, conjugate gradients on a 100x100 symmetric positive definite system.
//! Parameters and states are trees (a struct deriving `Tree`, a tuple, an array of
//! scalars); no index bookkeeping. Run in CI by
//! `examples/tests/rust_api_programs.rs` against finite differences and a dense solve.
//! `examples/rust-api-before/` holds the same programs against the API before, and their
//! lengths.

pub mod cg_spd;
pub mod lotka_volterra;
/// The MLP fit: the same file the out-of-tree crate (`examples/out-of-tree`) runs.
#[path = "../../out-of-tree/src/fit.rs"]
pub mod mlp_fit;
