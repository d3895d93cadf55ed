//! Arrays in host memory, in the byte encoding that crosses the plugin boundary.

use crate::{DType, TensorType};
use serde::{Deserialize, Serialize};

/// A dense row-major array in host memory: little-endian element bytes plus its type.
///
/// It is what `upload` takes, what a download yields and what a QIR constant holds.
///
/// ```
/// use quabla_abi::HostArray;
/// let a = HostArray::from_f32(vec![2], &[1.0, -0.0]);
/// assert_eq!(a.to_f32().unwrap()[1].to_bits(), (-0.0f32).to_bits());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct HostArray {
    pub ty: TensorType,
    pub bytes: Vec<u8>,
}

/// A Rust element type that has a QIR dtype.
pub trait Element: Copy + Send + Sync + 'static {
    const DTYPE: DType;
    fn write_le(self, out: &mut Vec<u8>);
    fn read_le(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, $d:expr, $n:expr) => {
        impl Element for $t {
            const DTYPE: DType = $d;
            fn write_le(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn read_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; $n];
                b.copy_from_slice(&bytes[..$n]);
                <$t>::from_le_bytes(b)
            }
        }
    };
}
element!(f32, DType::F32, 4);
element!(f64, DType::F64, 8);
element!(i32, DType::I32, 4);
element!(u32, DType::U32, 4);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn write_le(self, out: &mut Vec<u8>) {
        out.push(self as u8);
    }
    fn read_le(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

/// Checks that `bytes` are a valid encoding of an array of type `ty`.
fn check_bytes(ty: &TensorType, bytes: &[u8]) -> Result<(), String> {
    let size = ty.checked_size_bytes().map_err(|e| e.to_string())?;
    if bytes.len() != size {
        return Err(format!(
            "{} needs {} bytes but {} were given",
            ty,
            size,
            bytes.len()
        ));
    }
    if ty.dtype == DType::Bool {
        if let Some(b) = bytes.iter().find(|b| **b > 1) {
            return Err(format!("bool arrays hold bytes 0 or 1, found {b}"));
        }
    }
    Ok(())
}

/// A [`HostArray`] borrowed: the checked type and bytes of an upload, read in place from the
/// memory the host passed across the boundary, so the plugin copies them once, into its own
/// buffer.
///
/// ```
/// use quabla_abi::{DType, HostView, TensorType};
/// let bytes = 1.5f32.to_le_bytes();
/// let v = HostView::new(TensorType::new(DType::F32, vec![1]), &bytes).unwrap();
/// assert_eq!(v.to_array().to_f32().unwrap(), [1.5]);
/// assert!(HostView::new(TensorType::new(DType::F32, vec![2]), &bytes).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostView<'a> {
    pub ty: TensorType,
    pub bytes: &'a [u8],
}

impl<'a> HostView<'a> {
    /// Borrows bytes as an array of type `ty`, checking that their length matches it.
    pub fn new(ty: TensorType, bytes: &'a [u8]) -> Result<Self, String> {
        check_bytes(&ty, bytes)?;
        Ok(HostView { ty, bytes })
    }

    /// An owned copy (named apart from `ToOwned::to_owned`, which would give a `HostView`).
    pub fn to_array(&self) -> HostArray {
        HostArray {
            ty: self.ty.clone(),
            bytes: self.bytes.to_vec(),
        }
    }
}

impl HostArray {
    /// Builds an array from bytes, checking that their length matches the type.
    pub fn new(ty: TensorType, bytes: Vec<u8>) -> Result<Self, String> {
        check_bytes(&ty, &bytes)?;
        Ok(HostArray { ty, bytes })
    }

    /// This array borrowed.
    pub fn view(&self) -> HostView<'_> {
        HostView {
            ty: self.ty.clone(),
            bytes: &self.bytes,
        }
    }

    /// Builds an array from typed elements; fails when the shape does not match the length.
    pub fn from_slice<T: Element>(shape: Vec<usize>, data: &[T]) -> Result<Self, String> {
        let ty = TensorType::new(T::DTYPE, shape);
        if ty.num_elements() != data.len() {
            return Err(format!(
                "shape {:?} has {} elements but {} values were given",
                ty.shape,
                ty.num_elements(),
                data.len()
            ));
        }
        let mut bytes = Vec::with_capacity(ty.size_bytes());
        for x in data {
            x.write_le(&mut bytes);
        }
        Ok(HostArray { ty, bytes })
    }

    /// Like [`HostArray::from_slice`] for f32, for literals in tests and examples.
    ///
    /// # Panics
    /// When `data.len()` is not the product of `shape` (use `from_slice` for user data).
    pub fn from_f32(shape: Vec<usize>, data: &[f32]) -> Self {
        Self::from_slice(shape, data).expect("shape matches data")
    }

    pub fn dtype(&self) -> DType {
        self.ty.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.ty.shape
    }

    /// Reads the elements as `T`; fails when `T` is not the array's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, String> {
        if T::DTYPE != self.ty.dtype {
            return Err(format!(
                "array holds {} but {} was requested",
                self.ty.dtype,
                T::DTYPE
            ));
        }
        let w = T::DTYPE.size_bytes();
        Ok(self.bytes.chunks_exact(w).map(T::read_le).collect())
    }

    pub fn to_f32(&self) -> Result<Vec<f32>, String> {
        self.to_vec()
    }

    /// Element `i` widened to its raw bits (u64), for dtype-generic comparisons.
    pub fn bits_at(&self, i: usize) -> u64 {
        let w = self.ty.dtype.size_bytes();
        let mut b = [0u8; 8];
        b[..w].copy_from_slice(&self.bytes[i * w..(i + 1) * w]);
        u64::from_le_bytes(b)
    }
}
