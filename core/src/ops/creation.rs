//! Arrays made from nothing: iota/arange, zeros, ones, full.

use super::{apply_nullary, constant_like};
use crate::array::Array;
use crate::error::Result;
use crate::promotion::Scalar;
use crate::runtime::{default_device, Device};
use quabla_abi::qir::Op;
use quabla_abi::{DType, HostArray, TensorType};
use std::sync::Arc;

/// The most values `eye`, `linspace` and `arange_f` compute on the host (as f64) before
/// uploading: 2^31, 16 GiB of f64, so an absurd request is an error, not an abort.
const MAX_HOST_ELEMENTS: usize = 1 << 31;

/// A host array of `shape` filled with `value` converted to `dtype`.
pub(crate) fn filled(dtype: DType, shape: &[usize], value: Scalar) -> HostArray {
    let ty = TensorType::new(dtype, shape.to_vec());
    let n = ty.num_elements();
    let one: Vec<u8> = match (dtype, value) {
        (DType::F32, s) => (as_f64(s) as f32).to_le_bytes().to_vec(),
        (DType::F64, s) => as_f64(s).to_le_bytes().to_vec(),
        (DType::I32, s) => (as_f64(s) as i32).to_le_bytes().to_vec(),
        (DType::U32, s) => (as_f64(s) as u32).to_le_bytes().to_vec(),
        (DType::Bool, s) => vec![(as_f64(s) != 0.0) as u8],
    };
    HostArray {
        ty,
        bytes: one.repeat(n),
    }
}

fn as_f64(s: Scalar) -> f64 {
    match s {
        Scalar::Float(f) => f,
        Scalar::Int(i) => i as f64,
        Scalar::Bool(b) => b as i32 as f64,
    }
}

/// `like`'s type filled with `value`, as a broadcast scalar constant.
pub(crate) fn full_like(like: &Array, value: impl Into<Scalar>) -> Result<Array> {
    constant_like(like, filled(like.dtype(), &[], value.into()))?
        .broadcast_in_dim(like.shape(), &[])
}

