//! Reductions and cumulative scans, in a fixed order so results do not depend on the number
//! of threads: each output element is folded over fixed blocks of `BLOCK` elements, and the
//! block partials are combined pairwise in a fixed tree.

use crate::elementwise::{fmax, fmin, Real};
use crate::movement;
use crate::pool::{self, CollectPooled, Pooled};
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::{CumulativeKind, ReduceKind};
use quabla_abi::TensorType;
use rayon::prelude::*;

const BLOCK: usize = 256;
/// Below this many elements work stays on the calling thread.
const PAR_MIN: usize = 1 << 15;

trait Monoid<T>: Sync {
    fn identity(&self) -> T;
    fn combine(&self, a: T, b: T) -> T;
}

struct F<T>(T, fn(T, T) -> T);
impl<T: Copy + Send + Sync> Monoid<T> for F<T> {
    fn identity(&self) -> T {
        self.0
    }
    fn combine(&self, a: T, b: T) -> T {
        (self.1)(a, b)
    }
}

fn fold_block<T: Copy, M: Monoid<T>>(m: &M, xs: &[T]) -> T {
    xs.iter().fold(m.identity(), |acc, x| m.combine(acc, *x))
}

fn pairwise<T: Copy, M: Monoid<T>>(m: &M, xs: &[T]) -> T {
    match xs.len() {
        0 => m.identity(),
        1 => xs[0],
        n => {
            let (a, b) = xs.split_at(n / 2);
            m.combine(pairwise(m, a), pairwise(m, b))
        }
    }
}

fn fold_row<T: Copy + Send + Sync, M: Monoid<T>>(m: &M, row: &[T], parallel: bool) -> T {
    if row.len() <= BLOCK {
        return fold_block(m, row);
    }
    let partials: Vec<T> = if parallel {
        row.par_chunks(BLOCK).map(|c| fold_block(m, c)).collect()
    } else {
        row.chunks(BLOCK).map(|c| fold_block(m, c)).collect()
    };
    pairwise(m, &partials)
}

fn reduce_rows<T: Pooled + Send + Sync, M: Monoid<T>>(
    m: &M,
    data: &[T],
    rows: usize,
    len: usize,
) -> Vec<T> {
    if len == 0 {
        return pool::filled(rows, m.identity());
    }
    let big = rows * len >= PAR_MIN;
    if rows == 1 {
        return pool::filled(1, fold_row(m, data, big));
    }
    if big {
        let mut out = pool::take(rows);
        data.par_chunks(len)
            .map(|r| fold_row(m, r, false))
            .collect_into_vec(&mut out);
        out
    } else {
        data.chunks(len)
            .map(|r| fold_row(m, r, false))
            .collect_pooled()
    }
}

fn float_monoid<T: Real + Send + Sync>(kind: ReduceKind) -> F<T> {
    match kind {
        ReduceKind::Sum => F(T::zero(), T::add),
        ReduceKind::Prod => F(T::one(), T::mul),
        ReduceKind::Max => F(T::from_f64(f64::NEG_INFINITY), fmax),
        ReduceKind::Min => F(T::from_f64(f64::INFINITY), fmin),
        ReduceKind::And | ReduceKind::Or => {
            unreachable!("validation: logical reductions are bool-only")
        }
    }
}

macro_rules! int_monoid {
    ($t:ty, $kind:expr) => {
        match $kind {
            ReduceKind::Sum => F(0 as $t, <$t>::wrapping_add),
            ReduceKind::Prod => F(1 as $t, <$t>::wrapping_mul),
            ReduceKind::Max => F(<$t>::MIN, |a: $t, b: $t| a.max(b)),
            ReduceKind::Min => F(<$t>::MAX, |a: $t, b: $t| a.min(b)),
            ReduceKind::And | ReduceKind::Or => {
                unreachable!("validation: logical reductions are bool-only")
            }
        }
    };
}

/// Element types the compiled tier reduces rows of ([`fold_rows_into`]), each with the
/// monoid [`reduce`] folds it with.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) trait Reducible: Copy + Send + Sync + 'static {
    fn fold_rows_into(kind: ReduceKind, src: &[Self], len: usize, dst: &mut [Self]);
}

/// `dst[r]` = row `r` of `src` (rows of `len`) folded exactly as [`reduce`] folds one output
/// element (fixed blocks, fixed pairwise tree; the thread count changes nothing).
#[cfg(not(target_arch = "wasm32"))]
fn fold_rows_into<T: Copy + Send + Sync, M: Monoid<T>>(
    m: &M,
    src: &[T],
    len: usize,
    dst: &mut [T],
) {
    if len == 0 {
        dst.fill(m.identity());
        return;
    }
    for (d, row) in dst.iter_mut().zip(src.chunks(len)) {
        *d = fold_row(m, row, false);
    }
}

macro_rules! reducible {
    ($($t:ty => $monoid:expr),* $(,)?) => {
        $(#[cfg(not(target_arch = "wasm32"))]
        impl Reducible for $t {
            fn fold_rows_into(kind: ReduceKind, src: &[Self], len: usize, dst: &mut [Self]) {
                let m: F<$t> = $monoid(kind);
                fold_rows_into(&m, src, len, dst)
            }
        })*
    };
}

