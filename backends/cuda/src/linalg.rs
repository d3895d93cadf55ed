//! QIR's dense factorizations on cuSOLVER (`trsm` on cuBLAS), one library call per matrix of
//! a batch, everything queued on the plugin's stream (nothing is read back). QIR's matrices
//! are row-major and LAPACK's column-major, and a row-major buffer is the column-major
//! layout of the transpose, so: a symmetric operand (Cholesky, eigh) is factored from the
//! other triangle as it lies; a triangular solve becomes the transposed solve (side and
//! triangle swapped, `op` kept); a wide SVD factors `aᵀ`, whose factors are `a`'s as they
//! lie; LU, QR and a tall SVD transpose on the device first (`HELPERS`: transposes, the
//! triangle masks that also put NaN where a factorization failed, LAPACK's 1-based pivots
//! made QIR's pivots and permutation, QR's `r`). The library works in place, so operands are
//! copied first (a value may be read again). Matrices with no elements never reach the
//! library (their factors are empty, or identities where a square factor has rows).

use crate::solver::{check, check_blas, Real, Solver};
use cudarc::cublas::sys as blas;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::LinalgOp;
use quabla_abi::{DType, TensorType};
use std::ffi::c_int;
use std::sync::Arc;

/// The device kernels the factorizations use around the library calls, for `float` (`_f32`)
/// and `double` (`_f64`). Grid-stride loops over `batch` matrices; `info` is each matrix's
/// LAPACK info (nonzero: that matrix's results are NaN).
pub const HELPERS: &str = r#"
#define QUABLA_LINALG(T, S, NAN)                                                          \
/* y[b] = x[b]ᵀ for row-major rows x cols matrices. */                                   \
extern "C" __global__ void quabla_linalg_transpose_##S(const T* x, T* y,               \
    unsigned long long rows, unsigned long long cols, unsigned long long batch) {        \
  unsigned long long per = rows * cols, total = per * batch;                             \
  for (unsigned long long e = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
       e < total; e += (unsigned long long)gridDim.x * blockDim.x) {                     \
    unsigned long long b = e / per, i = (e % per) / cols, j = e % cols;                  \
    y[b * per + j * rows + i] = x[e];                                                    \
  } }                                                                                    \
/* keep: 0 every element, 1 the lower triangle (j <= i), 2 the upper (j >= i); the rest  \
   zero, and all NaN where info[b] != 0. */                                              \
extern "C" __global__ void quabla_linalg_mask_##S(T* a, const int* info,                \
    unsigned long long rows, unsigned long long cols, unsigned long long batch, int keep) {\
  unsigned long long per = rows * cols, total = per * batch;                             \
  for (unsigned long long e = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
       e < total; e += (unsigned long long)gridDim.x * blockDim.x) {                     \
    unsigned long long b = e / per, i = (e % per) / cols, j = e % cols;                  \
    if (info[b] != 0) a[e] = NAN;                                                        \
    else if ((keep == 1 && j > i) || (keep == 2 && j < i)) a[e] = (T)0;                  \
  } }                                                                                    \
/* r[b] (rrows x n, row-major) from geqrf's column-major m x n result: its upper         \
   triangle, zero below and in rows past k = min(m, n). */                               \
extern "C" __global__ void quabla_linalg_r_##S(const T* qr, T* r, unsigned long long m,  \
    unsigned long long n, unsigned long long rrows, unsigned long long batch) {          \
  unsigned long long per = rrows * n, total = per * batch, k = m < n ? m : n;           \
  for (unsigned long long e = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; \
       e < total; e += (unsigned long long)gridDim.x * blockDim.x) {                     \
    unsigned long long b = e / per, i = (e % per) / n, j = e % n;                        \
    r[e] = (i <= j && i < k) ? qr[b * m * n + j * m + i] : (T)0;                         \
  } }
QUABLA_LINALG(float, f32, __int_as_float(0x7fc00000))
QUABLA_LINALG(double, f64, __longlong_as_double(0x7ff8000000000000LL))
/* QIR's 0-based pivots and their permutation from getrf's 1-based ipiv, a thread per
   matrix (the swaps are sequential). */
