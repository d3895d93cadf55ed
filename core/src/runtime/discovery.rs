//! Discovery and selection of backend plugins.
//!
//! Where plugins are looked for, in order: each entry of `QUABLA_PLUGIN_PATH` (files, or
//! folders scanned for `libquabla_*.so` / `.dylib` / `quabla_*.dll`), then the `plugins`
//! folder beside the running executable, then statically registered backends. The current
//! directory is never searched implicitly. Nothing is loaded until a platform is asked for.
//! `QUABLA_PLATFORMS` (comma separated, e.g. `wgpu,cpu`) selects and orders platforms for
//! [`default_device`].

use super::Device;
use crate::error::{Error, Result};
use quabla_abi::abi::BackendModRef;
use quabla_abi::host::Plugin;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Clone)]
enum Source {
    File(PathBuf),
    Static(fn() -> BackendModRef),
}

/// Known plugins (found or registered) and the ones loaded so far.
pub struct Registry {
    sources: Mutex<Vec<(String, Source)>>,
    loaded: Mutex<HashMap<String, Arc<Device>>>,
    /// Serialises loading so two threads asking for one platform get one device.
    loading: Mutex<()>,
}

fn platform_of_file(p: &Path) -> Option<String> {
    let stem = p.file_name()?.to_str()?;
    let stem = stem.strip_prefix("lib").unwrap_or(stem);
    let name = stem.strip_prefix("quabla_")?;
    let name = [".so", ".dylib", ".dll"]
        .iter()
        .find_map(|ext| name.strip_suffix(ext))?;
    Some(name.to_string())
}

fn scan(path: &Path, out: &mut Vec<(String, Source)>, explicit: bool) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for e in entries {
            if let Some(name) = platform_of_file(&e) {
                out.push((name, Source::File(e)));
            }
        }
    } else if explicit {
        // A file named explicitly is a candidate even under another name; its platform is
        // read from the file name when it follows the convention.
        let name = platform_of_file(path).unwrap_or_else(|| path.display().to_string());
        out.push((name, Source::File(path.to_path_buf())));
    }
}

