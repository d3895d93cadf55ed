//! The plugin kit seen from a host: capability checks, argument checks, donation, events,
//! and panics turned into errors, using a tiny in-process backend.

use quabla_abi::abi::{AbiError, ErrorCode};
use quabla_abi::host::{Arg as HostArg, Plugin};
use quabla_abi::plugin::*;
use quabla_abi::qir::Program;
use quabla_abi::{DType, HostArray, HostView, TensorType};
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Supports only `neg` on f32, and panics when asked to compile a program with 3 inputs.
struct TinyBackend;

/// Where the last upload's bytes were read from.
static UPLOADED_FROM: AtomicUsize = AtomicUsize::new(0);

struct Buf(HostArray);
impl DeviceBuffer for Buf {
    fn ty(&self) -> &TensorType {
        &self.0.ty
    }
    fn download(&self) -> Result<Box<dyn DownloadEvent>, AbiError> {
        Ok(Box::new(ReadyEvent(self.0.bytes.clone())))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

struct NegExe;
impl Executable for NegExe {
    fn execute(&self, args: Vec<Arg>) -> Result<Vec<Arc<dyn DeviceBuffer>>, AbiError> {
        let b = args[0].buffer.as_any().downcast_ref::<Buf>().unwrap();
        let v: Vec<f32> = b.0.to_vec::<f32>().unwrap().iter().map(|x| -x).collect();
        Ok(vec![Arc::new(Buf(HostArray::from_slice(
            b.0.ty.shape.clone(),
            &v,
        )
        .unwrap()))])
    }
}

impl Backend for TinyBackend {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "tiny".into(),
            version: "0.0.1".into(),
            qir_min: 1,
            qir_max: 1,
            devices: vec![("cpu".into(), "tiny".into(), 0)],
            ops: vec!["neg".into()],
            dtypes: vec![DType::F32],
            region_kinds: vec![],
            synchronous_readback: true,
            extensions: vec![],
            max_buffer_bytes: 1 << 20,
            accuracy: "exact".into(),
        }
    }
    fn compile(&self, program: Program) -> Result<Arc<dyn Executable>, AbiError> {
        if program.inputs.len() == 3 {
            panic!("tiny backend bug on purpose");
        }
        Ok(Arc::new(NegExe))
    }
    fn upload(&self, _device: u32, array: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        UPLOADED_FROM.store(array.bytes.as_ptr() as usize, Ordering::SeqCst);
        Ok(Arc::new(Buf(array.to_array())))
    }
}

struct Entry;
impl PluginEntry for Entry {
    fn state() -> &'static PluginState {
        static S: OnceLock<PluginState> = OnceLock::new();
        S.get_or_init(|| PluginState::new(Box::new(TinyBackend)))
    }
}

fn tiny() -> Plugin {
    Plugin::from_module(module::<Entry>()).unwrap()
}

const NEG: &str = "program(%0: f32[2]) {\n  %1 = neg(%0) : f32[2]\n  return %1\n}\n";

#[test]
fn unsupported_ops_and_dtypes_fail_at_compile_time_naming_them() {
    let p =
        Program::parse("program(%0: f32[2]) {\n  %1 = exp(%0) : f32[2]\n  return %1\n}\n").unwrap();
    let e = tiny().compile(&p).err().unwrap();
    assert_eq!(e.code(), ErrorCode::Unimplemented);
    assert!(e.message().contains("op `exp`"), "{e}");
    let p =
        Program::parse("program(%0: f64[2]) {\n  %1 = neg(%0) : f64[2]\n  return %1\n}\n").unwrap();
    let e = tiny().compile(&p).err().unwrap();
    assert!(e.message().contains("dtype f64"), "{e}");
}

#[test]
fn a_panic_in_the_plugin_becomes_an_internal_error() {
    let p = Program::parse(
        "program(%0: f32[], %1: f32[], %2: f32[]) {\n  %3 = neg(%0) : f32[]\n  return %3\n}\n",
    )
    .unwrap();
    let e = tiny().compile(&p).err().unwrap();
    assert_eq!(e.code(), ErrorCode::Internal);
    assert!(
        e.message()
            .contains("panicked: tiny backend bug on purpose"),
        "{e}"
    );
    // The plugin still works afterwards.
    assert!(tiny().compile(&Program::parse(NEG).unwrap()).is_ok());
}

#[test]
fn wrong_inputs_at_execute_are_invalid_argument_errors() {
    let t = tiny();
    let exe = t.compile(&Program::parse(NEG).unwrap()).unwrap();
    let wrong_shape = t
        .upload(HostArray::from_f32(vec![3], &[1.0, 2.0, 3.0]).view())
        .unwrap();
    let e = exe.run(&[&wrong_shape]).err().unwrap();
    assert_eq!(e.code(), ErrorCode::InvalidArgument);
    assert!(e.message().contains("input 0 must be f32[2]"), "{e}");
    let e = exe.run(&[]).err().unwrap();
    assert!(e.message().contains("takes 1 inputs but 0"), "{e}");
    let e = t
        .upload(HostArray::from_slice(vec![1], &[1i32]).unwrap().view())
        .err()
        .unwrap();
    assert!(e.message().contains("dtype i32"), "{e}");
}

#[test]
fn an_upload_reads_the_hosts_bytes_in_place() {
    let t = tiny();
    let a = HostArray::from_f32(vec![2], &[1.0, -2.0]);
    let b = t.upload(a.view()).unwrap();
    assert_eq!(
        UPLOADED_FROM.load(Ordering::SeqCst),
        a.bytes.as_ptr() as usize
    );
    assert_eq!(b.to_host().unwrap(), a);
}

