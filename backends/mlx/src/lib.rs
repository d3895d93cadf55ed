//! `quabla-mlx`: the MLX backend plugin. QIR programs run as graphs of MLX ops (Apple's array
//! framework), through a small C shim of our own over MLX's C++ API (`shim/qmlx.cpp`), on
//! MLX's CPU stream (the build PyPI's `mlx-cpu` wheel carries for Linux).
//!
//! Why a shim and not the `mlx-rs` crate: `mlx-sys` fetches and builds MLX with CMake at
//! build time, links Apple's frameworks unconditionally and needs libclang, so it does not
//! build on Linux; the shim compiles in seconds against the wheel's headers.
//!
//! How it runs a program (`exec.rs`): each node becomes MLX graph nodes, lazily; QIR's exact
//! semantics where MLX's differ (integer division by zero, `fmod`, NaN and signed zeros in
//! `max`/`min`, shifts, saturating conversions, clamped gather starts, dropped scatter
//! windows) are composed from exact MLX ops (`elementwise.rs`, `movement.rs`, `reduce.rs`);
//! `exp`, `exp2`, `sin`, `cos`, `erf`, `erfc`, `cbrt` and `logistic`, which MLX computes with
//! float32 polynomials even in float64 (or lacks), run in the shim's own MLX primitive over
//! the C library.
//! `cond` and `while` decide on the host. Outputs are computed before `execute` returns and
//! stay MLX arrays until downloaded. `sort` is a stable permutation computed by the
//! shim (numpy's NaN order), applied with MLX's `take_along_axis`. The dense factorizations
//! run on MLX's LAPACK-backed `linalg` (`linalg.rs`: QIR's conventions for Cholesky
//! failures, the sixteen triangular solves, complete QR, reduced SVD). Every QIR op a
//! backend sees is implemented: nothing is declined.
//!
//! ```no_run
//! use quabla_abi::host::Plugin;
//! let plugin = Plugin::load("target/debug/libquabla_mlx.so".as_ref()).unwrap();
//! assert_eq!(plugin.name(), "mlx");
//! ```
#![cfg(quabla_mlx)]

mod elementwise;
mod exec;
mod linalg;
mod movement;
mod reduce;
mod shim;

use quabla_abi::abi::AbiError;
use quabla_abi::plugin::{
    Arg, Backend, DeviceBuffer, DownloadEvent, Executable, PluginInfo, ReadyEvent,
};
use quabla_abi::qir::{LinalgKind, OpKind, Program, QIR_VERSION, QIR_VERSION_MIN};
use quabla_abi::{DType, HostView, TensorType};
use shim::MlxArray;
use std::any::Any;
use std::sync::{Arc, Mutex, MutexGuard};

/// Serialises every use of MLX: its graph building and evaluation are not documented as
/// safe from several threads at once, and the plugin kit may call from any thread.
static MLX: Mutex<()> = Mutex::new(());

fn mlx_lock() -> MutexGuard<'static, ()> {
    // A panic while holding the lock leaves MLX's state as consistent as MLX left it.
    MLX.lock().unwrap_or_else(|e| e.into_inner())
}

/// The ops this backend implements (see [`implements`]).
pub fn supported_ops() -> Vec<String> {
    OpKind::backend_ops()
        .filter(|k| implements(*k))
        .map(|k| k.name().to_string())
        .collect()
}

/// The capability allow-list: one arm per kind and no wildcard, so a primitive added to QIR
/// does not compile here until it is implemented (`exec.rs`, exhaustive too) or declined.
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
        | OpKind::DotGeneral
        | OpKind::Gather
        | OpKind::ScatterAdd
        | OpKind::DynamicSlice
        | OpKind::DynamicUpdateSlice
        | OpKind::Sort
        | OpKind::Cond
        | OpKind::While
        | OpKind::Linalg(
            LinalgKind::Cholesky
            | LinalgKind::Lu
            | LinalgKind::TriangularSolve
            | LinalgKind::Eigh
            | LinalgKind::Qr
            | LinalgKind::Svd,
        ) => true,
        OpKind::StopGradient
        | OpKind::CustomJvp
        | OpKind::CustomVjp
        | OpKind::CustomVjpLinear
        | OpKind::Checkpoint
        | OpKind::Scan
        | OpKind::LinearSolve => false,
    }
}

/// The MLX backend (MLX's CPU stream).
#[derive(Default)]
pub struct MlxBackend;

struct MlxBuffer {
    ty: TensorType,
    array: Arc<MlxArray>,
}

impl DeviceBuffer for MlxBuffer {
    fn ty(&self) -> &TensorType {
        &self.ty
    }
    fn download(&self) -> Result<Box<dyn DownloadEvent>, AbiError> {
        let _mlx = mlx_lock();
        Ok(Box::new(ReadyEvent(
            self.array.to_bytes(self.ty.size_bytes())?,
        )))
    }
    fn block_until_ready(&self) -> Result<(), AbiError> {
        // `execute` evaluates its outputs and uploads are computed at once.
        Ok(())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

struct MlxExecutable {
    block: exec::Block,
}

impl Executable for MlxExecutable {
    fn execute(&self, args: Vec<Arg>) -> Result<Vec<Arc<dyn DeviceBuffer>>, AbiError> {
        let inputs = args
            .iter()
            .map(|a| {
                a.buffer
                    .as_any()
                    .downcast_ref::<MlxBuffer>()
                    .map(|b| b.array.clone())
                    .ok_or_else(|| {
                        AbiError::invalid("argument buffer does not belong to the MLX backend")
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let _mlx = mlx_lock();
        let outs = self.block.run(inputs)?;
        shim::eval(&outs.iter().map(|o| &**o).collect::<Vec<_>>())?;
        Ok(outs
            .into_iter()
            .zip(self.block.output_types())
            .map(|(array, ty)| Arc::new(MlxBuffer { ty, array }) as Arc<dyn DeviceBuffer>)
            .collect())
    }
}

impl Backend for MlxBackend {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "mlx".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            qir_min: QIR_VERSION_MIN,
            qir_max: QIR_VERSION,
            devices: vec![("cpu".into(), format!("MLX {} (CPU)", shim::version()), 0)],
            ops: supported_ops(),
            dtypes: vec![DType::Bool, DType::I32, DType::U32, DType::F32, DType::F64],
            region_kinds: vec!["cond".into(), "while".into()],
            synchronous_readback: true,
            extensions: vec![],
            max_buffer_bytes: i32::MAX as u64,
            // MLX's CPU log, tan, the hyperbolic functions and friends are within a few ulp,
            // not correctly rounded.
            accuracy: "wgsl".into(),
        }
    }

    fn compile(&self, program: Program) -> Result<Arc<dyn Executable>, AbiError> {
        let _mlx = mlx_lock();
        Ok(Arc::new(MlxExecutable {
            block: exec::Block::new(&program)?,
        }))
    }

    fn upload(&self, _device: u32, array: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        let _mlx = mlx_lock();
        let a = MlxArray::from_bytes(array.ty.dtype, &array.ty.shape, array.bytes)?;
        shim::eval(&[&a])?;
        Ok(Arc::new(MlxBuffer {
            ty: array.ty.clone(),
            array: Arc::new(a),
        }))
    }
}

quabla_abi::export_backend!(MlxBackend);
