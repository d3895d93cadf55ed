//! Recycled element buffers, so loop bodies run without allocating new buffers each
//! iteration: a `Storage` hands its vector back here when dropped, and kernels take their
//! output vectors from here. One free list per element type and thread (rayon workers keep
//! their own), each holding at most `MAX_KEPT` vectors and `MAX_KEPT_BYTES` bytes.
//!
//! The list is kept oldest first, and a vector that would pass the byte budget evicts the
//! oldest ones. Before, a full list refused newcomers, so buffers left over from one
//! workload kept every later workload's out of the pool for good: per-example MLP gradients
//! run after the PINN rows of the bench suite took 13.7 ms a call (6,000 page faults a call,
//! fresh pages for every buffer) against 4.5 ms run first.

use std::cell::RefCell;

/// Vectors kept per element type and thread.
const MAX_KEPT: usize = 64;
/// Bytes kept per element type and thread: big arrays that happen to die are not held.
const MAX_KEPT_BYTES: usize = 256 << 20;
/// Vectors smaller than this are not recycled: malloc serves them faster than a search of
/// the list, and they kept the list full, so every hand-back scanned it for the smallest
/// vector and freed one (a neural ODE's interpreted prologue and epilogue, scalars and
/// 8-element states, spent 14% of its time in `give` and 30% in malloc and free).
const MIN_KEPT_BYTES: usize = 256;

/// Element types whose vectors are recycled.
pub trait Pooled: Copy + 'static {
    /// Runs `f` on this thread's free list (`None` while the thread is shutting down).
    fn with_free<R>(f: impl FnOnce(&mut Vec<Vec<Self>>) -> R) -> Option<R>;
}

macro_rules! pooled {
    ($($t:ty => $name:ident),*) => {$(
        thread_local! {
            static $name: RefCell<Vec<Vec<$t>>> = const { RefCell::new(Vec::new()) };
        }
        impl Pooled for $t {
            fn with_free<R>(f: impl FnOnce(&mut Vec<Vec<Self>>) -> R) -> Option<R> {
                $name.try_with(|p| p.try_borrow_mut().ok().map(|mut p| f(&mut p))).ok().flatten()
            }
        }
    )*};
}
// usize: the index maps of gathers, pads and scatters.
pooled!(bool => FREE_BOOL, i32 => FREE_I32, u32 => FREE_U32, f32 => FREE_F32, f64 => FREE_F64,
    usize => FREE_USIZE);

/// An empty vector with room for `n` elements: a recycled one when one fits (and is not
/// wastefully large), else a new one.
pub fn take<T: Pooled>(n: usize) -> Vec<T> {
    if n * std::mem::size_of::<T>() < MIN_KEPT_BYTES {
        return Vec::with_capacity(n);
    }
    let reused = T::with_free(|free| {
        let pos = free
            .iter()
            .rposition(|v| v.capacity() >= n && v.capacity() <= 2 * n + 64)?;
        // `remove`, not `swap_remove`: the order is the eviction order (at most 64 moves).
        Some(free.remove(pos))
    })
    .flatten();
    match reused {
        Some(mut v) => {
            v.clear();
            v
        }
        None => Vec::with_capacity(n),
    }
}

/// Hands a vector back for reuse.
pub fn give<T: Pooled>(v: Vec<T>) {
    if v.capacity() * std::mem::size_of::<T>() < MIN_KEPT_BYTES {
        return;
    }
    // A storage dropped while its thread shuts down just frees its vector.
    let bytes = |v: &Vec<T>| v.capacity() * std::mem::size_of::<T>();
    T::with_free(|free| {
        if free.len() >= MAX_KEPT {
            // Full: keep the larger vectors. A large one costs fresh pages (page faults) to
            // make again, a small one a quick malloc, and a thread that frees what rayon's
            // workers made (fused tiles) would otherwise fill up with small ones and drop
            // every large one.
            let smallest = free
                .iter()
                .enumerate()
                .min_by_key(|(_, x)| x.capacity())
                .map(|(i, x)| (i, x.capacity()));
            match smallest {
                Some((i, c)) if c < v.capacity() => drop(free.remove(i)),
                _ => return,
            }
        }
        if bytes(&v) > MAX_KEPT_BYTES {
            return;
        }
        // Over the byte budget: the oldest vectors make room, as they are the likeliest to
        // belong to a workload that has finished.
        let mut kept: usize = free.iter().map(bytes).sum();
        let mut evict = 0;
        while kept + bytes(&v) > MAX_KEPT_BYTES {
            kept -= bytes(&free[evict]);
            evict += 1;
        }
        free.drain(..evict);
        free.push(v);
    });
}

