//! cuSOLVER's dense factorizations and cuBLAS's triangular solve, on the plugin's stream:
//! the handles (found without panicking: cudarc's loaders panic on a missing library, so
//! presence is asked first; destroyed without panicking), and the LAPACK-style routines
//! typed by element (`Real`, f32 and f64) so that `linalg.rs` writes each factorization once.
//! Column-major, as LAPACK; `linalg.rs` converts QIR's row-major matrices.

use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as dn;
use cudarc::driver::{CudaContext, CudaStream, DeviceRepr, ValidAsZeroBits};
use quabla_abi::abi::AbiError;
use std::ffi::{c_int, c_schar};
use std::sync::Arc;

/// Whether cuSOLVER and cuBLAS can be loaded (and `QUABLA_CUDA_CUSOLVER=0` does not turn the
/// factorizations off): the dense factorizations are offered only then.
///
/// ```
/// // Without the libraries (as in CI) the factorizations are not offered.
/// let _ = quabla_cuda::solver::available();
/// ```
pub fn available() -> bool {
    if std::env::var("QUABLA_CUDA_CUSOLVER").is_ok_and(|v| v == "0") {
        return false;
    }
    // SAFETY: each tries to open its library by its usual names; nothing is called.
    unsafe { dn::is_culib_present() && blas::is_culib_present() }
}

/// A cuSOLVER handle and a cuBLAS handle (for `trsm`), both on the plugin's stream.
pub struct Solver {
    pub(crate) dn: dn::cusolverDnHandle_t,
    pub(crate) blas: blas::cublasHandle_t,
}

// SAFETY: the handles are used under the `Mutex` the runtime keeps them in, one thread at a
// time, as both libraries allow.
unsafe impl Send for Solver {}