#[test]
fn donation_consumes_the_buffer_and_events_report_readiness() {
    let t = tiny();
    let exe = t.compile(&Program::parse(NEG).unwrap()).unwrap();
    let x = t
        .upload(HostArray::from_f32(vec![2], &[1.0, -2.0]).view())
        .unwrap();
    let out = exe.execute(vec![HostArg::Donate(x)]).unwrap();
    let ev = out[0].download().unwrap();
    assert!(ev.is_ready().unwrap());
    static CALLS: AtomicUsize = AtomicUsize::new(0);
    extern "C" fn on_ready(user: usize) {
        CALLS.fetch_add(user, Ordering::SeqCst);
    }
    ev.on_ready(on_ready, 7).unwrap();
    assert_eq!(CALLS.load(Ordering::SeqCst), 7);
    assert_eq!(ev.wait().unwrap().to_f32().unwrap(), vec![-1.0, 2.0]);
}

/// The backend declares `max_buffer_bytes = 1 MiB`: a program or an upload with a larger
/// value is refused (the program at compile time, before anything could allocate it), and an
/// absurd shape is an error, not an overflow.
#[test]
fn values_larger_than_the_declared_maximum_are_refused() {
    let t = tiny();
    let big = "program(%0: f32[262145]) {\n  %1 = neg(%0) : f32[262145]\n  return %1\n}\n";
    let e = t.compile(&Program::parse(big).unwrap()).err().unwrap();
    assert_eq!(e.code(), ErrorCode::ResourceExhausted, "{e}");
    assert!(
        e.message().contains("at most 1048576 bytes") && e.message().contains("f32[262145]"),
        "{e}"
    );
    // The largest value decides, wherever it is: here after a small one.
    let second =
        "program(%0: f32[2], %1: f32[262145]) {\n  %2 = neg(%1) : f32[262145]\n  return %2\n}\n";
    let e = t.compile(&Program::parse(second).unwrap()).err().unwrap();
    assert_eq!(e.code(), ErrorCode::ResourceExhausted, "{e}");
    let fits = "program(%0: f32[262144]) {\n  %1 = neg(%0) : f32[262144]\n  return %1\n}\n";
    assert!(t.compile(&Program::parse(fits).unwrap()).is_ok());
    let e = t
        .upload(HostArray::from_f32(vec![262145], &vec![0.0; 262145]).view())
        .err()
        .unwrap();
    assert_eq!(e.code(), ErrorCode::ResourceExhausted, "{e}");
    // Through the raw table: a shape whose product wraps around 2^64 and no bytes.
    let raw = module::<Entry>().upload();
    let shape = [1u64 << 32, 1 << 32, 1 << 32];
    let r = raw(
        0,
        DType::F32 as u8,
        shape.as_slice().into(),
        [].as_slice().into(),
    );
    let e = r.into_result().err().unwrap();
    assert!(e.message().contains("2^63"), "{e}");
}

#[test]
fn host_calls_are_an_optional_capability_made_through_the_hosts_dispatcher() {
    use quabla_abi::host::callbacks;
    use quabla_abi::plugin::call_host;
    let p = Program::parse(
        "program(%0: f32[2]) {\n  () = host_callback[callback=1, effectful=true](%0) : ()\n  %1 = neg(%0) : f32[2]\n  return %1\n}\n",
    )
    .unwrap();
    // The tiny backend does not list the op: refused at compile time, naming it.
    let e = tiny().compile(&p).err().unwrap();
    assert_eq!(e.code(), ErrorCode::Unimplemented);
    assert!(e.message().contains("op `host_callback`"), "{e}");
    // Loading the plugin gave it the host's dispatcher; the kit's call reaches the function.
    let double = callbacks::register(Arc::new(|a: &[HostView<'_>], _: &[TensorType]| {
        let v = a[0].to_array().to_f32()?;
        Ok(vec![HostArray::from_f32(
            a[0].ty.shape.clone(),
            &v.iter().map(|x| 2.0 * x).collect::<Vec<_>>(),
        )])
    }));
    let x = HostArray::from_f32(vec![2], &[1.5, -2.0]);
    let f32x2 = TensorType::new(DType::F32, vec![2]);
    let out = call_host(double, &[x.view()], std::slice::from_ref(&f32x2)).unwrap();
    assert_eq!(out[0].to_f32().unwrap(), vec![3.0, -4.0]);
    // Every failure is an error value: an unknown id, results of another type, a panic.
    let e = call_host(
        callbacks::FIXED_IDS - 1,
        &[x.view()],
        std::slice::from_ref(&f32x2),
    )
    .unwrap_err();
    assert!(e.message().contains("not registered"), "{e}");
    let f64x2 = TensorType::new(DType::F64, vec![2]);
    let e = call_host(double, &[x.view()], &[f64x2]).unwrap_err();
    assert!(e.message().contains("declared"), "{e}");
    let panics = callbacks::register(Arc::new(
        |_: &[HostView<'_>], _: &[TensorType]| -> Result<Vec<HostArray>, String> {
            panic!("a host function bug")
        },
    ));
    let e = call_host(panics, &[], &[]).unwrap_err();
    assert!(e.message().contains("panicked"), "{e}");
    assert!(callbacks::register_as(
        5,
        Arc::new(|_: &[HostView<'_>], _: &[TensorType]| Ok(vec![]))
    )
    .is_err());
}
