//! The host side of the ABI: loading plugin libraries and a safe client over a loaded table.
//!
//! Both the core's plugin host and the conformance runner use this, so a third-party plugin
//! is loaded and tested exactly as ours are.

pub mod callbacks;
mod client;
mod collectives;
mod load;

pub use client::{download_timeout, Arg, Buffer, Event, Executable, Plugin};
pub use collectives::Communicator;
pub use load::{load_module, LoadError};
