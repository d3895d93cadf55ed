//! The collectives extension and buffer export through the ABI, in-process: a fake engine
//! whose `n` ranks all hold the caller's values (so every collective has a closed form), and
//! two compute backends, one exporting its memory (used in place) and one not (staged through
//! the host). The kit's checks (kinds, dtypes, shapes, sizes, memory kinds) run before the
//! engine sees a call.

use quabla_abi::abi::*;
use quabla_abi::host::{Communicator as HostComm, Plugin};
use quabla_abi::plugin::*;
use quabla_abi::qir::Program;
use quabla_abi::{DType, HostArray, HostView, TensorType};
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The source address of the last collective the engine ran.
static LAST_SRC: AtomicUsize = AtomicUsize::new(0);
/// Held by every test: they run on parallel threads and the fake engine records the last
/// source address in one global, so one test's call must not overwrite another's.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

struct Replicated {
    size: u32,
}

impl Communicator for Replicated {
    fn rank(&self) -> u32 {
        0
    }
    fn size(&self) -> u32 {
        self.size
    }
    fn device_kind(&self) -> u32 {
        DEVICE_KIND_HOST
    }
    fn run(&self, c: &Collective) -> Result<(), AbiError> {
        LAST_SRC.store(c.src.address, Ordering::SeqCst);
        assert_eq!(c.dtype, DType::F32, "the fake engine reduces f32 only");
        // SAFETY: the kit checked both exports against their types.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(
                    c.src.address as *const f32,
                    c.src.byte_size as usize / 4,
                ),
                std::slice::from_raw_parts_mut(
                    c.dst.address as *mut f32,
                    c.dst.byte_size as usize / 4,
                ),
            )
        };
        let n = self.size as usize;
        match c.kind {
            CollectiveKind::AllReduce => {
                for (d, s) in dst.iter_mut().zip(src) {
                    *d = match c.op {
                        ReduceOp::Sum => *s * n as f32,
                        _ => *s,
                    };
                }
            }
            CollectiveKind::AllGather => {
                for (i, d) in dst.iter_mut().enumerate() {
                    *d = src[i % src.len()];
                }
            }
            CollectiveKind::Broadcast => dst.copy_from_slice(src),
            CollectiveKind::ReduceScatter => {
                for (d, s) in dst.iter_mut().zip(src) {
                    *d = *s * n as f32;
                }
            }
        }
        Ok(())
    }
}

struct FakeEngine;
impl Collectives for FakeEngine {
    fn unique_id(&self) -> Result<Vec<u8>, AbiError> {
        Ok(vec![7; 8])
    }
    fn comm_init(
        &self,
        world_size: u32,
        _rank: u32,
        id: &[u8],
        _timeout: std::time::Duration,
    ) -> Result<Box<dyn Communicator>, AbiError> {
        assert_eq!(id, [7; 8]);
        Ok(Box::new(Replicated { size: world_size }))
    }
}

struct FakeCollectivesPlugin;
impl Backend for FakeCollectivesPlugin {
    fn info(&self) -> PluginInfo {
        PluginInfo::collectives_only("fakecoll", "0")
    }
    fn compile(&self, _p: Program) -> Result<Arc<dyn Executable>, AbiError> {
        Err(AbiError::unimplemented("no compute"))
    }
    fn upload(&self, _d: u32, _a: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        Err(AbiError::unimplemented("no compute"))
    }
    fn collectives(&self) -> Option<&dyn Collectives> {
        Some(&FakeEngine)
    }
}

