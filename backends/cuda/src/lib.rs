//! `quabla-cuda`: the CUDA backend plugin. Device discovery never panics or aborts without a
//! driver (no devices, no capabilities, and a typed error from `compile`). Every QIR op
//! becomes CUDA C with QIR's exact semantics (`elementwise.rs`; `kernels/` for movement,
//! reductions with block folds in a fixed tree, cumulative ops, dynamic slices, dot_general,
//! gather, deterministic scatter-add and sort), elementwise runs fused into one kernel each
//! (`fusion.rs`, broadcasts read by index, nodes ordered by `schedule.rs`), programs planned
//! with host-decided `cond`/`while` (`plan.rs`; loops run ahead of their predicates in
//! `loops.rs`, small kernels-only `cond`s in loops speculated by `speculate.rs`), compiled
//! with NVRTC to one cubin per program for the device's SM (`nvrtc.rs`, cached on disk by
//! `cubin_cache.rs`), run on the first GPU's stream (`runtime.rs`), programs and loops of
//! kernels alone replayed as CUDA graphs (`graph.rs`, `in_place.rs`, `loop_graph.rs`),
//! matrix products on cuBLAS where it is found (`blas.rs`), the dense factorizations of
//! small matrices (Cholesky, LU, triangular solves, eigh, QR, SVD) as the plugin's own
//! kernels, a block per matrix (`kernels/factor.rs`), larger ones on cuSOLVER and cuBLAS's
//! `trsm` (`solver.rs`, `linalg.rs`; offered only where both libraries load), host callbacks
//! through the host (operands read back). CI compiles every conformance program's kernels
//! for sm_80 and sm_90 without a GPU (`tests/kernels_compile.rs`) and runs the suite on a
//! host emulation (`QUABLA_CUDA_EMULATE=1`, `emulate.rs`: the same CUDA C built by the
//! system's C++ compiler; its factorizations the plugin's own at every size); `gpu-check.sh`
//! runs it on a GPU.
//! Loops of light iterations run whole on the device, one kernel of one block emitted from
//! the plugin kit's shared loop IR (`device_loop.rs`). A value's memory is released once its last
//! reader is queued, a donated argument's too (`plan::Plan::release_after`), and a fused
//! kernel may compute an output into the memory of a read it holds alone (a donated
//! argument, a dying intermediate: `fusion::Kernel::reuses`). A download
//! returns once its copy is queued, its event a CUDA event (`download.rs`). The wheel is `bindings/cuda-plugin`.
//!
//! ```no_run
//! use quabla_abi::host::Plugin;
//! let plugin = Plugin::load("target/debug/libquabla_cuda.so".as_ref()).unwrap();
//! assert_eq!(plugin.name(), "cuda");
//! ```

pub mod blas;
pub mod cubin_cache;
pub mod device_loop;
pub mod download;
pub mod driver;
pub mod elementwise;
pub mod emulate;
pub mod fusion;
pub mod graph;
pub mod graph_buffers;
pub mod in_place;
pub mod kernels;
pub mod linalg;
pub mod loop_graph;
pub mod loops;
pub mod nvrtc;
pub mod one_block;
pub mod plan;
pub mod runtime;
pub mod schedule;
pub mod solver;
pub mod speculate;

use quabla_abi::abi::{AbiError, BufferExport, ErrorCode, DEVICE_KIND_CUDA};
use quabla_abi::plugin::{
    Arg, Backend, DeviceBuffer, DownloadEvent, Executable, PluginInfo, ReadyEvent,
};
use quabla_abi::qir::{LinalgKind, OpKind, Program, QIR_VERSION, QIR_VERSION_MIN};
use quabla_abi::{DType, HostView, TensorType};
use std::any::Any;
use std::sync::{Arc, OnceLock};

