//! The wgpu device a plugin instance runs on, its limits, and the pipeline cache.

use quabla_abi::abi::AbiError;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Threads per workgroup of every one-thread-per-element kernel.
pub const WORKGROUP: u32 = 256;

/// The most workgroups a dispatch may have along one dimension (WebGPU's default limit).
const MAX_GROUPS_PER_DIM: u32 = 65535;

/// An adapter's device and queue, shared by every buffer and executable of the plugin.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// The adapter's name and backend, for `PluginInfo` and messages.
    pub description: String,
    /// How many storage buffers one kernel may bind.
    pub max_bindings: u32,
    /// The largest buffer a kernel may bind, in bytes.
    pub max_buffer_bytes: u64,
    pipelines: Mutex<HashMap<String, Arc<wgpu::ComputePipeline>>>,
}

impl Gpu {
    /// Finds an adapter (`WGPU_BACKEND` / `WGPU_ADAPTER_NAME` choose one, as in wgpu's own
    /// tools) and opens a device with the adapter's own limits, blocking until it is open.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn open() -> Result<Gpu, String> {
        pollster::block_on(Self::open_async())
    }

    /// [`Gpu::open`] as a future: the only way in the browser, where WebGPU's adapter and
    /// device requests are promises that resolve on the event loop.
    pub async fn open_async() -> Result<Gpu, String> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = instance
            .request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::HighPerformance,
                force_fallback_adapter: false,
                compatible_surface: None,
                ..Default::default()
            })
            .await
            .map_err(|e| {
                if cfg!(target_arch = "wasm32") {
                    format!(
                        "no WebGPU adapter ({e}); this browser has no WebGPU (Chromium: \
                         `--enable-unsafe-webgpu` on Linux), use the CPU backend"
                    )
                } else {
                    format!(
                        "no GPU adapter found ({e}); install a Vulkan driver (on Debian: \
                         `apt-get install mesa-vulkan-drivers libvulkan1` gives the lavapipe \
                         CPU driver) or use the CPU backend"
                    )
                }
            })?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("quabla-wgpu"),
                required_features: wgpu::Features::empty(),
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| format!("the GPU adapter `{}` refused a device: {e}", info.name))?;
        let name = if info.name.is_empty() {
            "WebGPU adapter"
        } else {
            info.name.as_str()
        };
        Ok(Gpu {
            device,
            queue,
            description: format!("{name} ({:?})", info.backend),
            max_bindings: limits.max_storage_buffers_per_shader_stage,
            max_buffer_bytes: limits
                .max_buffer_size
                .min(limits.max_storage_buffer_binding_size),
            pipelines: Mutex::new(HashMap::new()),
        })
    }

    /// The compute pipeline of a WGSL module (entry point `main`), compiled once per source.
    pub fn pipeline(&self, wgsl: &str) -> Result<Arc<wgpu::ComputePipeline>, AbiError> {
        let mut cache = self
            .pipelines
            .lock()
            .map_err(|_| AbiError::internal("the pipeline cache lock is poisoned"))?;
        if let Some(p) = cache.get(wgsl) {
            return Ok(p.clone());
        }
        // Generated code that naga rejects is a bug of this plugin: report it with the source
        // instead of letting wgpu's default handler panic.
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: None,
                source: wgpu::ShaderSource::Wgsl(wgsl.into()),
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: None,
                layout: None,
                module: &module,
                entry_point: Some("main"),
                compilation_options: Default::default(),
                cache: None,
            });
        if let Some(err) = pop_now(scope) {
            // wgpu's Display is a bare "Validation Error"; naga's report is its source.
            let why = std::error::Error::source(&err)
                .map(|e| e.to_string())
                .unwrap_or_else(|| err.to_string());
            return Err(AbiError::internal(format!(
                "quabla-wgpu generated a kernel the device rejects (a bug; please report it): \
                 {why}\n{wgsl}"
            )));
        }
        let p = Arc::new(pipeline);
        cache.insert(wgsl.to_string(), p.clone());
        Ok(p)
    }

    /// A storage buffer for `elements` 4-byte elements (at least one, as bindings must not be
    /// empty).
    pub fn storage(&self, elements: usize) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: (elements.max(1) * 4) as u64,
            usage: wgpu::BufferUsages::STORAGE
                | wgpu::BufferUsages::COPY_SRC
                | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Workgroup counts covering `n` items, spread over x and y when x alone would exceed
    /// the per-dimension limit; kernels recover the item as `gid.x + gid.y * nwg.x * size`.
    pub fn groups(n: usize, per_group: u32) -> (u32, u32) {
        let total = n.div_ceil(per_group as usize).max(1) as u64;
        if total <= MAX_GROUPS_PER_DIM as u64 {
            (total as u32, 1)
        } else {
            let y = total.div_ceil(MAX_GROUPS_PER_DIM as u64);
            (MAX_GROUPS_PER_DIM, y as u32)
        }
    }
}

/// The error a scope caught, waiting for it natively. In the browser the answer arrives on the
/// event loop, after this synchronous call has returned: it goes to the console there (the
/// kernels are the same WGSL the native build validates with naga in the tests).
#[cfg(not(target_arch = "wasm32"))]
fn pop_now(scope: wgpu::ErrorScopeGuard) -> Option<wgpu::Error> {
    pollster::block_on(scope.pop())
}

#[cfg(target_arch = "wasm32")]
fn pop_now(scope: wgpu::ErrorScopeGuard) -> Option<wgpu::Error> {
    let pending = scope.pop();
    wasm_bindgen_futures::spawn_local(async move {
        if let Some(err) = pending.await {
            web_sys::console::error_1(
                &format!("quabla-wgpu: the browser rejected a generated kernel (a bug; please report it): {err}").into(),
            );
        }
    });
    None
}
