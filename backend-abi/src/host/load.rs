//! Opening a plugin library: version check first, then abi_stable's layout check.

#[cfg(not(target_arch = "wasm32"))]
use crate::abi::{accepts, VERSION_SYMBOL};
use crate::abi::{BackendModRef, ABI_MAJOR, ABI_MINOR, ABI_MINOR_MIN};
use std::path::{Path, PathBuf};

/// Why a plugin library could not be loaded. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("plugin `{path}` does not exist; check QUABLA_PLUGIN_PATH")]
    NotFound { path: PathBuf },
    #[error("`{path}` is not a loadable library ({reason}); point QUABLA_PLUGIN_PATH at a Quabla plugin (.so/.dylib/.dll)")]
    NotALibrary { path: PathBuf, reason: String },
    #[error(
        "`{path}` is a library but not a Quabla plugin: it does not export `{symbol}`; if it is \
         a backend built with `quabla_abi::export_backend!`, build it with the crate's `export` \
         feature on (`[features] default = [\"export\"]`, or `--features export`)"
    )]
    NotAPlugin { path: PathBuf, symbol: &'static str },
    #[error(
        "plugin `{path}` was built for Quabla ABI {plugin_major}.{plugin_minor}, but this host speaks ABI \
         {host_major}.{host_minor} (accepting {host_major}.{min_minor} and newer minors); rebuild the plugin \
         against quabla-abi {host_major}.x or install a matching Quabla"
    )]
    VersionMismatch {
        path: PathBuf,
        plugin_major: u32,
        plugin_minor: u32,
        host_major: u32,
        host_minor: u32,
        min_minor: u32,
    },
    #[error("plugin `{path}` has an incompatible ABI layout (ABI {host_major}.{host_minor} expected):\n{details}")]
    Layout {
        path: PathBuf,
        host_major: u32,
        host_minor: u32,
        details: String,
    },
    #[error("plugin `{path}` failed to describe itself: {message}")]
    Info { path: PathBuf, message: String },
}

impl LoadError {
    pub(crate) fn version_mismatch(
        path: PathBuf,
        plugin_major: u32,
        plugin_minor: u32,
    ) -> LoadError {
        LoadError::VersionMismatch {
            path,
            plugin_major,
            plugin_minor,
            host_major: ABI_MAJOR,
            host_minor: ABI_MINOR,
            min_minor: ABI_MINOR_MIN,
        }
    }
}

/// Keeps only abi_stable's `Error:` lines (its full report dumps thousands of layout lines).
#[cfg(not(target_arch = "wasm32"))]
fn summarize_layout_error(full: &str) -> String {
    let lines: Vec<&str> = full
        .lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with("Error:") || t.contains("version")
        })
        .take(20)
        .collect();
    if lines.is_empty() {
        full.lines().take(10).collect::<Vec<_>>().join("\n")
    } else {
        lines.join("\n")
    }
}

/// Loading at run time: not on wasm32.
#[cfg(target_arch = "wasm32")]
pub fn load_module(path: &Path) -> Result<BackendModRef, LoadError> {
    Err(LoadError::NotALibrary {
        path: path.to_path_buf(),
        reason: "wasm32 cannot load libraries at run time; link the backend statically and \
                 register it (`quabla::runtime::register_static`)"
            .into(),
    })
}

/// Loads the root module of the plugin at `path`. The library stays loaded for the life of
/// the process (plugins are never unloaded).
#[cfg(not(target_arch = "wasm32"))]
pub fn load_module(path: &Path) -> Result<BackendModRef, LoadError> {
    let path_buf = path.to_path_buf();
    if !path.is_file() {
        return Err(LoadError::NotFound { path: path_buf });
    }
    // SAFETY: loading a library runs its initialisers; the user named this file as a plugin.
    let lib = unsafe { libloading::Library::new(path) }.map_err(|e| LoadError::NotALibrary {
        path: path_buf.clone(),
        reason: e.to_string(),
    })?;
    // SAFETY: the symbol's type is fixed by the ABI: `extern "C" fn() -> u64`.
    let packed = unsafe {
        let f: libloading::Symbol<extern "C" fn() -> u64> = lib
            .get(VERSION_SYMBOL.as_bytes())
            .map_err(|_| LoadError::NotAPlugin {
                path: path_buf.clone(),
                symbol: VERSION_SYMBOL,
            })?;
        f()
    };
    let (major, minor) = ((packed >> 32) as u32, packed as u32);
    if !accepts(major, minor) {
        return Err(LoadError::version_mismatch(path_buf, major, minor));
    }
    // Plugins are never unloaded: handles and function pointers must stay valid.
    std::mem::forget(lib);
    // Not `RootModule::load_from_file`: it caches one module per type, so a second plugin
    // would silently come back as the first.
    let layout_err = |e: abi_stable::library::LibraryError| LoadError::Layout {
        path: path_buf.clone(),
        host_major: ABI_MAJOR,
        host_minor: ABI_MINOR,
        details: summarize_layout_error(&e.to_string()),
    };
    let header = abi_stable::library::lib_header_from_path(path).map_err(layout_err)?;
    header
        .init_root_module::<BackendModRef>()
        .map_err(layout_err)
}