/// The capability allow-list: one arm per kind and no wildcard, so a primitive added to QIR
/// does not compile here until it is implemented or declined. Every op has a kernel or a
/// step (`plan.rs`); the dense factorizations need cuSOLVER (`solver`: whether it loads)
/// but where the plugin's own kernels take every size (`own_factors`: the host emulation,
/// `kernels/factor.rs`). The list applies where
/// the plugin has somewhere to run: a GPU, or the host emulation.
fn implements(kind: OpKind, solver: bool, own_factors: bool) -> bool {
    match kind {
        OpKind::Constant
        | OpKind::Unary(_)
        | OpKind::Binary(_)
        | OpKind::Compare
        | OpKind::Select
        | OpKind::Convert
        | OpKind::Bitcast
        | OpKind::Iota
        | OpKind::BroadcastInDim
        | OpKind::Reshape
        | OpKind::Transpose
        | OpKind::Slice
        | OpKind::Pad
        | OpKind::Concatenate
        | OpKind::Reverse
        | OpKind::Reduce
        | OpKind::Cumulative
        | OpKind::Sort
        | OpKind::DotGeneral
        | OpKind::Gather
        | OpKind::ScatterAdd
        | OpKind::DynamicSlice
        | OpKind::DynamicUpdateSlice
        | OpKind::Cond
        | OpKind::While => true,
        OpKind::Linalg(
            LinalgKind::Cholesky
            | LinalgKind::Lu
            | LinalgKind::TriangularSolve
            | LinalgKind::Eigh
            | LinalgKind::Qr
            | LinalgKind::Svd,
        ) => solver || own_factors,
        // Operands read back, the host's function called, its results uploaded.
        OpKind::HostCallback => true,
        OpKind::StopGradient
        | OpKind::CustomJvp
        | OpKind::CustomVjp
        | OpKind::CustomVjpLinear
        | OpKind::Checkpoint
        | OpKind::NamedAxis
        | OpKind::Scan
        | OpKind::BoundedWhile
        | OpKind::LinearSolve => false,
    }
}

fn supported_ops(solver: bool, own_factors: bool) -> Vec<String> {
    OpKind::backend_ops()
        .filter(|k| implements(*k, solver, own_factors))
        .map(|k| k.name().to_string())
        .collect()
}

/// The devices, found once.
fn gpus() -> &'static Result<Vec<driver::GpuInfo>, String> {
    static GPUS: OnceLock<Result<Vec<driver::GpuInfo>, String>> = OnceLock::new();
    GPUS.get_or_init(driver::devices)
}

/// The GPU programs run on (the first one), opened once; why not, when there is none.
fn gpu() -> Result<Arc<runtime::Gpu>, AbiError> {
    static GPU: OnceLock<Result<Arc<runtime::Gpu>, AbiError>> = OnceLock::new();
    GPU.get_or_init(|| match gpus() {
        Err(why) => Err(AbiError::new(ErrorCode::FailedPrecondition, why.clone())),
        Ok(g) => match g.first() {
            None => Err(AbiError::new(
                ErrorCode::FailedPrecondition,
                "the CUDA driver reports no GPU",
            )),
            Some(d) => nvrtc::load()
                .map_err(|e| AbiError::new(ErrorCode::FailedPrecondition, e))
                .and_then(|_| runtime::Gpu::open(d.compute_capability)),
        },
    })
    .clone()
}

/// A value in GPU memory.
struct GpuBuffer {
    ty: TensorType,
    slice: runtime::Value,
    gpu: Arc<runtime::Gpu>,
}

impl DeviceBuffer for GpuBuffer {
    fn ty(&self) -> &TensorType {
        &self.ty
    }
    /// Returns once the copy is queued; the event is a CUDA event after it (`download.rs`).
    fn download(&self) -> Result<Box<dyn DownloadEvent>, AbiError> {
        self.gpu.start_download(&self.slice, self.ty.size_bytes())
    }
    fn block_until_ready(&self) -> Result<(), AbiError> {
        self.gpu.synchronize()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    /// GPU 0's memory, for the NCCL plugin; ready when returned (the stream is drained).
    fn export(&self) -> Result<BufferExport, AbiError> {
        let shape: Vec<u64> = self.ty.shape.iter().map(|&d| d as u64).collect();
        Ok(BufferExport {
            device_kind: DEVICE_KIND_CUDA,
            ordinal: 0,
            address: self.gpu.address(&self.slice)? as usize,
            byte_size: self.ty.size_bytes() as u64,
            dtype: self.ty.dtype as u8,
            shape: shape.into(),
            ready_event: 0,
        })
    }
}

/// The values of an execution's arguments, each a buffer of this plugin's kind `B`.
fn inputs<B: 'static, V>(args: &[Arg], value: impl Fn(&B) -> V) -> Result<Vec<V>, AbiError> {
    args.iter()
        .map(|a| {
            a.buffer
                .as_any()
                .downcast_ref::<B>()
                .map(&value)
                .ok_or_else(|| AbiError::invalid("a buffer of another backend"))
        })
        .collect()
}

struct GpuExecutable(runtime::Compiled, Arc<runtime::Gpu>);

impl Executable for GpuExecutable {
    /// Donated arguments are dropped here, before the run: the run then holds their
    /// memory alone and releases it once their last reader is queued
    /// (`plan::Plan::release_after`), back to the stream-ordered pool that the run's later
    /// outputs are allocated from.
    fn execute(&self, args: Vec<Arg>) -> Result<Vec<Arc<dyn DeviceBuffer>>, AbiError> {
        let values = inputs(&args, |b: &GpuBuffer| b.slice.clone())?;
        drop(args);
        let outs = self.0.run(values)?;
        Ok(outs
            .into_iter()
            .zip(self.0.output_types())
            .map(|(slice, ty)| {
                Arc::new(GpuBuffer {
                    ty,
                    slice,
                    gpu: self.1.clone(),
                }) as Arc<dyn DeviceBuffer>
            })
            .collect())
    }
}

