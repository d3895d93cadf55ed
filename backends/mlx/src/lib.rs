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
//! `cond` and `while` decide on the host. `execute` schedules its outputs (`async_eval`)
//! and returns; they stay MLX arrays, and a download is an event that is ready when MLX has
//! computed the array. `sort` is a stable permutation computed by the
//! shim (numpy's NaN order), applied with MLX's `take_along_axis`. The dense factorizations
//! run on MLX's LAPACK-backed `linalg` (`linalg.rs`: QIR's conventions for Cholesky
//! failures, the sixteen triangular solves, complete QR, reduced SVD). Every QIR op a
//! backend sees is implemented: nothing is declined.
//!
//! Runs of elementwise nodes can run as `mx::compile`d functions (`fusion.rs`;
//! `QUABLA_MLX_COMPILE=on|off`, unset: on for a GPU, off on the CPU, where MLX compiles each
//! kernel with the system C++ compiler at first use and the steady gain measured nil).
//!
//! Placement (`QUABLA_MLX_DEVICE`: `cpu`, `gpu`, or unset for the GPU where MLX has one):
//! Linux's mlx-cpu has only the CPU stream, which takes float64. On a GPU (Metal on macOS,
//! untested here) float64 is left out of the capabilities, and the shim's primitives and
//! MLX's linear algebra stay on the CPU stream.
//!
//! ```no_run
//! use quabla_abi::host::Plugin;
//! let plugin = Plugin::load("target/debug/libquabla_mlx.so".as_ref()).unwrap();
//! assert_eq!(plugin.name(), "mlx");
//! ```
#![cfg(quabla_mlx)]

mod elementwise;
mod exec;
mod fusion;
mod linalg;
mod movement;
mod reduce;
mod shim;

use quabla_abi::abi::AbiError;
use quabla_abi::plugin::{Arg, Backend, DeviceBuffer, DownloadEvent, Executable, PluginInfo};
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
        // Operands read back, the host function called on this thread, results made arrays.
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

/// Where the plugin runs MLX's ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    /// MLX's CPU stream: every dtype.
    Cpu,
    /// MLX's GPU (Metal on Apple silicon): no float64 (the capabilities leave it out); the
    /// shim's own primitives and MLX's linear algebra still run on the CPU stream. Untested
    /// here: Linux's mlx-cpu build has no GPU.
    Gpu,
}

/// The placement `QUABLA_MLX_DEVICE` asks for (`cpu`, `gpu`, or unset: the GPU where MLX
/// has one), given whether it has one.
fn placement(asked: Option<&str>, gpu_available: bool) -> Result<Placement, String> {
    match asked.map(str::trim) {
        None | Some("") | Some("auto") => Ok(if gpu_available {
            Placement::Gpu
        } else {
            Placement::Cpu
        }),
        Some("cpu") => Ok(Placement::Cpu),
        Some("gpu") if gpu_available => Ok(Placement::Gpu),
        Some("gpu") => Err(
            "QUABLA_MLX_DEVICE=gpu, but this MLX build has no GPU (PyPI's mlx-cpu is MLX's CPU \
             build): unset it, or set it to cpu"
                .into(),
        ),
        Some(other) => Err(format!(
            "QUABLA_MLX_DEVICE={other:?} is not a placement: use cpu, gpu or auto"
        )),
    }
}

/// The process's placement, decided once (MLX's default device is process-wide too).
fn selected() -> &'static Result<Placement, String> {
    static CHOICE: std::sync::OnceLock<Result<Placement, String>> = std::sync::OnceLock::new();
    CHOICE.get_or_init(|| {
        let _mlx = mlx_lock();
        let asked = std::env::var("QUABLA_MLX_DEVICE").ok();
        let p = placement(asked.as_deref(), shim::gpu_available());
        if let Ok(p) = &p {
            shim::select_gpu(*p == Placement::Gpu);
        }
        p
    })
}

/// Whether elementwise runs are compiled (`QUABLA_MLX_COMPILE`; `fusion.rs` says why the
/// CPU default is off), decided once.
fn fusion_enabled() -> Result<bool, AbiError> {
    static CHOICE: std::sync::OnceLock<Result<bool, String>> = std::sync::OnceLock::new();
    let on_gpu = placed()? == Placement::Gpu;
    CHOICE
        .get_or_init(|| {
            fusion::enabled(std::env::var("QUABLA_MLX_COMPILE").ok().as_deref(), on_gpu)
        })
        .clone()
        .map_err(|e| AbiError::new(quabla_abi::abi::ErrorCode::InvalidArgument, e))
}

fn placed() -> Result<Placement, AbiError> {
    selected()
        .clone()
        .map_err(|e| AbiError::new(quabla_abi::abi::ErrorCode::FailedPrecondition, e))
}

