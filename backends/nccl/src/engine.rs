//! The collectives over NCCL, on CUDA device memory (`DEVICE_KIND_CUDA` exports, the CUDA
//! plugin's buffers). Each communicator has its own stream; a call waits on the source's
//! ready event, is enqueued, and is polled (`cuStreamQuery`, `ncclCommGetAsyncError`) until
//! done, failed (`Unavailable`) or past the deadline (the communicator is aborted:
//! `DeadlineExceeded`). Sums are NCCL's: deterministic for a fixed topology and NCCL
//! version, not in rank order as the MPI plugin's.

use crate::library::{self, Comm, Nccl, Stream, UniqueId, CUDA_NOT_READY};
use quabla_abi::abi::{AbiError, CollectiveKind, ErrorCode, ReduceOp, DEVICE_KIND_CUDA};
use quabla_abi::plugin::{Collective, Collectives, Communicator};
use quabla_abi::DType;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;
use std::time::{Duration, Instant};

fn unavailable(what: String) -> AbiError {
    AbiError::new(ErrorCode::FailedPrecondition, what)
}

/// The NCCL engine.
pub struct NcclEngine;

/// The GPU a rank uses: `QUABLA_CUDA_DEVICE`, else its rank on this node as launchers set
/// it (OpenMPI, Slurm), modulo the GPUs there are.
fn device_for_rank(cuda: &library::Cuda) -> Result<c_int, AbiError> {
    let mut count: c_int = 0;
    // SAFETY: writes one int.
    let rc = unsafe { (cuda.device_get_count)(&mut count) };
    if rc != 0 || count == 0 {
        return Err(unavailable(
            "no CUDA device: NCCL needs an NVIDIA GPU".into(),
        ));
    }
    let pick = [
        "QUABLA_CUDA_DEVICE",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "SLURM_LOCALID",
    ]
    .iter()
    .find_map(|v| std::env::var(v).ok()?.parse::<c_int>().ok())
    .unwrap_or(0);
    Ok(pick.rem_euclid(count))
}

impl Collectives for NcclEngine {
    fn unique_id(&self) -> Result<Vec<u8>, AbiError> {
        let nccl = library::nccl().map_err(unavailable)?;
        let mut id = UniqueId([0; 128]);
        // SAFETY: writes one ncclUniqueId.
        let r = unsafe { (nccl.get_unique_id)(&mut id) };
        if r != 0 {
            return Err(unavailable(format!("ncclGetUniqueId: {}", nccl.message(r))));
        }
        Ok(id.0.to_vec())
    }

    fn comm_init(
        &self,
        world_size: u32,
        rank: u32,
        id: &[u8],
        timeout: Duration,
    ) -> Result<Box<dyn Communicator>, AbiError> {
        let nccl = library::nccl().map_err(unavailable)?;
        if world_size == 0 {
            return Err(AbiError::invalid(
                "NCCL takes its peers from a unique id, not from a launcher: make one on rank 0 \
                 (`unique_id`), send it to every rank (e.g. with the mpi plugin's broadcast), \
                 and give each its world size and rank",
            ));
        }
        let id: [u8; 128] = id.try_into().map_err(|_| {
            AbiError::invalid(format!(
                "an NCCL unique id is 128 bytes (from `unique_id`), not {}",
                id.len()
            ))
        })?;
        let cuda = library::cuda().map_err(unavailable)?;
        let device = device_for_rank(cuda)?;
        let mut ctx: *mut c_void = std::ptr::null_mut();
        let mut stream: Stream = std::ptr::null_mut();
        let mut dev: c_int = 0;
        // SAFETY: plain driver calls writing the handles given.
        unsafe {
            let rc = (cuda.device_get)(&mut dev, device);
            let rc = if rc == 0 {
                (cuda.primary_ctx_retain)(&mut ctx, dev)
            } else {
                rc
            };
            let rc = if rc == 0 {
                (cuda.ctx_set_current)(ctx)
            } else {
                rc
            };
            // CU_STREAM_NON_BLOCKING: never serialised with the legacy default stream.
            let rc = if rc == 0 {
                (cuda.stream_create)(&mut stream, 1)
            } else {
                rc
            };
            if rc != 0 {
                return Err(unavailable(format!(
                    "setting up CUDA device {device} for NCCL failed (CUDA error {rc})"
                )));
            }
        }
        let mut comm: Comm = std::ptr::null_mut();
        // SAFETY: the id came from ncclGetUniqueId on some rank (NCCL checks it).
        let r = unsafe {
            (nccl.comm_init_rank)(&mut comm, world_size as c_int, UniqueId(id), rank as c_int)
        };
        if r != 0 {
            return Err(unavailable(format!(
                "ncclCommInitRank: {}",
                nccl.message(r)
            )));
        }
        Ok(Box::new(NcclComm {
            nccl,
            state: Mutex::new(Handles { comm, stream, ctx }),
            rank,
            size: world_size,
            timeout,
        }))
    }
}

struct Handles {
    comm: Comm,
    stream: Stream,
    ctx: *mut c_void,
}

