//! The collectives over MPI (rsmpi's `ffi` layer: the safe layer's collectives block without
//! a deadline and abort the process on an MPI error, and a plugin must do neither).
//!
//! Every call is a nonblocking MPI collective (`MPI_Iallgather`, `MPI_Ibcast`) polled with
//! `MPI_Test` until it completes, an MPI error comes back (the communicator's handler is
//! `MPI_ERRORS_RETURN`) or the deadline passes. Reductions gather every rank's bytes and
//! combine them in rank order here (see `reduce.rs`).

use crate::reduce::reduce_ranks;
use mpi::ffi;
use quabla_abi::abi::{AbiError, CollectiveKind, ErrorCode, DEVICE_KIND_HOST};
use quabla_abi::plugin::{Collective, Collectives, Communicator};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// Every MPI call of this plugin runs under this lock: MPI is initialised with
/// `MPI_THREAD_SERIALIZED`, and a host may call from several threads.
fn mpi_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Set once a call failed: a peer is gone, so `MPI_Finalize` (which waits for every peer)
/// must not run at exit.
static BROKEN: AtomicBool = AtomicBool::new(false);

fn unavailable(what: &str, code: c_int) -> AbiError {
    BROKEN.store(true, Ordering::Relaxed);
    AbiError::new(
        ErrorCode::Unavailable,
        format!(
            "MPI failed in {what}: {} (a peer rank may have died or the network broken); the \
             communicator cannot be used any more, so end this process and restart the job",
            error_string(code)
        ),
    )
}

fn error_string(code: c_int) -> String {
    let mut buf = vec![0u8; 1024];
    let mut len: c_int = 0;
    // SAFETY: MPI writes at most MPI_MAX_ERROR_STRING (256 in OpenMPI and MPICH) bytes.
    let rc = unsafe { ffi::MPI_Error_string(code, buf.as_mut_ptr().cast(), &mut len) };
    if rc != 0 {
        return format!("MPI error code {code}");
    }
    buf.truncate(len.clamp(0, 1024) as usize);
    String::from_utf8_lossy(&buf).into_owned()
}

fn check(what: &str, rc: c_int) -> Result<(), AbiError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(unavailable(what, rc))
    }
}

/// OpenMPI loads its components with `dlopen` and resolves their symbols against the global
/// scope, which a library opened `RTLD_LOCAL` (a plugin, and so the libmpi it needs) is not
/// in: lift libmpi and its two runtime libraries into it before `MPI_Init`.
fn promote_mpi_libraries() {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    const RTLD_NOLOAD: c_int = 4;
    for name in [
        "libmpi.so.40",
        "libopen-rte.so.40",
        "libopen-pal.so.40",
        "libmpi.so.12",
    ] {
        // SAFETY: NOLOAD only changes the flags of a library already loaded (no initialisers
        // run); a name that is not loaded (another MPI) fails harmlessly. The handle is leaked
        // so the library's reference count never drops back.
        if let Ok(lib) = unsafe { Library::open(Some(name), RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) }
        {
            std::mem::forget(lib);
        }
    }
}

extern "C" fn finalize_at_exit() {
    if BROKEN.load(Ordering::Relaxed) {
        return;
    }
    let _g = mpi_lock();
    let mut done: c_int = 0;
    // SAFETY: plain MPI queries and calls, serialised by the lock.
    unsafe {
        ffi::MPI_Finalized(&mut done);
        if done == 0 {
            ffi::MPI_Finalize();
        }
    }
}

extern "C" {
    fn atexit(f: extern "C" fn()) -> c_int;
}

