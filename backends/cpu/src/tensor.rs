//! The CPU backend's arrays: typed vectors behind an `Arc`, so reshapes and passing values
//! between steps never copy.

use crate::pool::{self, CollectPooled, Pooled};
use quabla_abi::plugin::{DeviceBuffer, DownloadEvent, ReadyEvent};
use quabla_abi::{
    abi::{AbiError, BufferExport},
    DType, HostView, TensorType,
};
use std::any::Any;
use std::sync::Arc;

/// Element storage, one variant per dtype.
#[derive(Clone, Debug, PartialEq)]
pub enum Storage {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Applies the same generic expression to whichever vector a `Storage` holds, rewrapping the
/// result in the same variant.
macro_rules! map_storage {
    ($s:expr, $v:ident => $e:expr) => {
        match $s {
            $crate::tensor::Storage::Bool($v) => $crate::tensor::Storage::Bool($e),
            $crate::tensor::Storage::I32($v) => $crate::tensor::Storage::I32($e),
            $crate::tensor::Storage::U32($v) => $crate::tensor::Storage::U32($e),
            $crate::tensor::Storage::F32($v) => $crate::tensor::Storage::F32($e),
            $crate::tensor::Storage::F64($v) => $crate::tensor::Storage::F64($e),
        }
    };
}
pub(crate) use map_storage;

impl Storage {
    pub fn dtype(&self) -> DType {
        match self {
            Storage::Bool(_) => DType::Bool,
            Storage::I32(_) => DType::I32,
            Storage::U32(_) => DType::U32,
            Storage::F32(_) => DType::F32,
            Storage::F64(_) => DType::F64,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Storage::Bool(v) => v.len(),
            Storage::I32(v) => v.len(),
            Storage::U32(v) => v.len(),
            Storage::F32(v) => v.len(),
            Storage::F64(v) => v.len(),
        }
    }

    /// A zero-filled vector (false for bool).
    pub fn zeros(dtype: DType, n: usize) -> Storage {
        match dtype {
            DType::Bool => Storage::Bool(pool::filled(n, false)),
            DType::I32 => Storage::I32(pool::filled(n, 0)),
            DType::U32 => Storage::U32(pool::filled(n, 0)),
            DType::F32 => Storage::F32(pool::filled(n, 0.0)),
            DType::F64 => Storage::F64(pool::filled(n, 0.0)),
        }
    }

    /// Elements at `idx`, in order.
    pub fn take(&self, idx: &[usize]) -> Storage {
        map_storage!(self, v => idx.iter().map(|&i| v[i]).collect_pooled())
    }

    /// Elements `start..end` of this vector repeated end to end without end (a broadcast
    /// along new leading axes, read flat; `splat` when it has one element).
    pub fn repeated(&self, start: usize, end: usize) -> Storage {
        fn repeat<T: Pooled>(v: &[T], start: usize, end: usize) -> Vec<T> {
            if let [x] = v {
                return pool::filled(end - start, *x);
            }
            let mut out = pool::take(end - start);
            let mut i = start;
            while i < end && !v.is_empty() {
                let at = i % v.len();
                let k = (v.len() - at).min(end - i);
                out.extend_from_slice(&v[at..at + k]);
                i += k;
            }
            out
        }
        map_storage!(self, v => repeat(v, start, end))
    }

    /// Appends `src[start..end]`; both must have one dtype (guaranteed by validation).
    pub fn extend_from(&mut self, src: &Storage, start: usize, end: usize) {
        match (self, src) {
            (Storage::Bool(a), Storage::Bool(b)) => a.extend_from_slice(&b[start..end]),
            (Storage::I32(a), Storage::I32(b)) => a.extend_from_slice(&b[start..end]),
            (Storage::U32(a), Storage::U32(b)) => a.extend_from_slice(&b[start..end]),
            (Storage::F32(a), Storage::F32(b)) => a.extend_from_slice(&b[start..end]),
            (Storage::F64(a), Storage::F64(b)) => a.extend_from_slice(&b[start..end]),
            _ => unreachable!("validated programs never mix dtypes here"),
        }
    }