/// The MLX backend.
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
        Ok(Box::new(MlxEvent {
            array: self.array.clone(),
            nbytes: self.ty.size_bytes(),
        }))
    }
    fn block_until_ready(&self) -> Result<(), AbiError> {
        let _mlx = mlx_lock();
        shim::eval(&[&self.array])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A download: the array's computation was scheduled by `execute` (`async_eval`), so the
/// event is ready when MLX has computed it; `wait` copies the bytes out.
struct MlxEvent {
    array: Arc<MlxArray>,
    nbytes: usize,
}

impl DownloadEvent for MlxEvent {
    fn is_ready(&self) -> bool {
        let _mlx = mlx_lock();
        self.array.is_available()
    }
    fn wait(self: Box<Self>) -> Result<Vec<u8>, AbiError> {
        let _mlx = mlx_lock();
        self.array.to_bytes(self.nbytes)
    }
    fn on_ready(&mut self, f: Box<dyn FnOnce() + Send>) {
        if self.is_ready() {
            return f();
        }
        // MLX computes on its own threads; a helper thread waits for this array.
        let array = self.array.clone();
        std::thread::spawn(move || {
            {
                let _mlx = mlx_lock();
                // An error here resurfaces, with its message, in `wait`.
                let _ = shim::eval(&[&array]);
            }
            f()
        });
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
        // Scheduled, not awaited: downloads are events, and the host's next call can build
        // its graph while MLX computes this one.
        shim::async_eval(&outs.iter().map(|o| &**o).collect::<Vec<_>>())?;
        Ok(outs
            .into_iter()
            .zip(self.block.output_types())
            .map(|(array, ty)| Arc::new(MlxBuffer { ty, array }) as Arc<dyn DeviceBuffer>)
            .collect())
    }
}

impl Backend for MlxBackend {
    fn info(&self) -> PluginInfo {
        let version = shim::version();
        let (devices, dtypes) = match selected() {
            Ok(Placement::Cpu) => (
                vec![("cpu".into(), format!("MLX {version} (CPU)"), 0)],
                vec![DType::Bool, DType::I32, DType::U32, DType::F32, DType::F64],
            ),
            // MLX's GPU backends have no float64.
            Ok(Placement::Gpu) => (
                vec![("gpu".into(), format!("MLX {version} (GPU)"), 0)],
                vec![DType::Bool, DType::I32, DType::U32, DType::F32],
            ),
            Err(_) => (vec![], vec![DType::F32]),
        };
        PluginInfo {
            name: "mlx".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            qir_min: QIR_VERSION_MIN,
            qir_max: QIR_VERSION,
            devices,
            ops: supported_ops(),
            dtypes,
            region_kinds: vec!["cond".into(), "while".into()],
            synchronous_readback: false,
            extensions: vec![],
            max_buffer_bytes: i32::MAX as u64,
            // MLX's CPU log, tan, the hyperbolic functions and friends are within a few ulp,
            // not correctly rounded.
            accuracy: "wgsl".into(),
        }
    }

    fn compile(&self, program: Program) -> Result<Arc<dyn Executable>, AbiError> {
        // Decided before taking the lock: the first decision of the placement takes it.
        let fuse = fusion_enabled()?;
        let _mlx = mlx_lock();
        Ok(Arc::new(MlxExecutable {
            block: exec::Block::new(&program, fuse)?,
        }))
    }

    fn upload(&self, _device: u32, array: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        placed()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_follows_quabla_mlx_device() {
        assert_eq!(placement(None, false), Ok(Placement::Cpu));
        assert_eq!(placement(None, true), Ok(Placement::Gpu));
        assert_eq!(placement(Some("auto"), true), Ok(Placement::Gpu));
        assert_eq!(placement(Some("cpu"), true), Ok(Placement::Cpu));
        assert_eq!(placement(Some(" gpu "), true), Ok(Placement::Gpu));
        let no_gpu = placement(Some("gpu"), false).unwrap_err();
        assert!(
            no_gpu.contains("no GPU") && no_gpu.contains("cpu"),
            "{no_gpu}"
        );
        assert!(placement(Some("metal"), true)
            .unwrap_err()
            .contains("cpu, gpu or auto"));
    }

    /// Linux's mlx-cpu has no GPU: the plugin runs on the CPU and offers float64.
    #[test]
    fn this_build_runs_on_the_cpu() {
        assert!(!shim::gpu_available());
        let info = MlxBackend.info();
        assert_eq!(info.devices.len(), 1);
        assert_eq!(info.devices[0].0, "cpu");
        assert!(info.dtypes.contains(&DType::F64));
    }

    /// A download is an event: `on_ready` fires from MLX's side once the value exists, and
    /// `wait` then has the bytes.
    #[test]
    fn a_download_is_an_event() {
        let b = MlxBackend;
        let src = "program(%0: f32[256,256]) {
  %1 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%0, %0) : f32[256,256]
  return %1
}
";
        let p = Program::parse(src).unwrap();
        let exe = b.compile(p).unwrap();
        let ones = vec![1.0f32; 256 * 256];
        let x = b
            .upload(
                0,
                quabla_abi::HostArray::from_f32(vec![256, 256], &ones).view(),
            )
            .unwrap();
        let out = exe
            .execute(vec![Arg {
                buffer: x,
                donated: false,
            }])
            .unwrap();
        let mut ev = out[0].download().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        ev.on_ready(Box::new(move || tx.send(()).unwrap()));
        rx.recv_timeout(std::time::Duration::from_secs(60))
            .expect("on_ready never fired");
        assert!(ev.is_ready());
        let bytes = ev.wait().unwrap();
        let first = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        assert_eq!(first, 256.0);
        out[0].block_until_ready().unwrap();
    }
}
