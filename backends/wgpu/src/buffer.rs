//! Device buffers and their asynchronous readback.
//!
//! Every element occupies 4 bytes on the device (WGSL has no 1-byte type): bool is stored as
//! a `u32` 0/1 and converted at upload and download.

use crate::context::Gpu;
use quabla_abi::abi::AbiError;
use quabla_abi::plugin::{DeviceBuffer, DownloadEvent, ReadyEvent};
use quabla_abi::{DType, HostView, TensorType};
use std::any::Any;
use std::sync::{Arc, Mutex};

/// An array in device memory. Immutable once written, so values may share one buffer
/// (a reshape is the same buffer with another type).
pub struct GpuBuffer {
    pub ty: TensorType,
    pub buffer: wgpu::Buffer,
    pub gpu: Arc<Gpu>,
    /// In the browser, the bytes an uploaded buffer was made from: reading it back needs no
    /// wait, so an array made in JS can still be captured as a constant while tracing
    /// (which reads it synchronously). Natively reads can wait, and memory is not doubled.
    host: Option<Arc<Vec<u8>>>,
}

impl GpuBuffer {
    /// Copies a host array to the device.
    pub fn upload(gpu: &Arc<Gpu>, array: &HostView) -> GpuBuffer {
        let n = array.ty.num_elements();
        let buffer = gpu.storage(n);
        let bytes: Vec<u8> = if array.ty.dtype == DType::Bool {
            array
                .bytes
                .iter()
                .flat_map(|b| u32::from(*b != 0).to_le_bytes())
                .collect()
        } else {
            array.bytes.to_vec()
        };
        if !bytes.is_empty() {
            gpu.queue.write_buffer(&buffer, 0, &bytes);
        }
        GpuBuffer {
            ty: array.ty.clone(),
            buffer,
            gpu: gpu.clone(),
            host: cfg!(target_arch = "wasm32").then(|| Arc::new(array.bytes.to_vec())),
        }
    }

    /// A buffer the plugin wrote on the device.
    pub fn computed(ty: TensorType, buffer: wgpu::Buffer, gpu: Arc<Gpu>) -> GpuBuffer {
        GpuBuffer {
            ty,
            buffer,
            gpu,
            host: None,
        }
    }

    /// The same memory seen with another type of the same element count.
    pub fn alias(&self, ty: TensorType) -> GpuBuffer {
        GpuBuffer {
            ty,
            buffer: self.buffer.clone(),
            gpu: self.gpu.clone(),
            host: self.host.clone(),
        }
    }
}

impl DeviceBuffer for GpuBuffer {
    fn ty(&self) -> &TensorType {
        &self.ty
    }

    fn download(&self) -> Result<Box<dyn DownloadEvent>, AbiError> {
        if let Some(bytes) = &self.host {
            return Ok(Box::new(ReadyEvent(bytes.to_vec())));
        }
        Ok(Box::new(Readback::start(self)))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

type Waiter = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct ReadbackState {
    result: Option<Result<(), String>>,
    waiters: Vec<Waiter>,
}

/// A copy to a mappable staging buffer, mapped asynchronously: ready when wgpu's map
/// callback has run (natively, during a `poll` of the device).
pub struct Readback {
    staging: wgpu::Buffer,
    ty: TensorType,
    gpu: Arc<Gpu>,
    state: Arc<Mutex<ReadbackState>>,
}

impl Readback {
    fn start(src: &GpuBuffer) -> Readback {
        let gpu = src.gpu.clone();
        let size = src.buffer.size();
        let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut enc = gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        enc.copy_buffer_to_buffer(&src.buffer, 0, &staging, 0, size);
        gpu.queue.submit([enc.finish()]);
        let state = Arc::new(Mutex::new(ReadbackState::default()));
        let s = state.clone();
        staging.map_async(wgpu::MapMode::Read, .., move |r| {
            let waiters = match s.lock() {
                Ok(mut st) => {
                    st.result = Some(r.map_err(|e| e.to_string()));
                    std::mem::take(&mut st.waiters)
                }
                Err(_) => Vec::new(),
            };
            for w in waiters {
                w();
            }
        });
        Readback {
            staging,
            ty: src.ty.clone(),
            gpu,
            state,
        }
    }

    fn done(&self) -> bool {
        self.state
            .lock()
            .map(|s| s.result.is_some())
            .unwrap_or(true)
    }

    fn bytes(&self) -> Result<Vec<u8>, AbiError> {
        let n = self.ty.num_elements();
        let view = self
            .staging
            .get_mapped_range(..)
            .map_err(|e| AbiError::internal(format!("reading back a buffer: {e}")))?;
        let raw = &view[..n * 4];
        let out = if self.ty.dtype == DType::Bool {
            raw.chunks_exact(4).map(|c| u8::from(c[0] != 0)).collect()
        } else {
            raw.to_vec()
        };
        drop(view);
        self.staging.unmap();
        Ok(out)
    }
}

impl DownloadEvent for Readback {
    fn is_ready(&self) -> bool {
        if !self.done() {
            let _ = self.gpu.device.poll(wgpu::PollType::Poll);
        }
        self.done()
    }

    fn wait(self: Box<Self>) -> Result<Vec<u8>, AbiError> {
        #[cfg(not(target_arch = "wasm32"))]
        while !self.done() {
            self.gpu
                .device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| AbiError::internal(format!("waiting for the GPU: {e}")))?;
        }
        // The browser maps the buffer on its event loop, which cannot run while this call
        // blocks: waiting would never end.
        #[cfg(target_arch = "wasm32")]
        if !self.done() {
            return Err(AbiError::new(
                quabla_abi::abi::ErrorCode::FailedPrecondition,
                "a WebGPU buffer cannot be read synchronously in the browser: read arrays \
                 with `await x.data()`, and pass arrays to jitted functions as arguments \
                 instead of capturing them",
            ));
        }
        let result = self
            .state
            .lock()
            .map_err(|_| AbiError::internal("a readback's lock is poisoned"))?
            .result
            .clone();
        match result {
            Some(Ok(())) => self.bytes(),
            Some(Err(e)) => Err(AbiError::internal(format!("mapping a buffer failed: {e}"))),
            None => Err(AbiError::internal("a readback finished without a result")),
        }
    }

    fn on_ready(&mut self, f: Box<dyn FnOnce() + Send>) {
        let run_now = match self.state.lock() {
            Ok(mut st) if st.result.is_none() => {
                st.waiters.push(f);
                None
            }
            _ => Some(f),
        };
        match run_now {
            Some(f) => f(),
            // In the browser the map callback runs on the event loop by itself.
            #[cfg(target_arch = "wasm32")]
            None => {}
            // Natively nothing polls on its own: a helper thread drives the device until
            // the map callback (which runs the waiters) has fired.
            #[cfg(not(target_arch = "wasm32"))]
            None => {
                let gpu = self.gpu.clone();
                let state = self.state.clone();
                std::thread::spawn(move || {
                    while state.lock().map(|s| s.result.is_none()).unwrap_or(false) {
                        if gpu
                            .device
                            .poll(wgpu::PollType::wait_indefinitely())
                            .is_err()
                        {
                            break;
                        }
                    }
                });
            }
        }
    }
}