/// Initialises MPI once per process, at the first `comm_init`, unless someone else (mpi4py)
/// did before; whoever initialises finalizes, this plugin at exit.
fn initialise() -> Result<(), AbiError> {
    static PROCESS: OnceLock<Result<(), AbiError>> = OnceLock::new();
    PROCESS
        .get_or_init(|| {
            let _g = mpi_lock();
            promote_mpi_libraries();
            let mut ready: c_int = 0;
            // SAFETY: MPI_Initialized may be called at any time.
            check("MPI_Initialized", unsafe {
                ffi::MPI_Initialized(&mut ready)
            })?;
            if ready != 0 {
                return Ok(());
            }
            let mut provided: c_int = 0;
            // SAFETY: argc/argv may be null (MPI-2); the lock serialises initialisation.
            let rc = unsafe {
                ffi::MPI_Init_thread(
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                    ffi::RSMPI_THREAD_SERIALIZED,
                    &mut provided,
                )
            };
            check("MPI_Init_thread", rc)?;
            // SAFETY: registering a plain function; the plugin is never unloaded.
            unsafe { atexit(finalize_at_exit) };
            Ok(())
        })
        .clone()
}

/// The MPI engine.
pub struct Mpi;

impl Collectives for Mpi {
    /// MPI's peers come from its launcher: no id to pass around.
    fn unique_id(&self) -> Result<Vec<u8>, AbiError> {
        Ok(Vec::new())
    }

    fn comm_init(
        &self,
        world_size: u32,
        rank: u32,
        _id: &[u8],
        timeout: Duration,
    ) -> Result<Box<dyn Communicator>, AbiError> {
        initialise()?;
        let _g = mpi_lock();
        // SAFETY: reading an rsmpi constant.
        let mut comm = unsafe { ffi::RSMPI_COMM_NULL };
        // SAFETY: COMM_WORLD is valid after initialisation; dup is collective over it.
        unsafe {
            check(
                "MPI_Comm_dup",
                ffi::MPI_Comm_dup(ffi::RSMPI_COMM_WORLD, &mut comm),
            )?;
            check(
                "MPI_Comm_set_errhandler",
                ffi::MPI_Comm_set_errhandler(comm, ffi::RSMPI_ERRORS_RETURN),
            )?;
        }
        let (mut r, mut n): (c_int, c_int) = (0, 0);
        // SAFETY: `comm` was just made.
        unsafe {
            check("MPI_Comm_rank", ffi::MPI_Comm_rank(comm, &mut r))?;
            check("MPI_Comm_size", ffi::MPI_Comm_size(comm, &mut n))?;
        }
        let c = MpiComm {
            comm: Handle(comm),
            rank: r as u32,
            size: n as u32,
            timeout,
        };
        if world_size != 0 && (world_size, rank) != (c.size, c.rank) {
            return Err(AbiError::invalid(format!(
                "asked for rank {rank} of {world_size}, but MPI's launcher made this process \
                 rank {} of {}; with MPI, initialise from the launcher (world size 0)",
                c.rank, c.size
            )));
        }
        Ok(Box::new(c))
    }
}

/// An MPI communicator handle (a pointer in OpenMPI); used only under [`mpi_lock`].
struct Handle(ffi::MPI_Comm);
// SAFETY: MPI handles may be used from any thread under MPI_THREAD_SERIALIZED when calls do
// not overlap, which `mpi_lock` guarantees.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

struct MpiComm {
    comm: Handle,
    rank: u32,
    size: u32,
    timeout: Duration,
}

impl Drop for MpiComm {
    fn drop(&mut self) {
        let _g = mpi_lock();
        let mut done: c_int = 0;
        // SAFETY: the handle is ours; after MPI_Finalize it must not be freed.
        unsafe {
            ffi::MPI_Finalized(&mut done);
            if done == 0 {
                ffi::MPI_Comm_free(&mut self.comm.0);
            }
        }
    }
}