/// `n` copies of `value` in a recycled vector.
pub fn filled<T: Pooled>(n: usize, value: T) -> Vec<T> {
    let mut v = take(n);
    v.resize(n, value);
    v
}

/// `collect()` into a recycled vector.
pub trait CollectPooled: Iterator + Sized
where
    Self::Item: Pooled,
{
    fn collect_pooled(self) -> Vec<Self::Item> {
        let mut v = take(self.size_hint().0);
        v.extend(self);
        v
    }
}

impl<I: Iterator> CollectPooled for I where I::Item: Pooled {}

#[cfg(test)]
mod policy_tests {
    use super::*;

    /// A thread that frees many small vectors (rayon's tiles) still keeps a large one: the
    /// next request of its size reuses it instead of mapping fresh pages.
    #[test]
    fn a_full_free_list_keeps_a_large_vector_over_a_small_one() {
        // A fresh thread: free lists of its own.
        std::thread::spawn(|| {
            for _ in 0..MAX_KEPT {
                give(Vec::<u32>::with_capacity(128));
            }
            let big: Vec<u32> = Vec::with_capacity(1 << 20);
            let at = big.as_ptr();
            give(big);
            let again: Vec<u32> = take(1 << 20);
            assert_eq!(again.as_ptr(), at, "the large vector was not kept");
            // The list is full of small vectors again: one more small one is not kept.
            give(Vec::<u32>::with_capacity(128));
            let small = Vec::<u32>::with_capacity(64);
            let at = small.as_ptr();
            give(small);
            let kept = u32::with_free(|f| f.iter().any(|v| v.as_ptr() == at));
            assert_eq!(kept, Some(false));
        })
        .join()
        .expect("the pool thread");
    }

    /// Vectors under `MIN_KEPT_BYTES` are not kept, and a request that small does not
    /// search the list (it would take nothing from it).
    #[test]
    fn tiny_vectors_are_not_recycled() {
        std::thread::spawn(|| {
            let tiny = MIN_KEPT_BYTES / std::mem::size_of::<f64>() - 1;
            give(Vec::<f64>::with_capacity(tiny));
            assert_eq!(f64::with_free(|f| f.len()), Some(0));
            let at_least = Vec::<f64>::with_capacity(tiny + 1);
            let at = at_least.as_ptr();
            give(at_least);
            let again = take::<f64>(tiny + 1);
            assert_eq!(again.as_ptr(), at);
        })
        .join()
        .expect("the pool thread");
    }

    /// A list at its byte budget with another workload's vectors still takes a new one, by
    /// evicting the oldest, and the next request of the new size reuses it.
    #[test]
    fn a_new_vector_evicts_the_oldest_over_the_byte_budget() {
        std::thread::spawn(|| {
            let quarter = MAX_KEPT_BYTES / 4 / std::mem::size_of::<u32>();
            let old: Vec<*const u32> = (0..4)
                .map(|i| {
                    let v = Vec::<u32>::with_capacity(quarter - i);
                    let at = v.as_ptr();
                    give(v);
                    at
                })
                .collect();
            let new = Vec::<u32>::with_capacity(quarter / 2);
            let at = new.as_ptr();
            give(new);
            let kept: Vec<*const u32> =
                u32::with_free(|f| f.iter().map(|v| v.as_ptr()).collect()).unwrap_or_default();
            assert!(!kept.contains(&old[0]), "the oldest vector was not evicted");
            assert!(kept.contains(&old[1]) && kept.contains(&old[3]));
            let again: Vec<u32> = take(quarter / 2);
            assert_eq!(again.as_ptr(), at, "the new vector was not kept");
            // One vector larger than the whole budget is never kept, and evicts nothing.
            give(Vec::<u32>::with_capacity(4 * quarter + 4));
            assert_eq!(u32::with_free(|f| f.len()), Some(3));
        })
        .join()
        .expect("the pool thread");
    }
}
