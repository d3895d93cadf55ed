//! The plugin host: finding backends, loading them lazily, and the devices arrays live on.

mod cache;
mod device;
mod discovery;

pub(crate) use cache::BoundedCache;
pub use cache::{cache_capacity, DEFAULT_CACHE_SIZE};
pub use device::Device;
pub use discovery::{default_device, device, platforms, register_static, Registry};