    pub fn from_host(a: &HostView) -> Storage {
        let b = a.bytes;
        match a.ty.dtype {
            DType::Bool => Storage::Bool(b.iter().map(|x| *x != 0).collect()),
            DType::I32 => Storage::I32(
                b.chunks_exact(4)
                    .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            DType::U32 => Storage::U32(
                b.chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            DType::F32 => Storage::F32(
                b.chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            DType::F64 => Storage::F64(
                b.chunks_exact(8)
                    .map(|c| f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
                    .collect(),
            ),
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            Storage::Bool(v) => v.iter().map(|x| *x as u8).collect(),
            Storage::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Storage::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Storage::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Storage::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// Element `i`'s little-endian bits, zero-extended (bool: 0 or 1).
    /// The first element's address, for the compiled tier, which reads elements through it
    /// (bool is one byte holding 0 or 1, as the loop IR's registers).
    pub fn as_ptr(&self) -> *const u8 {
        match self {
            Storage::Bool(v) => v.as_ptr().cast(),
            Storage::I32(v) => v.as_ptr().cast(),
            Storage::U32(v) => v.as_ptr().cast(),
            Storage::F32(v) => v.as_ptr().cast(),
            Storage::F64(v) => v.as_ptr().cast(),
        }
    }

    /// The first element's address, for the compiled tier's in-place updates.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        match self {
            Storage::Bool(v) => v.as_mut_ptr().cast(),
            Storage::I32(v) => v.as_mut_ptr().cast(),
            Storage::U32(v) => v.as_mut_ptr().cast(),
            Storage::F32(v) => v.as_mut_ptr().cast(),
            Storage::F64(v) => v.as_mut_ptr().cast(),
        }
    }

    pub fn bits_at(&self, i: usize) -> u64 {
        match self {
            Storage::Bool(v) => v[i] as u64,
            Storage::I32(v) => v[i] as u32 as u64,
            Storage::U32(v) => v[i] as u64,
            Storage::F32(v) => v[i].to_bits() as u64,
            Storage::F64(v) => v[i].to_bits(),
        }
    }

    /// One element of `dtype` from the low bits of `bits` (the inverse of `bits_at`; the
    /// bytes above the dtype's width are ignored, bool reads its low byte as `!= 0`).
    pub fn from_bits(dtype: DType, bits: u64) -> Storage {
        match dtype {
            DType::Bool => Storage::Bool(vec![bits as u8 != 0]),
            DType::I32 => Storage::I32(vec![bits as u32 as i32]),
            DType::U32 => Storage::U32(vec![bits as u32]),
            DType::F32 => Storage::F32(vec![f32::from_bits(bits as u32)]),
            DType::F64 => Storage::F64(vec![f64::from_bits(bits)]),
        }
    }

    /// Element 0 as an i64 (for index scalars).
    pub fn scalar_i64(&self) -> i64 {
        match self {
            Storage::Bool(v) => v[0] as i64,
            Storage::I32(v) => v[0] as i64,
            Storage::U32(v) => v[0] as i64,
            Storage::F32(v) => v[0] as i64,
            Storage::F64(v) => v[0] as i64,
        }
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        match self {
            Storage::Bool(v) => pool::give(std::mem::take(v)),
            Storage::I32(v) => pool::give(std::mem::take(v)),
            Storage::U32(v) => pool::give(std::mem::take(v)),
            Storage::F32(v) => pool::give(std::mem::take(v)),
            Storage::F64(v) => pool::give(std::mem::take(v)),
        }
    }
}

/// A value during execution: its type and shared storage.
#[derive(Clone, Debug)]
pub struct Tensor {
    pub ty: TensorType,
    pub data: Arc<Storage>,
}

impl Tensor {
    pub fn new(ty: TensorType, data: Storage) -> Tensor {
        debug_assert_eq!(ty.num_elements(), data.len());
        debug_assert_eq!(ty.dtype, data.dtype());
        Tensor {
            ty,
            data: Arc::new(data),
        }
    }

    pub fn shape(&self) -> &[usize] {
        &self.ty.shape
    }
}

/// A buffer handed out through the ABI.
pub struct CpuBuffer(pub Tensor);

impl DeviceBuffer for CpuBuffer {
    fn ty(&self) -> &TensorType {
        &self.0.ty
    }
    fn download(&self) -> Result<Box<dyn DownloadEvent>, AbiError> {
        Ok(Box::new(ReadyEvent(self.0.data.to_bytes())))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    /// Execution is synchronous: a buffer exists only once its value does.
    fn block_until_ready(&self) -> Result<(), AbiError> {
        Ok(())
    }
    /// Elements are stored natively, which is the host encoding on a little-endian machine
    /// (bool is one byte, 0 or 1); the vector lives as long as the buffer.
    fn export(&self) -> Result<BufferExport, AbiError> {
        if cfg!(target_endian = "big") {
            return Err(AbiError::unimplemented(
                "a big-endian machine's native bytes are not the host encoding",
            ));
        }
        let ty = &self.0.ty;
        let shape: Vec<u64> = ty.shape.iter().map(|&d| d as u64).collect();
        Ok(BufferExport::host(
            self.0.data.as_ptr() as usize,
            ty.size_bytes() as u64,
            ty.dtype as u8,
            &shape,
        ))
    }
}
