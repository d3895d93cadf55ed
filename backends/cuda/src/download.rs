//! Downloads that do not wait: `DeviceBuffer::download` queues the copy to the host behind
//! the kernels already on the stream, records a CUDA event after it and returns at once, so
//! the host can queue the next step while the bytes travel (a training loop reading its
//! loss, a page polling `is_ready`). The copy lands in page-locked (pinned) memory, which is
//! what lets `cuMemcpyDtoHAsync` return before it has run; pinned memory is slow to allocate,
//! so staging buffers are kept in a small pool by size class ([`StagingPool`]).
//!
//! What a download waits on is a [`Staging`]: on a GPU [`PinnedCopy`] (the pinned buffer and
//! its event), in the tests a copy another thread completes, so the event logic here
//! (`is_ready`, `wait`, `on_ready` from a helper thread) is checked without a GPU.

use quabla_abi::abi::AbiError;
use quabla_abi::plugin::DownloadEvent;
use std::sync::{Arc, Mutex};

/// A copy to the host in flight.
pub trait Staging: Send + Sync + 'static {
    /// Whether the copy has finished. A failed copy counts as finished: `bytes` says why.
    fn is_done(&self) -> bool;
    /// Blocks until the copy has finished.
    fn wait_done(&self) -> Result<(), AbiError>;
    /// The bytes, once the copy has finished (`wait_done` first).
    fn bytes(&self) -> Result<Vec<u8>, AbiError>;
}

/// A download event over a [`Staging`].
///
/// ```
/// use quabla_abi::abi::AbiError;
/// use quabla_abi::plugin::DownloadEvent;
/// use quabla_cuda::download::{Download, Staging};
/// struct Done(Vec<u8>);
/// impl Staging for Done {
///     fn is_done(&self) -> bool { true }
///     fn wait_done(&self) -> Result<(), AbiError> { Ok(()) }
///     fn bytes(&self) -> Result<Vec<u8>, AbiError> { Ok(self.0.clone()) }
/// }
/// let event: Box<dyn DownloadEvent> = Box::new(Download::new(Done(vec![1, 2])));
/// assert!(event.is_ready());
/// assert_eq!(event.wait().unwrap(), vec![1, 2]);
/// ```
pub struct Download<S: Staging> {
    staging: Arc<S>,
}

impl<S: Staging> Download<S> {
    pub fn new(staging: S) -> Self {
        Download {
            staging: Arc::new(staging),
        }
    }
}

impl<S: Staging> DownloadEvent for Download<S> {
    fn is_ready(&self) -> bool {
        self.staging.is_done()
    }

    fn wait(self: Box<Self>) -> Result<Vec<u8>, AbiError> {
        self.staging.wait_done()?;
        self.staging.bytes()
    }

    /// Nothing tells the host when a CUDA event completes (a stream's host function may not
    /// call CUDA, and the callback may well read the bytes), so a helper thread waits on it.
    fn on_ready(&mut self, f: Box<dyn FnOnce() + Send>) {
        if self.staging.is_done() {
            return f();
        }
        // Shared with the thread so that, where no thread can be started, it is called here.
        let callback = Arc::new(Mutex::new(Some(f)));
        let staging = self.staging.clone();
        let theirs = callback.clone();
        let started = std::thread::Builder::new()
            .name("quabla-cuda-download".into())
            .spawn(move || {
                // An error is finished too; `wait` reports it.
                let _ = staging.wait_done();
                call_once(&theirs);
            });
        if started.is_err() {
            let _ = self.staging.wait_done();
            call_once(&callback);
        }
    }
}

fn call_once(callback: &Mutex<Option<Box<dyn FnOnce() + Send>>>) {
    let f = match callback.lock() {
        Ok(mut slot) => slot.take(),
        Err(poisoned) => poisoned.into_inner().take(),
    };
    if let Some(f) = f {
        f()
    }
}

/// The smallest staging buffer, and the largest a download stages: past it a download
/// copies at once (the time is the transfer's then, and pinning that much memory per
/// download would cost more than it saves).
pub const MIN_STAGING_BYTES: usize = 4 << 10;
pub const MAX_STAGING_BYTES: usize = 16 << 20;
/// At most this many bytes of staging buffers are kept for reuse.
const POOL_BYTES: usize = 32 << 20;

/// Staging buffers kept for reuse, by size class (a power of two from
/// [`MIN_STAGING_BYTES`] to [`MAX_STAGING_BYTES`]), at most [`POOL_BYTES`] in all.
pub struct StagingPool<B> {
    free: Mutex<Vec<(usize, B)>>,
}

