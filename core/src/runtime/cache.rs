//! Bounded caches of compiled programs, so a long-running process that traces many shapes
//! keeps a steady footprint: each device's executables and each `jit` function's signatures
//! are held in a least-recently-used cache of [`cache_capacity`] entries. An evicted entry
//! is compiled again if it is needed again; executables still in use stay alive (`Arc`).

use lru::LruCache;
use std::hash::Hash;
use std::num::NonZeroUsize;
use std::sync::{Mutex, OnceLock};

/// Entries per cache when `QUABLA_CACHE_SIZE` is not set.
pub const DEFAULT_CACHE_SIZE: usize = 1024;

/// The capacity of every executable cache: `QUABLA_CACHE_SIZE` (a positive integer, read
/// once), else [`DEFAULT_CACHE_SIZE`]. A value that is not a positive integer is reported
/// once on stderr and the default is used.
///
/// ```
/// assert!(quabla::runtime::cache_capacity() >= 1);
/// ```
pub fn cache_capacity() -> usize {
    static CAPACITY: OnceLock<usize> = OnceLock::new();
    *CAPACITY.get_or_init(|| match std::env::var("QUABLA_CACHE_SIZE") {
        Err(_) => DEFAULT_CACHE_SIZE,
        Ok(s) => match s.trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!(
                    "quabla: warning: QUABLA_CACHE_SIZE={s:?} is not a positive integer; \
                     using {DEFAULT_CACHE_SIZE}"
                );
                DEFAULT_CACHE_SIZE
            }
        },
    })
}

/// A thread-safe LRU map of at most [`cache_capacity`] entries.
pub(crate) struct BoundedCache<K: Hash + Eq, V: Clone> {
    entries: Mutex<LruCache<K, V>>,
}

impl<K: Hash + Eq, V: Clone> BoundedCache<K, V> {
    pub(crate) fn new() -> Self {
        Self::with_capacity(cache_capacity())
    }

    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let cap = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        BoundedCache {
            entries: Mutex::new(LruCache::new(cap)),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<K, V>> {
        // Each critical section is one lookup or insert: a poisoned lock is still consistent.
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The entry for `key`, marked most recently used.
    pub(crate) fn get(&self, key: &K) -> Option<V> {
        self.lock().get(key).cloned()
    }

    /// Inserts, evicting the least recently used entry when full.
    pub(crate) fn insert(&self, key: K, value: V) {
        self.lock().put(key, value);
    }

    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entry_is_evicted() {
        let c = BoundedCache::with_capacity(2);
        c.insert(1, "a");
        c.insert(2, "b");
        assert_eq!(c.get(&1), Some("a"));
        c.insert(3, "c");
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(&2), None, "2 was least recently used");
        assert_eq!(c.get(&1), Some("a"));
        assert_eq!(c.get(&3), Some("c"));
    }
}
