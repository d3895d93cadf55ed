//! The plugin host: finding backends, loading them lazily, and the devices arrays live on.
//!
//! # Where backends come from
//! Plugins are looked for, in order:
//! 1. each entry of `QUABLA_PLUGIN_PATH` (`:`-separated; files, or folders scanned for
//!    `libquabla_*.so` / `.dylib` / `quabla_*.dll`);
//! 2. the `plugins` folder beside the running executable;
//! 3. backends linked in and registered statically (the `static-cpu` feature of `quabla`
//!    registers the CPU backend; [`register_static`] registers others).
//!
//! The current directory is never searched. Nothing is loaded until a platform is asked
//! for. A platform is the name a plugin gives itself (`cpu`, `wgpu`, `cuda`, `mlx`);
//! `QUABLA_PLATFORMS` (comma separated, e.g. `wgpu,cpu`) selects and orders the platforms
//! [`default_device`] chooses from; [`device`] asks for one by name;
//! [`set_default_device`] and [`default_device_scope`] override the choice.
//!
//! ```no_run
//! let d = quabla::runtime::default_device().unwrap();
//! println!("arrays go to {} ({:?})", d.platform(), quabla::runtime::platforms());
//! ```

mod cache;
mod default_scope;
mod device;
mod discovery;

pub(crate) use cache::BoundedCache;
pub use cache::{cache_capacity, DEFAULT_CACHE_SIZE};
pub use default_scope::{default_device_scope, set_default_device, DefaultDeviceScope};
pub use device::Device;
pub use discovery::{default_device, device, platforms, register_static, Registry};
