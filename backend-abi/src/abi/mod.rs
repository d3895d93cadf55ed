//! The stable plugin ABI: one root module (a table of `extern "C"` functions) per plugin.
//!
//! Modelled on PJRT's C API, expressed with abi_stable prefix types so fields are only ever
//! appended: a host accepts a plugin with the same [`ABI_MAJOR`] and a minor of at least
//! [`ABI_MINOR_MIN`]. Before abi_stable's own layout check, the host reads the plain C symbol
//! [`VERSION_SYMBOL`] so a plugin of another major is refused with both versions named, however
//! different its layout.
//!
//! Ownership contract: every handle (executable, buffer, event) is owned by the host from the
//! moment it is returned until it passes it to the matching `release_*`, or donates a buffer to
//! `execute` (the plugin then owns it and the handle is dead). `upload` copies the host bytes;
//! the host may free them when it returns. A downloaded event is consumed by `event_wait`.

mod collectives;
mod types;

pub use collectives::*;
pub use types::*;

use abi_stable::{
    declare_root_module_statics,
    library::RootModule,
    sabi_types::VersionStrings,
    std_types::{ROption, RResult, RSlice, RString, RVec},
    StableAbi,
};

/// ABI major version: a plugin of another major is refused.
pub const ABI_MAJOR: u32 = 1;
/// ABI minor version of this build: the count of appended, backwards-compatible additions.
pub const ABI_MINOR: u32 = 4;
/// The oldest minor this host accepts.
pub const ABI_MINOR_MIN: u32 = 0;
/// A plain `extern "C" fn() -> u64` every plugin exports: `(major << 32) | minor`.
pub const VERSION_SYMBOL: &str = "quabla_plugin_abi_version";
/// `compile`'s `format` for binary-encoded QIR (the only one so far).
pub const FORMAT_QIR_BINARY: u32 = 0;

/// The function table a backend plugin exports.
///
/// Fields are only ever appended after the last prefix field; an older plugin lacking a newer
/// field makes its accessor return `None` instead of failing to load.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = BackendModRef)))]
pub struct BackendMod {
    /// The ABI version the plugin was built against.
    pub abi_version: extern "C" fn() -> AbiVersion,
    /// Name, version, QIR range, devices, capabilities.
    pub info: extern "C" fn() -> RResult<BackendInfo, AbiError>,
    /// Compiles a program (`format`, `qir_version`, encoded bytes, options bytes) to an
    /// executable handle. Unsupported ops and dtypes fail here, naming them.
    pub compile: extern "C" fn(u32, u32, RSlice<'_, u8>, RSlice<'_, u8>) -> RResult<u64, AbiError>,
    /// Copies host bytes (`device`, `dtype` code, shape, bytes) into a new device buffer.
    pub upload: extern "C" fn(u32, u8, RSlice<'_, u64>, RSlice<'_, u8>) -> RResult<u64, AbiError>,
    /// The dtype and shape of a buffer.
    pub buffer_info: extern "C" fn(u64) -> RResult<BufferInfo, AbiError>,
    /// Runs an executable on argument buffers; `donate[i]` hands argument `i` to the plugin.
    pub execute:
        extern "C" fn(u64, RSlice<'_, u64>, RSlice<'_, bool>) -> RResult<RVec<u64>, AbiError>,
    /// Starts copying a buffer to the host; returns an event handle.
    pub download: extern "C" fn(u64) -> RResult<u64, AbiError>,
    /// Whether the event's bytes are available without blocking.
    pub event_is_ready: extern "C" fn(u64) -> RResult<bool, AbiError>,
    /// Calls `callback(user_data)` once the event is ready (at once if it already is).
    pub event_on_ready: extern "C" fn(u64, ReadyCallback, usize) -> RResult<(), AbiError>,
    /// Blocks until the event is ready, consumes it and returns the bytes.
    pub event_wait: extern "C" fn(u64) -> RResult<RVec<u8>, AbiError>,
    pub release_buffer: extern "C" fn(u64) -> RResult<(), AbiError>,
    pub release_executable: extern "C" fn(u64) -> RResult<(), AbiError>,
    #[sabi(last_prefix_field)]
    pub release_event: extern "C" fn(u64) -> RResult<(), AbiError>,
    /// ABI 1.1: the name of the accuracy profile the plugin's results meet (`exact`: the
    /// goldens' own tolerances; `wgsl`, `webgpu`: GPU builtins that are not correctly
    /// rounded, see the conformance crate's `Precision`). A 1.0 plugin lacks it, which a host
    /// reads as `exact`.
    pub accuracy: extern "C" fn() -> RString,
    /// ABI 1.2: blocks until the buffer's value has been computed, copying nothing (JAX's
    /// `block_until_ready`). A host reading an older plugin downloads the buffer instead and
    /// drops the bytes.
    pub buffer_ready: extern "C" fn(u64) -> RResult<(), AbiError>,
    /// ABI 1.3: the memory of a buffer ([`BufferExport`]), for another plugin or the host to
    /// read without a copy. `Unimplemented` when the plugin cannot expose it (the host then
    /// downloads).
    pub export_buffer: extern "C" fn(u64) -> RResult<BufferExport, AbiError>,
    /// ABI 1.3: a new zero-filled buffer (`device`, `dtype` code, shape) whose exported
    /// memory the host (or a collectives plugin) may write until the buffer is first used.
    pub allocate: extern "C" fn(u32, u8, RSlice<'_, u64>) -> RResult<u64, AbiError>,
    /// ABI 1.3: the collectives table, when the plugin has one (see [`CollectivesMod`]).
    pub collectives: extern "C" fn() -> ROption<CollectivesModRef>,
    /// ABI 1.4: gives the plugin the host's function for `host_callback` ops (see
    /// [`HostCallbackFn`]). The host calls it once, right after loading; a plugin that
    /// implements `host_callback` keeps it for its executables. Older plugins lack it and
    /// cannot list the op.
    pub set_host_callback: extern "C" fn(HostCallbackFn),
}

impl RootModule for BackendModRef {
    declare_root_module_statics! {BackendModRef}
    const BASE_NAME: &'static str = "quabla_backend";
    const NAME: &'static str = "quabla_backend";
    // Only the major goes here: abi_stable would otherwise demand plugin minor >= host minor,
    // which is stricter than our window (the host checks minors itself).
    const VERSION_STRINGS: VersionStrings = VersionStrings::new("1.0.0");
}

/// Whether a peer of ABI `major.minor` is accepted: same major, minor at least the minimum.
#[allow(clippy::absurd_extreme_comparisons)] // ABI_MINOR_MIN is 0 today; the rule must hold later too
pub fn accepts(major: u32, minor: u32) -> bool {
    major == ABI_MAJOR && minor >= ABI_MINOR_MIN
}

/// `(major << 32) | minor` of this build, as [`VERSION_SYMBOL`] returns it.
pub fn packed_abi_version() -> u64 {
    ((ABI_MAJOR as u64) << 32) | ABI_MINOR as u64
}
