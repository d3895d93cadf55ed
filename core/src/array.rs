//! `Array`: an n-dimensional array on a device, or a traced value inside `jit`.

use crate::error::{Error, Result};
use crate::expr::ExprTree;
use crate::runtime::{default_device, Device};
use crate::trace::Trace;
use quabla_abi::host::Buffer;
use quabla_abi::qir::ValueId;
use quabla_abi::{DType, Element, HostArray, HostView, TensorType};
use std::sync::Arc;

#[derive(Clone)]
pub(crate) enum Repr {
    Concrete {
        device: Arc<Device>,
        buffer: Arc<Buffer>,
    },
    Traced {
        trace: Arc<Trace>,
        value: ValueId,
    },
}

/// An array of one dtype and shape.
///
/// Concrete arrays live on a device and every operation on them runs at once (through a
/// cached single-op executable). Inside [`jit`](crate::jit) arrays are traced: operations
/// record a program instead, and their data cannot be read.
///
/// ```no_run
/// use quabla::Array;
/// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3]).unwrap();
/// let y = (&x * 2.0).unwrap().exp().unwrap();
/// assert_eq!(y.dtype(), quabla::DType::F32);
/// println!("{:?}", y.to_vec::<f32>().unwrap());
/// ```
#[derive(Clone)]
pub struct Array {
    pub(crate) ty: TensorType,
    pub(crate) repr: Repr,
}

