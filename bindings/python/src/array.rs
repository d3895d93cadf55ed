//! `RawArray`: a core `Array` (concrete or traced) and the primitives on it. The public
//! `quabla.Array` (Python) wraps one and adds operators, indexing and numpy names.

use crate::errors::IntoPyResult;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use quabla::qir::{DotDims, GatherDims, OpKind, ScatterDims};
use quabla::{Array, Axes, DType, DownloadEvent, HostView, Operand, Scalar, TensorType};
use std::sync::{Arc, Mutex};

/// A core array. Python code uses `quabla.Array`, which wraps this.
#[pyclass(frozen, from_py_object, module = "quabla._quabla")]
#[derive(Clone)]
pub struct RawArray {
    pub inner: Array,
    /// A copy to the host started by `copy_to_host_async`, which the next read takes.
    pending: Arc<Mutex<Option<DownloadEvent>>>,
}

impl From<Array> for RawArray {
    fn from(inner: Array) -> Self {
        RawArray {
            inner,
            pending: Arc::default(),
        }
    }
}

impl RawArray {
    /// The copy `copy_to_host_async` started, taken (each read takes its own).
    fn take_pending(&self) -> Option<DownloadEvent> {
        match self.pending.lock() {
            Ok(mut p) => p.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }
}

/// A dtype from its numpy-style name.
pub fn dtype_from_name(name: &str) -> PyResult<DType> {
    DType::from_numpy_name(name).ok_or_else(|| {
        PyTypeError::new_err(format!(
            "dtype `{name}` is not supported; use float32, float64, int32, uint32 or bool"
        ))
    })
}

/// The other operand of a binary op: an array or a weakly typed Python scalar.
pub enum Other {
    Array(Array),
    Scalar(Scalar),
}

impl<'py> FromPyObject<'_, 'py> for Other {
    type Error = PyErr;

    fn extract(ob: Borrowed<'_, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(a) = ob.cast::<RawArray>() {
            return Ok(Other::Array(a.get().inner.clone()));
        }
        // bool before int: Python's bool is an int.
        if let Ok(b) = ob.extract::<bool>() {
            if ob.is_instance_of::<pyo3::types::PyBool>() {
                return Ok(Other::Scalar(Scalar::Bool(b)));
            }
        }
        if ob.is_instance_of::<pyo3::types::PyInt>() {
            let v: i64 = ob.extract()?;
            return Ok(Other::Scalar(Scalar::Int(v)));
        }
        if let Ok(v) = ob.extract::<f64>() {
            return Ok(Other::Scalar(Scalar::Float(v)));
        }
        Err(PyTypeError::new_err(format!(
            "expected an array or a Python scalar, got {}",
            ob.get_type().name()?
        )))
    }
}

impl Other {
    fn operand(&self) -> Operand<'_> {
        match self {
            Other::Array(a) => Operand::Array(a),
            Other::Scalar(s) => Operand::Scalar(*s),
        }
    }
}

fn axes_of(axes: &Option<Vec<isize>>) -> Axes<'_> {
    match axes {
        None => Axes::All,
        Some(v) => Axes::Some(v),
    }
}

#[pymethods]
impl RawArray {
    /// Uploads little-endian `data` as an array of `dtype` and `shape` (to `platform`'s device,
    /// or the default one).
    #[staticmethod]
    #[pyo3(signature = (data, dtype, shape, platform = None))]
    fn from_bytes(
        data: &[u8],
        dtype: &str,
        shape: Vec<usize>,
        platform: Option<&str>,
    ) -> PyResult<RawArray> {
        let ty = TensorType::new(dtype_from_name(dtype)?, shape);
        // `data` borrows the Python bytes object: the plugin copies it once, into its buffer.
        let host = HostView::new(ty, data).map_err(PyValueError::new_err)?;
        let device = match platform {
            Some(p) => quabla::device(p).py()?,
            None => quabla::default_device().py()?,
        };
        Ok(Array::from_view_on(&device, host).py()?.into())
    }