impl<B> Default for StagingPool<B> {
    fn default() -> Self {
        StagingPool {
            free: Mutex::new(Vec::new()),
        }
    }
}

impl<B> StagingPool<B> {
    /// The size class a download of `len` bytes stages in; `None` past the largest.
    ///
    /// ```
    /// use quabla_cuda::download::{StagingPool, MIN_STAGING_BYTES};
    /// assert_eq!(StagingPool::<()>::class(4), Some(MIN_STAGING_BYTES));
    /// assert_eq!(StagingPool::<()>::class(5000), Some(8192));
    /// assert_eq!(StagingPool::<()>::class(1 << 30), None);
    /// ```
    pub fn class(len: usize) -> Option<usize> {
        let class = len.max(MIN_STAGING_BYTES).checked_next_power_of_two()?;
        (class <= MAX_STAGING_BYTES).then_some(class)
    }

    /// A kept buffer of size class `class`, if there is one.
    pub fn take(&self, class: usize) -> Option<B> {
        let mut free = self.free.lock().ok()?;
        let at = free.iter().position(|(c, _)| *c == class)?;
        Some(free.swap_remove(at).1)
    }

    /// Keeps `buffer` (of size class `class`) for reuse, unless the pool is full: the buffer
    /// is then dropped (freed).
    pub fn give(&self, class: usize, buffer: B) {
        let Ok(mut free) = self.free.lock() else {
            return;
        };
        let held: usize = free.iter().map(|(c, _)| c).sum();
        if held + class <= POOL_BYTES {
            free.push((class, buffer));
        }
    }

    /// The bytes kept.
    pub fn held_bytes(&self) -> usize {
        self.free
            .lock()
            .map(|f| f.iter().map(|(c, _)| c).sum())
            .unwrap_or(0)
    }
}

/// On a GPU: the value's bytes copied into a pinned staging buffer by the stream, and the
/// event recorded after the copy.
pub struct PinnedCopy {
    pub(crate) host: Mutex<Option<cudarc::driver::PinnedHostSlice<u8>>>,
    pub(crate) event: cudarc::driver::CudaEvent,
    pub(crate) len: usize,
    pub(crate) class: usize,
    pub(crate) pool: Arc<StagingPool<cudarc::driver::PinnedHostSlice<u8>>>,
}

fn driver(e: cudarc::driver::DriverError) -> AbiError {
    AbiError::internal(format!("the CUDA driver, downloading a value: {e}"))
}

impl Staging for PinnedCopy {
    fn is_done(&self) -> bool {
        // An error is finished: `wait_done` and `bytes` then report it.
        self.event.try_is_complete().unwrap_or(true)
    }

    fn wait_done(&self) -> Result<(), AbiError> {
        self.event.synchronize().map_err(driver)
    }

    fn bytes(&self) -> Result<Vec<u8>, AbiError> {
        let host = self
            .host
            .lock()
            .map_err(|_| AbiError::internal("a download's lock is poisoned"))?;
        let host = host
            .as_ref()
            .ok_or_else(|| AbiError::internal("a download's bytes were already taken"))?;
        let all = host.as_slice().map_err(driver)?;
        all.get(..self.len)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| AbiError::internal("a download's staging buffer is too short"))
    }
}