impl Solver {
    /// Both handles on `stream`, or why not.
    pub fn open(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Result<Solver, String> {
        if !available() {
            return Err("cuSOLVER or cuBLAS is not on the library path".into());
        }
        ctx.bind_to_thread().map_err(|e| e.to_string())?;
        let dn = cudarc::cusolver::result::dn_create().map_err(|e| format!("cuSOLVER: {e:?}"))?;
        let blas = match cudarc::cublas::result::create_handle() {
            Ok(h) => h,
            Err(e) => {
                // SAFETY: created above, destroyed once.
                let _ = unsafe { cudarc::cusolver::result::dn_destroy(dn) };
                return Err(format!("cuBLAS: {e:?}"));
            }
        };
        let solver = Solver { dn, blas };
        // SAFETY: live handles and the context's own stream.
        unsafe {
            cudarc::cusolver::result::dn_set_stream(solver.dn, stream.cu_stream() as _)
                .map_err(|e| format!("cuSOLVER's stream: {e:?}"))?;
            cudarc::cublas::result::set_stream(solver.blas, stream.cu_stream() as _)
                .map_err(|e| format!("cuBLAS's stream: {e:?}"))?;
        }
        Ok(solver)
    }
}

impl Drop for Solver {
    fn drop(&mut self) {
        // SAFETY: created in `open`, destroyed once; failures ignored (no panic in a
        // destructor, and nothing to do about them).
        unsafe {
            let _ = cudarc::cusolver::result::dn_destroy(self.dn);
            let _ = cudarc::cublas::result::destroy_handle(self.blas);
        }
    }
}

/// A cuSOLVER status as a typed error naming the routine.
pub fn check(routine: &str, status: dn::cusolverStatus_t) -> Result<(), AbiError> {
    status
        .result()
        .map_err(|e| AbiError::internal(format!("cuSOLVER's {routine}: {e:?}")))
}

/// A cuBLAS status as a typed error naming the routine.
pub fn check_blas(routine: &str, status: blas::cublasStatus_t) -> Result<(), AbiError> {
    status
        .result()
        .map_err(|e| AbiError::internal(format!("cuBLAS's {routine}: {e:?}")))
}

type H = dn::cusolverDnHandle_t;
type S = dn::cusolverStatus_t;

/// An element type cuSOLVER factors: f32 (the S routines) or f64 (the D routines). `potrf`
/// and `syevd` read the upper triangle of a column-major matrix (QIR's row-major lower one,
/// as it lies), `syevd` computes eigenvectors always, as QIR's ops need.
///
/// # Safety
/// Every method is a raw library call: pointers must be device memory of the sizes LAPACK's
/// documentation gives for the arguments, on the handle's stream.
#[allow(clippy::too_many_arguments, clippy::missing_safety_doc)]
pub trait Real:
    DeviceRepr + ValidAsZeroBits + Copy + Default + Unpin + Send + Sync + 'static
{
    /// The suffix of its helper kernels (`linalg::HELPERS`).
    const SUFFIX: &'static str;
    unsafe fn potrf_work(h: H, n: c_int, a: *mut Self, lda: c_int, lwork: *mut c_int) -> S;
    unsafe fn potrf(
        h: H,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        work: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> S;
    unsafe fn getrf_work(h: H, m: c_int, n: c_int, a: *mut Self, lda: c_int, lw: *mut c_int) -> S;
    unsafe fn getrf(
        h: H,
        m: c_int,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        work: *mut Self,
        ipiv: *mut c_int,
        info: *mut c_int,
    ) -> S;
    unsafe fn geqrf_work(h: H, m: c_int, n: c_int, a: *mut Self, lda: c_int, lw: *mut c_int) -> S;
    unsafe fn geqrf(
        h: H,
        m: c_int,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        tau: *mut Self,
        work: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> S;
    unsafe fn orgqr_work(
        h: H,
        m: c_int,
        n: c_int,
        k: c_int,
        a: *const Self,
        lda: c_int,
        tau: *const Self,
        lwork: *mut c_int,
    ) -> S;
    unsafe fn orgqr(
        h: H,
        m: c_int,
        n: c_int,
        k: c_int,
        a: *mut Self,
        lda: c_int,
        tau: *const Self,
        work: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> S;
    unsafe fn syevd_work(
        h: H,
        n: c_int,
        a: *const Self,
        lda: c_int,
        w: *const Self,
        lwork: *mut c_int,
    ) -> S;
    unsafe fn syevd(
        h: H,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        w: *mut Self,
        work: *mut Self,
        lwork: c_int,
        info: *mut c_int,
    ) -> S;
    unsafe fn gesvd_work(h: H, m: c_int, n: c_int, lwork: *mut c_int) -> S;
    unsafe fn gesvd(
        h: H,
        jobu: c_schar,
        jobvt: c_schar,
        m: c_int,
        n: c_int,
        a: *mut Self,
        lda: c_int,
        s: *mut Self,
        u: *mut Self,
        ldu: c_int,
        vt: *mut Self,
        ldvt: c_int,
        work: *mut Self,
        lwork: c_int,
        rwork: *mut Self,
        info: *mut c_int,
    ) -> S;
    unsafe fn trsm(
        h: blas::cublasHandle_t,
        side: blas::cublasSideMode_t,
        uplo: blas::cublasFillMode_t,
        trans: blas::cublasOperation_t,
        diag: blas::cublasDiagType_t,
        m: c_int,
        n: c_int,
        a: *const Self,
        lda: c_int,
        b: *mut Self,
        ldb: c_int,
    ) -> blas::cublasStatus_t;
}

const UPPER: dn::cublasFillMode_t = dn::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER;
const VECTORS: dn::cusolverEigMode_t = dn::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR;

/// The S or D routines for one type: the same calls with the type's prefix.
macro_rules! real {
    ($t:ty, $suffix:expr, $potrf_w:ident, $potrf:ident, $getrf_w:ident, $getrf:ident,
     $geqrf_w:ident, $geqrf:ident, $orgqr_w:ident, $orgqr:ident, $syevd_w:ident,
     $syevd:ident, $gesvd_w:ident, $gesvd:ident, $trsm:ident) => {
        impl Real for $t {
            const SUFFIX: &'static str = $suffix;
            unsafe fn potrf_work(h: H, n: c_int, a: *mut $t, lda: c_int, lw: *mut c_int) -> S {
                dn::$potrf_w(h, UPPER, n, a, lda, lw)
            }
            unsafe fn potrf(
                h: H,
                n: c_int,
                a: *mut $t,
                lda: c_int,
                work: *mut $t,
                lwork: c_int,
                info: *mut c_int,
            ) -> S {
                dn::$potrf(h, UPPER, n, a, lda, work, lwork, info)
            }
            unsafe fn getrf_work(
                h: H,
                m: c_int,
                n: c_int,
                a: *mut $t,
                lda: c_int,
                lw: *mut c_int,
            ) -> S {
                dn::$getrf_w(h, m, n, a, lda, lw)
            }
            unsafe fn getrf(
                h: H,
                m: c_int,
                n: c_int,
                a: *mut $t,
                lda: c_int,
                work: *mut $t,
                ipiv: *mut c_int,
                info: *mut c_int,
            ) -> S {
                dn::$getrf(h, m, n, a, lda, work, ipiv, info)
            }
            unsafe fn geqrf_work(
                h: H,
                m: c_int,
                n: c_int,
                a: *mut $t,
                lda: c_int,
                lw: *mut c_int,
            ) -> S {
                dn::$geqrf_w(h, m, n, a, lda, lw)
            }
            unsafe fn geqrf(
                h: H,
                m: c_int,
                n: c_int,
                a: *mut $t,
                lda: c_int,
                tau: *mut $t,
                work: *mut $t,
                lwork: c_int,
                info: *mut c_int,
            ) -> S {
                dn::$geqrf(h, m, n, a, lda, tau, work, lwork, info)
            }
            unsafe fn orgqr_work(
                h: H,
                m: c_int,
                n: c_int,
                k: c_int,
                a: *const $t,
                lda: c_int,
                tau: *const $t,
                lw: *mut c_int,
            ) -> S {
                dn::$orgqr_w(h, m, n, k, a, lda, tau, lw)
            }
            unsafe fn orgqr(
                h: H,
                m: c_int,
                n: c_int,
                k: c_int,
                a: *mut $t,
                lda: c_int,
                tau: *const $t,
                work: *mut $t,
                lwork: c_int,
                info: *mut c_int,
            ) -> S {
                dn::$orgqr(h, m, n, k, a, lda, tau, work, lwork, info)
            }
            unsafe fn syevd_work(
                h: H,
                n: c_int,
                a: *const $t,
                lda: c_int,
                w: *const $t,
                lw: *mut c_int,
            ) -> S {
                dn::$syevd_w(h, VECTORS, UPPER, n, a, lda, w, lw)
            }
            unsafe fn syevd(
                h: H,
                n: c_int,
                a: *mut $t,
                lda: c_int,
                w: *mut $t,
                work: *mut $t,
                lwork: c_int,
                info: *mut c_int,
            ) -> S {
                dn::$syevd(h, VECTORS, UPPER, n, a, lda, w, work, lwork, info)
            }
            unsafe fn gesvd_work(h: H, m: c_int, n: c_int, lw: *mut c_int) -> S {
                dn::$gesvd_w(h, m, n, lw)
            }
            unsafe fn gesvd(
                h: H,
                jobu: c_schar,
                jobvt: c_schar,
                m: c_int,
                n: c_int,
                a: *mut $t,
                lda: c_int,
                s: *mut $t,
                u: *mut $t,
                ldu: c_int,
                vt: *mut $t,
                ldvt: c_int,
                work: *mut $t,
                lwork: c_int,
                rwork: *mut $t,
                info: *mut c_int,
            ) -> S {
                dn::$gesvd(
                    h, jobu, jobvt, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, rwork, info,
                )
            }
            unsafe fn trsm(
                h: blas::cublasHandle_t,
                side: blas::cublasSideMode_t,
                uplo: blas::cublasFillMode_t,
                trans: blas::cublasOperation_t,
                diag: blas::cublasDiagType_t,
                m: c_int,
                n: c_int,
                a: *const $t,
                lda: c_int,
                b: *mut $t,
                ldb: c_int,
            ) -> blas::cublasStatus_t {
                let one: $t = 1.0;
                blas::$trsm(h, side, uplo, trans, diag, m, n, &one, a, lda, b, ldb)
            }
        }
    };
}

real!(
    f32,
    "f32",
    cusolverDnSpotrf_bufferSize,
    cusolverDnSpotrf,
    cusolverDnSgetrf_bufferSize,
    cusolverDnSgetrf,
    cusolverDnSgeqrf_bufferSize,
    cusolverDnSgeqrf,
    cusolverDnSorgqr_bufferSize,
    cusolverDnSorgqr,
    cusolverDnSsyevd_bufferSize,
    cusolverDnSsyevd,
    cusolverDnSgesvd_bufferSize,
    cusolverDnSgesvd,
    cublasStrsm_v2
);
real!(
    f64,
    "f64",
    cusolverDnDpotrf_bufferSize,
    cusolverDnDpotrf,
    cusolverDnDgetrf_bufferSize,
    cusolverDnDgetrf,
    cusolverDnDgeqrf_bufferSize,
    cusolverDnDgeqrf,
    cusolverDnDorgqr_bufferSize,
    cusolverDnDorgqr,
    cusolverDnDsyevd_bufferSize,
    cusolverDnDsyevd,
    cusolverDnDgesvd_bufferSize,
    cusolverDnDgesvd,
    cublasDtrsm_v2
);
