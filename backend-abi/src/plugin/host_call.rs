//! The plugin side of `host_callback`: the host's function, as the host handed it over
//! (`BackendMod::set_host_callback`), and a safe call through it for backends.

use crate::abi::{AbiError, BufferExport, ErrorCode, HostCallbackFn};
use crate::{HostArray, HostView, TensorType};
use std::sync::Mutex;

static HOST: Mutex<Option<HostCallbackFn>> = Mutex::new(None);

pub(super) fn set(f: HostCallbackFn) {
    *HOST.lock().unwrap_or_else(|p| p.into_inner()) = Some(f);
}

/// Runs the host function `callback` on `args` and returns its results, of the `results`
/// types (the `host_callback` node's declared types). An error when no host gave this
/// plugin a dispatcher (a host older than ABI 1.4) or when the host function fails.
///
/// ```
/// use quabla_abi::{plugin::call_host, DType, HostArray, TensorType};
/// let x = HostArray::from_f32(vec![1], &[2.0]);
/// // In a process where no host handed over its dispatcher, the call is refused.
/// let e = call_host(7, &[x.view()], &[TensorType::new(DType::F32, vec![1])]).unwrap_err();
/// assert!(e.message().contains("no host function"));
/// ```
pub fn call_host(
    callback: u64,
    args: &[HostView<'_>],
    results: &[TensorType],
) -> Result<Vec<HostArray>, AbiError> {
    let host = (*HOST.lock().unwrap_or_else(|p| p.into_inner())).ok_or_else(|| {
        AbiError::new(
            ErrorCode::FailedPrecondition,
            "this plugin was given no host function for `host_callback` (the host predates ABI 1.4)",
        )
    })?;
    let export = |ty: &TensorType, address: usize, len: usize| {
        let shape: Vec<u64> = ty.shape.iter().map(|&d| d as u64).collect();
        BufferExport::host(address, len as u64, ty.dtype as u8, &shape)
    };
    let arg_exports: Vec<BufferExport> = args
        .iter()
        .map(|a| export(&a.ty, a.bytes.as_ptr() as usize, a.bytes.len()))
        .collect();
    let mut memories: Vec<Vec<u8>> = results.iter().map(|t| vec![0u8; t.size_bytes()]).collect();
    let result_exports: Vec<BufferExport> = results
        .iter()
        .zip(memories.iter_mut())
        .map(|(t, m)| export(t, m.as_mut_ptr() as usize, m.len()))
        .collect();
    (host.func)(
        callback,
        arg_exports.as_slice().into(),
        result_exports.as_slice().into(),
    )
    .into_result()?;
    results
        .iter()
        .zip(memories)
        .map(|(t, m)| HostArray::new(t.clone(), m).map_err(AbiError::internal))
        .collect()
}
