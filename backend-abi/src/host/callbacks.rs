//! Host functions that programs call (`host_callback` ops): a process-wide registry from
//! callback ids to functions, and the `extern "C"` dispatcher every loaded plugin is given
//! ([`HostCallbackFn`]).
//!
//! The core registers a function when it traces a call to it and puts the id in the op; a
//! plugin running the op calls [`dispatch`] with the arguments' and results' host memory.
//! Registrations live as long as the process: a program may be run again at any time.

use crate::abi::{AbiError, BufferExport, ErrorCode, HostCallbackFn, DEVICE_KIND_HOST};
use crate::{DType, HostArray, HostView, TensorType};
use abi_stable::std_types::{RResult, RSlice};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A host function: the arguments' values and the op's declared result types in, the
/// results' values (of those types) out, or a message saying what went wrong.
pub type HostFunction =
    Arc<dyn Fn(&[HostView<'_>], &[TensorType]) -> Result<Vec<HostArray>, String> + Send + Sync>;

fn registry() -> &'static Mutex<HashMap<u64, HostFunction>> {
    static REGISTRY: OnceLock<Mutex<HashMap<u64, HostFunction>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

fn lookup(id: u64) -> Option<HostFunction> {
    let table = registry().lock().unwrap_or_else(|p| p.into_inner());
    table.get(&id).cloned()
}

/// Registers `f` and returns the id a `host_callback` op names it by.
///
/// ```
/// use quabla_abi::host::callbacks;
/// let id = callbacks::register(std::sync::Arc::new(|args, _| Ok(args.iter().map(|a| a.to_array()).collect())));
/// assert!(callbacks::is_registered(id));
/// ```
pub fn register(f: HostFunction) -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    // Below FIXED_IDS for the life of any process (2^40 registrations would exhaust memory
    // long before).
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, f);
    id
}

/// The first id [`register`] never hands out: ids from here on are for functions a host
/// registers under ids of its choosing ([`register_as`]), such as the conformance suite's.
pub const FIXED_IDS: u64 = 1 << 40;

/// Registers `f` under `id` (at least [`FIXED_IDS`]), replacing what was there: for
/// programs written with a known id (the conformance suite's cases).
pub fn register_as(id: u64, f: HostFunction) -> Result<(), String> {
    if id < FIXED_IDS {
        return Err(format!(
            "host callback ids below {FIXED_IDS} are handed out by `register`; got {id}"
        ));
    }
    registry()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(id, f);
    Ok(())
}

/// Whether `id` names a registered function.
pub fn is_registered(id: u64) -> bool {
    lookup(id).is_some()
}

/// Calls the function registered as `id` directly (the core's reference evaluation and
/// eager calls), checking its results against `results`.
pub fn call(
    id: u64,
    args: &[HostView<'_>],
    results: &[TensorType],
) -> Result<Vec<HostArray>, AbiError> {
    let f = lookup(id).ok_or_else(|| {
        AbiError::new(
            ErrorCode::FailedPrecondition,
            format!("host callback {id} is not registered in this process (a program that calls host functions runs only in the process that traced it)"),
        )
    })?;
    let out = catch_unwind(AssertUnwindSafe(|| f(args, results)))
        .map_err(|_| AbiError::internal(format!("host callback {id} panicked")))?
        .map_err(|m| AbiError::new(ErrorCode::FailedPrecondition, m))?;
    check_results(id, &out, results)?;
    Ok(out)
}

fn check_results(id: u64, out: &[HostArray], results: &[TensorType]) -> Result<(), AbiError> {
    if out.len() != results.len() {
        return Err(AbiError::invalid(format!(
            "host callback {id} returned {} values; the call declared {}",
            out.len(),
            results.len()
        )));
    }
    for (i, (o, t)) in out.iter().zip(results).enumerate() {
        if &o.ty != t {
            return Err(AbiError::invalid(format!(
                "host callback {id}: result {i} is {}, the call declared {t}",
                o.ty
            )));
        }
    }
    Ok(())
}

/// Reads a host-memory export as a view; errors for other memory or a malformed export.
///
/// # Safety
/// `e` must describe `e.byte_size` readable bytes that stay valid while the view lives.
unsafe fn view_of<'a>(e: &BufferExport) -> Result<HostView<'a>, AbiError> {
    if e.device_kind != DEVICE_KIND_HOST {
        return Err(AbiError::invalid(format!(
            "host callbacks read host memory; got device kind {}",
            e.device_kind
        )));
    }
    let dtype = DType::from_code(e.dtype)
        .ok_or_else(|| AbiError::invalid(format!("unknown dtype code {}", e.dtype)))?;
    let ty = TensorType::new(dtype, e.shape.iter().map(|&d| d as usize).collect());
    let len = e.byte_size as usize;
    let bytes: &[u8] = if len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees `address..address + len` is readable for 'a.
        unsafe { std::slice::from_raw_parts(e.address as *const u8, len) }
    };
    HostView::new(ty, bytes).map_err(AbiError::invalid)
}

fn dispatch_checked(
    id: u64,
    args: &[BufferExport],
    results: &[BufferExport],
) -> Result<(), AbiError> {
    // SAFETY: the ABI contract of `HostCallbackFn`: the plugin passes live host memory.
    let views = args
        .iter()
        .map(|e| unsafe { view_of(e) })
        .collect::<Result<Vec<_>, _>>()?;
    let types = results
        .iter()
        .map(|e| unsafe { view_of(e) }.map(|v| v.ty))
        .collect::<Result<Vec<_>, _>>()?;
    let out = call(id, &views, &types)?;
    for (o, e) in out.iter().zip(results) {
        if o.bytes.is_empty() {
            continue;
        }
        // SAFETY: `e` is writable host memory of `byte_size` bytes (the contract), and the
        // result's type, hence its length, was checked against it.
        unsafe {
            std::ptr::copy_nonoverlapping(o.bytes.as_ptr(), e.address as *mut u8, o.bytes.len())
        };
    }
    Ok(())
}

extern "C" fn dispatch(
    id: u64,
    args: RSlice<'_, BufferExport>,
    results: RSlice<'_, BufferExport>,
) -> RResult<(), AbiError> {
    match catch_unwind(AssertUnwindSafe(|| dispatch_checked(id, &args, &results))) {
        Ok(r) => r.into(),
        Err(_) => RResult::RErr(AbiError::internal(format!("host callback {id} panicked"))),
    }
}

/// The dispatcher a host gives every plugin it loads.
pub fn host_callback_fn() -> HostCallbackFn {
    HostCallbackFn { func: dispatch }
}
