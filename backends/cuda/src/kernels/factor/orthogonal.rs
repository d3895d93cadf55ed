//! eigh, QR and SVD of small matrices as block-cooperative device functions, one block per
//! matrix (the orthogonal factorizations beside `factor.rs`'s triangular ones).
//!
//! cuSOLVER factors a batch one matrix per call, a few launches each, and has no device
//! function a loop kernel could call; a batch of 5x5 symmetric matrices is one launch here.
//! The algorithms are the ones whose work shares out evenly among a block's threads and
//! whose results do not depend on how it is shared:
//! - eigh: cyclic two-sided Jacobi on the lower triangle mirrored, the rotations of a round
//!   (disjoint pairs of the circle method's tournament) applied at once, each rotation's
//!   2x2 block set to its exact values; eigenvalues ascending, vectors permuted with them.
//!   Rotations are kept and applied in f64 (each element rounded once): an f32 rotation's
//!   own rounding would make it slightly non-orthogonal, and the vectors would drift by that
//!   at each of the hundreds of rotations a column takes.
//! - QR: LAPACK's Householder (`geqr2`'s reflectors with `larfg`'s sign choice, so `R`'s
//!   diagonal signs are LAPACK's, then `org2r` forming `Q` backwards).
//! - SVD: one-sided (Hestenes) Jacobi on the columns of `a` (of `aᵀ` when wide), the inner
//!   products summed in f64; singular values descending; the left vectors of zero singular
//!   values and a full `U`'s extra columns completed by orthogonalizing the unit vector
//!   least covered by the columns already there.
//!
//! Jacobi stops after a sweep that rotates nothing: a pair is rotated while its off-diagonal
//! part exceeds a rounding-error threshold relative to the pair's own scale, so small
//! eigenvalues and singular values keep their relative accuracy. A non-finite input gives NaN
//! everywhere, as a failed factorization does on the CPU plugin. Every sum runs in index order
//! and every rotation is computed by one thread, so results do not depend on the block size.
//!
//! A factorization keeps its working copy in shared memory (static arrays of the function
//! template instantiated for its sizes), so a GPU takes these only where that fits
//! [`MAX_SCRATCH`] bytes.

use super::Dims;
use quabla_abi::qir::LinalgOp;
use quabla_abi::DType;

/// The most shared memory (bytes) the factorizations of one kernel may keep on a GPU:
/// 48 KiB is a block's static limit, and a kernel merging several parts may hold a block
/// fold's arrays besides. A 64x64 f64 SVD takes about 35 KiB.
pub const MAX_SCRATCH: usize = 36 * 1024;

/// The bound in force: the host emulation's shared arrays are statics of any size.
pub fn max_scratch() -> usize {
    if crate::emulate::requested() {
        usize::MAX
    } else {
        MAX_SCRATCH
    }
}

/// Whether `op` is one of these (the others keep no scratch).
pub fn covers(op: &LinalgOp) -> bool {
    match op {
        LinalgOp::Eigh | LinalgOp::Qr { .. } | LinalgOp::Svd { .. } => true,
        LinalgOp::Cholesky | LinalgOp::Lu | LinalgOp::TriangularSolve { .. } => false,
    }
}