/// The CUDA backend.
#[derive(Default)]
pub struct CudaBackend;

/// A value of the host emulation.
struct EmulatedBuffer {
    ty: TensorType,
    storage: Arc<emulate::Storage>,
}

impl DeviceBuffer for EmulatedBuffer {
    fn ty(&self) -> &TensorType {
        &self.ty
    }
    fn download(&self) -> Result<Box<dyn DownloadEvent>, AbiError> {
        Ok(Box::new(ReadyEvent(self.storage.bytes().to_vec())))
    }
    fn block_until_ready(&self) -> Result<(), AbiError> {
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

struct EmulatedExecutable(emulate::Emulated);

impl Executable for EmulatedExecutable {
    /// As on a GPU: donated arguments are freed once their last reader has run.
    fn execute(&self, args: Vec<Arg>) -> Result<Vec<Arc<dyn DeviceBuffer>>, AbiError> {
        let values = inputs(&args, |b: &EmulatedBuffer| b.storage.clone())?;
        drop(args);
        let outs = self.0.run(values)?;
        Ok(outs
            .into_iter()
            .zip(self.0.output_types())
            .map(|(storage, ty)| Arc::new(EmulatedBuffer { ty, storage }) as Arc<dyn DeviceBuffer>)
            .collect())
    }
}

impl Backend for CudaBackend {
    fn info(&self) -> PluginInfo {
        if emulate::requested() {
            return PluginInfo {
                region_kinds: vec!["cond".into(), "while".into()],
                devices: vec![(
                    "cpu".into(),
                    "CUDA C kernels emulated on the host (QUABLA_CUDA_EMULATE=1)".into(),
                    0,
                )],
                ops: supported_ops(false, true),
                synchronous_readback: true,
                // The host's C library, not CUDA's libdevice: within these bounds too.
                ..self.gpu_info()
            };
        }
        self.gpu_info()
    }

    fn compile(&self, program: Program) -> Result<Arc<dyn Executable>, AbiError> {
        if emulate::requested() {
            return Ok(Arc::new(EmulatedExecutable(emulate::Emulated::new(
                &program,
            )?)));
        }
        let gpu = gpu()?;
        Ok(Arc::new(GpuExecutable(
            runtime::Compiled::new(&gpu, &program)?,
            gpu,
        )))
    }

    fn upload(&self, _device: u32, array: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        if emulate::requested() {
            return Ok(Arc::new(EmulatedBuffer {
                ty: array.ty.clone(),
                storage: Arc::new(emulate::Storage::from_bytes(array.bytes)),
            }));
        }
        let gpu = gpu()?;
        Ok(Arc::new(GpuBuffer {
            ty: array.ty.clone(),
            slice: Arc::new(gpu.upload(array.bytes)?),
            gpu,
        }))
    }

    /// A zero-filled GPU buffer, a collective's destination (the emulation declines: the
    /// host then uploads the result).
    fn allocate(&self, _device: u32, ty: TensorType) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        if emulate::requested() {
            return Err(AbiError::unimplemented(
                "the host emulation does not allocate",
            ));
        }
        let gpu = gpu()?;
        Ok(Arc::new(GpuBuffer {
            slice: Arc::new(gpu.zeros(ty.size_bytes())?),
            ty,
            gpu,
        }))
    }
}

impl CudaBackend {
    fn gpu_info(&self) -> PluginInfo {
        // Programs run on the first GPU (more are not used yet).
        let devices: Vec<(String, String, u64)> = match gpus() {
            Ok(g) => g
                .iter()
                .take(1)
                .map(|d| {
                    let (major, minor) = d.compute_capability;
                    (
                        "gpu".to_string(),
                        format!("{} (sm_{major}{minor})", d.name),
                        d.memory_bytes,
                    )
                })
                .collect(),
            Err(_) => vec![],
        };
        // Without a device there is nothing to offer.
        let ops = if devices.is_empty() {
            vec![]
        } else {
            supported_ops(solver::available(), false)
        };
        PluginInfo {
            name: "cuda".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            qir_min: QIR_VERSION_MIN,
            qir_max: QIR_VERSION,
            devices,
            ops,
            dtypes: DType::ALL.to_vec(),
            region_kinds: vec!["cond".into(), "while".into()],
            synchronous_readback: false,
            extensions: vec![],
            max_buffer_bytes: 0,
            accuracy: "wgsl".into(),
        }
    }
}

quabla_abi::export_backend!(CudaBackend);
