//! cuBLAS for the matrix products `kernels::Gemm` recognises: one handle on the plugin's
//! stream (so products and kernels stay in order), found without panicking (cudarc's loader
//! panics on a missing library, so presence is asked first) and destroyed without panicking
//! (cudarc's own handle unwraps in `Drop`). cuBLAS's default math mode: f32 products in f32,
//! no TF32, and the same bits run to run on one GPU model (no atomics mode).

use crate::kernels::Gemm;
use cudarc::cublas::{result, sys};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr};
use quabla_abi::abi::AbiError;
use quabla_abi::DType;
use std::sync::Arc;

/// A cuBLAS handle bound to the plugin's stream, with a workspace of its own.
pub struct Blas(sys::cublasHandle_t, Option<CudaSlice<u8>>);

/// cuBLAS's workspace (NVIDIA's advice for Hopper): given up front, cuBLAS allocates nothing
/// while a CUDA graph is captured (`graph.rs`).
const WORKSPACE_BYTES: usize = 32 << 20;

// SAFETY: the handle is used under the `Mutex` the runtime keeps it in, one thread at a time,
// as cuBLAS allows for a handle.
unsafe impl Send for Blas {}

impl Blas {
    /// A handle on `stream`, or `None` when cuBLAS is not on the library path, cannot start,
    /// or `QUABLA_CUDA_CUBLAS=0` asks for the plugin's own kernels.
    pub fn open(ctx: &Arc<CudaContext>, stream: &Arc<CudaStream>) -> Option<Blas> {
        if std::env::var("QUABLA_CUDA_CUBLAS").is_ok_and(|v| v == "0") {
            return None;
        }
        // SAFETY: tries to open the library by its usual names; nothing is called.
        if !unsafe { sys::is_culib_present() } {
            return None;
        }
        ctx.bind_to_thread().ok()?;
        let handle = result::create_handle().ok()?;
        let mut blas = Blas(handle, None);
        // SAFETY: a live handle and the context's own stream.
        unsafe { result::set_stream(blas.0, stream.cu_stream() as _) }.ok()?;
        let workspace = stream.alloc_zeros::<u8>(WORKSPACE_BYTES).ok()?;
        {
            let (ptr, _) = workspace.device_ptr(stream);
            // SAFETY: device memory of WORKSPACE_BYTES kept alive as long as the handle (in
            // `blas.1`), used on the handle's stream.
            unsafe { sys::cublasSetWorkspace_v2(blas.0, ptr as *mut _, WORKSPACE_BYTES) }
                .result()
                .ok()?;
        }
        blas.1 = Some(workspace);
        Some(blas)
    }

    /// `out = lhs · rhs` as `g` describes, on device pointers to row-major operands: the
    /// column-major product cuBLAS computes is taken as `outᵀ = rhsᵀ · lhsᵀ`, so no copy is
    /// made.
    pub fn gemm(&self, g: &Gemm, lhs: u64, rhs: u64, out: u64) -> Result<(), AbiError> {
        let op = |transposed: bool| {
            if transposed {
                sys::cublasOperation_t::CUBLAS_OP_T
            } else {
                sys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        // `Gemm::of` bounds every size by i32::MAX.
        let (m, n, k, batch) = (g.m as i32, g.n as i32, g.k as i32, g.batch as i32);
        let ld_rhs = if g.rhs_transposed { k } else { n };
        let ld_lhs = if g.lhs_transposed { m } else { k };
        let (stride_rhs, stride_lhs, stride_out) =
            ((g.k * g.n) as i64, (g.m * g.k) as i64, (g.m * g.n) as i64);
        let (op_rhs, op_lhs) = (op(g.rhs_transposed), op(g.lhs_transposed));
        // SAFETY: the pointers are live device buffers of the operands' and result's full
        // sizes (batch · m · k, batch · k · n and batch · m · n elements of `g.dtype`), the
        // leading dimensions and strides describe exactly those layouts, and alpha and beta
        // point at host scalars that outlive the call.
        let status = unsafe {
            match g.dtype {
                DType::F64 => result::dgemm_strided_batched(
                    self.0,
                    op_rhs,
                    op_lhs,
                    n,
                    m,
                    k,
                    &1.0,
                    rhs as *const f64,
                    ld_rhs,
                    stride_rhs,
                    lhs as *const f64,
                    ld_lhs,
                    stride_lhs,
                    &0.0,
                    out as *mut f64,
                    n,
                    stride_out,
                    batch,
                ),
                DType::F32 => result::sgemm_strided_batched(
                    self.0,
                    op_rhs,
                    op_lhs,
                    n,
                    m,
                    k,
                    &1.0,
                    rhs as *const f32,
                    ld_rhs,
                    stride_rhs,
                    lhs as *const f32,
                    ld_lhs,
                    stride_lhs,
                    &0.0,
                    out as *mut f32,
                    n,
                    stride_out,
                    batch,
                ),
                other => {
                    return Err(AbiError::internal(format!(
                        "a {} matrix product sent to cuBLAS",
                        other.name()
                    )))
                }
            }
        };
        status.map_err(|e| AbiError::internal(format!("cuBLAS's matrix product: {e}")))
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        // SAFETY: created by `create_handle`, destroyed once; a failure is ignored (nothing
        // to do about it, and no panic in a destructor).
        let _ = unsafe { result::destroy_handle(self.0) };
    }
}