/// The shared memory (bytes) `op` keeps for matrices of dimensions `d` and element type
/// `dtype`: what the function templates of [`FUNCTIONS`] declare.
///
/// ```
/// use quabla_abi::{qir::LinalgOp, DType};
/// use quabla_cuda::kernels::factor::{orthogonal::scratch_bytes, Dims};
/// let d = Dims { batch: 1, n: 64, m: 64 };
/// let svd = LinalgOp::Svd { full_matrices: false, compute_uv: true };
/// assert!(scratch_bytes(&svd, d, DType::F64) < 36 * 1024);
/// assert_eq!(scratch_bytes(&LinalgOp::Cholesky, d, DType::F64), 0);
/// ```
pub fn scratch_bytes(op: &LinalgOp, d: Dims, dtype: DType) -> usize {
    let t = dtype.size_bytes();
    let at_least_1 = |x: u64| x.max(1) as usize;
    let (rows, cols) = (d.m, d.n);
    let slots = |players: u64| players.div_ceil(2);
    match op {
        LinalgOp::Eigh => {
            let n = d.n;
            t * at_least_1(n * n)
                + 8 * 4 * at_least_1(slots(n))
                + 4 * at_least_1(n)
                + at_least_1(slots(n))
                + 4
        }
        LinalgOp::Qr { .. } => t * (at_least_1(rows * cols) + at_least_1(rows.min(cols))),
        LinalgOp::Svd { .. } => {
            let (long, short) = (rows.max(cols), rows.min(cols));
            t * (at_least_1(rows * cols) + at_least_1(short) + 2 * at_least_1(long) + 1)
                + 8 * 2 * at_least_1(slots(short))
                + 4 * at_least_1(short)
                + at_least_1(slots(short))
                + at_least_1(long)
                + 8
        }
        LinalgOp::Cholesky | LinalgOp::Lu | LinalgOp::TriangularSolve { .. } => 0,
    }
}

/// The statement running `op` on one matrix: operand pointer `a`, result pointers
/// `results` (each already at the matrix's own elements), element type `t`.
pub fn call(op: &LinalgOp, d: Dims, t: &str, a: &str, results: &[String]) -> String {
    let (rows, cols) = (d.m, d.n);
    match op {
        LinalgOp::Eigh => format!(
            "quabla_eigh<{t}, {}>({a}, {}, {});",
            d.n, results[0], results[1]
        ),
        LinalgOp::Qr { full_matrices } => format!(
            "quabla_qr<{t}, {rows}, {cols}, {full_matrices}>({a}, {}, {});",
            results[0], results[1]
        ),
        LinalgOp::Svd {
            full_matrices,
            compute_uv: true,
        } => format!(
            "quabla_svd<{t}, {rows}, {cols}, {full_matrices}, true>({a}, {}, {}, {});",
            results[0], results[1], results[2]
        ),
        LinalgOp::Svd {
            compute_uv: false, ..
        } => format!(
            "quabla_svd<{t}, {rows}, {cols}, false, false>({a}, ({t}*)0, {}, ({t}*)0);",
            results[0]
        ),
        LinalgOp::Cholesky | LinalgOp::Lu | LinalgOp::TriangularSolve { .. } => String::new(),
    }
}

/// The elements of each result of `op` per matrix, in result order.
pub fn result_sizes(op: &LinalgOp, d: Dims) -> Vec<u64> {
    let (rows, cols) = (d.m, d.n);
    let k = rows.min(cols);
    match op {
        LinalgOp::Eigh => vec![d.n, d.n * d.n],
        LinalgOp::Qr { full_matrices } => {
            let (qc, rr) = if *full_matrices { (rows, rows) } else { (k, k) };
            vec![rows * qc, rr * cols]
        }
        LinalgOp::Svd {
            full_matrices,
            compute_uv: true,
        } => {
            let (uc, vr) = if *full_matrices { (rows, cols) } else { (k, k) };
            vec![rows * uc, k, vr * cols]
        }
        LinalgOp::Svd {
            compute_uv: false, ..
        } => vec![k],
        LinalgOp::Cholesky | LinalgOp::Lu | LinalgOp::TriangularSolve { .. } => Vec::new(),
    }
}

/// The device functions, behind an include guard (a program's kernels are one source).
pub const FUNCTIONS: &str = r#"
#ifndef QUABLA_ORTHOGONAL
#define QUABLA_ORTHOGONAL
/* eigh, QR and SVD of one row-major matrix by one block. Every thread calls them alike (they
   wait at barriers); each ends with a barrier. Working copies are shared arrays of the
   instantiation's sizes. */
#define QUABLA_AT_LEAST_1(x) ((x) > 0 ? (x) : 1)
/* Jacobi converges quadratically (five to ten sweeps); the bound only ends a sweep sequence
   whose last rotations are rounding noise. */
