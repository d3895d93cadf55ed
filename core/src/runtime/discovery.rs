//! Discovery and selection of backend plugins.
//!
//! Where plugins are looked for, in order: each entry of `QUABLA_PLUGIN_PATH` (files, or
//! folders scanned for `libquabla_*.so` / `.dylib` / `quabla_*.dll`), then the `plugins`
//! folder beside the running executable, then statically registered backends. The current
//! directory is never searched implicitly. Nothing is loaded until a platform is asked for.
//! A platform is the name a plugin gives itself (`BackendInfo.name`); file names only locate
//! plugins: `libquabla_wgpu.so` is tried first when `wgpu` is asked for, and a name no file
//! suggests is looked for by loading the other candidates (files that do not follow the
//! naming convention first). `QUABLA_PLATFORMS` (comma separated, e.g. `wgpu,cpu`) selects and orders platforms for
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

impl Source {
    /// Identifies the source, so that one is loaded at most once.
    fn key(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Static(m) => format!("static {:p}", *m as *const ()),
        }
    }

    fn load(&self) -> std::result::Result<Plugin, quabla_abi::host::LoadError> {
        match self {
            Source::File(p) => Plugin::load(p),
            Source::Static(m) => Plugin::from_module(m()),
        }
    }
}

/// Known plugins (found or registered) and the ones loaded so far.
pub struct Registry {
    /// Each source with the platform it is expected to be (from its file name, or as
    /// registered); its real name is known once loaded.
    sources: Mutex<Vec<(String, Source)>>,
    /// Devices by the platform name their plugin reports.
    loaded: Mutex<HashMap<String, Arc<Device>>>,
    /// Sources already loaded (by [`Source::key`]) and the platform each turned out to be.
    resolved: Mutex<HashMap<String, String>>,
    /// Serialises loading so two threads asking for one platform get one device.
    loading: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Every critical section is one insert or one read, so a poisoned lock is still consistent.
    m.lock().unwrap_or_else(|p| p.into_inner())
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
            resolved: Mutex::new(HashMap::new()),
            loading: Mutex::new(()),
        }
    }

    /// The process-wide registry.
    ///
    /// ```no_run
    /// # use quabla::runtime::Registry;
    /// println!("{:?}", Registry::global().platforms());
    /// ```
    pub fn global() -> &'static Registry {
        static R: OnceLock<Registry> = OnceLock::new();
        R.get_or_init(Registry::discover)
    }

    /// Registers a statically linked backend under `platform` (after the discovered ones).
    ///
    /// ```no_run
    /// # use quabla::runtime::Registry;
    /// # fn module() -> quabla_abi::abi::BackendModRef { unimplemented!() }
    /// Registry::global().register_static("mybackend", module);
    /// ```
    pub fn register_static(&self, platform: &str, module: fn() -> BackendModRef) {
        lock(&self.sources).push((platform.to_string(), Source::Static(module)));
    }

    /// Adds a plugin file or folder to search (as if it were on `QUABLA_PLUGIN_PATH`).
    ///
    /// ```no_run
    /// # use quabla::runtime::Registry;
    /// Registry::global().add_search_path(std::path::Path::new("/opt/quabla/plugins"));
    /// ```
    pub fn add_search_path(&self, path: &Path) {
        let mut found = Vec::new();
        scan(path, &mut found, true);
        let mut s = lock(&self.sources);
        for f in found.into_iter().rev() {
            s.insert(0, f);
        }
    }

    /// Adds a plugin file or folder searched after every other source (a package's own
    /// bundled plugins: `QUABLA_PLUGIN_PATH` and earlier paths still take precedence).
    ///
    /// ```no_run
    /// # use quabla::runtime::Registry;
    /// Registry::global().add_fallback_search_path(std::path::Path::new("/usr/lib/quabla"));
    /// ```
    pub fn add_fallback_search_path(&self, path: &Path) {
        let mut found = Vec::new();
        scan(path, &mut found, true);
        lock(&self.sources).extend(found);
    }

    /// Platform names known (found or registered), in search order, without loading any: a
    /// loaded plugin's own name, else the name its file suggests.
    ///
    /// ```no_run
    /// # use quabla::runtime::Registry;
    /// for p in Registry::global().platforms() {
    ///     println!("{p}");
    /// }
    /// ```
    pub fn platforms(&self) -> Vec<String> {
        let resolved = lock(&self.resolved).clone();
        let mut v: Vec<String> = Vec::new();
        for (hint, source) in lock(&self.sources).iter() {
            let n = resolved.get(&source.key()).unwrap_or(hint);
            if !v.contains(n) {
                v.push(n.clone());
            }
        }
        v
    }

    /// The device of `platform`, loading its plugin on first use. Tries each source whose
    /// file name suggests that platform, in order; when none does, loads the others until
    /// one reports that name (see the module docs).
    ///
    /// ```no_run
    /// # use quabla::runtime::Registry;
    /// let gpu = Registry::global().device("wgpu")?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn device(&self, platform: &str) -> Result<Arc<Device>> {
        if let Some(d) = lock(&self.loaded).get(platform) {
            return Ok(d.clone());
        }
        let _loading = lock(&self.loading);
        if let Some(d) = lock(&self.loaded).get(platform) {
            return Ok(d.clone());
        }
        let sources = lock(&self.sources).clone();
        let (named, others): (Vec<_>, Vec<_>) =
            sources.into_iter().partition(|(n, _)| n == platform);
        let search_others = named.is_empty();
        let candidates = if search_others {
            // Files outside the naming convention carry their path as the name: first.
            let (unnamed, rest): (Vec<_>, Vec<_>) = others
                .into_iter()
                .partition(|(_, s)| matches!(s, Source::File(p) if platform_of_file(p).is_none()));
            unnamed.into_iter().chain(rest).collect()
        } else {
            named
        };
        let mut last_err = None;
        let mut turned_out = Vec::new();
        for (_, source) in candidates {
            let key = source.key();
            if let Some(real) = lock(&self.resolved).get(&key) {
                turned_out.push(format!("{key} is `{real}`"));
                continue;
            }
            match source.load() {
                Ok(plugin) => {
                    let real = plugin.name().to_string();
                    lock(&self.resolved).insert(key.clone(), real.clone());
                    let d = lock(&self.loaded)
                        .entry(real.clone())
                        .or_insert_with(|| Arc::new(Device::new(plugin)))
                        .clone();
                    if real == platform {
                        return Ok(d);
                    }
                    turned_out.push(format!("{key} is `{real}`"));
                }
                Err(e) if !search_others => last_err = Some(e),
                Err(_) => {}
            }
        }
        if let Some(e) = last_err {
            return Err(e.into());
        }
        let seen = if turned_out.is_empty() {
            String::new()
        } else {
            format!(" ({})", turned_out.join("; "))
        };
        Err(Error::NoBackend(format!(
            "no `{platform}` backend found (known: {}){seen}; put its plugin library on \
             QUABLA_PLUGIN_PATH or in a `plugins` folder beside the executable",
            self.platforms().join(", ")
        )))
    }

    /// The first platform of `QUABLA_PLATFORMS` that loads (an error if one named there fails
    /// to load), or else `cpu`, or else the first known platform that loads; broken plugins
    /// not asked for by name are skipped with a warning.
    ///
    /// ```no_run
    /// # use quabla::runtime::Registry;
    /// let d = Registry::global().default_device()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
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
                // A plugin without devices (a collectives plugin) computes nothing.
                Ok(d) if d.plugin().info().devices.is_empty() => {}
                Ok(d) => return Ok(d),
                Err(e) => eprintln!("quabla: warning: skipping backend `{name}`: {e}"),
            }
        }
        Err(Error::NoBackend(
            "no backend plugin found. From your own crate, the simplest fix is the CPU backend \
             linked in: `quabla = { ..., features = [\"static-cpu\"] }` in Cargo.toml. Or \
             load a plugin at run time: build it in Quabla's workspace (`cargo build \
             --release -p quabla-cpu`) and set QUABLA_PLUGIN_PATH to the folder holding \
             libquabla_cpu.so, or copy it into a `plugins` folder beside your executable"
                .into(),
        ))
    }
}