impl MpiComm {
    /// Polls `req` until it completes, fails, or the deadline passes.
    fn wait(&self, what: &str, mut req: ffi::MPI_Request) -> Result<(), AbiError> {
        let start = Instant::now();
        let mut pause = Duration::from_micros(5);
        loop {
            let mut flag: c_int = 0;
            // SAFETY: `req` is a live request of this communicator; status is ignored.
            let rc = unsafe { ffi::MPI_Test(&mut req, &mut flag, ffi::RSMPI_STATUS_IGNORE) };
            check(what, rc)?;
            if flag != 0 {
                return Ok(());
            }
            if start.elapsed() >= self.timeout {
                BROKEN.store(true, Ordering::Relaxed);
                return Err(AbiError::new(
                    ErrorCode::DeadlineExceeded,
                    format!(
                        "rank {} of {}: {what} waited {:.1} s for its peers; a peer rank may have \
                         died, hung or skipped the call (every rank must make the same calls in \
                         the same order); the communicator cannot be used any more",
                        self.rank,
                        self.size,
                        self.timeout.as_secs_f64()
                    ),
                ));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }

    /// Every rank's `src` bytes, rank-major, into `out` (`size * src.len()` bytes).
    fn all_gather_bytes(&self, src: &[u8], out: &mut [u8]) -> Result<(), AbiError> {
        let count = byte_count(src.len())?;
        // SAFETY: reading an rsmpi constant.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: both buffers outlive the request, which `wait` completes (or the process
        // is told to end) before they are dropped; counts match their lengths.
        let rc = unsafe {
            ffi::MPI_Iallgather(
                src.as_ptr().cast::<c_void>(),
                count,
                ffi::RSMPI_UINT8_T,
                out.as_mut_ptr().cast::<c_void>(),
                count,
                ffi::RSMPI_UINT8_T,
                self.comm.0,
                &mut req,
            )
        };
        check("MPI_Iallgather", rc)?;
        self.wait("all_gather", req)
    }

    fn broadcast_bytes(&self, root: u32, buf: &mut [u8]) -> Result<(), AbiError> {
        let count = byte_count(buf.len())?;
        // SAFETY: reading an rsmpi constant.
        let mut req = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: as in `all_gather_bytes`.
        let rc = unsafe {
            ffi::MPI_Ibcast(
                buf.as_mut_ptr().cast::<c_void>(),
                count,
                ffi::RSMPI_UINT8_T,
                root as c_int,
                self.comm.0,
                &mut req,
            )
        };
        check("MPI_Ibcast", rc)?;
        self.wait("broadcast", req)
    }
}

fn byte_count(n: usize) -> Result<c_int, AbiError> {
    c_int::try_from(n).map_err(|_| {
        AbiError::new(
            ErrorCode::ResourceExhausted,
            format!(
                "one collective moves at most {} bytes per rank through MPI, not {n}; split the \
                 array",
                c_int::MAX
            ),
        )
    })
}

impl Communicator for MpiComm {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.size
    }

    fn device_kind(&self) -> u32 {
        DEVICE_KIND_HOST
    }

    fn run(&self, call: &Collective) -> Result<(), AbiError> {
        let _g = mpi_lock();
        // SAFETY: the kit checked both exports (host memory, byte sizes matching their types)
        // and the host keeps both buffers alive during the call; the destination is a fresh
        // buffer nobody else reads yet, distinct from the source.
        let (src, dst) = unsafe {
            (
                std::slice::from_raw_parts(
                    call.src.address as *const u8,
                    call.src.byte_size as usize,
                ),
                std::slice::from_raw_parts_mut(
                    call.dst.address as *mut u8,
                    call.dst.byte_size as usize,
                ),
            )
        };
        let n = self.size as usize;
        match call.kind {
            CollectiveKind::AllGather => self.all_gather_bytes(src, dst),
            CollectiveKind::Broadcast => {
                if self.rank == call.root {
                    dst.copy_from_slice(src);
                }
                self.broadcast_bytes(call.root, dst)
            }
            CollectiveKind::AllReduce => {
                let mut gathered = vec![0u8; src.len() * n];
                self.all_gather_bytes(src, &mut gathered)?;
                reduce_ranks(call.dtype, call.op, &gathered, n, 0..src.len(), dst)
            }
            CollectiveKind::ReduceScatter => {
                let mut gathered = vec![0u8; src.len() * n];
                self.all_gather_bytes(src, &mut gathered)?;
                let start = self.rank as usize * dst.len();
                reduce_ranks(
                    call.dtype,
                    call.op,
                    &gathered,
                    n,
                    start..start + dst.len(),
                    dst,
                )
            }
        }
    }
}