extern "C" __global__ void quabla_linalg_pivots(const int* ipiv, int* pivots, int* perm,
    unsigned long long n, unsigned long long batch) {
  for (unsigned long long b = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
       b < batch; b += (unsigned long long)gridDim.x * blockDim.x) {
    for (unsigned long long i = 0; i < n; i++) perm[b * n + i] = (int)i;
    for (unsigned long long i = 0; i < n; i++) {
      int p = ipiv[b * n + i] - 1;
      pivots[b * n + i] = p;
      if (p >= 0 && (unsigned long long)p < n) {
        int t = perm[b * n + i]; perm[b * n + i] = perm[b * n + p]; perm[b * n + p] = t;
      }
    }
  } }
"#;

/// The names of the helper kernels (`HELPERS`), loaded with a program that factors.
pub const HELPER_NAMES: [&str; 7] = [
    "quabla_linalg_transpose_f32",
    "quabla_linalg_transpose_f64",
    "quabla_linalg_mask_f32",
    "quabla_linalg_mask_f64",
    "quabla_linalg_r_f32",
    "quabla_linalg_r_f64",
    "quabla_linalg_pivots",
];

/// The loaded helper kernel of a name, and its largest block.
pub type Helpers<'a> = dyn Fn(&str) -> Result<(CudaFunction, u32), AbiError> + 'a;

/// The results of `op` on `operands` (values of types `types`), of types `results`, queued
/// on `stream`; `helper` gives a loaded helper kernel and its largest block.
pub fn run(
    stream: &Arc<CudaStream>,
    solver: &Solver,
    helper: &Helpers<'_>,
    op: &LinalgOp,
    operands: &[&CudaSlice<u8>],
    types: &[&TensorType],
    results: &[TensorType],
) -> Result<Vec<CudaSlice<u8>>, AbiError> {
    let d = Device {
        stream,
        solver,
        helper,
    };
    if types.iter().any(|t| t.num_elements() == 0) {
        return empty_results(results).iter().map(|b| d.upload(b)).collect();
    }
    match types[0].dtype {
        DType::F32 => d.factor::<f32>(op, operands, types, results),
        DType::F64 => d.factor::<f64>(op, operands, types, results),
        other => Err(AbiError::internal(format!(
            "a {} matrix sent to cuSOLVER",
            other.name()
        ))),
    }
}

/// The factors for operands with no element: empty, or identity matrices where a result is
/// square with rows (a complete QR's `q`, a full SVD's `u` and `vt`).
fn empty_results(results: &[TensorType]) -> Vec<Vec<u8>> {
    results
        .iter()
        .map(|t| {
            let mut bytes = vec![0u8; t.size_bytes()];
            let r = t.shape.len();
            if t.dtype.is_float() && r >= 2 && t.shape[r - 1] == t.shape[r - 2] {
                let (n, size) = (t.shape[r - 1], t.dtype.size_bytes());
                let one: Vec<u8> = match t.dtype {
                    DType::F32 => 1f32.to_le_bytes().to_vec(),
                    _ => 1f64.to_le_bytes().to_vec(),
                };
                for m in bytes.chunks_exact_mut((n * n * size).max(1)) {
                    for i in 0..n {
                        let at = (i * n + i) * size;
                        m[at..at + size].copy_from_slice(&one);
                    }
                }
            }
            bytes
        })
        .collect()
}

/// A matrix batch's shape: how many, and each one's rows and columns.
#[derive(Clone, Copy)]
struct Shape {
    batch: usize,
    rows: usize,
    cols: usize,
}

impl Shape {
    fn of(t: &TensorType) -> Shape {
        let r = t.shape.len();
        Shape {
            batch: t.shape[..r - 2].iter().product(),
            rows: t.shape[r - 2],
            cols: t.shape[r - 1],
        }
    }
}

fn driver(e: cudarc::driver::DriverError) -> AbiError {
    AbiError::internal(format!("the CUDA driver: {e}"))
}