impl Registry {
    fn discover() -> Registry {
        let mut sources = Vec::new();
        if let Some(v) = std::env::var_os("QUABLA_PLUGIN_PATH") {
            for p in std::env::split_paths(&v) {
                if !p.as_os_str().is_empty() {
                    scan(&p, &mut sources, true);
                }
            }
        }
        if let Some(dir) = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(|d| d.join("plugins")))
        {
            scan(&dir, &mut sources, false);
        }
        #[cfg(feature = "static-cpu")]
        sources.push((
            "cpu".to_string(),
            Source::Static(quabla_cpu::backend_module),
        ));
        Registry {
            sources: Mutex::new(sources),
            loaded: Mutex::new(HashMap::new()),
            loading: Mutex::new(()),
        }
    }

    /// The process-wide registry.
    pub fn global() -> &'static Registry {
        static R: OnceLock<Registry> = OnceLock::new();
        R.get_or_init(Registry::discover)
    }

    /// Registers a statically linked backend under `platform` (after the discovered ones).
    pub fn register_static(&self, platform: &str, module: fn() -> BackendModRef) {
        self.sources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((platform.to_string(), Source::Static(module)));
    }

    /// Adds a plugin file or folder to search (as if it were on `QUABLA_PLUGIN_PATH`).
    pub fn add_search_path(&self, path: &Path) {
        let mut found = Vec::new();
        scan(path, &mut found, true);
        let mut s = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        for f in found.into_iter().rev() {
            s.insert(0, f);
        }
    }

    /// Adds a plugin file or folder searched after every other source (a package's own
    /// bundled plugins: `QUABLA_PLUGIN_PATH` and earlier paths still take precedence).
    pub fn add_fallback_search_path(&self, path: &Path) {
        let mut found = Vec::new();
        scan(path, &mut found, true);
        self.sources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(found);
    }

    /// Platform names known (found or registered), in search order, without loading any.
    pub fn platforms(&self) -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for (n, _) in self
            .sources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            if !v.contains(n) {
                v.push(n.clone());
            }
        }
        v
    }

    /// The device of `platform`, loading its plugin on first use. Tries each source of that
    /// name in order; the first that loads wins.
    pub fn device(&self, platform: &str) -> Result<Arc<Device>> {
        if let Some(d) = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(platform)
        {
            return Ok(d.clone());
        }
        let _loading = self.loading.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = self
            .loaded
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(platform)
        {
            return Ok(d.clone());
        }
        let sources: Vec<Source> = self
            .sources
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(n, _)| n == platform)
            .map(|(_, s)| s.clone())
            .collect();
        if sources.is_empty() {
            return Err(Error::NoBackend(format!(
                "no `{platform}` backend found (known: {}); put its plugin library on QUABLA_PLUGIN_PATH \
                 or in a `plugins` folder beside the executable",
                self.platforms().join(", ")
            )));
        }
        let mut last_err = None;
        for s in sources {
            let r = match s {
                Source::File(p) => Plugin::load(&p),
                Source::Static(m) => Plugin::from_module(m()),
            };
            match r {
                Ok(plugin) => {
                    let d = Arc::new(Device::new(plugin));
                    self.loaded
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(platform.to_string(), d.clone());
                    return Ok(d);
                }
                Err(e) => last_err = Some(e),
            }
        }
        Err(last_err
            .map(Error::from)
            .unwrap_or_else(|| Error::NoBackend(platform.into())))
    }

    /// The first platform of `QUABLA_PLATFORMS` that loads (an error if one named there fails
    /// to load), or else `cpu`, or else the first known platform that loads; broken plugins
    /// not asked for by name are skipped with a warning.
    pub fn default_device(&self) -> Result<Arc<Device>> {
        if let Ok(list) = std::env::var("QUABLA_PLATFORMS") {
            let names: Vec<&str> = list
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            if let Some(first) = names.first() {
                return self.device(first);
            }
        }
        let mut order = self.platforms();
        if let Some(i) = order.iter().position(|n| n == "cpu") {
            let cpu = order.remove(i);
            order.insert(0, cpu);
        }
        for name in &order {
            match self.device(name) {
                Ok(d) => return Ok(d),
                Err(e) => eprintln!("quabla: warning: skipping backend `{name}`: {e}"),
            }
        }
        Err(Error::NoBackend(
            "no backend plugin found: set QUABLA_PLUGIN_PATH to the folder holding libquabla_cpu.so \
             (built by `cargo build -p quabla-cpu`), or enable the `static-cpu` feature of `quabla`"
                .into(),
        ))
    }
}

/// The device of `platform` from the global registry.
pub fn device(platform: &str) -> Result<Arc<Device>> {
    Registry::global().device(platform)
}

/// The default device (see [`Registry::default_device`]).
pub fn default_device() -> Result<Arc<Device>> {
    static DEFAULT: OnceLock<Arc<Device>> = OnceLock::new();
    if let Some(d) = DEFAULT.get() {
        return Ok(d.clone());
    }
    let d = Registry::global().default_device()?;
    Ok(DEFAULT.get_or_init(|| d).clone())
}

/// Known platform names.
pub fn platforms() -> Vec<String> {
    Registry::global().platforms()
}

/// Registers a statically linked backend in the global registry.
pub fn register_static(platform: &str, module: fn() -> BackendModRef) {
    Registry::global().register_static(platform, module)
}

#[cfg(test)]
mod tests {
    use super::platform_of_file;
    use std::path::Path;

    #[test]
    fn platform_names_follow_the_file_convention() {
        assert_eq!(
            platform_of_file(Path::new("/x/libquabla_cpu.so")).as_deref(),
            Some("cpu")
        );
        assert_eq!(
            platform_of_file(Path::new("quabla_wgpu.dll")).as_deref(),
            Some("wgpu")
        );
        assert_eq!(
            platform_of_file(Path::new("libquabla_cuda.dylib")).as_deref(),
            Some("cuda")
        );
        assert_eq!(platform_of_file(Path::new("libother.so")), None);
        assert_eq!(platform_of_file(Path::new("libquabla_cpu.rlib")), None);
    }
}