impl Array {
    /// Uploads `data` with `shape` to the default device.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let m = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(m.shape(), &[2, 2]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn from_slice<T: Element>(data: &[T], shape: &[usize]) -> Result<Array> {
        Self::from_slice_on(&default_device()?, data, shape)
    }

    /// Uploads `data` with `shape` to `device`.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let cpu = quabla::device("cpu")?;
    /// let x = Array::from_slice_on(&cpu, &[1i32, 2, 3], &[3])?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn from_slice_on<T: Element>(
        device: &Arc<Device>,
        data: &[T],
        shape: &[usize],
    ) -> Result<Array> {
        let host = HostArray::from_slice(shape.to_vec(), data).map_err(Error::Shape)?;
        Self::from_host_on(device, &host)
    }

    /// Uploads a host array to `device`.
    ///
    /// ```no_run
    /// # use quabla::{Array, HostArray};
    /// let host = HostArray::from_slice(vec![2], &[0.5f64, 1.5]).map_err(quabla::Error::Shape)?;
    /// let x = Array::from_host_on(&quabla::default_device()?, &host)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn from_host_on(device: &Arc<Device>, host: &HostArray) -> Result<Array> {
        Self::from_view_on(device, host.view())
    }

    /// Uploads borrowed host bytes to `device`: the plugin reads them in place and copies them
    /// once, into its buffer.
    ///
    /// ```no_run
    /// use quabla::{Array, DType, HostView, TensorType};
    /// let bytes: Vec<u8> = [1.0f32, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    /// let view = HostView::new(TensorType::new(DType::F32, vec![2]), &bytes).unwrap();
    /// let a = Array::from_view_on(&quabla::default_device().unwrap(), view).unwrap();
    /// assert_eq!(a.to_vec::<f32>().unwrap(), [1.0, 2.0]);
    /// ```
    pub fn from_view_on(device: &Arc<Device>, host: HostView<'_>) -> Result<Array> {
        let buffer = device.upload(host.clone())?;
        Ok(Array {
            ty: host.ty,
            repr: Repr::Concrete {
                device: device.clone(),
                buffer: Arc::new(buffer),
            },
        })
    }

    /// A 0-d array on the default device.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let t = Array::scalar(0.5f64)?;
    /// assert_eq!((t.ndim(), t.item::<f64>()?), (0, 0.5));
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn scalar<T: Element>(v: T) -> Result<Array> {
        Self::from_slice(&[v], &[])
    }

    /// Several 0-d arrays at once, in order, to destructure by name.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let [alpha, beta] = Array::scalars([1.5f64, 0.25])?;
    /// assert_eq!((alpha.ndim(), beta.item::<f64>()?), (0, 0.25));
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn scalars<T: Element, const N: usize>(values: [T; N]) -> Result<[Array; N]> {
        values.map(Self::scalar).get()
    }

    /// The element type.
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// assert_eq!(Array::from_slice(&[1u32], &[1])?.dtype(), DType::U32);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn dtype(&self) -> DType {
        self.ty.dtype
    }

    /// The extent of each axis.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// assert_eq!(Array::from_slice(&[0.0f32; 6], &[2, 3])?.shape(), &[2, 3]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn shape(&self) -> &[usize] {
        &self.ty.shape
    }

    /// The number of axes (0 for a scalar).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// assert_eq!(Array::from_slice(&[0.0f32; 6], &[2, 3])?.ndim(), 2);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn ndim(&self) -> usize {
        self.ty.rank()
    }

    /// The number of elements (the product of the shape).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// assert_eq!(Array::from_slice(&[0.0f32; 6], &[2, 3])?.size(), 6);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn size(&self) -> usize {
        self.ty.num_elements()
    }

    /// The dtype and shape together, as a program's inputs and results name them.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[0.0f32; 6], &[2, 3])?;
    /// assert_eq!(x.tensor_type().to_string(), "f32[2,3]");
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn tensor_type(&self) -> &TensorType {
        &self.ty
    }

    /// Whether this is a traced value (inside `jit`).
    ///
    /// ```no_run
    /// # use quabla::{jit, Array};
    /// let x = Array::from_slice(&[1.0f32], &[1])?;
    /// assert!(!x.is_traced());
    /// let f = jit(|a: &[Array]| { assert!(a[0].is_traced()); Ok(vec![a[0].clone()]) });
    /// f.call(&[x])?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn is_traced(&self) -> bool {
        matches!(self.repr, Repr::Traced { .. })
    }

    /// The device this array lives on (the trace's target device while tracing).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32], &[1])?;
    /// println!("on {}", x.device().platform());
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn device(&self) -> &Arc<Device> {
        match &self.repr {
            Repr::Concrete { device, .. } => device,
            Repr::Traced { trace, .. } => trace.device(),
        }
    }

    /// Copies the data to the host. An error while tracing, except for a value a
    /// transformation called outside `jit` can compute from its concrete inputs (as JAX's
    /// tracers outside `jit` have their primal values).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let host = Array::from_slice(&[1.0f32, 2.0], &[2])?.to_host()?;
    /// assert_eq!(host.to_vec::<f32>().map_err(quabla::Error::DType)?, [1.0, 2.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn to_host(&self) -> Result<HostArray> {
        match &self.repr {
            Repr::Concrete { device, buffer } => {
                buffer.to_host().map_err(|e| device.backend_err(e))
            }
            Repr::Traced { .. } => match self.known_value()? {
                Some(a) => a.to_host(),
                None => Err(Error::TracedValue),
            },
        }
    }

    /// This array's value as a concrete array: itself when concrete; for a traced value, the
    /// value computed from the trace's concrete inputs when a transformation was called
    /// outside `jit`, else `None`.
    pub(crate) fn known_value(&self) -> Result<Option<Array>> {
        match &self.repr {
            Repr::Concrete { .. } => Ok(Some(self.clone())),
            Repr::Traced { trace, value } => trace.value_of(*value),
        }
    }

    /// Waits until the value has been computed, copying nothing (JAX's `block_until_ready`):
    /// the way to time a computation on a backend that runs asynchronously. A traced value
    /// has nothing to wait for and returns at once.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    /// let y = (&x * &x).unwrap();
    /// y.block_until_ready().unwrap();
    /// ```
    pub fn block_until_ready(&self) -> Result<()> {
        match &self.repr {
            Repr::Concrete { device, buffer } => buffer
                .block_until_ready()
                .map_err(|e| device.backend_err(e)),
            Repr::Traced { .. } => Ok(()),
        }
    }

    /// The memory of a concrete array as its plugin exports it (ABI 1.3, DLPack style), valid
    /// while this array or a clone of it lives; `None` when the plugin does not export, and
    /// for a traced value. The memory is the array's own: never write to it.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    /// if let Some(m) = x.export_memory().unwrap() {
    ///     assert_eq!(m.byte_size, 8); // the CPU plugin's own vector, not a copy
    /// }
    /// ```
    pub fn export_memory(&self) -> Result<Option<quabla_abi::abi::BufferExport>> {
        match &self.repr {
            Repr::Concrete { device, buffer } => buffer.export().map_err(|e| device.backend_err(e)),
            Repr::Traced { .. } => Ok(None),
        }
    }

    /// Starts copying the data to the host without waiting for it: the event is ready once
    /// the bytes have arrived ([`quabla_abi::host::Event::is_ready`] polls, `wait` takes them).
    /// The only way to read a WebGPU array in the browser, where nothing may block.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0], &[2]).unwrap();
    /// let event = x.start_download().unwrap();
    /// while !event.is_ready().unwrap() {}
    /// assert_eq!(event.wait().unwrap().to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
    /// ```
    pub fn start_download(&self) -> Result<quabla_abi::host::Event> {
        match &self.repr {
            Repr::Concrete { device, buffer } => {
                buffer.download().map_err(|e| device.backend_err(e))
            }
            Repr::Traced { .. } => Err(Error::TracedValue),
        }
    }

    /// Copies the data to a `Vec<T>`; `T` must be the array's dtype.
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// let x = Array::from_slice(&[1i32, 2], &[2])?;
    /// assert_eq!(x.astype(DType::F64)?.to_vec::<f64>()?, [1.0, 2.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(crate::Error::dtype(format!(
                "to_vec::<{}>() on a {} array; convert first with astype(DType::{:?})",
                T::DTYPE,
                self.dtype(),
                T::DTYPE
            )));
        }
        self.to_host()?.to_vec().map_err(Error::DType)
    }

    /// The single element of a size-1 array.
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f64, 2.0], &[2])?;
    /// assert_eq!(x.sum(Axes::All, false)?.item::<f64>()?, 3.0);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn item<T: Element>(&self) -> Result<T> {
        let v = self.to_vec::<T>()?;
        match v.as_slice() {
            [x] => Ok(*x),
            _ => Err(crate::Error::shape(format!(
                "item() needs a size-1 array, this one is {}",
                self.ty
            ))),
        }
    }

    pub(crate) fn buffer(&self) -> Option<&Arc<Buffer>> {
        match &self.repr {
            Repr::Concrete { buffer, .. } => Some(buffer),
            Repr::Traced { .. } => None,
        }
    }

    pub(crate) fn traced(trace: Arc<Trace>, value: ValueId, ty: TensorType) -> Array {
        Array {
            ty,
            repr: Repr::Traced { trace, value },
        }
    }
}