reducible!(
    f32 => float_monoid::<f32>,
    f64 => float_monoid::<f64>,
    i32 => |kind| int_monoid!(i32, kind),
    u32 => |kind| int_monoid!(u32, kind),
    bool => bool_monoid,
);

fn bool_monoid(kind: ReduceKind) -> F<bool> {
    match kind {
        ReduceKind::And => F(true, |a: bool, b: bool| a && b),
        ReduceKind::Or => F(false, |a: bool, b: bool| a || b),
        ReduceKind::Sum | ReduceKind::Prod | ReduceKind::Max | ReduceKind::Min => {
            unreachable!("validation: bool reduces with and/or only")
        }
    }
}

/// Reduces `x` over `axes`.
pub fn reduce(x: &Tensor, kind: ReduceKind, axes: &[usize], out: &TensorType) -> Storage {
    let rank = x.ty.rank();
    let kept: Vec<usize> = (0..rank).filter(|d| !axes.contains(d)).collect();
    let mut perm = kept.clone();
    let mut sorted_axes = axes.to_vec();
    sorted_axes.sort_unstable();
    perm.extend(&sorted_axes);
    // Move the reduced axes last so each output element folds one contiguous row.
    let data = if perm.iter().enumerate().all(|(i, p)| i == *p) {
        x.data.clone()
    } else {
        let shape: Vec<usize> = perm.iter().map(|&p| x.shape()[p]).collect();
        std::sync::Arc::new(movement::transpose(
            x,
            &perm,
            &TensorType::new(x.ty.dtype, shape),
        ))
    };
    let rows = out.num_elements();
    let len: usize = sorted_axes.iter().map(|&a| x.shape()[a]).product();
    match &*data {
        Storage::F32(v) => Storage::F32(reduce_rows(&float_monoid::<f32>(kind), v, rows, len)),
        Storage::F64(v) => Storage::F64(reduce_rows(&float_monoid::<f64>(kind), v, rows, len)),
        Storage::I32(v) => Storage::I32(reduce_rows(&int_monoid!(i32, kind), v, rows, len)),
        Storage::U32(v) => Storage::U32(reduce_rows(&int_monoid!(u32, kind), v, rows, len)),
        Storage::Bool(v) => Storage::Bool(reduce_rows(&bool_monoid(kind), v, rows, len)),
    }
}

fn scan_lines<T: Pooled + Send + Sync>(
    v: &[T],
    shape: &[usize],
    axis: usize,
    reverse: bool,
    f: fn(T, T) -> T,
) -> Vec<T> {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut out = pool::take(v.len());
    out.extend_from_slice(v);
    if n == 0 || inner == 0 {
        return out;
    }
    // Each outer slab holds `inner` independent lines; slabs are independent.
    let scan_slab = |slab: &mut [T]| {
        for j in 0..inner {
            let order: Box<dyn Iterator<Item = usize>> = if reverse {
                Box::new((0..n).rev())
            } else {
                Box::new(0..n)
            };
            let mut acc: Option<T> = None;
            for i in order {
                let k = i * inner + j;
                let next = match acc {
                    None => slab[k],
                    Some(a) => f(a, slab[k]),
                };
                slab[k] = next;
                acc = Some(next);
            }
        }
    };
    if outer * n * inner >= PAR_MIN {
        out.par_chunks_mut(n * inner).for_each(scan_slab);
    } else {
        out.chunks_mut(n * inner).for_each(scan_slab);
    }
    out
}

/// Inclusive cumulative sum/prod/max/min along `axis`, sequential along each line.
pub fn cumulative(x: &Tensor, kind: CumulativeKind, axis: usize, reverse: bool) -> Storage {
    let sh = x.shape();
    macro_rules! ints {
        ($v:expr, $t:ty) => {
            scan_lines(
                $v,
                sh,
                axis,
                reverse,
                match kind {
                    CumulativeKind::Sum => <$t>::wrapping_add,
                    CumulativeKind::Prod => <$t>::wrapping_mul,
                    CumulativeKind::Max => |a: $t, b: $t| a.max(b),
                    CumulativeKind::Min => |a: $t, b: $t| a.min(b),
                },
            )
        };
    }
    fn floats<T: Real + Send + Sync>(
        v: &[T],
        sh: &[usize],
        axis: usize,
        reverse: bool,
        kind: CumulativeKind,
    ) -> Vec<T> {
        let f: fn(T, T) -> T = match kind {
            CumulativeKind::Sum => T::add,
            CumulativeKind::Prod => T::mul,
            CumulativeKind::Max => fmax,
            CumulativeKind::Min => fmin,
        };
        scan_lines(v, sh, axis, reverse, f)
    }
    match &*x.data {
        Storage::F32(v) => Storage::F32(floats(v, sh, axis, reverse, kind)),
        Storage::F64(v) => Storage::F64(floats(v, sh, axis, reverse, kind)),
        Storage::I32(v) => Storage::I32(ints!(v, i32)),
        Storage::U32(v) => Storage::U32(ints!(v, u32)),
        Storage::Bool(_) => unreachable!("validation: cumulative is numeric"),
    }
}