#define QUABLA_JACOBI_SWEEPS 40

static __device__ float quabla_unit_roundoff(float) { return 5.9604644775390625e-8f; }
static __device__ double quabla_unit_roundoff(double) { return 1.1102230246251565e-16; }
static __device__ float quabla_smallest_normal(float) { return 1.1754943508222875e-38f; }
static __device__ double quabla_smallest_normal(double) { return 2.2250738585072014e-308; }
template <typename T> static __device__ T quabla_orthogonal_nan(void) {
  return (T)__longlong_as_double(0x7ff8000000000000LL);
}

/* Slot i of round r of the circle method among `players` (even) indices: the rounds'
   pairs are disjoint within a round and meet every pair once in players - 1 rounds. */
static __device__ void quabla_jacobi_pair(long long players, long long r, long long i,
    long long* p, long long* q) {
  long long m = players - 1, x, y;
  if (i == 0) { x = r; y = m; } else { x = (r + i) % m; y = (r - i + m) % m; }
  *p = x < y ? x : y;
  *q = x < y ? y : x;
}

/* Cyclic Jacobi sweeps over n indices until a sweep rotates nothing (or the bound): each
   round, `choose(i, p, q)` (one thread per slot i of the round's disjoint pairs) says whether
   pair (p, q) is rotated, keeping its rotation for slot i, then every thread runs
   `apply(r)`, which rotates round r's chosen pairs and ends with a barrier. `flag` and
   `turn` (a flag per slot) are shared. */
template <typename Choose, typename Apply>
static __device__ void quabla_jacobi_sweeps(long long n, int* flag, unsigned char* turn,
    Choose choose, Apply apply) {
  const long long players = n + (n & 1), slots = players / 2;
  for (int sweep = 0; sweep < QUABLA_JACOBI_SWEEPS; ++sweep) {
    if (threadIdx.x == 0) *flag = 0;
    __syncthreads();
    for (long long r = 0; r + 1 < players; ++r) {
      for (long long i = threadIdx.x; i < slots; i += blockDim.x) {
        long long p, q;
        quabla_jacobi_pair(players, r, i, &p, &q);
        turn[i] = q < n && choose(i, p, q);
        if (turn[i]) *flag = 1;
      }
      __syncthreads();
      apply(r);
    }
    const bool rotated = *flag != 0;
    __syncthreads();
    if (!rotated) break;
  }
}

/* The tangent of the Jacobi rotation annihilating the off-diagonal g of [[x, g], [g, y]]:
   the smaller of the two angles (Rutishauser's), without overflow for a tiny g. */
template <typename T> static __device__ T quabla_jacobi_tangent(T x, T y, T g) {
  T theta = (y - x) / (2 * g);
  return copysign((T)1, theta) / (fabs(theta) + hypot((T)1, theta));
}

/* order[0..n) = the indices of key[0..n) sorted (ascending, or descending), stable: one
   thread's insertion sort (n is at most a few dozen). */
template <typename T> static __device__ void quabla_sort_order(const T* key, long long stride,
    int* order, long long n, bool ascending) {
  if (threadIdx.x == 0) {
    for (long long i = 0; i < n; ++i) {
      long long j = i;
      T k = key[i * stride];
      while (j > 0) {
        T prev = key[order[j - 1] * stride];
        if (!(ascending ? k < prev : k > prev)) break;
        order[j] = order[j - 1];
        --j;
      }
      order[j] = (int)i;
    }
  }
  __syncthreads();
}

/* w (n) = the eigenvalues ascending and v (n x n) the eigenvectors as columns of the symmetric
   matrix a's lower triangle mirrored. */
