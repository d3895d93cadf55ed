//! `quabla-wasm`: Quabla for JavaScript. The core, the CPU backend and the wgpu backend are
//! compiled to wasm32 and linked into one module; the backends are registered with the core
//! through the same ABI tables a loaded plugin uses (`quabla::runtime::register_static`), so
//! the browser runs exactly the code paths the conformance suite checks natively.
//!
//! The JavaScript API mirrors the Python one where it fits:
//!
//! ```js
//! import init, * as q from "./pkg/quabla_wasm.js";
//! await init();                                  // the wasm module
//! await q.init({ backend: "webgpu" });           // or "cpu"; "auto" tries WebGPU first
//! const x = q.array(new Float32Array([0, 1, 2]), [3]);
//! const f = (x) => q.sum(q.tanh(x).mul(x));
//! const df = q.jit(q.grad(f));
//! console.log(await df(x).data());               // Float32Array
//! ```
//!
//! Functions passed to `grad`, `valueAndGrad`, `vmap`, `jvp` and `jit` are JavaScript
//! functions over `NDArray`s; their arguments and results may be arrays or nested lists and
//! objects of arrays (pytrees), as in JAX. Everything is wasm32-only: natively this crate is
//! empty.

#[cfg(target_arch = "wasm32")]
mod array;
#[cfg(target_arch = "wasm32")]
mod errors;
#[cfg(target_arch = "wasm32")]
pub mod functions;
#[cfg(target_arch = "wasm32")]
pub mod optim;
#[cfg(target_arch = "wasm32")]
mod runtime;
#[cfg(target_arch = "wasm32")]
pub mod transforms;
#[cfg(target_arch = "wasm32")]
mod tree;

#[cfg(target_arch = "wasm32")]
pub use array::NDArray;
#[cfg(target_arch = "wasm32")]
pub use runtime::{conformance_plugin, download, init_backend, next_tick};
