//! Small dense factorizations as kernels of the plugin's own: Cholesky, LU with partial
//! pivoting, triangular solves, and (in [`orthogonal`]) eigh, QR and SVD, of matrices up to
//! [`MAX_ORDER`] rows and columns, one block per matrix. cuSOLVER is called from the host
//! once per matrix of a batch, each call a few launches of its own, and a loop holding one
//! cannot be decided on the device; these kernels factor a whole batch in one launch and run
//! inside device loops too (`device_loop/emit.rs`), so a stiff solver's Newton iterations
//! stay on the GPU. Larger matrices stay on cuSOLVER (`linalg.rs`).
//!
//! The triangular ones are LAPACK's unblocked algorithms (`potf2`, `getf2`, `trsm`'s
//! substitution), each step's elements shared out among the block's threads with a barrier
//! between steps: LU picks the first row of largest magnitude as its pivot and leaves a zero
//! pivot's column unscaled (the factors exist, as LAPACK's and JAX's); Cholesky reads the
//! lower triangle and gives NaN everywhere when a pivot is not positive, as QIR's op says.
//! Every sum runs in its index order, so results do not depend on the block size.
//!
//! ```
//! use quabla_abi::qir::Program;
//! use quabla_cuda::plan::{plan_with, Step};
//! let p = Program::parse("program(%0: f64[3, 4, 4]) {
//!   %1, %2, %3 = lu(%0) : f64[3, 4, 4], i32[3, 4], i32[3, 4]
//!   return %1, %2, %3
//! }").unwrap();
//! // One launch factors the batch: a block per matrix.
//! let plan = plan_with(&p, "k", 0).unwrap();
//! assert!(matches!(&plan.steps[..], [Step::Kernel(k)] if k.block_per_element && k.elements == 3));
//! ```

use crate::elementwise::{c_type, PRELUDE};
use crate::fusion::Kernel;
use quabla_abi::qir::LinalgOp;
use quabla_abi::{DType, TensorType};

/// The largest matrices (rows) factored by these kernels on a GPU, by default: one block
/// walks a matrix in `n` steps of `n²` elements at most, so past a few dozen rows
/// cuSOLVER's blocked algorithms are the faster. `QUABLA_CUDA_FACTOR_ORDER=<n>` sets it (0:
/// every factorization on cuSOLVER); the host emulation, which has no cuSOLVER, takes every
/// size.
pub const MAX_ORDER: usize = 64;

/// The bound in force (see [`MAX_ORDER`]).
pub fn max_order() -> usize {
    if crate::emulate::requested() {
        return usize::MAX;
    }
    std::env::var("QUABLA_CUDA_FACTOR_ORDER")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAX_ORDER)
}

pub mod orthogonal;

/// Whether these kernels take `op` on matrices of dimensions `d` and element type `dtype`:
/// a float type, at most `max_order` rows and columns, and (for eigh, QR and SVD) a working
/// copy within the shared memory bound in force ([`orthogonal::max_scratch`]).
pub fn fits(op: &LinalgOp, d: Dims, dtype: DType, max_order: usize) -> bool {
    dtype.is_float()
        && d.order(op) <= max_order as u64
        && orthogonal::scratch_bytes(op, d, dtype) <= orthogonal::max_scratch()
}

/// The device functions `op` calls (each source behind its own include guard).
pub fn functions(op: &LinalgOp) -> &'static str {
    if orthogonal::covers(op) {
        orthogonal::FUNCTIONS
    } else {
        FUNCTIONS
    }
}

/// The block-cooperative device functions, behind an include guard: every kernel calling
/// them carries them, and a program's kernels are compiled as one source.
pub const FUNCTIONS: &str = r#"
#ifndef QUABLA_FACTOR
#define QUABLA_FACTOR
/* Dense factorizations of one row-major matrix by one block. Every thread of the block calls
   them alike (they wait at barriers); each ends with a barrier, so its results are visible
   to every thread when it returns. */
template <typename T> static __device__ T quabla_factor_nan(void) {
  return (T)__longlong_as_double(0x7ff8000000000000LL);
}

/* l (n x n) = the lower Cholesky factor of a's lower triangle, zero above the diagonal;
   NaN everywhere when a pivot is not positive. */
template <typename T>
static __device__ void quabla_cholesky(const T* a, T* l, long long n) {
  for (long long e = threadIdx.x; e < n * n; e += blockDim.x)
    l[e] = e % n <= e / n ? a[e] : (T)0;
  __syncthreads();
  bool failed = false;
  for (long long k = 0; k < n; ++k) {
    T d = l[k * n + k];
    /* Everyone has read the pivot before thread 0 replaces it. */
    __syncthreads();
    if (!(d > (T)0)) { failed = true; break; }
    T s = sqrt(d);
    if (threadIdx.x == 0) l[k * n + k] = s;
    for (long long i = k + 1 + threadIdx.x; i < n; i += blockDim.x) l[i * n + k] /= s;
    __syncthreads();
    long long m = n - k - 1;
    for (long long e = threadIdx.x; e < m * m; e += blockDim.x) {
      long long i = k + 1 + e / m, j = k + 1 + e % m;
      if (j <= i) l[i * n + j] -= l[i * n + k] * l[j * n + k];
    }
    __syncthreads();
  }
  if (failed) {
    for (long long e = threadIdx.x; e < n * n; e += blockDim.x) l[e] = quabla_factor_nan<T>();
    __syncthreads();
  }
}

