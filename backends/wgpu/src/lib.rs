//! `quabla-wgpu`: the wgpu backend plugin. QIR programs become WGSL compute kernels that run
//! on any adapter wgpu reaches (Vulkan natively, including the lavapipe CPU driver; WebGPU
//! in the browser).
//!
//! Loaded at run time as `libquabla_wgpu.so` (the `export` feature), or linked statically and
//! registered in-process through [`backend_module`].
//!
//! How it runs a program (see `plan.rs`): chains of elementwise nodes over one shape become
//! one fused kernel; every other node is one kernel specialised to its shapes (movement as
//! index maps, reductions as workgroup trees in a fixed order, `dot_general` as a tiled
//! GEMM, scatter-add without atomics); constants are uploaded at compile time and pipelines
//! are cached per kernel source. Buffers stay on the device between executions; `cond` and
//! `while` read their predicate back once per decision. Dtypes: f32, i32, u32, bool (WGSL
//! has no f64: such programs are refused at compile time). The linear-algebra
//! factorizations are not offered (the capability list leaves them out).
//!
//! ```no_run
//! use quabla_abi::host::Plugin;
//! let plugin = Plugin::load("target/debug/libquabla_wgpu.so".as_ref()).unwrap();
//! assert_eq!(plugin.name(), "wgpu");
//! ```

mod buffer;
mod context;
mod exec;
mod kernels;
mod plan;
mod wgsl;

use buffer::GpuBuffer;
use context::Gpu;
use quabla_abi::abi::AbiError;
use quabla_abi::plugin::{Arg, Backend, DeviceBuffer, Executable, PluginInfo};
use quabla_abi::qir::{OpKind, Program, QIR_VERSION, QIR_VERSION_MIN};
use quabla_abi::{DType, HostView};
use std::sync::{Arc, OnceLock};

/// The wgpu backend. Natively the device is opened on first use; in the browser it must be
/// opened first with [`init_webgpu`] (WebGPU's requests are asynchronous).
pub struct WgpuBackend {
    #[cfg(not(target_arch = "wasm32"))]
    gpu: OnceLock<Result<Arc<Gpu>, String>>,
}

impl Default for WgpuBackend {
    fn default() -> Self {
        WgpuBackend {
            #[cfg(not(target_arch = "wasm32"))]
            gpu: OnceLock::new(),
        }
    }
}

#[cfg(target_arch = "wasm32")]
static WEB_GPU: OnceLock<Arc<Gpu>> = OnceLock::new();

/// Opens the browser's WebGPU device for this plugin, once; returns the adapter's
/// description. Register the plugin (`quabla::runtime::register_static`) after this has
/// resolved, so that its device list names the adapter.
#[cfg(target_arch = "wasm32")]
pub async fn init_webgpu() -> Result<String, String> {
    if let Some(g) = WEB_GPU.get() {
        return Ok(g.description.clone());
    }
    let g = Arc::new(Gpu::open_async().await?);
    let g = WEB_GPU.get_or_init(|| g);
    Ok(g.description.clone())
}

impl WgpuBackend {
    #[cfg(not(target_arch = "wasm32"))]
    fn gpu(&self) -> Result<Arc<Gpu>, AbiError> {
        self.gpu
            .get_or_init(|| Gpu::open().map(Arc::new))
            .clone()
            .map_err(|e| AbiError::new(quabla_abi::abi::ErrorCode::FailedPrecondition, e))
    }

    #[cfg(target_arch = "wasm32")]
    fn gpu(&self) -> Result<Arc<Gpu>, AbiError> {
        WEB_GPU.get().cloned().ok_or_else(|| {
            AbiError::new(
                quabla_abi::abi::ErrorCode::FailedPrecondition,
                "the WebGPU device is not open: await `init_webgpu()` (in JavaScript: \
                 `await quabla.init({ backend: \"webgpu\" })`) before using the wgpu backend",
            )
        })
    }
}

/// Region ops this build runs. `cond` and `while` decide on the host from a value read back
/// from the device, which the browser cannot do synchronously, so the wasm build leaves
/// them out of its capabilities (such programs are refused by name; the CPU backend runs
/// them).
const HOST_DRIVEN_REGIONS: &[&str] = &["cond", "while"];