impl Array {
    /// `0, 1, 2, ...` along `dim` of an array of `shape` (XLA's iota) on `device`.
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// // Column indices of a 2x3 grid: [[0, 1, 2], [0, 1, 2]].
    /// let j = Array::iota_on(&quabla::default_device()?, DType::I32, &[2, 3], 1)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn iota_on(
        device: &Arc<Device>,
        dtype: DType,
        shape: &[usize],
        dim: usize,
    ) -> Result<Array> {
        apply_nullary(
            device,
            Op::Iota { dim },
            TensorType::new(dtype, shape.to_vec()),
        )
    }

    /// `[0, 1, ..., n - 1]` as i32 on the default device.
    ///
    /// ```no_run
    /// let r = quabla::Array::arange(4).unwrap();
    /// assert_eq!(r.to_vec::<i32>().unwrap(), vec![0, 1, 2, 3]);
    /// ```
    pub fn arange(n: usize) -> Result<Array> {
        Self::iota_on(&default_device()?, DType::I32, &[n], 0)
    }

    /// An array of `shape` filled with `value` on the default device.
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// let halves = Array::full(&[2, 2], 0.5, DType::F32)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn full(shape: &[usize], value: impl Into<Scalar>, dtype: DType) -> Result<Array> {
        Array::from_host_on(&default_device()?, &filled(dtype, shape, value.into()))
    }

    /// Zeros of `shape` on the default device.
    ///
    /// ```no_run
    /// let z = quabla::Array::zeros(&[2, 3], quabla::DType::F32).unwrap();
    /// assert_eq!(z.shape(), &[2, 3]);
    /// ```
    pub fn zeros(shape: &[usize], dtype: DType) -> Result<Array> {
        Self::full(shape, 0, dtype)
    }

    /// Ones of `shape` on the default device.
    ///
    /// ```no_run
    /// let o = quabla::Array::ones(&[3], quabla::DType::F64).unwrap();
    /// assert_eq!(o.to_vec::<f64>().unwrap(), vec![1.0; 3]);
    /// ```
    pub fn ones(shape: &[usize], dtype: DType) -> Result<Array> {
        Self::full(shape, 1, dtype)
    }

    /// The `n x n` identity matrix on the default device (`numpy.eye(n)`).
    ///
    /// ```no_run
    /// let i = quabla::Array::eye(2, quabla::DType::F64).unwrap();
    /// assert_eq!(i.to_vec::<f64>().unwrap(), vec![1.0, 0.0, 0.0, 1.0]);
    /// ```
    pub fn eye(n: usize, dtype: DType) -> Result<Array> {
        let size = n
            .checked_mul(n)
            .filter(|&s| s <= MAX_HOST_ELEMENTS)
            .ok_or_else(|| crate::Error::value(format!("eye({n}) is too large to build")))?;
        let mut ones = vec![0.0f64; size];
        ones.iter_mut().step_by(n + 1).for_each(|x| *x = 1.0);
        Array::from_slice(&ones, &[n, n])?.astype(dtype)
    }

    /// `num` evenly spaced values from `start` to `stop`, both included, as
    /// `numpy.linspace` computes them: `start + i * step` in f64 with the last value exactly
    /// `stop`, then rounded to `dtype` (a float dtype).
    ///
    /// ```no_run
    /// let t = quabla::Array::linspace(0.0, 1.0, 5, quabla::DType::F64).unwrap();
    /// assert_eq!(t.to_vec::<f64>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    /// ```
    pub fn linspace(start: f64, stop: f64, num: usize, dtype: DType) -> Result<Array> {
        if num > MAX_HOST_ELEMENTS {
            return Err(crate::Error::value(format!(
                "linspace of {num} values: at most {MAX_HOST_ELEMENTS} are built on the host"
            )));
        }
        if !matches!(dtype, DType::F32 | DType::F64) {
            return Err(crate::Error::dtype(format!(
                "linspace makes floats; asked for {dtype:?}: use DType::F32 or DType::F64 \
                 and convert with astype"
            )));
        }
        let step = (stop - start) / num.saturating_sub(1).max(1) as f64;
        let mut vals: Vec<f64> = (0..num).map(|i| start + i as f64 * step).collect();
        if let Some(last) = vals.last_mut().filter(|_| num > 1) {
            *last = stop;
        }
        Array::from_slice(&vals, &[num])?.astype(dtype)
    }

    /// Values from `start` up to `stop` (excluded) by `step`, as `numpy.arange` with float
    /// arguments: `ceil((stop - start) / step)` values `start + i * delta` with numpy's
    /// `delta = (start + step) - start`, rounded to `dtype`.
    ///
    /// ```no_run
    /// let x = quabla::Array::arange_f(0.0, 1.0, 0.25, quabla::DType::F32).unwrap();
    /// assert_eq!(x.to_vec::<f32>().unwrap(), vec![0.0, 0.25, 0.5, 0.75]);
    /// ```
    pub fn arange_f(start: f64, stop: f64, step: f64, dtype: DType) -> Result<Array> {
        if step == 0.0 || !step.is_finite() || !start.is_finite() || !stop.is_finite() {
            return Err(crate::Error::value(format!(
                "arange_f needs finite bounds and a finite nonzero step, got start {start}, \
                 stop {stop}, step {step}"
            )));
        }
        let count = ((stop - start) / step).ceil().max(0.0);
        if count > MAX_HOST_ELEMENTS as f64 {
            return Err(crate::Error::value(format!(
                "arange_f({start}, {stop}, {step}) would make {count:e} values; at most \
                 {MAX_HOST_ELEMENTS} are built on the host"
            )));
        }
        let n = count as usize;
        // numpy steps by the difference of its first two values, not by `step` itself.
        let delta = (start + step) - start;
        let vals: Vec<f64> = (0..n).map(|i| start + i as f64 * delta).collect();
        Array::from_slice(&vals, &[n])?.astype(dtype)
    }

    /// `iota` of `dtype` and `shape` counting along `dim`, beside `self` (in its trace or on
    /// its device).
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// let x = Array::from_slice(&[1.0f32], &[1]).unwrap();
    /// let i = x.iota_beside(DType::I32, &[3], 0).unwrap();
    /// assert_eq!(i.to_vec::<i32>().unwrap(), vec![0, 1, 2]);
    /// ```
    pub fn iota_beside(&self, dtype: DType, shape: &[usize], dim: usize) -> Result<Array> {
        super::iota_like(self, dtype, shape, dim)
    }

    /// A constant of any `shape` and `dtype` beside `self`: recorded in `self`'s trace when
    /// it is traced, on its device otherwise (front ends use it for literals next to arrays).
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    /// let two = x.filled_beside(&[], 2.0, DType::F64).unwrap();
    /// assert_eq!(two.item::<f64>().unwrap(), 2.0);
    /// ```
    pub fn filled_beside(
        &self,
        shape: &[usize],
        value: impl Into<Scalar>,
        dtype: DType,
    ) -> Result<Array> {
        super::constant_like(self, filled(dtype, shape, value.into()))
    }

    /// An array of this one's dtype and shape filled with `value` (on its device or trace).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
    /// let sevens = x.full_like(7)?; // f32[2]
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn full_like(&self, value: impl Into<Scalar>) -> Result<Array> {
        full_like(self, value)
    }

    /// An array of this one's dtype and shape filled with 0 (on its device or trace).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1i32, 2], &[2])?;
    /// assert_eq!(x.zeros_like()?.to_vec::<i32>()?, [0, 0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn zeros_like(&self) -> Result<Array> {
        full_like(self, 0)
    }

    /// An array of this one's dtype and shape filled with 1 (on its device or trace).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[3.0f64, 4.0], &[2])?;
    /// assert_eq!(x.ones_like()?.to_vec::<f64>()?, [1.0, 1.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn ones_like(&self) -> Result<Array> {
        full_like(self, 1)
    }
}