impl Drop for PinnedCopy {
    /// A finished copy's buffer goes back to the pool; one still in flight (an event released
    /// unread) is freed, which waits for the copy first (cudarc's `PinnedHostSlice`).
    fn drop(&mut self) {
        let host = match self.host.get_mut() {
            Ok(h) => h.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(host) = host {
            if self.event.try_is_complete().unwrap_or(false) {
                self.pool.give(self.class, host);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::sync::Condvar;
    use std::time::Duration;

    /// A copy another thread completes (`finish`), as a GPU's stream would.
    #[derive(Default)]
    struct Pending {
        done: Mutex<Option<Result<Vec<u8>, String>>>,
        finished: Condvar,
    }

    impl Pending {
        fn finish(&self, result: Result<Vec<u8>, String>) {
            *self.done.lock().unwrap() = Some(result);
            self.finished.notify_all();
        }
    }

    impl Staging for Arc<Pending> {
        fn is_done(&self) -> bool {
            self.done.lock().unwrap().is_some()
        }
        fn wait_done(&self) -> Result<(), AbiError> {
            let mut done = self.done.lock().unwrap();
            while done.is_none() {
                done = self.finished.wait(done).unwrap();
            }
            Ok(())
        }
        fn bytes(&self) -> Result<Vec<u8>, AbiError> {
            match self.done.lock().unwrap().clone() {
                Some(Ok(b)) => Ok(b),
                Some(Err(e)) => Err(AbiError::internal(e)),
                None => Err(AbiError::internal("not done")),
            }
        }
    }

    #[test]
    fn an_event_is_ready_once_the_copy_is_done_and_wait_blocks_until_then() {
        let pending = Arc::new(Pending::default());
        let event: Box<dyn DownloadEvent> = Box::new(Download::new(pending.clone()));
        assert!(!event.is_ready());
        let finisher = {
            let pending = pending.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(20));
                pending.finish(Ok(vec![7, 8, 9]));
            })
        };
        assert_eq!(event.wait().unwrap(), vec![7, 8, 9]);
        finisher.join().unwrap();
    }

    #[test]
    fn on_ready_runs_once_from_a_helper_thread_after_the_copy() {
        let pending = Arc::new(Pending::default());
        let mut event = Download::new(pending.clone());
        let (tx, rx) = mpsc::channel();
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let seen = pending.clone();
        event.on_ready(Box::new(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            // The callback sees the copy finished, as a host reading the bytes would.
            tx.send(seen.is_done()).unwrap();
        }));
        assert!(
            rx.recv_timeout(Duration::from_millis(50)).is_err(),
            "called before the copy finished"
        );
        pending.finish(Ok(vec![1]));
        assert!(rx.recv_timeout(Duration::from_secs(10)).unwrap());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(Box::new(event).wait().unwrap(), vec![1]);
    }

    #[test]
    fn on_ready_of_a_finished_copy_runs_at_once_on_the_caller_thread() {
        let pending = Arc::new(Pending::default());
        pending.finish(Ok(vec![]));
        let mut event = Download::new(pending);
        let here = std::thread::current().id();
        let ran_on = Arc::new(Mutex::new(None));
        let slot = ran_on.clone();
        event.on_ready(Box::new(move || {
            *slot.lock().unwrap() = Some(std::thread::current().id())
        }));
        assert_eq!(*ran_on.lock().unwrap(), Some(here));
    }

    #[test]
    fn a_failed_copy_is_ready_and_wait_reports_it() {
        let pending = Arc::new(Pending::default());
        pending.finish(Err("illegal address".into()));
        let event: Box<dyn DownloadEvent> = Box::new(Download::new(pending));
        assert!(event.is_ready());
        let e = event.wait().unwrap_err();
        assert!(e.message.contains("illegal address"), "{}", e.message);
    }

    #[test]
    fn staging_classes_are_powers_of_two_within_bounds() {
        type Pool = StagingPool<()>;
        assert_eq!(Pool::class(0), Some(MIN_STAGING_BYTES));
        assert_eq!(Pool::class(MIN_STAGING_BYTES), Some(MIN_STAGING_BYTES));
        assert_eq!(
            Pool::class(MIN_STAGING_BYTES + 1),
            Some(2 * MIN_STAGING_BYTES)
        );
        assert_eq!(Pool::class(MAX_STAGING_BYTES), Some(MAX_STAGING_BYTES));
        assert_eq!(Pool::class(MAX_STAGING_BYTES + 1), None);
        assert_eq!(Pool::class(usize::MAX), None);
    }

    #[test]
    fn the_pool_reuses_by_class_and_keeps_at_most_its_bound() {
        let pool = StagingPool::<u32>::default();
        assert_eq!(pool.take(4096), None);
        pool.give(4096, 1);
        pool.give(8192, 2);
        assert_eq!(pool.take(8192), Some(2));
        assert_eq!(pool.take(8192), None);
        assert_eq!(pool.take(4096), Some(1));
        // Two of the largest class fill the pool; a third is dropped.
        pool.give(MAX_STAGING_BYTES, 3);
        pool.give(MAX_STAGING_BYTES, 4);
        pool.give(MAX_STAGING_BYTES, 5);
        assert_eq!(pool.held_bytes(), POOL_BYTES);
        assert!(pool.take(MAX_STAGING_BYTES).is_some());
        assert!(pool.take(MAX_STAGING_BYTES).is_some());
        assert_eq!(pool.take(MAX_STAGING_BYTES), None);
    }
}
