//! The plugin host: finding backends, loading them lazily, and the devices arrays live on.

mod device;
mod discovery;

pub use device::Device;
pub use discovery::{default_device, device, platforms, register_static, Registry};
