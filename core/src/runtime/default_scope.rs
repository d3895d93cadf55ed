//! Overrides of the default device: a process-wide setting (JAX's `jax_default_device`
//! config option) and scopes on one thread (`with jax.default_device(d):`), the innermost
//! scope first. Arrays made without a device, and Python numbers passed to a jitted
//! function, go to the default device.

use super::Device;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

thread_local! {
    /// This thread's scopes, innermost last, each with its id (a scope leaving out of order
    /// removes its own entry, not the innermost).
    static SCOPES: RefCell<Vec<(u64, Arc<Device>)>> = const { RefCell::new(Vec::new()) };
}

static CONFIGURED: RwLock<Option<Arc<Device>>> = RwLock::new(None);
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// The override in force on this thread: its innermost scope's device, else the
/// process-wide setting.
pub(super) fn current() -> Option<Arc<Device>> {
    SCOPES
        .with(|s| s.borrow().last().map(|e| e.1.clone()))
        .or_else(|| CONFIGURED.read().ok().and_then(|d| d.clone()))
}

/// Makes `device` the default device of the whole process (`None`: back to discovery's
/// choice), below any [`default_device_scope`] open on a thread; JAX's
/// `jax.config.update("jax_default_device", d)`.
///
/// ```no_run
/// use quabla::runtime::{default_device, device, set_default_device};
/// set_default_device(Some(device("cpu")?));
/// assert_eq!(default_device()?.platform(), "cpu");
/// set_default_device(None);
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn set_default_device(device: Option<Arc<Device>>) {
    // A poisoned lock only means a panic elsewhere while it was held; the value is whole.
    let mut slot = CONFIGURED.write().unwrap_or_else(|e| e.into_inner());
    *slot = device;
}

/// `device` as this thread's default device until the returned scope is dropped; scopes
/// nest, the innermost winning. JAX's `with jax.default_device(d):`.
///
/// ```no_run
/// use quabla::runtime::{default_device, default_device_scope, device};
/// let cpu = device("cpu")?;
/// {
///     let _scope = default_device_scope(cpu.clone());
///     assert_eq!(default_device()?.platform(), "cpu");
/// }
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn default_device_scope(device: Arc<Device>) -> DefaultDeviceScope {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    SCOPES.with(|s| s.borrow_mut().push((id, device)));
    DefaultDeviceScope {
        id,
        _thread: PhantomData,
    }
}

/// An open [`default_device_scope`]; dropping it ends the scope. Bound to its thread.
#[must_use = "the scope ends when this value is dropped"]
pub struct DefaultDeviceScope {
    id: u64,
    _thread: PhantomData<*const ()>,
}

impl Drop for DefaultDeviceScope {
    fn drop(&mut self) {
        let id = self.id;
        // During thread teardown the list may already be gone: nothing left to undo.
        let _ = SCOPES.try_with(|s| s.borrow_mut().retain(|e| e.0 != id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scopes nest on their thread; one closed out of order removes itself, not the
    /// innermost; another thread sees none of them.
    #[test]
    fn scopes_nest_per_thread_and_close_by_identity() {
        let cpu = crate::test_util::linked_cpu();
        let depth = || SCOPES.with(|s| s.borrow().len());
        let base = depth();
        let outer = default_device_scope(cpu.clone());
        let inner = default_device_scope(cpu.clone());
        assert_eq!(depth(), base + 2);
        assert!(current().is_some_and(|d| Arc::ptr_eq(&d, &cpu)));
        let inner_id = inner.id;
        drop(outer);
        assert_eq!(depth(), base + 1);
        assert_eq!(
            SCOPES.with(|s| s.borrow().last().map(|e| e.0)),
            Some(inner_id)
        );
        let elsewhere = std::thread::spawn(|| SCOPES.with(|s| s.borrow().len()))
            .join()
            .expect("the probe thread ends");
        assert_eq!(elsewhere, 0);
        drop(inner);
        assert_eq!(depth(), base);
    }
}