    /// The data as little-endian bytes (waits for the device): the bytes of the copy
    /// `copy_to_host_async` started, where one is pending.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let a = self.inner.clone();
        let host = match self.take_pending() {
            Some(event) => {
                let platform = a.device().platform().to_string();
                py.detach(move || event.wait())
                    .map_err(|e| quabla::Error::backend(platform, e))
                    .py()?
            }
            None => py.detach(move || a.to_host()).py()?,
        };
        Ok(PyBytes::new(py, &host.bytes))
    }

    /// Starts copying the data to the host and returns at once (JAX's
    /// `copy_to_host_async`); the next read (`np.asarray`, `item`, ...) takes these bytes
    /// instead of starting its own copy. Starting again while one is pending does nothing.
    fn copy_to_host_async(&self) -> PyResult<()> {
        let mut pending = self
            .pending
            .lock()
            .map_err(|_| PyValueError::new_err("an array's pending copy lock is poisoned"))?;
        if pending.is_none() {
            *pending = Some(self.inner.start_download().py()?);
        }
        Ok(())
    }

    /// Waits until the value has been computed, copying nothing.
    fn block_until_ready(&self, py: Python<'_>) -> PyResult<()> {
        let a = self.inner.clone();
        py.detach(move || a.block_until_ready()).py()
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.shape())
    }

    #[getter]
    fn dtype(&self) -> &'static str {
        self.inner.dtype().numpy_name()
    }

    #[getter]
    fn is_traced(&self) -> bool {
        self.inner.is_traced()
    }

    #[getter]
    fn platform(&self) -> String {
        self.inner.device().platform().to_string()
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.inner)
    }

    /// A constant of `shape` and `dtype` beside this array (in its trace or on its device).
    fn filled(&self, shape: Vec<usize>, value: Other, dtype: &str) -> PyResult<RawArray> {
        let Other::Scalar(s) = value else {
            return Err(PyTypeError::new_err("filled needs a Python scalar"));
        };
        Ok(self
            .inner
            .filled_beside(&shape, s, dtype_from_name(dtype)?)
            .py()?
            .into())
    }

    /// An elementwise unary primitive by its name in the op-spec table (`sin`, `not`...;
    /// numpy's `logical_not` too), or `stop_gradient`.
    fn unary(&self, op: &str) -> PyResult<RawArray> {
        let x = &self.inner;
        let r = match (op, OpKind::from_name(op)) {
            ("logical_not", _) => x.logical_not(),
            (_, Some(OpKind::Unary(u))) => x.unary_op(u),
            (_, Some(OpKind::StopGradient)) => x.stop_gradient(),
            _ => return Err(PyValueError::new_err(format!("unknown unary op `{op}`"))),
        };
        Ok(r.py()?.into())
    }

    /// An elementwise binary primitive by name, with broadcasting and weak scalars. With
    /// `reflected`, the scalar or array `other` is the left operand.
    #[pyo3(signature = (op, other, reflected = false))]
    fn binary(&self, op: &str, other: Other, reflected: bool) -> PyResult<RawArray> {
        let (lhs, rhs) = if reflected {
            let lhs = match &other {
                Other::Array(a) => a.clone(),
                Other::Scalar(s) => self
                    .inner
                    .filled_beside(&[], *s, s.weak_dtype(self.inner.dtype()))
                    .py()?,
            };
            (lhs, Other::Array(self.inner.clone()))
        } else {
            (self.inner.clone(), other)
        };
        let o = rhs.operand();
        let r = match op {
            "add" => lhs.add(o),
            "sub" => lhs.sub(o),
            "mul" => lhs.mul(o),
            "div" => lhs.div(o),
            "div_promoted" => lhs.div_promoted(o),
            "rem" => lhs.rem(o),
            "pow" => lhs.pow(o),
            "max" => lhs.maximum(o),
            "min" => lhs.minimum(o),
            "and" => lhs.bitwise_and(o),
            "or" => lhs.bitwise_or(o),
            "xor" => lhs.bitwise_xor(o),
            "shift_left" => lhs.shift_left(o),
            "shift_right_logical" => lhs.shift_right_logical(o),
            "shift_right_arithmetic" => lhs.shift_right_arithmetic(o),
            "atan2" => lhs.atan2(o),
            "eq" => lhs.eq(o),
            "ne" => lhs.ne(o),
            "lt" => lhs.lt(o),
            "le" => lhs.le(o),
            "gt" => lhs.gt(o),
            "ge" => lhs.ge(o),
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown binary op `{other}`"
                )))
            }
        };
        Ok(r.py()?.into())
    }

    /// `where(self, on_true, on_false)` for a bool `self`.
    fn select(&self, on_true: &RawArray, on_false: Other) -> PyResult<RawArray> {
        Ok(self
            .inner
            .select(&on_true.inner, on_false.operand())
            .py()?
            .into())
    }

    fn astype(&self, dtype: &str) -> PyResult<RawArray> {
        Ok(self.inner.astype(dtype_from_name(dtype)?).py()?.into())
    }

    fn bitcast(&self, dtype: &str) -> PyResult<RawArray> {
        Ok(self.inner.bitcast(dtype_from_name(dtype)?).py()?.into())
    }

    fn reshape(&self, shape: Vec<isize>) -> PyResult<RawArray> {
        Ok(self.inner.reshape(&shape).py()?.into())
    }

    fn transpose(&self, perm: Vec<usize>) -> PyResult<RawArray> {
        Ok(self.inner.transpose(&perm).py()?.into())
    }

    fn broadcast_to(&self, shape: Vec<usize>) -> PyResult<RawArray> {
        Ok(self.inner.broadcast_to(&shape).py()?.into())
    }

    fn broadcast_in_dim(&self, shape: Vec<usize>, dims: Vec<usize>) -> PyResult<RawArray> {
        Ok(self.inner.broadcast_in_dim(&shape, &dims).py()?.into())
    }

    fn slice(
        &self,
        start: Vec<usize>,
        limit: Vec<usize>,
        strides: Vec<usize>,
    ) -> PyResult<RawArray> {
        Ok(self.inner.slice(&start, &limit, &strides).py()?.into())
    }

    fn pad(
        &self,
        value: Other,
        low: Vec<i64>,
        high: Vec<i64>,
        interior: Vec<usize>,
    ) -> PyResult<RawArray> {
        let Other::Scalar(s) = value else {
            return Err(PyTypeError::new_err("pad's value must be a Python scalar"));
        };
        Ok(self.inner.pad(s, &low, &high, &interior).py()?.into())
    }

    #[staticmethod]
    fn concatenate(arrays: Vec<RawArray>, axis: isize) -> PyResult<RawArray> {
        let refs: Vec<&Array> = arrays.iter().map(|a| &a.inner).collect();
        Ok(Array::concatenate(&refs, axis).py()?.into())
    }

    /// `lax.sort`: `arrays` (one shape) sorted together along `axis`, stably, by the first
    /// `num_keys` of them.
    #[staticmethod]
    fn sort(
        arrays: Vec<RawArray>,
        axis: isize,
        num_keys: usize,
        descending: bool,
    ) -> PyResult<Vec<RawArray>> {
        let inner: Vec<Array> = arrays.into_iter().map(|a| a.inner).collect();
        let out = quabla::lax::sort(&inner, axis, num_keys, descending).py()?;
        Ok(out.into_iter().map(RawArray::from).collect())
    }

    /// `lax.conv_general_dilated` with resolved arguments: `padding` is `"VALID"`,
    /// `"SAME"`, `"SAME_LOWER"` or one `(low, high)` pair per spatial axis; the specs list
    /// (batch, feature, spatial...) axes as JAX's `ConvDimensionNumbers`.
    #[staticmethod]
    #[allow(clippy::too_many_arguments)]
    fn conv(
        lhs: &RawArray,
        rhs: &RawArray,
        window_strides: Vec<usize>,
        padding: &Bound<'_, PyAny>,
        lhs_dilation: Vec<usize>,
        rhs_dilation: Vec<usize>,
        specs: (Vec<usize>, Vec<usize>, Vec<usize>),
        groups: (usize, usize),
    ) -> PyResult<RawArray> {
        use quabla::lax::{ConvDimensionNumbers, ConvOptions, Padding};
        let padding = match padding.extract::<String>() {
            Ok(s) => match s.as_str() {
                "VALID" => Padding::Valid,
                "SAME" => Padding::Same,
                "SAME_LOWER" => Padding::SameLower,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "conv: unknown padding {other:?}; use 'VALID', 'SAME', 'SAME_LOWER' \
                         or (low, high) pairs"
                    )))
                }
            },
            Err(_) => Padding::Explicit(padding.extract::<Vec<(i64, i64)>>()?),
        };
        let opts = ConvOptions {
            window_strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            dimension_numbers: Some(ConvDimensionNumbers {
                lhs_spec: specs.0,
                rhs_spec: specs.1,
                out_spec: specs.2,
            }),
            feature_group_count: groups.0,
            batch_group_count: groups.1,
        };
        Ok(
            quabla::lax::conv_general_dilated(&lhs.inner, &rhs.inner, &opts)
                .py()?
                .into(),
        )
    }

    /// The i32 indices that sort along `axis` (stable).
    fn argsort(&self, axis: isize, descending: bool) -> PyResult<RawArray> {
        Ok(self.inner.argsort(axis, descending).py()?.into())
    }

    /// `lax.top_k` along the last axis: (values, i32 indices).
    fn top_k(&self, k: usize) -> PyResult<(RawArray, RawArray)> {
        let (v, i) = self.inner.top_k(k).py()?;
        Ok((v.into(), i.into()))
    }

    fn flip(&self, axes: Vec<usize>) -> PyResult<RawArray> {
        Ok(self.inner.flip(&axes).py()?.into())
    }

    /// A reduction by kind (`sum`, `prod`, `max`, `min`, `all`, `any`, `mean`) over `axes`
    /// (all when `None`).
    #[pyo3(signature = (kind, axes = None, keepdims = false))]
    fn reduce(&self, kind: &str, axes: Option<Vec<isize>>, keepdims: bool) -> PyResult<RawArray> {
        let a = axes_of(&axes);
        let x = &self.inner;
        let r = match kind {
            "sum" => x.sum(a, keepdims),
            "prod" => x.prod(a, keepdims),
            "max" => x.max(a, keepdims),
            "min" => x.min(a, keepdims),
            "all" => x.all(a, keepdims),
            "any" => x.any(a, keepdims),
            "mean" => x.mean(a, keepdims),
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown reduction `{other}`"
                )))
            }
        };
        Ok(r.py()?.into())
    }

    /// A cumulative reduction (`sum`, `prod`, `max`, `min`) along `axis`.
    #[pyo3(signature = (kind, axis, reverse = false))]
    fn cumulative(&self, kind: &str, axis: isize, reverse: bool) -> PyResult<RawArray> {
        let x = &self.inner;
        let r = match kind {
            "sum" => x.cumsum(axis, reverse),
            "prod" => x.cumprod(axis, reverse),
            "max" => x.cummax(axis, reverse),
            "min" => x.cummin(axis, reverse),
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown cumulative op `{other}`"
                )))
            }
        };
        Ok(r.py()?.into())
    }

    /// `lax.dot_general` with (contracting, batch) dimension numbers.
    fn dot_general(
        &self,
        rhs: &RawArray,
        lhs_contract: Vec<usize>,
        rhs_contract: Vec<usize>,
        lhs_batch: Vec<usize>,
        rhs_batch: Vec<usize>,
    ) -> PyResult<RawArray> {
        let dims = DotDims {
            lhs_batch,
            rhs_batch,
            lhs_contract,
            rhs_contract,
        };
        Ok(self.inner.dot_general(&rhs.inner, dims).py()?.into())
    }

    /// XLA gather (the index vector is the last dim of `indices`; starts are clamped).
    fn gather(
        &self,
        indices: &RawArray,
        offset_dims: Vec<usize>,
        collapsed_slice_dims: Vec<usize>,
        start_index_map: Vec<usize>,
        slice_sizes: Vec<usize>,
    ) -> PyResult<RawArray> {
        let dims = GatherDims {
            offset_dims,
            collapsed_slice_dims,
            start_index_map,
            slice_sizes,
        };
        Ok(self.inner.gather(&indices.inner, dims).py()?.into())
    }

    /// XLA scatter-add (windows not wholly inside the operand are dropped).
    fn scatter_add(
        &self,
        indices: &RawArray,
        updates: &RawArray,
        update_window_dims: Vec<usize>,
        inserted_window_dims: Vec<usize>,
        scatter_dims_to_operand_dims: Vec<usize>,
    ) -> PyResult<RawArray> {
        let dims = ScatterDims {
            update_window_dims,
            inserted_window_dims,
            scatter_dims_to_operand_dims,
        };
        Ok(self
            .inner
            .scatter_add(&indices.inner, &updates.inner, dims)
            .py()?
            .into())
    }

    fn dynamic_slice(&self, starts: Vec<RawArray>, sizes: Vec<usize>) -> PyResult<RawArray> {
        let refs: Vec<&Array> = starts.iter().map(|a| &a.inner).collect();
        Ok(self.inner.dynamic_slice(&refs, &sizes).py()?.into())
    }

    fn dynamic_update_slice(&self, update: &RawArray, starts: Vec<RawArray>) -> PyResult<RawArray> {
        let refs: Vec<&Array> = starts.iter().map(|a| &a.inner).collect();
        Ok(self
            .inner
            .dynamic_update_slice(&update.inner, &refs)
            .py()?
            .into())
    }

    /// `iota` of `dtype` and `shape` counting along `dim`, beside this array.
    fn iota(&self, dtype: &str, shape: Vec<usize>, dim: usize) -> PyResult<RawArray> {
        let d = dtype_from_name(dtype)?;
        Ok(self.inner.iota_beside(d, &shape, dim).py()?.into())
    }
}

/// `iota` on a platform's device (or the default one).
#[pyfunction]
#[pyo3(signature = (dtype, shape, dim, platform = None))]
fn iota(dtype: &str, shape: Vec<usize>, dim: usize, platform: Option<&str>) -> PyResult<RawArray> {
    let device = match platform {
        Some(p) => quabla::device(p).py()?,
        None => quabla::default_device().py()?,
    };
    Ok(
        Array::iota_on(&device, dtype_from_name(dtype)?, &shape, dim)
            .py()?
            .into(),
    )
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RawArray>()?;
    m.add_function(wrap_pyfunction!(iota, m)?)?;
    Ok(())
}
