//! `quabla-abi`: the stable plugin ABI of Quabla and its program format, QIR.
//!
//! - [`qir`]: programs, the primitive set, validation, binary and text encodings.
//! - [`abi`]: the `extern "C"` table a plugin exports and the types that cross it.
//! - [`loop_ir`]: the backend-neutral level compiled tiers emit machine code from.
//! - [`plugin`]: the kit a backend author implements ([`plugin::Backend`]) and
//!   [`export_backend!`].
//! - [`host`]: loading plugins and a safe client, for the core and the conformance runner.
//!
//! Backends depend on this crate only, never on the core.

pub mod abi;
mod dtype;
pub mod host;
mod host_array;
pub mod loop_ir;
pub mod plugin;
pub mod qir;
pub mod testing;

pub use dtype::{row_major_strides, DType, SizeError, TensorType, MAX_ELEMENTS};
pub use host_array::{Element, HostArray, HostView};

#[doc(hidden)]
pub use abi_stable;