// SAFETY: the handles are used under the mutex only, with the context made current first.
unsafe impl Send for Handles {}

struct NcclComm {
    nccl: &'static Nccl,
    state: Mutex<Handles>,
    rank: u32,
    size: u32,
    timeout: Duration,
}

impl Drop for NcclComm {
    fn drop(&mut self) {
        let h = self.state.lock().unwrap_or_else(|p| p.into_inner());
        // SAFETY: the communicator is ours; destroy waits for its work, which `run` finished.
        unsafe { (self.nccl.comm_destroy)(h.comm) };
    }
}

fn nccl_dtype(d: DType) -> c_int {
    match d {
        DType::Bool => 1, // ncclUint8: max is any, min is all
        DType::I32 => 2,
        DType::U32 => 3,
        DType::F32 => 7,
        DType::F64 => 8,
    }
}

fn nccl_op(op: ReduceOp) -> c_int {
    match op {
        ReduceOp::Sum => 0,
        ReduceOp::Max => 2,
        ReduceOp::Min => 3,
        // ncclAvg (NCCL 2.10 and newer).
        ReduceOp::Mean => 4,
    }
}

impl NcclComm {
    /// Waits for the stream, watching for NCCL's asynchronous errors and the deadline.
    fn wait(&self, h: &Handles, what: &str) -> Result<(), AbiError> {
        let cuda = library::cuda().map_err(unavailable)?;
        let start = Instant::now();
        loop {
            // SAFETY: the stream is ours.
            match unsafe { (cuda.stream_query)(h.stream) } {
                0 => return Ok(()),
                CUDA_NOT_READY => {}
                rc => {
                    return Err(AbiError::new(
                        ErrorCode::Unavailable,
                        format!("{what}: the GPU failed (CUDA error {rc})"),
                    ))
                }
            }
            let mut async_err: c_int = 0;
            // SAFETY: the communicator is ours.
            unsafe { (self.nccl.comm_get_async_error)(h.comm, &mut async_err) };
            if async_err != 0 && async_err != library::IN_PROGRESS {
                // SAFETY: aborting a failed communicator is NCCL's documented recovery.
                unsafe { (self.nccl.comm_abort)(h.comm) };
                return Err(AbiError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "{what}: {} (a peer may have died); the communicator was aborted",
                        self.nccl.message(async_err)
                    ),
                ));
            }
            if start.elapsed() >= self.timeout {
                // SAFETY: as above; abort makes the stuck kernels return.
                unsafe { (self.nccl.comm_abort)(h.comm) };
                return Err(AbiError::new(
                    ErrorCode::DeadlineExceeded,
                    format!(
                        "rank {} of {}: {what} waited {:.1} s for its peers; the communicator \
                         was aborted",
                        self.rank,
                        self.size,
                        self.timeout.as_secs_f64()
                    ),
                ));
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

impl Communicator for NcclComm {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn device_kind(&self) -> u32 {
        DEVICE_KIND_CUDA
    }

    fn run(&self, c: &Collective) -> Result<(), AbiError> {
        let cuda = library::cuda().map_err(unavailable)?;
        let h = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let n = self.nccl;
        let elements = |bytes: u64| bytes as usize / c.dtype.size_bytes();
        let (src, dst) = (c.src.address as *const c_void, c.dst.address as *mut c_void);
        let (dt, op) = (nccl_dtype(c.dtype), nccl_op(c.op));
        // SAFETY: the kit checked both exports (CUDA memory, sizes matching their types); the
        // host keeps both buffers alive until this call returns, after the stream finished.
        let r = unsafe {
            (cuda.ctx_set_current)(h.ctx);
            if c.src.ready_event != 0 {
                (cuda.stream_wait_event)(h.stream, c.src.ready_event as *mut c_void, 0);
            }
            match c.kind {
                CollectiveKind::AllReduce => (n.all_reduce)(
                    src,
                    dst,
                    elements(c.src.byte_size),
                    dt,
                    op,
                    h.comm,
                    h.stream,
                ),
                CollectiveKind::AllGather => {
                    (n.all_gather)(src, dst, elements(c.src.byte_size), dt, h.comm, h.stream)
                }
                CollectiveKind::Broadcast => (n.broadcast)(
                    src,
                    dst,
                    elements(c.src.byte_size),
                    dt,
                    c.root as c_int,
                    h.comm,
                    h.stream,
                ),
                CollectiveKind::ReduceScatter => (n.reduce_scatter)(
                    src,
                    dst,
                    elements(c.dst.byte_size),
                    dt,
                    op,
                    h.comm,
                    h.stream,
                ),
            }
        };
        if r != 0 {
            return Err(AbiError::new(
                ErrorCode::Unavailable,
                format!("NCCL {:?}: {}", c.kind, n.message(r)),
            ));
        }
        self.wait(&h, &format!("{:?}", c.kind))
    }

    fn group(&self, start: bool) -> Result<(), AbiError> {
        // Calls run (and are waited on) one by one, so a group has nothing to fuse; NCCL's
        // group calls would defer the enqueue past `run`'s wait.
        let _ = start;
        Ok(())
    }
}