/// A dimension as the libraries' `int`.
fn int(n: usize) -> Result<c_int, AbiError> {
    c_int::try_from(n).map_err(|_| {
        AbiError::invalid(format!(
            "a matrix dimension of {n} exceeds cuSOLVER's 32-bit sizes"
        ))
    })
}

/// Which triangle a mask keeps (`HELPERS`' `keep`).
#[derive(Clone, Copy)]
enum Keep {
    All = 0,
    Lower = 1,
}

/// The stream and handles a factorization runs with.
struct Device<'a> {
    stream: &'a Arc<CudaStream>,
    solver: &'a Solver,
    helper: &'a Helpers<'a>,
}

impl Device<'_> {
    fn upload(&self, bytes: &[u8]) -> Result<CudaSlice<u8>, AbiError> {
        if bytes.is_empty() {
            return self.zeros(1);
        }
        self.stream.clone_htod(bytes).map_err(driver)
    }

    fn zeros(&self, bytes: usize) -> Result<CudaSlice<u8>, AbiError> {
        self.stream.alloc_zeros::<u8>(bytes.max(1)).map_err(driver)
    }

    /// A copy of `x`'s first `bytes` bytes (the library overwrites what it factors).
    fn copy(&self, x: &CudaSlice<u8>, bytes: usize) -> Result<CudaSlice<u8>, AbiError> {
        let mut out = self.zeros(bytes)?;
        self.stream
            .memcpy_dtod(&x.slice(0..bytes), &mut out.slice_mut(0..bytes))
            .map_err(driver)?;
        Ok(out)
    }

    /// The device address of element `index` of `T`s in `s`.
    fn at<T>(&self, s: &CudaSlice<u8>, index: usize) -> *mut T {
        let (base, _) = s.device_ptr(self.stream);
        (base + (index * std::mem::size_of::<T>()) as u64) as *mut T
    }

    /// A workspace of `lwork` elements of `T`.
    fn work<T>(&self, lwork: c_int) -> Result<CudaSlice<u8>, AbiError> {
        self.zeros(lwork.max(1) as usize * std::mem::size_of::<T>())
    }

    /// Launches helper `name` over `elements` with `args` (pointers and sizes).
    fn launch(&self, name: &str, elements: usize, args: &[Arg<'_>]) -> Result<(), AbiError> {
        let (f, most) = (self.helper)(name)?;
        let threads = most.min(256);
        let blocks = (elements as u64).div_ceil(threads as u64).clamp(1, 1 << 16) as u32;
        let mut l = self.stream.launch_builder(&f);
        for a in args {
            match a {
                Arg::Buf(b) => l.arg(*b),
                Arg::Size(n) => l.arg(n),
                Arg::Int(n) => l.arg(n),
            };
        }
        let cfg = LaunchConfig {
            grid_dim: (blocks, 1, 1),
            block_dim: (threads, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: the helper's parameters, in order, each buffer of the size its loop reads.
        unsafe { l.launch(cfg) }.map_err(driver)?;
        Ok(())
    }

    /// Each `rows x cols` row-major matrix of `x` transposed, into a new buffer.
    fn transpose<T: Real>(&self, x: &CudaSlice<u8>, s: Shape) -> Result<CudaSlice<u8>, AbiError> {
        let bytes = s.batch * s.rows * s.cols * std::mem::size_of::<T>();
        let y = self.zeros(bytes)?;
        self.launch(
            &format!("quabla_linalg_transpose_{}", T::SUFFIX),
            s.batch * s.rows * s.cols,
            &[
                Arg::Buf(x),
                Arg::Buf(&y),
                Arg::Size(s.rows as u64),
                Arg::Size(s.cols as u64),
                Arg::Size(s.batch as u64),
            ],
        )?;
        Ok(y)
    }

    /// `keep`'s triangle of each matrix of `a` kept, NaN where `info` is nonzero.
    fn mask<T: Real>(
        &self,
        a: &CudaSlice<u8>,
        info: &CudaSlice<u8>,
        (rows, cols, batch): (usize, usize, usize),
        keep: Keep,
    ) -> Result<(), AbiError> {
        self.launch(
            &format!("quabla_linalg_mask_{}", T::SUFFIX),
            batch * rows * cols,
            &[
                Arg::Buf(a),
                Arg::Buf(info),
                Arg::Size(rows as u64),
                Arg::Size(cols as u64),
                Arg::Size(batch as u64),
                Arg::Int(keep as i32),
            ],
        )
    }

    fn factor<T: Real>(
        &self,
        op: &LinalgOp,
        operands: &[&CudaSlice<u8>],
        types: &[&TensorType],
        results: &[TensorType],
    ) -> Result<Vec<CudaSlice<u8>>, AbiError> {
        let (a, s) = (operands[0], Shape::of(types[0]));
        match op {
            LinalgOp::Cholesky => self.cholesky::<T>(a, s),
            LinalgOp::Lu => self.lu::<T>(a, s),
            LinalgOp::TriangularSolve {
                left_side,
                lower,
                transpose_a,
                unit_diagonal,
            } => {
                let sides = (*left_side, *lower, *transpose_a, *unit_diagonal);
                self.triangular_solve::<T>(a, s, operands[1], Shape::of(types[1]), sides)
            }
            LinalgOp::Eigh => self.eigh::<T>(a, s),
            LinalgOp::Qr { full_matrices } => self.qr::<T>(a, s, *full_matrices),
            LinalgOp::Svd {
                full_matrices,
                compute_uv,
            } => self.svd::<T>(a, s, *full_matrices, *compute_uv, results),
        }
    }

    /// The row-major lower triangle is the column-major upper one: `potrf` on it as it lies
    /// leaves `uᵀ = l` there; the other triangle still holds the operand, so is zeroed.
    fn cholesky<T: Real>(
        &self,
        a: &CudaSlice<u8>,
        s: Shape,
    ) -> Result<Vec<CudaSlice<u8>>, AbiError> {
        let (size, n) = (std::mem::size_of::<T>(), int(s.rows)?);
        let m = self.copy(a, s.batch * s.rows * s.cols * size)?;
        let info = self.zeros(4 * s.batch)?;
        let h = self.solver.dn;
        let mut lwork: c_int = 0;
        // SAFETY (this and each call below): device buffers of the documented sizes
        // (`batch` n x n matrices, one info each, `lwork` elements of workspace), on the
        // handle's stream.
        check("potrf_bufferSize", unsafe {
            T::potrf_work(h, n, self.at::<T>(&m, 0), n, &mut lwork)
        })?;
        let work = self.work::<T>(lwork)?;
        for b in 0..s.batch {
            check("potrf", unsafe {
                T::potrf(
                    h,
                    n,
                    self.at::<T>(&m, b * s.rows * s.cols),
                    n,
                    self.at::<T>(&work, 0),
                    lwork,
                    self.at::<c_int>(&info, b),
                )
            })?;
        }
        self.mask::<T>(&m, &info, (s.rows, s.cols, s.batch), Keep::Lower)?;
        Ok(vec![m])
    }

    fn lu<T: Real>(&self, a: &CudaSlice<u8>, s: Shape) -> Result<Vec<CudaSlice<u8>>, AbiError> {
        let n = int(s.rows)?;
        let m = self.transpose::<T>(a, s)?;
        let (info, ipiv) = (self.zeros(4 * s.batch)?, self.zeros(4 * s.batch * s.rows)?);
        let h = self.solver.dn;
        let mut lwork: c_int = 0;
        // SAFETY: as in `cholesky`; `ipiv` holds n ints per matrix.
        check("getrf_bufferSize", unsafe {
            T::getrf_work(h, n, n, self.at::<T>(&m, 0), n, &mut lwork)
        })?;
        let work = self.work::<T>(lwork)?;
        for b in 0..s.batch {
            check("getrf", unsafe {
                T::getrf(
                    h,
                    n,
                    n,
                    self.at::<T>(&m, b * s.rows * s.cols),
                    n,
                    self.at::<T>(&work, 0),
                    self.at::<c_int>(&ipiv, b * s.rows),
                    self.at::<c_int>(&info, b),
                )
            })?;
        }
        // A positive info is an exact zero pivot: the factors exist (U is singular), as JAX.
        let lu = self.transpose::<T>(&m, s)?;
        let (pivots, perm) = (
            self.zeros(4 * s.batch * s.rows)?,
            self.zeros(4 * s.batch * s.rows)?,
        );
        self.launch(
            "quabla_linalg_pivots",
            s.batch,
            &[
                Arg::Buf(&ipiv),
                Arg::Buf(&pivots),
                Arg::Buf(&perm),
                Arg::Size(s.rows as u64),
                Arg::Size(s.batch as u64),
            ],
        )?;
        Ok(vec![lu, pivots, perm])
    }

    /// `op(a) x = b` with row-major `x` and `b` is `xᵀ op(a)ᵀ = bᵀ` in column-major terms,
    /// whose buffers are the row-major ones: the other side, `a`'s buffer read as `aᵀ` (the
    /// other triangle), `op` unchanged. `sides`: (left_side, lower, transpose_a,
    /// unit_diagonal), as QIR's op.
    fn triangular_solve<T: Real>(
        &self,
        a: &CudaSlice<u8>,
        sa: Shape,
        b: &CudaSlice<u8>,
        sb: Shape,
        (left, lower, transpose, unit): (bool, bool, bool, bool),
    ) -> Result<Vec<CudaSlice<u8>>, AbiError> {
        let size = std::mem::size_of::<T>();
        let (n, rows, cols) = (int(sa.rows)?, int(sb.rows)?, int(sb.cols)?);
        let x = self.copy(b, sb.batch * sb.rows * sb.cols * size)?;
        use blas::cublasSideMode_t as Side;
        use blas::{cublasDiagType_t as D, cublasFillMode_t as F, cublasOperation_t as O};
        let side = if left {
            Side::CUBLAS_SIDE_RIGHT
        } else {
            Side::CUBLAS_SIDE_LEFT
        };
        let uplo = if lower {
            F::CUBLAS_FILL_MODE_UPPER
        } else {
            F::CUBLAS_FILL_MODE_LOWER
        };
        let trans = if transpose {
            O::CUBLAS_OP_T
        } else {
            O::CUBLAS_OP_N
        };
        let diag = if unit {
            D::CUBLAS_DIAG_UNIT
        } else {
            D::CUBLAS_DIAG_NON_UNIT
        };
        for k in 0..sa.batch {
            // SAFETY: n x n `a` and cols x rows (column-major) `x` per matrix, on the
            // handle's stream.
            check_blas("trsm", unsafe {
                T::trsm(
                    self.solver.blas,
                    side,
                    uplo,
                    trans,
                    diag,
                    cols,
                    rows,
                    self.at::<T>(a, k * sa.rows * sa.cols),
                    n,
                    self.at::<T>(&x, k * sb.rows * sb.cols),
                    cols,
                )
            })?;
        }
        Ok(vec![x])
    }

    /// Symmetric: `syevd` on the column-major upper triangle (the row-major lower) as it
    /// lies; the eigenvectors come back as columns of a column-major matrix, so transposed.
    fn eigh<T: Real>(&self, a: &CudaSlice<u8>, s: Shape) -> Result<Vec<CudaSlice<u8>>, AbiError> {
        let (size, n) = (std::mem::size_of::<T>(), int(s.rows)?);
        let m = self.copy(a, s.batch * s.rows * s.cols * size)?;
        let (info, w) = (
            self.zeros(4 * s.batch)?,
            self.zeros(size * s.batch * s.rows)?,
        );
        let h = self.solver.dn;
        let mut lwork: c_int = 0;
        // SAFETY: as in `cholesky`; `w` holds n eigenvalues per matrix.
        check("syevd_bufferSize", unsafe {
            T::syevd_work(
                h,
                n,
                self.at::<T>(&m, 0),
                n,
                self.at::<T>(&w, 0),
                &mut lwork,
            )
        })?;
        let work = self.work::<T>(lwork)?;
        for b in 0..s.batch {
            check("syevd", unsafe {
                T::syevd(
                    h,
                    n,
                    self.at::<T>(&m, b * s.rows * s.cols),
                    n,
                    self.at::<T>(&w, b * s.rows),
                    self.at::<T>(&work, 0),
                    lwork,
                    self.at::<c_int>(&info, b),
                )
            })?;
        }
        // A positive info: the iteration did not converge; that matrix's results are NaN.
        let v = self.transpose::<T>(&m, s)?;
        self.mask::<T>(&w, &info, (1, s.rows, s.batch), Keep::All)?;
        self.mask::<T>(&v, &info, (s.rows, s.cols, s.batch), Keep::All)?;
        Ok(vec![w, v])
    }

    fn qr<T: Real>(
        &self,
        a: &CudaSlice<u8>,
        s: Shape,
        full: bool,
    ) -> Result<Vec<CudaSlice<u8>>, AbiError> {
        let size = std::mem::size_of::<T>();
        let (m, n) = (s.rows, s.cols);
        let k = m.min(n);
        let qcols = if full { m } else { k };
        let (mi, ni, ki, qi) = (int(m)?, int(n)?, int(k)?, int(qcols)?);
        let am = self.transpose::<T>(a, s)?;
        let tau = self.zeros(size * s.batch * k)?;
        let info = self.zeros(4 * s.batch)?;
        let mut q = self.zeros(size * s.batch * m * qcols)?;
        let h = self.solver.dn;
        let (mut lw1, mut lw2): (c_int, c_int) = (0, 0);
        // SAFETY: as in `cholesky`: column-major m x n `a` (lda m), k reflectors' `tau`,
        // and `q` of m x qcols (lda m) per matrix.
        check("geqrf_bufferSize", unsafe {
            T::geqrf_work(h, mi, ni, self.at::<T>(&am, 0), mi, &mut lw1)
        })?;
        check("orgqr_bufferSize", unsafe {
            T::orgqr_work(
                h,
                mi,
                qi,
                ki,
                self.at::<T>(&q, 0),
                mi,
                self.at::<T>(&tau, 0),
                &mut lw2,
            )
        })?;
        let lwork = lw1.max(lw2);
        let work = self.work::<T>(lwork)?;
        for b in 0..s.batch {
            check("geqrf", unsafe {
                T::geqrf(
                    h,
                    mi,
                    ni,
                    self.at::<T>(&am, b * m * n),
                    mi,
                    self.at::<T>(&tau, b * k),
                    self.at::<T>(&work, 0),
                    lwork,
                    self.at::<c_int>(&info, b),
                )
            })?;
            // The reflectors are the first k columns, contiguous in column-major order.
            let (from, to) = (b * m * n * size, b * m * qcols * size);
            self.stream
                .memcpy_dtod(
                    &am.slice(from..from + m * k * size),
                    &mut q.slice_mut(to..to + m * k * size),
                )
                .map_err(driver)?;
            check("orgqr", unsafe {
                T::orgqr(
                    h,
                    mi,
                    qi,
                    ki,
                    self.at::<T>(&q, b * m * qcols),
                    mi,
                    self.at::<T>(&tau, b * k),
                    self.at::<T>(&work, 0),
                    lwork,
                    self.at::<c_int>(&info, b),
                )
            })?;
        }
        let rrows = if full { m } else { k };
        let r = self.zeros(size * s.batch * rrows * n)?;
        self.launch(
            &format!("quabla_linalg_r_{}", T::SUFFIX),
            s.batch * rrows * n,
            &[
                Arg::Buf(&am),
                Arg::Buf(&r),
                Arg::Size(m as u64),
                Arg::Size(n as u64),
                Arg::Size(rrows as u64),
                Arg::Size(s.batch as u64),
            ],
        )?;
        let qs = Shape {
            batch: s.batch,
            rows: qcols,
            cols: m,
        };
        Ok(vec![self.transpose::<T>(&q, qs)?, r])
    }

    /// cuSOLVER's `gesvd` takes no more columns than rows: a wide matrix is factored as its
    /// transpose, whose column-major layout is the row-major matrix itself, and the factors
    /// of `aᵀ = u' s v'ᵀ` give `a`'s row-major `u` and `vt` as they lie (`u = v'`, `vt = u'ᵀ`).
    fn svd<T: Real>(
        &self,
        a: &CudaSlice<u8>,
        s: Shape,
        full: bool,
        uv: bool,
        results: &[TensorType],
    ) -> Result<Vec<CudaSlice<u8>>, AbiError> {
        let size = std::mem::size_of::<T>();
        let wide = s.rows < s.cols;
        // The matrix cuSOLVER sees: rows >= cols, column-major.
        let (m, n) = if wide {
            (s.cols, s.rows)
        } else {
            (s.rows, s.cols)
        };
        let k = n;
        let ucols = if full { m } else { k };
        let (mi, ni) = (int(m)?, int(n)?);
        let mat = if wide {
            self.copy(a, s.batch * m * n * size)?
        } else {
            self.transpose::<T>(a, s)?
        };
        // Without vectors the library reads neither; one byte each stands in.
        let vectors = usize::from(uv);
        let sv = self.zeros(size * s.batch * k)?;
        let u = self.zeros(vectors * size * s.batch * m * ucols)?;
        let vt = self.zeros(vectors * size * s.batch * n * n)?;
        let rwork = self.zeros(size * k)?;
        let info = self.zeros(4 * s.batch)?;
        let (jobu, jobvt) = match (uv, full) {
            (false, _) => (b'N', b'N'),
            (true, true) => (b'A', b'A'),
            (true, false) => (b'S', b'A'),
        };
        let h = self.solver.dn;
        let mut lwork: c_int = 0;
        // SAFETY: as in `cholesky`: column-major m x n (m >= n) matrices, k singular
        // values, u of m x ucols (ldu m) and vt of n x n (ldvt n) per matrix.
        check("gesvd_bufferSize", unsafe {
            T::gesvd_work(h, mi, ni, &mut lwork)
        })?;
        let work = self.work::<T>(lwork)?;
        for b in 0..s.batch {
            check("gesvd", unsafe {
                T::gesvd(
                    h,
                    jobu as i8,
                    jobvt as i8,
                    mi,
                    ni,
                    self.at::<T>(&mat, b * m * n),
                    mi,
                    self.at::<T>(&sv, b * k),
                    self.at::<T>(&u, vectors * b * m * ucols),
                    mi,
                    self.at::<T>(&vt, vectors * b * n * n),
                    ni,
                    self.at::<T>(&work, 0),
                    lwork,
                    self.at::<T>(&rwork, 0),
                    self.at::<c_int>(&info, b),
                )
            })?;
        }
        // A positive info: the iteration did not converge; that matrix's results are NaN.
        self.mask::<T>(&sv, &info, (1, k, s.batch), Keep::All)?;
        if !uv {
            return Ok(vec![sv]);
        }
        let (u_out, vt_out) = if wide {
            (vt, u)
        } else {
            let us = Shape {
                batch: s.batch,
                rows: ucols,
                cols: m,
            };
            let vs = Shape {
                batch: s.batch,
                rows: n,
                cols: n,
            };
            (self.transpose::<T>(&u, us)?, self.transpose::<T>(&vt, vs)?)
        };
        let dims = |t: &TensorType| {
            let r = t.shape.len();
            (t.shape[r - 2], t.shape[r - 1], s.batch)
        };
        self.mask::<T>(&u_out, &info, dims(&results[0]), Keep::All)?;
        self.mask::<T>(&vt_out, &info, dims(&results[2]), Keep::All)?;
        Ok(vec![u_out, sv, vt_out])
    }
}

/// A helper kernel's argument.
enum Arg<'a> {
    Buf(&'a CudaSlice<u8>),
    Size(u64),
    Int(i32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_operands_give_empty_or_identity_factors() {
        let out = empty_results(&[
            TensorType::new(DType::F64, vec![2, 2]),
            TensorType::new(DType::F64, vec![2, 0]),
            TensorType::new(DType::F32, vec![3, 0, 0]),
        ]);
        let v: Vec<f64> = out[0]
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(v, [1.0, 0.0, 0.0, 1.0]);
        assert!(out[1].is_empty() && out[2].is_empty());
    }
}