template <typename T, int N> static __device__ void quabla_eigh(const T* a, T* w, T* v) {
  __shared__ T work[QUABLA_AT_LEAST_1(N * N)];
  /* per slot: c, s and the pair's new diagonal, in f64: a rotation rounded to f32 would be
     off orthogonal by f32's rounding, and V's columns drift by that every rotation. */
  __shared__ double rot[4 * QUABLA_AT_LEAST_1((N + 1) / 2)];
  __shared__ unsigned char turn[QUABLA_AT_LEAST_1((N + 1) / 2)];
  __shared__ int order[QUABLA_AT_LEAST_1(N)];
  __shared__ int flag;
  const long long n = N, players = N + (N & 1), slots = players / 2;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  for (long long e = threadIdx.x; e < n * n; e += blockDim.x) {
    long long i = e / n, j = e % n;
    T x = i >= j ? a[e] : a[j * n + i];
    work[e] = x;
    v[e] = i == j ? (T)1 : (T)0;
    if (!isfinite(x)) flag = 1;
  }
  __syncthreads();
  const bool finite = flag == 0;
  __syncthreads();
  auto choose = [&](long long i, long long p, long long q) {
    T g = work[p * n + q], x = work[p * n + p], y = work[q * n + q];
    T ag = fabs(g);
    if (!(ag > quabla_unit_roundoff(g) * sqrt(fabs(x)) * sqrt(fabs(y))) ||
        ag < quabla_smallest_normal(g))
      return false;
    double t = quabla_jacobi_tangent((double)x, (double)y, (double)g), c = 1 / sqrt(1 + t * t);
    rot[4 * i] = c;
    rot[4 * i + 1] = t * c;
    rot[4 * i + 2] = x - t * g;
    rot[4 * i + 3] = y + t * g;
    return true;
  };
  auto apply = [&](long long r) {
    /* Jᵀ A: rows p and q of every rotated pair. */
    for (long long e = threadIdx.x; e < slots * n; e += blockDim.x) {
      long long i = e / n, k = e % n, p, q;
      if (!turn[i]) continue;
      quabla_jacobi_pair(players, r, i, &p, &q);
      double c = rot[4 * i], s = rot[4 * i + 1], x = work[p * n + k], y = work[q * n + k];
      work[p * n + k] = (T)(c * x - s * y);
      work[q * n + k] = (T)(s * x + c * y);
    }
    __syncthreads();
    /* (Jᵀ A) J and V J: columns p and q; the pair's own 2x2 block exact. */
    for (long long e = threadIdx.x; e < slots * n; e += blockDim.x) {
      long long i = e / n, k = e % n, p, q;
      if (!turn[i]) continue;
      quabla_jacobi_pair(players, r, i, &p, &q);
      double c = rot[4 * i], s = rot[4 * i + 1];
      if (k == p) {
        work[p * n + p] = (T)rot[4 * i + 2];
        work[p * n + q] = 0;
      } else if (k == q) {
        work[q * n + q] = (T)rot[4 * i + 3];
        work[q * n + p] = 0;
      } else {
        double x = work[k * n + p], y = work[k * n + q];
        work[k * n + p] = (T)(c * x - s * y);
        work[k * n + q] = (T)(s * x + c * y);
      }
      double x = v[k * n + p], y = v[k * n + q];
      v[k * n + p] = (T)(c * x - s * y);
      v[k * n + q] = (T)(s * x + c * y);
    }
    __syncthreads();
  };
  if (finite) quabla_jacobi_sweeps(n, &flag, turn, choose, apply);
  if (!finite) {
    for (long long e = threadIdx.x; e < n * n; e += blockDim.x) {
      v[e] = quabla_orthogonal_nan<T>();
      if (e < n) w[e] = quabla_orthogonal_nan<T>();
    }
    __syncthreads();
    return;
  }
  quabla_sort_order(work, n + 1, order, n, true);
  for (long long j = threadIdx.x; j < n; j += blockDim.x) w[j] = work[order[j] * (n + 1)];
  __syncthreads();
  for (long long e = threadIdx.x; e < n * n; e += blockDim.x) work[e] = v[e];
  __syncthreads();
  for (long long e = threadIdx.x; e < n * n; e += blockDim.x)
    v[e] = work[(e / n) * n + order[e % n]];
  __syncthreads();
}