/// The ops this backend implements: every op but the dense factorizations (and, in the
/// browser, the host-driven regions).
pub fn supported_ops() -> Vec<String> {
    OpKind::backend_ops()
        .filter(|k| implements(*k))
        .map(|k| k.name().to_string())
        .collect()
}

/// The capability allow-list: one arm per kind and no wildcard, so a primitive added to QIR
/// does not compile here until it gets a kernel (`plan.rs`, whose match is exhaustive too) or
/// is declined. Unary and binary ops are whole families: `wgsl.rs` matches every variant.
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
        | OpKind::DynamicUpdateSlice => true,
        // Deciding a branch or another iteration reads a predicate back, which the browser
        // cannot do without blocking.
        OpKind::Cond | OpKind::While => !cfg!(target_arch = "wasm32"),
        // Dense factorizations: no kernels yet; programs needing them run on the CPU.
        OpKind::Linalg(_) => false,
        // A call into the host would read the GPU's values back mid-program; programs with
        // host callbacks run on the CPU backend.
        OpKind::HostCallback => false,
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

struct WgpuExecutable {
    plan: plan::Plan,
    gpu: Arc<Gpu>,
}

impl Executable for WgpuExecutable {
    fn execute(&self, args: Vec<Arg>) -> Result<Vec<Arc<dyn DeviceBuffer>>, AbiError> {
        let mut inputs = Vec::with_capacity(args.len());
        for a in args {
            let b = a
                .buffer
                .as_any()
                .downcast_ref::<GpuBuffer>()
                .ok_or_else(|| {
                    AbiError::invalid("argument buffer does not belong to the wgpu backend")
                })?;
            inputs.push(Arc::new(b.alias(b.ty.clone())));
        }
        let outs = exec::run(&self.plan, &self.gpu, inputs)?;
        Ok(outs
            .into_iter()
            .map(|b| b as Arc<dyn DeviceBuffer>)
            .collect())
    }
}

impl Backend for WgpuBackend {
    fn info(&self) -> PluginInfo {
        let (devices, max_buffer_bytes) = match self.gpu() {
            // wgpu does not report device memory (0 means unknown in the ABI).
            Ok(g) => (
                vec![("gpu".into(), g.description.clone(), 0)],
                g.max_buffer_bytes,
            ),
            Err(_) => (vec![], 0),
        };
        PluginInfo {
            name: "wgpu".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            qir_min: QIR_VERSION_MIN,
            qir_max: QIR_VERSION,
            devices,
            ops: supported_ops(),
            dtypes: vec![DType::Bool, DType::I32, DType::U32, DType::F32],
            region_kinds: if cfg!(target_arch = "wasm32") {
                vec![]
            } else {
                HOST_DRIVEN_REGIONS.iter().map(|r| r.to_string()).collect()
            },
            synchronous_readback: false,
            extensions: vec![],
            max_buffer_bytes,
            // Builtins are not correctly rounded; browsers may also flush subnormals.
            accuracy: if cfg!(target_arch = "wasm32") {
                "webgpu"
            } else {
                "wgsl"
            }
            .into(),
        }
    }

    fn compile(&self, program: Program) -> Result<Arc<dyn Executable>, AbiError> {
        let gpu = self.gpu()?;
        Ok(Arc::new(WgpuExecutable {
            plan: plan::Plan::new(&gpu, &program)?,
            gpu,
        }))
    }

    fn upload(&self, _device: u32, array: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        let gpu = self.gpu()?;
        Ok(Arc::new(GpuBuffer::upload(&gpu, &array)))
    }
}