/// A host-memory buffer; `exports` says whether its backend exposes it.
struct Buf {
    array: Mutex<HostArray>,
    ty: TensorType,
    exports: bool,
}
impl DeviceBuffer for Buf {
    fn ty(&self) -> &TensorType {
        &self.ty
    }
    fn download(&self) -> Result<Box<dyn DownloadEvent>, AbiError> {
        let bytes = self.array.lock().unwrap().bytes.clone();
        Ok(Box::new(ReadyEvent(bytes)))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn export(&self) -> Result<BufferExport, AbiError> {
        if !self.exports {
            return Err(AbiError::unimplemented("not exported"));
        }
        let a = self.array.lock().unwrap();
        let shape: Vec<u64> = self.ty.shape.iter().map(|&d| d as u64).collect();
        Ok(BufferExport::host(
            a.bytes.as_ptr() as usize,
            a.bytes.len() as u64,
            self.ty.dtype as u8,
            &shape,
        ))
    }
}

struct Compute {
    exports: bool,
}
impl Backend for Compute {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: if self.exports { "exporting" } else { "opaque" }.into(),
            version: "0".into(),
            qir_min: 1,
            qir_max: 1,
            devices: vec![("cpu".into(), "fake".into(), 0)],
            ops: vec![],
            dtypes: vec![DType::F32, DType::I32],
            region_kinds: vec![],
            synchronous_readback: true,
            extensions: vec![],
            max_buffer_bytes: 0,
            accuracy: "exact".into(),
        }
    }
    fn compile(&self, _p: Program) -> Result<Arc<dyn Executable>, AbiError> {
        Err(AbiError::unimplemented("no programs"))
    }
    fn upload(&self, _d: u32, a: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        Ok(Arc::new(Buf {
            ty: a.ty.clone(),
            array: Mutex::new(a.to_array()),
            exports: self.exports,
        }))
    }
    fn allocate(&self, _d: u32, ty: TensorType) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        if !self.exports {
            return Err(AbiError::unimplemented("no allocation"));
        }
        let bytes = vec![0u8; ty.size_bytes()];
        Ok(Arc::new(Buf {
            array: Mutex::new(HostArray::new(ty.clone(), bytes).unwrap()),
            ty,
            exports: true,
        }))
    }
}

macro_rules! plugin {
    ($entry:ident, $backend:expr) => {
        struct $entry;
        impl PluginEntry for $entry {
            fn state() -> &'static PluginState {
                static S: OnceLock<PluginState> = OnceLock::new();
                S.get_or_init(|| PluginState::new(Box::new($backend)))
            }
        }
    };
}
plugin!(CollEntry, FakeCollectivesPlugin);
plugin!(ExportingEntry, Compute { exports: true });
plugin!(OpaqueEntry, Compute { exports: false });

fn comm(size: u32) -> HostComm {
    let p = Plugin::from_module(module::<CollEntry>()).unwrap();
    let id = HostComm::unique_id(&p).unwrap();
    HostComm::init(&p, size, 0, &id, None).unwrap()
}

/// An all-reduce sum on raw exports (the kit refuses the malformed ones before touching
/// memory).
fn run_raw(c: &HostComm, src: BufferExport, dst: BufferExport) -> Result<(), AbiError> {
    // SAFETY: every export here is of a buffer alive for the whole test, or a lie the kit
    // refuses before any memory is read.
    unsafe { c.run(CollectiveKind::AllReduce, ReduceOp::Sum, 0, src, dst) }
}

fn f32s(p: &Plugin, v: &[f32], shape: &[usize]) -> quabla_abi::host::Buffer {
    p.upload(HostArray::from_slice(shape.to_vec(), v).unwrap().view())
        .unwrap()
}