/* lu (n x n) = a's LU with partial pivoting: unit-lower L below the diagonal, U on and above;
   pivots[k] the row swapped with row k at step k; perm their effect (a[perm] = L U). */
template <typename T>
static __device__ void quabla_lu(const T* a, T* lu, int* pivots, int* perm, long long n) {
  for (long long e = threadIdx.x; e < n * n; e += blockDim.x) lu[e] = a[e];
  __syncthreads();
  for (long long k = 0; k < n; ++k) {
    /* Every thread finds the pivot alike: the first row of largest magnitude. */
    long long p = k;
    T best = fabs(lu[k * n + k]);
    for (long long i = k + 1; i < n; ++i) {
      T v = fabs(lu[i * n + k]);
      if (v > best) { best = v; p = i; }
    }
    if (threadIdx.x == 0) pivots[k] = (int)p;
    __syncthreads();
    if (p != k)
      for (long long j = threadIdx.x; j < n; j += blockDim.x) {
        T t = lu[k * n + j]; lu[k * n + j] = lu[p * n + j]; lu[p * n + j] = t;
      }
    __syncthreads();
    T d = lu[k * n + k];
    /* A zero pivot's column is zero below it already: left as it is, as LAPACK. */
    if (d != (T)0)
      for (long long i = k + 1 + threadIdx.x; i < n; i += blockDim.x) lu[i * n + k] /= d;
    __syncthreads();
    long long m = n - k - 1;
    for (long long e = threadIdx.x; e < m * m; e += blockDim.x) {
      long long i = k + 1 + e / m, j = k + 1 + e % m;
      lu[i * n + j] -= lu[i * n + k] * lu[k * n + j];
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    for (long long i = 0; i < n; ++i) perm[i] = (int)i;
    for (long long k = 0; k < n; ++k) {
      int t = perm[k]; perm[k] = perm[pivots[k]]; perm[pivots[k]] = t;
    }
  }
  __syncthreads();
}

/* x = the solution of op(a) x = b (left) or x op(a) = b, a n x n (its `lower` or upper
   triangle read), b and x n x m (left) or m x n. Solved as M y = rhs with M = op(a) (left)
   or op(a)ᵀ, y = x or xᵀ: column-oriented substitution, a step per row of y, each row's
   update over the columns and the remaining rows shared out. */
template <typename T>
static __device__ void quabla_triangular_solve(const T* a, const T* b, T* x, long long n,
    long long m, bool left, bool lower, bool transpose, bool unit) {
  long long si = left ? m : 1, sc = left ? 1 : n;
  bool t = transpose == left; /* M is aᵀ */
  bool forward = lower != t;
  for (long long e = threadIdx.x; e < n * m; e += blockDim.x) x[e] = b[e];
  __syncthreads();
  for (long long s = 0; s < n; ++s) {
    long long k = forward ? s : n - 1 - s;
    if (!unit) {
      T d = a[k * n + k];
      for (long long c = threadIdx.x; c < m; c += blockDim.x) x[k * si + c * sc] /= d;
      __syncthreads();
    }
    long long lo = forward ? k + 1 : 0, rows = forward ? n - k - 1 : k;
    for (long long e = threadIdx.x; e < rows * m; e += blockDim.x) {
      long long i = lo + e / m, c = e % m;
      T mik = t ? a[k * n + i] : a[i * n + k];
      x[i * si + c * sc] -= mik * x[k * si + c * sc];
    }
    __syncthreads();
  }
}
#endif
"#;

/// The dimensions of a factorization's operands: `batch` matrices of `n` columns (the
/// rows too, where square); for a triangular solve the right-hand sides' other dimension
/// `m`, for QR and SVD the rows `m`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dims {
    pub batch: u64,
    pub n: u64,
    pub m: u64,
}

impl Dims {
    /// The dimensions of `op` on operands of types `types` (as QIR's shape rules checked
    /// them).
    pub fn of(op: &LinalgOp, types: &[&TensorType]) -> Option<Dims> {
        let a = types.first()?;
        let r = a.shape.len().checked_sub(2)?;
        let n = a.shape[r + 1] as u64;
        let batch = a.shape[..r].iter().product::<usize>() as u64;
        let m = match op {
            LinalgOp::TriangularSolve { left_side, .. } => {
                let b = types.get(1)?;
                let rb = b.shape.len();
                b.shape[if *left_side { rb - 1 } else { rb - 2 }] as u64
            }
            LinalgOp::Qr { .. } | LinalgOp::Svd { .. } => a.shape[r] as u64,
            LinalgOp::Cholesky | LinalgOp::Lu | LinalgOp::Eigh => 0,
        };
        Some(Dims { batch, n, m })
    }

