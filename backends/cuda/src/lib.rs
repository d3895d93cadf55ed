//! `quabla-cuda`: the CUDA backend plugin, first part. What exists: device discovery that
//! never panics or aborts without a driver (an empty device list and a typed error from
//! `compile`), and the kernel compiler: every QIR op but the dense factorizations as CUDA C
//! with QIR's exact semantics (`elementwise.rs`; `kernels.rs` for movement, reductions,
//! cumulative ops, dynamic slices, dot_general, gather, deterministic scatter-add and sort),
//! elementwise runs fused into one kernel each (`fusion.rs`), programs planned with
//! host-decided `cond`/`while` (`plan.rs`), compiled with NVRTC to cubins for a given SM
//! (`nvrtc.rs`), which CI checks for every conformance program on sm_80 and sm_90 without a
//! GPU (`tests/kernels_compile.rs`); and a host emulation (`QUABLA_CUDA_EMULATE=1`,
//! `emulate.rs`) that compiles the same CUDA C with the system's C++ compiler and runs it,
//! so the conformance suite checks the kernels' values in CI. Not built yet: the GPU
//! runtime (memory, streams, launches, events), cuBLAS/cuSOLVER, parallel reductions and
//! sorts, CUDA graphs, the cubin disk cache and the wheel; so without emulation the
//! capability list is empty, and a machine with a GPU gets an `Unimplemented` error naming
//! what is missing, not a wrong result.
//!
//! ```no_run
//! use quabla_abi::host::Plugin;
//! let plugin = Plugin::load("target/debug/libquabla_cuda.so".as_ref()).unwrap();
//! assert_eq!(plugin.name(), "cuda");
//! ```

pub mod driver;
pub mod elementwise;
pub mod emulate;
pub mod fusion;
pub mod kernels;
pub mod nvrtc;
pub mod plan;

use quabla_abi::abi::{AbiError, ErrorCode};
use quabla_abi::plugin::{
    Arg, Backend, DeviceBuffer, DownloadEvent, Executable, PluginInfo, ReadyEvent,
};
use quabla_abi::qir::{LinalgKind, OpKind, Program, QIR_VERSION, QIR_VERSION_MIN};
use quabla_abi::{DType, HostView, TensorType};
use std::any::Any;
use std::sync::{Arc, OnceLock};

/// The capability allow-list: one arm per kind and no wildcard, so a primitive added to QIR
/// does not compile here until it is implemented or declined. Nothing runs yet: there is no
/// runtime to launch the kernels `fusion.rs` generates.
fn implements(kind: OpKind) -> bool {
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
        | OpKind::While
        | OpKind::Linalg(
            LinalgKind::Cholesky
            | LinalgKind::Lu
            | LinalgKind::TriangularSolve
            | LinalgKind::Eigh
            | LinalgKind::Qr
            | LinalgKind::Svd,
        ) => false,
        OpKind::StopGradient
        | OpKind::CustomJvp
        | OpKind::CustomVjp
        | OpKind::CustomVjpLinear
        | OpKind::Checkpoint
        | OpKind::Scan
        | OpKind::LinearSolve => false,
    }
}

/// What the host emulation (`QUABLA_CUDA_EMULATE=1`) runs: the ops `plan.rs` has kernels
/// for, the part of the compiler that exists.
fn emulates(kind: OpKind) -> bool {
    matches!(
        kind,
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
            | OpKind::DynamicSlice
            | OpKind::DynamicUpdateSlice
            | OpKind::DotGeneral
            | OpKind::Gather
            | OpKind::ScatterAdd
            | OpKind::Sort
            | OpKind::Cond
            | OpKind::While
    )
}

/// The devices, found once.
fn gpus() -> &'static Result<Vec<driver::GpuInfo>, String> {
    static GPUS: OnceLock<Result<Vec<driver::GpuInfo>, String>> = OnceLock::new();
    GPUS.get_or_init(driver::devices)
}

/// Why nothing can run here: no driver (or no GPU), or the missing runtime.
fn cannot_run() -> AbiError {
    match gpus() {
        Err(why) => AbiError::new(ErrorCode::FailedPrecondition, why.clone()),
        Ok(g) if g.is_empty() => AbiError::new(
            ErrorCode::FailedPrecondition,
            "the CUDA driver reports no GPU",
        ),
        Ok(_) => AbiError::unimplemented(
            "the CUDA plugin cannot run programs yet: its kernels compile, but the runtime \
             (memory, streams, launches) is not built; use the CPU plugin",
        ),
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
    fn execute(&self, args: Vec<Arg>) -> Result<Vec<Arc<dyn DeviceBuffer>>, AbiError> {
        let inputs = args
            .iter()
            .map(|a| {
                a.buffer
                    .as_any()
                    .downcast_ref::<EmulatedBuffer>()
                    .map(|b| b.storage.clone())
                    .ok_or_else(|| AbiError::invalid("a buffer of another backend"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let outs = self.0.run(inputs)?;
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
                ops: OpKind::backend_ops()
                    .filter(|k| emulates(*k))
                    .map(|k| k.name().to_string())
                    .collect(),
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
        Err(cannot_run())
    }

    fn upload(&self, _device: u32, array: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        if emulate::requested() {
            return Ok(Arc::new(EmulatedBuffer {
                ty: array.ty.clone(),
                storage: Arc::new(emulate::Storage::from_bytes(array.bytes)),
            }));
        }
        Err(cannot_run())
    }
}

impl CudaBackend {
    fn gpu_info(&self) -> PluginInfo {
        let devices = match gpus() {
            Ok(g) => g
                .iter()
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
        PluginInfo {
            name: "cuda".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            qir_min: QIR_VERSION_MIN,
            qir_max: QIR_VERSION,
            devices,
            ops: OpKind::backend_ops()
                .filter(|k| implements(*k))
                .map(|k| k.name().to_string())
                .collect(),
            dtypes: DType::ALL.to_vec(),
            region_kinds: vec![],
            synchronous_readback: false,
            extensions: vec![],
            max_buffer_bytes: 0,
            accuracy: "wgsl".into(),
        }
    }
}

quabla_abi::export_backend!(CudaBackend);