#[test]
fn collectives_on_an_exporting_plugin_use_its_memory_in_place() {
    let _serial = serial();
    let compute = Plugin::from_module(module::<ExportingEntry>()).unwrap();
    let c = comm(4);
    let x = f32s(&compute, &[1.0, 2.0, 3.0, 4.0], &[4]);
    let addr = x.export().unwrap().unwrap().address;
    let s = c
        .on_buffers(CollectiveKind::AllReduce, ReduceOp::Sum, 0, &x)
        .unwrap();
    assert_eq!(
        LAST_SRC.load(Ordering::SeqCst),
        addr,
        "the source was copied"
    );
    assert_eq!(
        s.to_host().unwrap().to_f32().unwrap(),
        [4.0, 8.0, 12.0, 16.0]
    );
    assert_eq!(s.plugin().name(), "exporting");
    let g = c
        .on_buffers(CollectiveKind::AllGather, ReduceOp::Sum, 0, &x)
        .unwrap();
    assert_eq!(g.ty().shape, [4, 4]);
    let r = c
        .on_buffers(CollectiveKind::ReduceScatter, ReduceOp::Sum, 0, &x)
        .unwrap();
    assert_eq!(r.to_host().unwrap().to_f32().unwrap(), [4.0]);
}

#[test]
fn collectives_on_a_plugin_that_does_not_export_are_staged_through_the_host() {
    let _serial = serial();
    let compute = Plugin::from_module(module::<OpaqueEntry>()).unwrap();
    let c = comm(2);
    let x = f32s(&compute, &[1.0, -2.0], &[2]);
    assert!(x.export().unwrap().is_none());
    let s = c
        .on_buffers(CollectiveKind::AllReduce, ReduceOp::Mean, 0, &x)
        .unwrap();
    assert_eq!(s.to_host().unwrap().to_f32().unwrap(), [1.0, -2.0]);
    assert_eq!(s.plugin().name(), "opaque");
}

#[test]
fn the_kit_refuses_malformed_calls_before_the_engine_runs() {
    let _serial = serial();
    let compute = Plugin::from_module(module::<ExportingEntry>()).unwrap();
    let c = comm(3);
    let x = f32s(&compute, &[1.0; 4], &[4]);
    let e = c
        .on_buffers(CollectiveKind::ReduceScatter, ReduceOp::Sum, 0, &x)
        .err()
        .unwrap();
    assert!(e.message().contains("divisible by 3"), "{e}");
    let e = c
        .on_buffers(CollectiveKind::Broadcast, ReduceOp::Sum, 3, &x)
        .err()
        .unwrap();
    assert!(e.message().contains("rank 3"), "{e}");
    let ints = compute
        .upload(HostArray::from_slice(vec![2], &[1i32, 2]).unwrap().view())
        .unwrap();
    let e = c
        .on_buffers(CollectiveKind::AllReduce, ReduceOp::Mean, 0, &ints)
        .err()
        .unwrap();
    assert!(e.message().contains("floating dtype"), "{e}");
    // Raw calls: a destination of the wrong shape, a lying byte size, device memory.
    let src = x.export().unwrap().unwrap();
    let mut dst = src.clone();
    dst.shape = vec![2, 2].into();
    let e = run_raw(&c, src.clone(), dst).err().unwrap();
    assert!(e.message().contains("writes shape [4]"), "{e}");
    let mut lying = src.clone();
    lying.byte_size = 1 << 40;
    let e = run_raw(&c, lying, src.clone()).err().unwrap();
    assert!(e.message().contains("export says"), "{e}");
    let mut device = src.clone();
    device.device_kind = DEVICE_KIND_CUDA;
    let e = run_raw(&c, device, src.clone()).err().unwrap();
    assert!(e.message().contains("device kind 2"), "{e}");
    let out = compute.allocate(x.ty()).unwrap().unwrap();
    let dst = out.export().unwrap().unwrap();
    run_raw(&c, src, dst).unwrap();
    assert_eq!(out.to_host().unwrap().to_f32().unwrap(), [3.0; 4]);
}

#[test]
fn a_plugin_without_collectives_says_so() {
    let _serial = serial();
    let compute = Plugin::from_module(module::<OpaqueEntry>()).unwrap();
    assert!(compute.collectives().is_none());
    let e = HostComm::init(&compute, 1, 0, &[], None).err().unwrap();
    assert_eq!(e.code(), ErrorCode::Unimplemented);
    assert!(e.message().contains("no collectives extension"), "{e}");
}