/* Column c of x (row stride ldx) from row j down, times the reflector I - t v vᵀ whose v is
   1 at row j and w's column j below it (w's row stride ldw), for m rows. */
template <typename T> static __device__ void quabla_reflect(const T* w, long long ldw, T* x,
    long long ldx, long long j, long long c, long long m, T t) {
  T s = x[j * ldx + c];
  for (long long i = j + 1; i < m; ++i) s += w[i * ldw + j] * x[i * ldx + c];
  s *= t;
  x[j * ldx + c] -= s;
  for (long long i = j + 1; i < m; ++i) x[i * ldx + c] -= s * w[i * ldw + j];
}

/* q and r of the M x N matrix a: reduced (q M x K, r K x N, K = min(M, N)) or COMPLETE (q
   M x M, r M x N). */
template <typename T, int M, int N, bool COMPLETE>
static __device__ void quabla_qr(const T* a, T* q, T* r) {
  __shared__ T work[QUABLA_AT_LEAST_1(M * N)];
  __shared__ T tau[QUABLA_AT_LEAST_1(M < N ? M : N)];
  const long long m = M, n = N, k = M < N ? M : N, qc = COMPLETE ? m : k,
                  rr = COMPLETE ? m : k;
  for (long long e = threadIdx.x; e < m * n; e += blockDim.x) work[e] = a[e];
  __syncthreads();
  for (long long j = 0; j < k; ++j) {
    /* The reflector of column j below the diagonal (LAPACK's larfg): beta = -sign(alpha)
       |x|, tau = (beta - alpha) / beta, v = x / (alpha - beta) with v_j = 1 implied; none
       (tau 0) where the column is zero below the diagonal. */
    if (threadIdx.x == 0) {
      T alpha = work[j * n + j], scale = 0, sum = 0;
      for (long long i = j + 1; i < m; ++i) {
        T x = fabs(work[i * n + j]);
        if (!(x <= scale)) scale = x;
      }
      if (scale > 0)
        for (long long i = j + 1; i < m; ++i) {
          T x = work[i * n + j] / scale;
          sum += x * x;
        }
      T norm = scale * sqrt(sum), t = 0;
      if (norm != 0) {
        T beta = -copysign(hypot(alpha, norm), alpha);
        t = (beta - alpha) / beta;
        T scal = 1 / (alpha - beta);
        for (long long i = j + 1; i < m; ++i) work[i * n + j] *= scal;
        work[j * n + j] = beta;
      }
      tau[j] = t;
    }
    __syncthreads();
    const T t = tau[j];
    if (t != 0)
      for (long long c = j + 1 + threadIdx.x; c < n; c += blockDim.x)
        quabla_reflect(work, n, work, n, j, c, m, t);
    __syncthreads();
  }
  for (long long e = threadIdx.x; e < rr * n; e += blockDim.x) {
    long long i = e / n, c = e % n;
    r[e] = i <= c && i < k ? work[i * n + c] : (T)0;
  }
  for (long long e = threadIdx.x; e < m * qc; e += blockDim.x)
    q[e] = e / qc == e % qc ? (T)1 : (T)0;
  __syncthreads();
  /* Q = H_0 ... H_{K-1} applied to the identity's first columns, last reflector first; H_j
     leaves columns left of j as they are (LAPACK's org2r). */
  for (long long j = k - 1; j >= 0; --j) {
    const T t = tau[j];
    if (t != 0)
      for (long long c = j + threadIdx.x; c < qc; c += blockDim.x)
        quabla_reflect(work, n, q, qc, j, c, m, t);
    __syncthreads();
  }
}

/* s (K) the singular values descending of the M x N matrix a and, with UV, u (M x M when
   FULL, else M x K) and vt (N x N when FULL, else K x N) with a = u diag(s) vt. One-sided
   Jacobi runs on W = a (tall, L x S with L >= S) or aᵀ (wide): W V = U' diag(s), so for a tall
   a u = U' and vt = Vᵀ, for a wide one u = V and vt = U'ᵀ. */