    /// The larger side of `op`'s matrices (what [`MAX_ORDER`] bounds).
    pub fn order(&self, op: &LinalgOp) -> u64 {
        match op {
            LinalgOp::Qr { .. } | LinalgOp::Svd { .. } => self.n.max(self.m),
            LinalgOp::Cholesky
            | LinalgOp::Lu
            | LinalgOp::TriangularSolve { .. }
            | LinalgOp::Eigh => self.n,
        }
    }
}

/// The statements that run `op` on matrix `b` (a C expression) of the batch: operand
/// pointers `operands` and result pointers `results` (each to its first matrix), element
/// type `t`.
pub fn call(
    op: &LinalgOp,
    d: Dims,
    t: &str,
    operands: &[String],
    results: &[String],
    b: &str,
) -> String {
    let (n, m) = (d.n, d.m);
    let nn = n * n;
    let at = |p: &String, per: u64| format!("{p} + ({b}) * {per}ll");
    match op {
        LinalgOp::Cholesky => format!(
            "quabla_cholesky<{t}>({}, {}, {n}ll);",
            at(&operands[0], nn),
            at(&results[0], nn)
        ),
        LinalgOp::Lu => format!(
            "quabla_lu<{t}>({}, {}, {}, {}, {n}ll);",
            at(&operands[0], nn),
            at(&results[0], nn),
            at(&results[1], n),
            at(&results[2], n)
        ),
        LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            unit_diagonal,
        } => format!(
            "quabla_triangular_solve<{t}>({}, {}, {}, {n}ll, {m}ll, {left_side}, {lower}, {transpose_a}, {unit_diagonal});",
            at(&operands[0], nn),
            at(&operands[1], n * m),
            at(&results[0], n * m)
        ),
        LinalgOp::Eigh | LinalgOp::Qr { .. } | LinalgOp::Svd { .. } => {
            let per = orthogonal::result_sizes(op, d);
            let outs: Vec<String> = results
                .iter()
                .zip(per)
                .map(|(r, per)| at(r, per))
                .collect();
            let rows = if matches!(op, LinalgOp::Eigh) { n } else { m };
            orthogonal::call(op, d, t, &at(&operands[0], rows * n), &outs)
        }
    }
}

/// The kernel `name` computing `op` on the values `operands` into the values `results`
/// (of the types `types` gives), a block per matrix; `None` where [`fits`] says no (past
/// `max_order` rows or columns, a dtype not a float one, a working copy too large).
///
/// ```
/// use quabla_abi::qir::{LinalgOp, Program};
/// use quabla_cuda::kernels::factor::kernel;
/// let p = Program::parse("program(%0: f32[8, 8]) {
///   %1 = cholesky(%0) : f32[8, 8]
///   return %1
/// }").unwrap();
/// let types = p.value_types();
/// let k = kernel("chol", &LinalgOp::Cholesky, &[0], &[1], &types, 64).unwrap();
/// assert!(k.body.contains("quabla_cholesky<float>"));
/// // Past the bound, cuSOLVER's.
/// assert!(kernel("chol", &LinalgOp::Cholesky, &[0], &[1], &types, 4).is_none());
/// ```
pub fn kernel(
    name: &str,
    op: &LinalgOp,
    operands: &[usize],
    results: &[usize],
    types: &[TensorType],
    max_order: usize,
) -> Option<Kernel> {
    let operand_types: Vec<&TensorType> = operands.iter().map(|&v| &types[v]).collect();
    let d = Dims::of(op, &operand_types)?;
    let dtype = operand_types[0].dtype;
    if !fits(op, d, dtype, max_order) {
        return None;
    }
    let all: Vec<(usize, DType)> = operands.iter().map(|&v| (v, types[v].dtype)).collect();
    let reads = super::distinct(&all);
    let writes: Vec<(usize, DType)> = results.iter().map(|&v| (v, types[v].dtype)).collect();
    let ins: Vec<String> = operands.iter().map(|v| format!("in{v}")).collect();
    let outs: Vec<String> = results.iter().map(|v| format!("out{v}")).collect();
    let statement = call(op, d, c_type(dtype), &ins, &outs, "(long long)bb");
    let function = format!(
        "{}extern \"C\" __global__ void {name}({}) {{\n  for (unsigned long long bb = blockIdx.x; bb < n; bb += gridDim.x) {{\n    {statement}\n  }}\n}}\n",
        functions(op),
        super::parameters(&reads, &writes)
    );
    Some(Kernel {
        shared_scratch: orthogonal::scratch_bytes(op, d, dtype),
        source: format!("{PRELUDE}\n{function}"),
        body: function,
        param_types: reads.iter().chain(&writes).map(|r| r.1).collect(),
        reads: reads.iter().map(|r| r.0).collect(),
        writes: writes.iter().map(|w| w.0).collect(),
        elements: d.batch as usize,
        name: name.to_string(),
        block_per_element: true,
        single_block: false,
        gemm: None,
        fused: 0,
        reuses: Vec::new(),
        device_loop: false,
    })
}
#[cfg(test)]
mod tests;