/// The device of `platform` from the global registry.
///
/// ```no_run
/// let cpu = quabla::runtime::device("cpu")?;
/// let x = quabla::Array::from_slice_on(&cpu, &[1.0f32], &[1])?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn device(platform: &str) -> Result<Arc<Device>> {
    Registry::global().device(platform)
}

/// The default device: this thread's innermost [`default_device_scope`], else the one
/// [`set_default_device`] set, else discovery's choice ([`Registry::default_device`]).
///
/// [`default_device_scope`]: super::default_device_scope
/// [`set_default_device`]: super::set_default_device
///
/// ```no_run
/// println!("running on {}", quabla::runtime::default_device()?.platform());
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn default_device() -> Result<Arc<Device>> {
    if let Some(d) = super::default_scope::current() {
        return Ok(d);
    }
    static DEFAULT: OnceLock<Arc<Device>> = OnceLock::new();
    if let Some(d) = DEFAULT.get() {
        return Ok(d.clone());
    }
    let d = Registry::global().default_device()?;
    Ok(DEFAULT.get_or_init(|| d).clone())
}

/// Known platform names.
///
/// ```no_run
/// println!("{:?}", quabla::runtime::platforms()); // e.g. ["cpu", "wgpu"]
/// ```
pub fn platforms() -> Vec<String> {
    Registry::global().platforms()
}

/// Registers a statically linked backend in the global registry.
///
/// ```no_run
/// // With the `static-cpu` feature the CPU backend is linked in; registering it by hand:
/// # fn cpu_module() -> quabla_abi::abi::BackendModRef { unimplemented!() }
/// quabla::runtime::register_static("cpu", cpu_module);
/// ```
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