quabla_abi::export_backend!(WgpuBackend::default());

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_abi::HostArray;

    /// The backend, or `None` (with a message) on a machine without any adapter; a failure
    /// instead when `QUABLA_REQUIRE_WGPU` is set (as `cargo xtask test` does once it has
    /// installed a driver), so a missing adapter cannot pass these tests unnoticed.
    fn backend() -> Option<WgpuBackend> {
        let b = WgpuBackend::default();
        match b.gpu() {
            Ok(_) => Some(b),
            Err(e) => skip_unless_required(
                e.message(),
                std::env::var_os("QUABLA_REQUIRE_WGPU").is_some(),
            ),
        }
    }

    fn skip_unless_required<T>(why: &str, required: bool) -> Option<T> {
        assert!(
            !required,
            "no wgpu adapter ({why}), and QUABLA_REQUIRE_WGPU is set"
        );
        eprintln!("skipping: {why}");
        None
    }

    #[test]
    fn a_required_adapter_that_is_missing_fails_the_tests() {
        assert!(skip_unless_required::<()>("none here", false).is_none());
        let required = std::panic::catch_unwind(|| skip_unless_required::<()>("none here", true));
        assert!(required.is_err());
    }

    fn run(b: &WgpuBackend, src: &str, inputs: &[HostArray]) -> Vec<Vec<u8>> {
        let p = Program::parse(src).unwrap();
        p.validate().unwrap();
        let exe = b.compile(p).unwrap();
        let args = inputs
            .iter()
            .map(|h| Arg {
                buffer: b.upload(0, h.view()).unwrap(),
                donated: false,
            })
            .collect();
        exe.execute(args)
            .unwrap()
            .iter()
            .map(|o| o.download().unwrap().wait().unwrap())
            .collect()
    }

    fn noise(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                (s >> 8) as f32 / (1 << 24) as f32 - 0.5
            })
            .collect()
    }

    /// A chain of elementwise nodes is one kernel, and only the value used later is stored.
    #[test]
    fn an_elementwise_chain_is_one_kernel() {
        let Some(b) = backend() else { return };
        let p = Program::parse(
            "program(%0: f32[1000], %1: f32[1000]) {
  %2 = mul(%0, %1) : f32[1000]
  %3 = exp(%2) : f32[1000]
  %4 = compare[dir=gt](%3, %1) : bool[1000]
  %5 = select(%4, %3, %0) : f32[1000]
  return %5
}
",
        )
        .unwrap();
        let plan = plan::Plan::new(&b.gpu().unwrap(), &p).unwrap();
        assert_eq!(plan.steps.len(), 1);
        let plan::Step::Kernel { writes, .. } = &plan.steps[0] else {
            panic!("not a kernel")
        };
        assert_eq!(writes, &vec![5]);
    }

    /// Sums and matrix products give the same bits on every run (fixed reduction order),
    /// and agree with an f64 host reference.
    #[test]
    fn reductions_and_products_are_deterministic() {
        let Some(b) = backend() else { return };
        let src = "program(%0: f32[300,200], %1: f32[200,150]) {
  %2 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%0, %1) : f32[300,150]
  %3 = reduce[kind=sum, axes=[0,1]](%0) : f32[]
  return %2, %3
}
";
        let (x, y) = (noise(300 * 200, 1), noise(200 * 150, 2));
        let ins = [
            HostArray::from_f32(vec![300, 200], &x),
            HostArray::from_f32(vec![200, 150], &y),
        ];
        let first = run(&b, src, &ins);
        for _ in 0..3 {
            assert_eq!(run(&b, src, &ins), first);
        }
        let f = |bytes: &[u8]| -> Vec<f32> {
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let total: f64 = x.iter().map(|v| *v as f64).sum();
        assert!((f(&first[1])[0] as f64 - total).abs() < 1e-3);
        let c = f(&first[0]);
        for (i, j) in [(0, 0), (17, 33), (299, 149)] {
            let want: f64 = (0..200)
                .map(|k| x[i * 200 + k] as f64 * y[k * 150 + j] as f64)
                .sum();
            assert!((c[i * 150 + j] as f64 - want).abs() < 1e-5, "({i}, {j})");
        }
    }

    /// A readback is an event: `on_ready` runs its callback once the bytes are there, with
    /// no caller polling.
    #[test]
    fn readback_fires_on_ready() {
        let Some(b) = backend() else { return };
        let buf = b
            .upload(
                0,
                HostArray::from_f32(vec![4], &[1.0, 2.0, 3.0, 4.0]).view(),
            )
            .unwrap();
        let mut ev = buf.download().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        ev.on_ready(Box::new(move || tx.send(()).unwrap()));
        rx.recv_timeout(std::time::Duration::from_secs(60))
            .expect("on_ready never fired");
        assert!(ev.is_ready());
        assert_eq!(
            ev.wait().unwrap(),
            HostArray::from_f32(vec![4], &[1.0, 2.0, 3.0, 4.0]).bytes
        );
    }
}
