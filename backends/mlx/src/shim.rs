//! The C shim (`shim/qmlx.cpp`) as safe Rust: [`MlxArray`] owns one MLX array handle, and
//! every call returns an [`AbiError`] carrying MLX's own message when MLX throws.
//!
//! MLX arrays are lazy graph nodes; nothing here computes until [`eval`] or
//! [`MlxArray::to_bytes`]. Calls are serialised by the caller ([`crate::MLX`]): MLX's graph
//! construction and evaluation are not documented as safe from several threads at once.

use quabla_abi::abi::AbiError;
use quabla_abi::DType;
use std::ffi::{c_char, c_int, c_void, CStr};

#[repr(C)]
pub struct QmlxArray {
    _private: [u8; 0],
}

pub type Handle = *mut QmlxArray;

extern "C" {
    fn qmlx_last_error() -> *const c_char;
    fn qmlx_version() -> *const c_char;
    fn qmlx_from_bytes(
        dtype: c_int,
        shape: *const i32,
        ndim: usize,
        data: *const c_void,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_to_bytes(a: Handle, dst: *mut c_void, nbytes: usize) -> c_int;
    fn qmlx_eval(arrays: *const Handle, n: usize) -> c_int;
    fn qmlx_async_eval(arrays: *const Handle, n: usize) -> c_int;
    fn qmlx_is_available(a: Handle) -> c_int;
    fn qmlx_gpu_available() -> c_int;
    fn qmlx_select_gpu(gpu: c_int);
    fn qmlx_free(a: Handle);
    fn qmlx_unary(op: c_int, a: Handle, out: *mut Handle) -> c_int;
    fn qmlx_libm(fn_: c_int, a: Handle, out: *mut Handle) -> c_int;
    fn qmlx_binary(op: c_int, a: Handle, b: Handle, out: *mut Handle) -> c_int;
    fn qmlx_where(c: Handle, a: Handle, b: Handle, out: *mut Handle) -> c_int;
    fn qmlx_astype(a: Handle, dtype: c_int, out: *mut Handle) -> c_int;
    fn qmlx_view(a: Handle, dtype: c_int, out: *mut Handle) -> c_int;
    fn qmlx_arange(n: i32, dtype: c_int, out: *mut Handle) -> c_int;
    fn qmlx_broadcast_to(a: Handle, shape: *const i32, ndim: usize, out: *mut Handle) -> c_int;
    fn qmlx_reshape(a: Handle, shape: *const i32, ndim: usize, out: *mut Handle) -> c_int;
    fn qmlx_transpose(a: Handle, perm: *const i32, ndim: usize, out: *mut Handle) -> c_int;
    fn qmlx_slice(
        a: Handle,
        start: *const i32,
        stop: *const i32,
        strides: *const i32,
        ndim: usize,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_pad(
        a: Handle,
        low: *const i32,
        high: *const i32,
        ndim: usize,
        value: Handle,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_concatenate(arrays: *const Handle, n: usize, axis: i32, out: *mut Handle) -> c_int;
    fn qmlx_flip(a: Handle, axis: i32, out: *mut Handle) -> c_int;
    fn qmlx_reduce(
        kind: c_int,
        a: Handle,
        axes: *const i32,
        naxes: usize,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_cumulative(
        kind: c_int,
        a: Handle,
        axis: i32,
        reverse: c_int,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_matmul(a: Handle, b: Handle, out: *mut Handle) -> c_int;
    fn qmlx_gather(
        a: Handle,
        indices: *const Handle,
        n: usize,
        axes: *const i32,
        slice_sizes: *const i32,
        ndim: usize,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_scatter_add(
        a: Handle,
        indices: *const Handle,
        n: usize,
        updates: Handle,
        axes: *const i32,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_dynamic_slice(
        a: Handle,
        start: Handle,
        axes: *const i32,
        naxes: usize,
        sizes: *const i32,
        ndim: usize,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_dynamic_update_slice(
        a: Handle,
        update: Handle,
        start: Handle,
        axes: *const i32,
        naxes: usize,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_sort_permutation(
        keys: *const Handle,
        n: usize,
        axis: i32,
        descending: c_int,
        out: *mut Handle,
    ) -> c_int;
    fn qmlx_cholesky(a: Handle, out: *mut Handle) -> c_int;
    fn qmlx_lu(a: Handle, lu: *mut Handle, pivots: *mut Handle, perm: *mut Handle) -> c_int;
    fn qmlx_qr(a: Handle, q: *mut Handle, r: *mut Handle) -> c_int;
    fn qmlx_svd(
        a: Handle,
        compute_uv: c_int,
        u: *mut Handle,
        s: *mut Handle,
        vt: *mut Handle,
    ) -> c_int;
    fn qmlx_eigh(a: Handle, w: *mut Handle, v: *mut Handle) -> c_int;
    fn qmlx_solve_triangular(a: Handle, b: Handle, upper: c_int, out: *mut Handle) -> c_int;
    fn qmlx_take_along_axis(a: Handle, indices: Handle, axis: i32, out: *mut Handle) -> c_int;
}

/// Unary functions of the shim (`enum qmlx_unary`).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub enum Unary {
    Neg,
    Abs,
    Sign,
    Floor,
    Ceil,
    RoundEven,
    Expm1,
    Log,
    Log1p,
    Sqrt,
    Rsqrt,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    IsFinite,
    IsNan,
    LogicalNot,
    BitwiseNot,
}

/// Functions the shim computes with the C library (`enum qmlx_libm`), float32 or float64.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub enum Libm {
    Exp,
    Exp2,
    Sin,
    Cos,
    Erf,
    Erfc,
    Cbrt,
    Logistic,
    ErfInv,
}

/// Binary functions of the shim (`enum qmlx_binary`).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Divide,
    FloorDivide,
    Remainder,
    Power,
    Maximum,
    Minimum,
    Atan2,
    LogicalAnd,
    LogicalOr,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    ShiftLeft,
    ShiftRight,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// Reductions and cumulative folds of the shim (`enum qmlx_reduce`).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub enum Fold {
    Sum,
    Prod,
    Max,
    Min,
    All,
    Any,
}

fn dtype_code(d: DType) -> c_int {
    match d {
        DType::Bool => 0,
        DType::I32 => 1,
        DType::U32 => 2,
        DType::F32 => 3,
        DType::F64 => 4,
    }
}

pub(crate) fn last_error(what: &str) -> AbiError {
    // SAFETY: the shim returns a pointer to its thread-local, NUL-terminated message.
    let msg = unsafe { CStr::from_ptr(qmlx_last_error()) }.to_string_lossy();
    AbiError::internal(format!("MLX failed in {what}: {msg}"))
}

/// The linked MLX's version string.
pub fn version() -> String {
    // SAFETY: a static NUL-terminated string.
    unsafe { CStr::from_ptr(qmlx_version()) }
        .to_string_lossy()
        .into_owned()
}

fn dims(v: &[usize]) -> Result<Vec<i32>, AbiError> {
    v.iter()
        .map(|&d| {
            i32::try_from(d).map_err(|_| {
                AbiError::invalid(format!("MLX's shapes are 32-bit; {d} is too large"))
            })
        })
        .collect()
}

type R = Result<MlxArray, AbiError>;

/// One owned MLX array (a graph node, computed or not).
pub struct MlxArray(Handle);

// SAFETY: an `mx::array` is a reference-counted handle (atomic counts); every call that reads
// or builds graph nodes runs under the plugin's MLX lock.
unsafe impl Send for MlxArray {}
unsafe impl Sync for MlxArray {}

impl Drop for MlxArray {
    fn drop(&mut self) {
        // SAFETY: the handle came from the shim and is freed once.
        unsafe { qmlx_free(self.0) }
    }
}

/// Calls a shim constructor and wraps its result.
fn make(what: &str, f: impl FnOnce(*mut Handle) -> c_int) -> Result<MlxArray, AbiError> {
    let mut out: Handle = std::ptr::null_mut();
    if f(&mut out) != 0 || out.is_null() {
        return Err(last_error(what));
    }
    Ok(MlxArray(out))
}

/// Calls a shim function with `n` results and wraps them (all or none).
pub(crate) fn make_n(
    what: &str,
    n: usize,
    f: impl FnOnce(&mut [Handle]) -> c_int,
) -> Result<Vec<MlxArray>, AbiError> {
    let mut out: Vec<Handle> = vec![std::ptr::null_mut(); n];
    let status = f(&mut out);
    // Whatever was made is owned (and freed) here, even on failure.
    let made: Vec<MlxArray> = out
        .into_iter()
        .filter(|h| !h.is_null())
        .map(MlxArray)
        .collect();
    if status != 0 || made.len() != n {
        return Err(last_error(what));
    }
    Ok(made)
}

pub(crate) fn handles(arrays: &[&MlxArray]) -> Vec<Handle> {
    arrays.iter().map(|a| a.0).collect()
}

/// Computes every array (MLX's `eval`).
pub fn eval(arrays: &[&MlxArray]) -> Result<(), AbiError> {
    let h = handles(arrays);
    // SAFETY: valid handles, `n` of them.
    if unsafe { qmlx_eval(h.as_ptr(), h.len()) } != 0 {
        return Err(last_error("eval"));
    }
    Ok(())
}

/// Schedules the computation of every array and returns at once (MLX's `async_eval`).
pub fn async_eval(arrays: &[&MlxArray]) -> Result<(), AbiError> {
    let h = handles(arrays);
    // SAFETY: valid handles, `n` of them.
    if unsafe { qmlx_async_eval(h.as_ptr(), h.len()) } != 0 {
        return Err(last_error("async_eval"));
    }
    Ok(())
}

/// Whether this MLX build has a usable GPU.
pub fn gpu_available() -> bool {
    // SAFETY: no arguments; the shim catches MLX's exceptions.
    unsafe { qmlx_gpu_available() != 0 }
}

/// Runs the ops that are not the shim's own primitives or linear algebra on the GPU.
pub fn select_gpu(gpu: bool) {
    // SAFETY: sets an atomic flag.
    unsafe { qmlx_select_gpu(gpu as c_int) }
}

impl MlxArray {
    /// Takes ownership of a handle the shim made (freed when the result drops).
    ///
    /// # Safety
    /// `h` is a live handle from the shim that nothing else frees.
    pub(crate) unsafe fn from_handle(h: Handle) -> MlxArray {
        MlxArray(h)
    }

    /// Gives up ownership: the shim frees the handle from now on.
    pub(crate) fn into_handle(self) -> Handle {
        let h = self.0;
        std::mem::forget(self);
        h
    }

    /// Whether the value is computed (never blocks).
    pub fn is_available(&self) -> bool {
        // SAFETY: a valid handle.
        unsafe { qmlx_is_available(self.0) != 0 }
    }

    /// An array of `dtype` and `shape` from little-endian host bytes (bool as one byte).
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Self, AbiError> {
        let shape = dims(shape)?;
        // MLX reads the elements through typed pointers: hand it 8-byte aligned memory.
        let mut aligned = vec![0u64; bytes.len().div_ceil(8)];
        // SAFETY: `aligned` has at least `bytes.len()` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                aligned.as_mut_ptr() as *mut u8,
                bytes.len(),
            )
        };
        make("from_bytes", |out| unsafe {
            qmlx_from_bytes(
                dtype_code(dtype),
                shape.as_ptr(),
                shape.len(),
                aligned.as_ptr() as *const c_void,
                out,
            )
        })
    }

    /// Computes the array and copies its `nbytes` row-major bytes out.
    pub fn to_bytes(&self, nbytes: usize) -> Result<Vec<u8>, AbiError> {
        let mut out = vec![0u8; nbytes];
        // SAFETY: `out` has `nbytes` bytes; the shim checks the array's size against it.
        if unsafe { qmlx_to_bytes(self.0, out.as_mut_ptr() as *mut c_void, nbytes) } != 0 {
            return Err(last_error("a read back"));
        }
        Ok(out)
    }

    pub fn unary(&self, op: Unary) -> Result<Self, AbiError> {
        make("a unary op", |out| unsafe {
            qmlx_unary(op as c_int, self.0, out)
        })
    }

    /// A function MLX computes less accurately than the C library (see [`Libm`]).
    pub fn libm(&self, f: Libm) -> Result<Self, AbiError> {
        make("a C library function", |out| unsafe {
            qmlx_libm(f as c_int, self.0, out)
        })
    }

    pub fn binary(&self, op: Binary, other: &MlxArray) -> Result<Self, AbiError> {
        make("a binary op", |out| unsafe {
            qmlx_binary(op as c_int, self.0, other.0, out)
        })
    }

    /// `where(self, on_true, on_false)`.
    pub fn select(&self, on_true: &MlxArray, on_false: &MlxArray) -> Result<Self, AbiError> {
        make("where", |out| unsafe {
            qmlx_where(self.0, on_true.0, on_false.0, out)
        })
    }

    pub fn astype(&self, dtype: DType) -> Result<Self, AbiError> {
        make("astype", |out| unsafe {
            qmlx_astype(self.0, dtype_code(dtype), out)
        })
    }

    /// The same bits read as `dtype` (of the same width).
    pub fn view(&self, dtype: DType) -> Result<Self, AbiError> {
        make("view", |out| unsafe {
            qmlx_view(self.0, dtype_code(dtype), out)
        })
    }

    /// `0, 1, ..., n - 1` of `dtype`.
    pub fn arange(n: usize, dtype: DType) -> Result<Self, AbiError> {
        let n = dims(&[n])?[0];
        make("arange", |out| unsafe {
            qmlx_arange(n, dtype_code(dtype), out)
        })
    }

    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Self, AbiError> {
        let s = dims(shape)?;
        make("broadcast_to", |out| unsafe {
            qmlx_broadcast_to(self.0, s.as_ptr(), s.len(), out)
        })
    }

    pub fn reshape(&self, shape: &[usize]) -> Result<Self, AbiError> {
        let s = dims(shape)?;
        make("reshape", |out| unsafe {
            qmlx_reshape(self.0, s.as_ptr(), s.len(), out)
        })
    }

    pub fn transpose(&self, perm: &[usize]) -> Result<Self, AbiError> {
        let p = dims(perm)?;
        make("transpose", |out| unsafe {
            qmlx_transpose(self.0, p.as_ptr(), p.len(), out)
        })
    }

    pub fn slice(
        &self,
        start: &[usize],
        stop: &[usize],
        strides: &[usize],
    ) -> Result<Self, AbiError> {
        let (a, b, c) = (dims(start)?, dims(stop)?, dims(strides)?);
        make("slice", |out| unsafe {
            qmlx_slice(self.0, a.as_ptr(), b.as_ptr(), c.as_ptr(), a.len(), out)
        })
    }

    /// Constant padding by `low`/`high` elements per axis with the scalar `value`.
    pub fn pad(&self, low: &[usize], high: &[usize], value: &MlxArray) -> Result<Self, AbiError> {
        let (l, h) = (dims(low)?, dims(high)?);
        make("pad", |out| unsafe {
            qmlx_pad(self.0, l.as_ptr(), h.as_ptr(), l.len(), value.0, out)
        })
    }

    pub fn concatenate(arrays: &[&MlxArray], axis: usize) -> Result<Self, AbiError> {
        let h = handles(arrays);
        make("concatenate", |out| unsafe {
            qmlx_concatenate(h.as_ptr(), h.len(), axis as i32, out)
        })
    }

    pub fn flip(&self, axis: usize) -> Result<Self, AbiError> {
        make("flip", |out| unsafe { qmlx_flip(self.0, axis as i32, out) })
    }

    pub fn reduce(&self, kind: Fold, axes: &[usize]) -> Result<Self, AbiError> {
        let a = dims(axes)?;
        make("a reduction", |out| unsafe {
            qmlx_reduce(kind as c_int, self.0, a.as_ptr(), a.len(), out)
        })
    }

    pub fn cumulative(&self, kind: Fold, axis: usize, reverse: bool) -> Result<Self, AbiError> {
        make("a cumulative op", |out| unsafe {
            qmlx_cumulative(kind as c_int, self.0, axis as i32, reverse as c_int, out)
        })
    }

    pub fn matmul(&self, other: &MlxArray) -> Result<Self, AbiError> {
        make("matmul", |out| unsafe { qmlx_matmul(self.0, other.0, out) })
    }

    /// MLX's `gather`: `indices[k]` index `axes[k]`; the result's shape is the indices'
    /// broadcast shape followed by `slice_sizes` (one per operand axis).
    pub fn gather(
        &self,
        indices: &[&MlxArray],
        axes: &[usize],
        slice_sizes: &[usize],
    ) -> Result<Self, AbiError> {
        let (h, a, s) = (handles(indices), dims(axes)?, dims(slice_sizes)?);
        make("gather", |out| unsafe {
            qmlx_gather(
                self.0,
                h.as_ptr(),
                h.len(),
                a.as_ptr(),
                s.as_ptr(),
                s.len(),
                out,
            )
        })
    }

    /// MLX's `scatter_add` (indices in bounds: MLX does not check them).
    pub fn scatter_add(
        &self,
        indices: &[&MlxArray],
        updates: &MlxArray,
        axes: &[usize],
    ) -> Result<Self, AbiError> {
        let (h, a) = (handles(indices), dims(axes)?);
        make("scatter_add", |out| unsafe {
            qmlx_scatter_add(self.0, h.as_ptr(), h.len(), updates.0, a.as_ptr(), out)
        })
    }

    /// A `sizes` slice at the (in-bounds) i32 starts `start[k]` on `axes[k]`.
    pub fn dynamic_slice(
        &self,
        start: &MlxArray,
        axes: &[usize],
        sizes: &[usize],
    ) -> Result<Self, AbiError> {
        let (a, s) = (dims(axes)?, dims(sizes)?);
        make("a dynamic slice", |out| unsafe {
            qmlx_dynamic_slice(
                self.0,
                start.0,
                a.as_ptr(),
                a.len(),
                s.as_ptr(),
                s.len(),
                out,
            )
        })
    }

    /// `self` with `update` written at the (in-bounds) starts.
    pub fn dynamic_update_slice(
        &self,
        update: &MlxArray,
        start: &MlxArray,
        axes: &[usize],
    ) -> Result<Self, AbiError> {
        let a = dims(axes)?;
        make("a dynamic update slice", |out| unsafe {
            qmlx_dynamic_update_slice(self.0, update.0, start.0, a.as_ptr(), a.len(), out)
        })
    }

    /// The i32 permutation that stably sorts every line along `axis` by `keys`
    /// lexicographically (numpy's float order), as QIR's `sort`.
    pub fn sort_permutation(keys: &[&MlxArray], axis: usize, descending: bool) -> R {
        let h = handles(keys);
        make("sort", |out| unsafe {
            qmlx_sort_permutation(h.as_ptr(), h.len(), axis as i32, descending as c_int, out)
        })
    }

    /// The lower Cholesky factor (LAPACK's `potrf`; no failure flag: see `linalg.rs`).
    pub fn cholesky(&self) -> R {
        make("cholesky", |out| unsafe { qmlx_cholesky(self.0, out) })
    }

    /// `(lu, pivots, permutation)` as QIR's `lu` (pivots 0-based i32).
    pub fn lu(&self) -> Result<Vec<MlxArray>, AbiError> {
        make_n("lu", 3, |o| unsafe {
            let [a, b, c] = o else { return 1 };
            qmlx_lu(self.0, a, b, c)
        })
    }

    /// The reduced QR factors.
    pub fn qr(&self) -> Result<Vec<MlxArray>, AbiError> {
        make_n("qr", 2, |o| unsafe {
            let [q, r] = o else { return 1 };
            qmlx_qr(self.0, q, r)
        })
    }

    /// `(u, s, vt)` with full `u` and `vt`, or `(s)`.
    pub fn svd(&self, compute_uv: bool) -> Result<Vec<MlxArray>, AbiError> {
        if compute_uv {
            make_n("svd", 3, |o| unsafe {
                let [u, s, vt] = o else { return 1 };
                qmlx_svd(self.0, 1, u, s, vt)
            })
        } else {
            make_n("svd", 1, |o| unsafe {
                let mut unused: Handle = std::ptr::null_mut();
                qmlx_svd(self.0, 0, &mut unused, &mut o[0], &mut unused)
            })
        }
    }

    /// `(w, v)`: ascending eigenvalues and eigenvectors of the lower triangle.
    pub fn eigh(&self) -> Result<Vec<MlxArray>, AbiError> {
        make_n("eigh", 2, |o| unsafe {
            let [w, v] = o else { return 1 };
            qmlx_eigh(self.0, w, v)
        })
    }

    /// `x` with `self x = b`, `self` triangular (the `upper` or the lower triangle).
    pub fn solve_triangular(&self, b: &MlxArray, upper: bool) -> R {
        make("solve_triangular", |out| unsafe {
            qmlx_solve_triangular(self.0, b.0, upper as c_int, out)
        })
    }

    pub fn take_along_axis(&self, indices: &MlxArray, axis: usize) -> R {
        make("take_along_axis", |out| unsafe {
            qmlx_take_along_axis(self.0, indices.0, axis as i32, out)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        fn qmlx_enum_count(which: c_int) -> c_int;
    }

    /// The Rust mirrors of the shim's enums have the header's codes: same count, in order
    /// (the last variant's discriminant is one below the count).
    #[test]
    fn enum_mirrors_match_the_header() {
        // SAFETY: a pure function of its argument.
        let count = |which| unsafe { qmlx_enum_count(which) };
        assert_eq!(count(0), Unary::BitwiseNot as c_int + 1);
        assert_eq!(count(1), Binary::Ge as c_int + 1);
        assert_eq!(count(2), Libm::ErfInv as c_int + 1);
        assert_eq!(count(3), Fold::Any as c_int + 1);
    }

    /// MLX's errors come back as values naming MLX and the call, never as a C++ exception.
    #[test]
    fn an_mlx_exception_is_an_error_value() {
        let a = MlxArray::from_bytes(DType::F32, &[2], &[0; 8]).unwrap();
        let err = a.reshape(&[3]).err().expect("2 elements cannot be 3");
        assert!(
            err.message().contains("MLX failed in reshape"),
            "{}",
            err.message()
        );
        let f = MlxArray::from_bytes(DType::F32, &[2], &[0; 8]).unwrap();
        assert!(f.to_bytes(4).is_err(), "a read back of the wrong size");
    }
}
