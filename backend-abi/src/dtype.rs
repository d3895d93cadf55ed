//! Element types of QIR values.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The element type of an array.
///
/// ```
/// use quabla_abi::DType;
/// assert_eq!(DType::F32.size_bytes(), 4);
/// assert_eq!("f64".parse::<DType>().unwrap(), DType::F64);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[repr(u8)]
pub enum DType {
    Bool = 0,
    I32 = 1,
    U32 = 2,
    F32 = 3,
    F64 = 4,
}

impl DType {
    /// Every dtype, in a fixed order.
    pub const ALL: [DType; 5] = [DType::Bool, DType::I32, DType::U32, DType::F32, DType::F64];

    /// Bytes per element in the host encoding (bool is one byte, 0 or 1).
    pub fn size_bytes(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::F64 => 8,
        }
    }

    /// The short name used in the text form and in messages (`f32`, `i32`...).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// numpy's name (`float32`, `int32`, `uint32`, `float64`, `bool`), used by the Python and
    /// JavaScript APIs.
    ///
    /// ```
    /// use quabla_abi::DType;
    /// assert_eq!(DType::F32.numpy_name(), "float32");
    /// assert_eq!(DType::from_numpy_name("int32"), Some(DType::I32));
    /// assert_eq!(DType::from_numpy_name("f64"), Some(DType::F64));
    /// ```
    pub fn numpy_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "int32",
            DType::U32 => "uint32",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    /// The dtype of a numpy name or a short name (`bool_` too, numpy's scalar type).
    pub fn from_numpy_name(name: &str) -> Option<DType> {
        DType::ALL
            .into_iter()
            .find(|d| d.numpy_name() == name || d.name() == name)
            .or((name == "bool_").then_some(DType::Bool))
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::U32)
    }

    /// Integer or float: the dtypes arithmetic accepts.
    pub fn is_numeric(self) -> bool {
        self != DType::Bool
    }

    /// Decodes the code used across the ABI (`DType as u8`).
    pub fn from_code(code: u8) -> Option<DType> {
        DType::ALL.into_iter().find(|d| *d as u8 == code)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for DType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        DType::ALL
            .into_iter()
            .find(|d| d.name() == s)
            .ok_or_else(|| format!("unknown dtype `{s}`; expected one of bool, i32, u32, f32, f64"))
    }
}

/// A dtype and a shape: the static type of a QIR value.
///
/// ```
/// use quabla_abi::{DType, TensorType};
/// let t = TensorType::new(DType::F32, vec![2, 3]);
/// assert_eq!(t.num_elements(), 6);
/// assert_eq!(t.to_string(), "f32[2,3]");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorType {
    pub dtype: DType,
    pub shape: Vec<usize>,
}

impl TensorType {
    pub fn new(dtype: DType, shape: Vec<usize>) -> Self {
        TensorType { dtype, shape }
    }

    pub fn scalar(dtype: DType) -> Self {
        TensorType {
            dtype,
            shape: vec![],
        }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The element count. Saturates instead of overflowing; a type that passed
    /// [`TensorType::checked_size_bytes`] (every type of a validated program does) has an
    /// exact count.
    pub fn num_elements(&self) -> usize {
        self.shape
            .iter()
            .try_fold(1usize, |n, &d| n.checked_mul(d))
            .unwrap_or(usize::MAX)
    }

    /// Bytes of the host encoding of a value of this type (saturating, as
    /// [`TensorType::num_elements`]).
    pub fn size_bytes(&self) -> usize {
        self.num_elements().saturating_mul(self.dtype.size_bytes())
    }

    /// The element count, or an error when it exceeds 2^63 (or this machine's `usize`).
    ///
    /// ```
    /// use quabla_abi::{DType, TensorType};
    /// let huge = TensorType::new(DType::F32, vec![1 << 32, 1 << 32]);
    /// assert!(huge.checked_num_elements().unwrap_err().to_string().contains("2^63"));
    /// ```
    pub fn checked_num_elements(&self) -> Result<usize, SizeError> {
        let too_many = || SizeError::TooManyElements(self.clone());
        let n = self
            .shape
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d as u64))
            .filter(|&n| n <= MAX_ELEMENTS)
            .ok_or_else(too_many)?;
        usize::try_from(n).map_err(|_| too_many())
    }

    /// The byte size, or an error when it does not fit one allocation (`isize::MAX` bytes).
    pub fn checked_size_bytes(&self) -> Result<usize, SizeError> {
        self.checked_num_elements()?
            .checked_mul(self.dtype.size_bytes())
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| SizeError::TooManyBytes(self.clone()))
    }
}

/// The most elements a value may have (2^63), whatever the machine.
pub const MAX_ELEMENTS: u64 = 1 << 63;

/// A type too large to exist: its size arithmetic would overflow.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("shape {shape:?} of `{ty}` has more than 2^63 elements", shape = .0.shape, ty = .0)]
    TooManyElements(TensorType),
    #[error("`{0}` needs more bytes than one allocation can hold on this machine (isize::MAX)")]
    TooManyBytes(TensorType),
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.dtype)?;
        for (i, d) in self.shape.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// Row-major strides (in elements) of a shape.
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1];
    }
    strides
}
