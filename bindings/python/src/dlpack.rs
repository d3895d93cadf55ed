//! Zero-copy DLPack (1.0, versioned, read-only): an array whose plugin exports host memory
//! (the CPU plugin's, through the ABI's buffer export) is handed to numpy, PyTorch or JAX
//! without a copy. The consumer owns the capsule's tensor and calls its deleter, which drops
//! the array; the memory stays valid until then. Consumers of older DLPack (no
//! `max_version`) cannot be told the memory is read-only: `Array.__dlpack__` gives them a
//! copy, as before.

use crate::array::RawArray;
use crate::errors::IntoPyResult;
use pyo3::ffi;
use pyo3::prelude::*;
use quabla::{Array, DType};
use std::ffi::{c_void, CStr};

#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    /// Null: dense row-major.
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: Quabla's arrays are immutable.
const READ_ONLY: u64 = 1;
const CAPSULE: &CStr = c"dltensor_versioned";
/// DLPack's `kDLCPU`.
const DL_CPU: i32 = 1;

/// What the capsule keeps alive: the array (so its memory), the shape DLPack points at, and
/// the tensor itself.
struct Holder {
    _array: Array,
    shape: Vec<i64>,
    managed: DLManagedTensorVersioned,
}

fn dl_dtype(d: DType) -> DLDataType {
    let (code, bits) = match d {
        DType::Bool => (6, 8), // kDLBool, one byte
        DType::I32 => (0, 32),
        DType::U32 => (1, 32),
        DType::F32 => (2, 32),
        DType::F64 => (2, 64),
    };
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

unsafe extern "C" fn delete_tensor(m: *mut DLManagedTensorVersioned) {
    if !m.is_null() {
        // SAFETY: `manager_ctx` is the Holder boxed in `versioned_capsule`, freed once here.
        drop(unsafe { Box::from_raw((*m).manager_ctx as *mut Holder) });
    }
}

/// A capsule no consumer took (still named `dltensor_versioned`) frees its tensor; a taken
/// one was renamed and belongs to the consumer.
unsafe extern "C" fn drop_capsule(capsule: *mut ffi::PyObject) {
    // SAFETY: CPython calls this with the capsule being destroyed.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, CAPSULE.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, CAPSULE.as_ptr())
                as *mut DLManagedTensorVersioned;
            if !m.is_null() {
                if let Some(d) = (*m).deleter {
                    d(m);
                }
            }
        }
    }
}

/// The array's memory as a versioned, read-only DLPack capsule, or `None` when its plugin
/// does not export host memory (the caller then copies).
fn versioned_capsule(py: Python<'_>, a: &Array) -> PyResult<Option<Py<PyAny>>> {
    let array = a.clone();
    let export = py
        .detach(move || {
            array.block_until_ready()?;
            array.export_memory()
        })
        .py()?;
    let Some(e) =
        export.filter(|e| e.device_kind == quabla::DEVICE_KIND_HOST && e.ready_event == 0)
    else {
        return Ok(None);
    };
    let mut holder = Box::new(Holder {
        _array: a.clone(),
        shape: a.shape().iter().map(|&d| d as i64).collect(),
        managed: DLManagedTensorVersioned {
            version: DLPackVersion { major: 1, minor: 0 },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_tensor),
            flags: READ_ONLY,
            dl_tensor: DLTensor {
                data: e.address as *mut c_void,
                device: DLDevice {
                    device_type: DL_CPU,
                    device_id: 0,
                },
                ndim: a.ndim() as i32,
                dtype: dl_dtype(a.dtype()),
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
        },
    });
    holder.managed.dl_tensor.shape = holder.shape.as_mut_ptr();
    let raw = Box::into_raw(holder);
    // SAFETY: `raw` is the Holder just leaked; it lives until `delete_tensor` frees it.
    let managed: *mut DLManagedTensorVersioned = unsafe {
        (*raw).managed.manager_ctx = raw as *mut c_void;
        &mut (*raw).managed
    };
    // SAFETY: `managed` lives in the leaked Holder until its deleter runs; the capsule's
    // destructor runs the deleter only if no consumer took the tensor.
    let capsule =
        unsafe { ffi::PyCapsule_New(managed.cast(), CAPSULE.as_ptr(), Some(drop_capsule)) };
    if capsule.is_null() {
        // SAFETY: nobody else holds the tensor.
        unsafe { delete_tensor(managed) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference PyCapsule_New returned.
    Ok(Some(unsafe { Bound::from_owned_ptr(py, capsule) }.unbind()))
}

/// The array as a zero-copy, read-only DLPack 1.0 capsule, or `None` (see the module).
#[pyfunction]
fn dlpack_versioned(py: Python<'_>, x: RawArray) -> PyResult<Option<Py<PyAny>>> {
    versioned_capsule(py, &x.inner)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(dlpack_versioned, m)?)?;
    Ok(())
}