template <typename T, int M, int N, bool FULL, bool UV>
static __device__ void quabla_svd(const T* a, T* u, T* s, T* vt) {
  enum { L = M < N ? N : M, S = M < N ? M : N, SLOTS = (S + 1) / 2 };
  __shared__ T work[QUABLA_AT_LEAST_1(M * N)];
  __shared__ double rot[2 * QUABLA_AT_LEAST_1(SLOTS)];
  __shared__ unsigned char turn[QUABLA_AT_LEAST_1(SLOTS)];
  __shared__ T sigma[QUABLA_AT_LEAST_1(S)];
  __shared__ int order[QUABLA_AT_LEAST_1(S)];
  __shared__ T x[QUABLA_AT_LEAST_1(L)], proj[QUABLA_AT_LEAST_1(L)];
  __shared__ unsigned char have[QUABLA_AT_LEAST_1(L)];
  __shared__ T norm;
  __shared__ int flag, pick;
  const bool wide = M < N;
  const long long l = L, sh = S, players = S + (S & 1), slots = players / 2;
  const long long uc = FULL ? l : sh;
  /* V (S x S) lies in u (wide) or transposed in vt (tall); U' (L x uc) in u (tall) or
     transposed in vt (wide). */
  T* vp = wide ? u : vt;
  const long long vi = wide ? sh : 1, vj = wide ? 1 : sh;
  T* up = wide ? vt : u;
  const long long ui = wide ? 1 : uc, uj = wide ? l : 1;
  if (threadIdx.x == 0) flag = 0;
  __syncthreads();
  for (long long e = threadIdx.x; e < l * sh; e += blockDim.x) {
    long long i = e / sh, j = e % sh;
    T y = wide ? a[j * N + i] : a[e];
    work[e] = y;
    if (!isfinite(y)) flag = 1;
  }
  if (UV)
    for (long long e = threadIdx.x; e < sh * sh; e += blockDim.x)
      vp[(e / sh) * vi + (e % sh) * vj] = e / sh == e % sh ? (T)1 : (T)0;
  __syncthreads();
  const bool finite = flag == 0;
  __syncthreads();
  const double tol = quabla_unit_roundoff((T)0) * (l > 64 ? sqrt((double)l) : 8.0);
  auto choose = [&](long long i, long long p, long long q) {
    double alpha = 0, beta = 0, gamma = 0;
    for (long long k = 0; k < l; ++k) {
      double y = work[k * sh + p], z = work[k * sh + q];
      alpha += y * y;
      beta += z * z;
      gamma += y * z;
    }
    if (!(fabs(gamma) > tol * sqrt(alpha) * sqrt(beta))) return false;
    double t = quabla_jacobi_tangent(alpha, beta, gamma), c = 1 / sqrt(1 + t * t);
    rot[2 * i] = c;
    rot[2 * i + 1] = t * c;
    return true;
  };
  /* W J and V J: columns p and q of W's rows, then of V's. */
  auto apply = [&](long long r) {
    for (long long e = threadIdx.x; e < slots * (l + (UV ? sh : 0)); e += blockDim.x) {
      long long i = e % slots, k = e / slots, p, q;
      if (!turn[i]) continue;
      quabla_jacobi_pair(players, r, i, &p, &q);
      double c = rot[2 * i], sn = rot[2 * i + 1];
      T* yp;
      T* zp;
      if (k < l) {
        yp = &work[k * sh + p];
        zp = &work[k * sh + q];
      } else {
        yp = &vp[(k - l) * vi + p * vj];
        zp = &vp[(k - l) * vi + q * vj];
      }
      double y = *yp, z = *zp;
      *yp = (T)(c * y - sn * z);
      *zp = (T)(sn * y + c * z);
    }
    __syncthreads();
  };
  if (finite) quabla_jacobi_sweeps(sh, &flag, turn, choose, apply);
  if (!finite) {
    for (long long e = threadIdx.x; e < sh; e += blockDim.x) s[e] = quabla_orthogonal_nan<T>();
    if (UV) {
      for (long long e = threadIdx.x; e < sh * sh; e += blockDim.x)
        vp[(e / sh) * vi + (e % sh) * vj] = quabla_orthogonal_nan<T>();
      for (long long e = threadIdx.x; e < l * uc; e += blockDim.x)
        up[(e / uc) * ui + (e % uc) * uj] = quabla_orthogonal_nan<T>();
    }
    __syncthreads();
    return;
  }
  for (long long j = threadIdx.x; j < sh; j += blockDim.x) {
    double sum = 0;
    for (long long k = 0; k < l; ++k) {
      double y = work[k * sh + j];
      sum += y * y;
    }
    sigma[j] = (T)sqrt(sum);
  }
  __syncthreads();
  quabla_sort_order(sigma, 1, order, sh, false);
  for (long long j = threadIdx.x; j < sh; j += blockDim.x) s[j] = sigma[order[j]];
  if (!UV) {
    __syncthreads();
    return;
  }
  /* U' columns of the nonzero singular values: W's, normalized (Jacobi left them
     orthogonal to within its threshold, however small they are). */
  for (long long j = threadIdx.x; j < uc; j += blockDim.x)
    have[j] = j < sh && sigma[order[j]] >= quabla_smallest_normal((T)0);
  __syncthreads();
  for (long long e = threadIdx.x; e < l * sh; e += blockDim.x) {
    long long i = e / sh, j = e % sh;
    if (have[j]) up[i * ui + j * uj] = work[i * sh + order[j]] / sigma[order[j]];
  }
  __syncthreads();
  for (long long e = threadIdx.x; e < sh * sh; e += blockDim.x)
    work[e] = vp[(e / sh) * vi + (e % sh) * vj];
  __syncthreads();
  for (long long e = threadIdx.x; e < sh * sh; e += blockDim.x) {
    long long i = e / sh, j = e % sh;
    vp[i * vi + j * vj] = work[i * sh + order[j]];
  }
  __syncthreads();
  /* The other columns: each the unit vector least covered by the columns so far, minus its
     projection on them (twice, for orthogonality to rounding), normalized. */
  for (long long j = 0; j < uc; ++j) {
    if (have[j]) continue;
    for (long long c = threadIdx.x; c < l; c += blockDim.x) {
      T covered = 0;
      for (long long o = 0; o < uc; ++o)
        if (have[o]) covered += up[c * ui + o * uj] * up[c * ui + o * uj];
      proj[c] = 1 - covered;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      int best = 0;
      for (long long c = 1; c < l; ++c)
        if (proj[c] > proj[best]) best = (int)c;
      pick = best;
    }
    __syncthreads();
    for (long long i = threadIdx.x; i < l; i += blockDim.x) {
      T y = i == pick ? (T)1 : (T)0;
      for (long long o = 0; o < uc; ++o)
        if (have[o]) y -= up[pick * ui + o * uj] * up[i * ui + o * uj];
      x[i] = y;
    }
    __syncthreads();
    for (long long o = threadIdx.x; o < uc; o += blockDim.x) {
      T d = 0;
      if (have[o])
        for (long long i = 0; i < l; ++i) d += up[i * ui + o * uj] * x[i];
      proj[o] = d;
    }
    __syncthreads();
    for (long long i = threadIdx.x; i < l; i += blockDim.x) {
      T y = x[i];
      for (long long o = 0; o < uc; ++o)
        if (have[o]) y -= proj[o] * up[i * ui + o * uj];
      x[i] = y;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      T sum = 0;
      for (long long i = 0; i < l; ++i) sum += x[i] * x[i];
      norm = sqrt(sum);
    }
    __syncthreads();
    for (long long i = threadIdx.x; i < l; i += blockDim.x) up[i * ui + j * uj] = x[i] / norm;
    __syncthreads();
    if (threadIdx.x == 0) have[j] = 1;
    __syncthreads();
  }
}
#endif
"#;

#[cfg(test)]
pub(crate) mod tests;
