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

/// An identity and its combining function, a function item (not a pointer) so each fold
/// is compiled for its operation, with the operation inlined.
struct F<T, C>(T, C);
impl<T: Copy + Send + Sync, C: Fn(T, T) -> T + Sync> Monoid<T> for F<T, C> {
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

/// How many blocks [`group_partials`] folds side by side.
const LANES: usize = 8;

/// The partials of consecutive whole blocks of `group` (`LANES` of them, or fewer at the
/// end of a row), each folded in its own order exactly as [`fold_block`] folds it, but
/// side by side: one fold is a chain of dependent operations, `LANES` independent chains
/// keep the core's pipelines full (the bits are the same).
fn group_partials<T: Copy, M: Monoid<T>>(m: &M, group: &[T], out: &mut impl Extend<T>) {
    if group.len() != BLOCK * LANES {
        out.extend(group.chunks(BLOCK).map(|c| fold_block(m, c)));
        return;
    }
    out.extend(pulp::Arch::new().dispatch(SideBySide { m, group }));
}

/// [`group_partials`]' folds of one whole group, compiled per instruction set. Each step
/// reads `LANES` consecutive elements of every block (contiguous loads) and folds them in
/// element order, so each lane folds its block exactly as [`fold_block`] does. Reading one
/// element of each block per step instead was scalar loads and shuffles: 28% of a CG
/// solve's time.
struct SideBySide<'a, T, M> {
    m: &'a M,
    group: &'a [T],
}

impl<T: Copy, M: Monoid<T>> pulp::WithSimd for SideBySide<'_, T, M> {
    type Output = [T; LANES];
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> [T; LANES] {
        let Self { m, group } = self;
        let mut acc = [m.identity(); LANES];
        let mut tile = [[m.identity(); LANES]; LANES];
        for i0 in (0..BLOCK).step_by(LANES) {
            for (k, t) in tile.iter_mut().enumerate() {
                t.copy_from_slice(&group[k * BLOCK + i0..k * BLOCK + i0 + LANES]);
            }
            for j in 0..LANES {
                for (a, t) in acc.iter_mut().zip(&tile) {
                    *a = m.combine(*a, t[j]);
                }
            }
        }
        acc
    }
}

/// A row's block partials, on the stack for rows of up to 64K elements (CG's 256x256 grid),
/// so a compiled loop's reductions allocate nothing per iteration.
type Partials<T> = smallvec::SmallVec<[T; 256]>;

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
    if parallel {
        let partials: Vec<T> = row
            .par_chunks(BLOCK * LANES)
            .flat_map_iter(|g| {
                let mut out = Vec::with_capacity(LANES);
                group_partials(m, g, &mut out);
                out
            })
            .collect();
        return pairwise(m, &partials);
    }
    let mut partials = Partials::new();
    row.chunks(BLOCK * LANES)
        .for_each(|g| group_partials(m, g, &mut partials));
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

/// The reduction over the leading axis of `data` read as `len` rows of `cols` (a batch sum
/// of a gradient, say): column `j` is folded exactly as [`fold_row`] folds a row holding
/// it (blocks of `BLOCK` in order, then the block partials pairwise), without the transposed
/// copy: each block's fold runs down all columns at once, one row at a time.
fn fold_columns<T: Pooled + Send + Sync, M: Monoid<T>>(
    m: &M,
    data: &[T],
    len: usize,
    cols: usize,
) -> Vec<T> {
    if len == 0 {
        return pool::filled(cols, m.identity());
    }
    // Columns in groups that fit in cache, the groups on rayon when the work is large.
    const GROUP: usize = 256;
    let group = |(g, out): (usize, &mut [T])| {
        let c0 = g * GROUP;
        let w = out.len();
        let blocks = len.div_ceil(BLOCK);
        let mut partials: Vec<T> = pool::filled(blocks * w, m.identity());
        for (b, acc) in partials.chunks_mut(w).enumerate() {
            for i in b * BLOCK..len.min((b + 1) * BLOCK) {
                let row = &data[i * cols + c0..i * cols + c0 + w];
                for (a, x) in acc.iter_mut().zip(row) {
                    *a = m.combine(*a, *x);
                }
            }
        }
        if blocks == 1 {
            out.copy_from_slice(&partials);
        } else {
            let mut column: Vec<T> = pool::take(blocks);
            for (j, o) in out.iter_mut().enumerate() {
                column.clear();
                column.extend((0..blocks).map(|b| partials[b * w + j]));
                *o = pairwise(m, &column);
            }
            pool::give(column);
        }
        pool::give(partials);
    };
    let mut out: Vec<T> = pool::filled(cols, m.identity());
    if len * cols >= PAR_MIN {
        out.par_chunks_mut(GROUP).enumerate().for_each(group);
    } else {
        out.chunks_mut(GROUP).enumerate().for_each(group);
    }
    out
}

/// `$body` with `$m` bound to the monoid a reduction of `$kind` over the element type `$t`
/// folds with (each arm its own type, so each fold is compiled for its operation).
macro_rules! with_monoid {
    (float $t:ty, $kind:expr, $m:ident => $body:expr) => {
        match $kind {
            ReduceKind::Sum => {
                let $m = F(<$t as Real>::zero(), <$t as Real>::add);
                $body
            }
            ReduceKind::Prod => {
                let $m = F(<$t as Real>::one(), <$t as Real>::mul);
                $body
            }
            ReduceKind::Max => {
                let $m = F(<$t as Real>::from_f64(f64::NEG_INFINITY), fmax::<$t>);
                $body
            }
            ReduceKind::Min => {
                let $m = F(<$t as Real>::from_f64(f64::INFINITY), fmin::<$t>);
                $body
            }
            ReduceKind::And | ReduceKind::Or => {
                unreachable!("validation: logical reductions are bool-only")
            }
        }
    };
    (int $t:ty, $kind:expr, $m:ident => $body:expr) => {
        match $kind {
            ReduceKind::Sum => {
                let $m = F(0 as $t, <$t>::wrapping_add);
                $body
            }
            ReduceKind::Prod => {
                let $m = F(1 as $t, <$t>::wrapping_mul);
                $body
            }
            ReduceKind::Max => {
                let $m = F(<$t>::MIN, <$t as Ord>::max);
                $body
            }
            ReduceKind::Min => {
                let $m = F(<$t>::MAX, <$t as Ord>::min);
                $body
            }
            ReduceKind::And | ReduceKind::Or => {
                unreachable!("validation: logical reductions are bool-only")
            }
        }
    };
    (bool, $kind:expr, $m:ident => $body:expr) => {
        match $kind {
            ReduceKind::And => {
                let $m = F(true, |a: bool, b: bool| a && b);
                $body
            }
            ReduceKind::Or => {
                let $m = F(false, |a: bool, b: bool| a || b);
                $body
            }
            ReduceKind::Sum | ReduceKind::Prod | ReduceKind::Max | ReduceKind::Min => {
                unreachable!("validation: bool reduces with and/or only")
            }
        }
    };
}

/// `$e` over the elements `$v` of the storage `$data`, `$m` the monoid of `$kind` for
/// their type, as a storage of that type.
macro_rules! with_elements {
    ($data:expr, $kind:expr, $m:ident, $v:ident => $e:expr) => {
        match $data {
            Storage::F32($v) => Storage::F32(with_monoid!(float f32, $kind, $m => $e)),
            Storage::F64($v) => Storage::F64(with_monoid!(float f64, $kind, $m => $e)),
            Storage::I32($v) => Storage::I32(with_monoid!(int i32, $kind, $m => $e)),
            Storage::U32($v) => Storage::U32(with_monoid!(int u32, $kind, $m => $e)),
            Storage::Bool($v) => Storage::Bool(with_monoid!(bool, $kind, $m => $e)),
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

/// `dst[r]` = the sum of row `r` (rows of `len`) of the products `a[i] * b[i]`, rounded as
/// `mul` rounds them, folded exactly as [`fold_rows_into`] folds the stored products: each
/// group of blocks' products are made in a buffer in cache and folded as [`fold_row`] folds
/// that group, so the products are never written to memory and read back (the compiled
/// tier's sums of products, CG's `p . Ap`).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn sum_products_into<T: Real + Send + Sync>(
    a: &[T],
    b: &[T],
    len: usize,
    dst: &mut [T],
) {
    if len == 0 {
        dst.fill(T::zero());
        return;
    }
    // The products buffer is zeroed on every call, so short rows (the layers of a small
    // network, called many times per solver step) get a buffer their size: zeroing 16 KiB
    // for rows of 64 was 3.5% of a neural ODE's gradient. The groups, so the bits, are the
    // same whatever the buffer's size.
    if len <= LANES * LANES {
        sum_products_rows::<T, { LANES * LANES }>(a, b, len, dst);
    } else if len <= BLOCK {
        sum_products_rows::<T, BLOCK>(a, b, len, dst);
    } else {
        sum_products_rows::<T, { BLOCK * LANES }>(a, b, len, dst);
    }
}

/// [`sum_products_into`] for rows of at most `N` elements, or for any rows when `N` is a
/// whole group (`BLOCK * LANES`).
#[cfg(not(target_arch = "wasm32"))]
fn sum_products_rows<T: Real + Send + Sync, const N: usize>(
    a: &[T],
    b: &[T],
    len: usize,
    dst: &mut [T],
) {
    let m = F(T::zero(), T::add);
    let mut buf = [m.identity(); N];
    let mut partials = Partials::new();
    let rows = a.chunks(len).zip(b.chunks(len));
    for (d, (x, y)) in dst.iter_mut().zip(rows) {
        let groups = x.chunks(BLOCK * LANES).zip(y.chunks(BLOCK * LANES));
        partials.clear();
        for (gx, gy) in groups {
            let products = &mut buf[..gx.len().min(gy.len())];
            pulp::Arch::new().dispatch(Products {
                a: gx,
                b: gy,
                out: &mut *products,
            });
            if len <= BLOCK {
                partials.push(fold_block(&m, products));
            } else {
                group_partials(&m, products, &mut partials);
            }
        }
        *d = pairwise(&m, &partials);
    }
}

/// `out[i] = a[i] * b[i]`, the loop compiled per instruction set (outside pulp's dispatch it
/// is compiled for the baseline one: two f64 lanes where the machine has eight).
#[cfg(not(target_arch = "wasm32"))]
struct Products<'a, T> {
    a: &'a [T],
    b: &'a [T],
    out: &'a mut [T],
}

#[cfg(not(target_arch = "wasm32"))]
impl<T: Real> pulp::WithSimd for Products<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let n = self.out.len().min(self.a.len()).min(self.b.len());
        let (a, b, out) = (&self.a[..n], &self.b[..n], &mut self.out[..n]);
        for i in 0..n {
            out[i] = a[i].mul(b[i]);
        }
    }
}

macro_rules! reducible {
    ($($t:ty => $($class:ident)?),* $(,)?) => {
        $(#[cfg(not(target_arch = "wasm32"))]
        impl Reducible for $t {
            fn fold_rows_into(kind: ReduceKind, src: &[Self], len: usize, dst: &mut [Self]) {
                with_monoid!($($class)? $t, kind, m => fold_rows_into(&m, src, len, dst))
            }
        })*
    };
}

reducible!(f32 => float, f64 => float, i32 => int, u32 => int);

#[cfg(not(target_arch = "wasm32"))]
impl Reducible for bool {
    fn fold_rows_into(kind: ReduceKind, src: &[Self], len: usize, dst: &mut [Self]) {
        with_monoid!(bool, kind, m => fold_rows_into(&m, src, len, dst))
    }
}

/// Reduces `x` over `axes`.
pub fn reduce(x: &Tensor, kind: ReduceKind, axes: &[usize], out: &TensorType) -> Storage {
    let rank = x.ty.rank();
    let mut leading = axes.to_vec();
    leading.sort_unstable();
    if leading.iter().enumerate().all(|(i, a)| i == *a) && leading.len() < rank {
        // The reduced axes lead: fold columns in place.
        let len: usize = leading.iter().map(|&a| x.shape()[a]).product();
        let cols = out.num_elements();
        return with_elements!(&*x.data, kind, m, v => fold_columns(&m, v, len, cols));
    }
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
    with_elements!(&*data, kind, m, v => reduce_rows(&m, v, rows, len))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The fold the interleaved one must equal: each block of `BLOCK` folded on its own,
    /// in order, then the partials pairwise.
    fn one_block_at_a_time(xs: &[f32]) -> f32 {
        let m = F(0.0f32, <f32 as Real>::add);
        let partials: Vec<f32> = xs.chunks(BLOCK).map(|c| fold_block(&m, c)).collect();
        pairwise(&m, &partials)
    }

    /// Column folds against row folds of the transposed data, bit for bit: lengths around
    /// the block edges, column counts around the cache groups', the serial and the parallel
    /// split, sums (order-sensitive values) and maxima (NaN and signed zeros).
    #[test]
    fn columns_fold_as_the_rows_of_the_transpose_do() {
        let value = |i: usize| match i % 11 {
            0 => 1e8,
            1 => -0.0,
            2 => -1e8,
            3 => 0.0,
            _ => (i as f32 * 0.37).sin(),
        };
        for len in [1, 7, BLOCK - 1, BLOCK, BLOCK + 1, 4 * BLOCK + 3] {
            for cols in [1, 3, 255, 257] {
                let data: Vec<f32> = (0..len * cols).map(value).collect();
                let transposed: Vec<f32> = (0..cols)
                    .flat_map(|j| (0..len).map(move |i| (i, j)))
                    .map(|(i, j)| data[i * cols + j])
                    .collect();
                let sum = F(0.0f32, <f32 as Real>::add);
                let max = F(f32::NEG_INFINITY, fmax::<f32>);
                let bits = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(fold_columns(&sum, &data, len, cols)),
                    bits(reduce_rows(&sum, &transposed, cols, len)),
                    "sum, len {len}, cols {cols}"
                );
                let mut with_nan = data.clone();
                with_nan[len * cols / 2] = f32::NAN;
                let nan_t: Vec<f32> = (0..cols)
                    .flat_map(|j| (0..len).map(move |i| (i, j)))
                    .map(|(i, j)| with_nan[i * cols + j])
                    .collect();
                assert_eq!(
                    bits(fold_columns(&max, &with_nan, len, cols)),
                    bits(reduce_rows(&max, &nan_t, cols, len)),
                    "max, len {len}, cols {cols}"
                );
            }
        }
    }

    /// Sums over rows of every length around the interleaved groups' edges, with values
    /// whose sum depends on the order (large and small, signed zeros), in both the serial
    /// and the parallel split.
    #[test]
    fn interleaved_blocks_fold_each_block_in_its_own_order() {
        let group = BLOCK * LANES;
        for len in [
            1,
            BLOCK - 1,
            BLOCK,
            BLOCK + 1,
            group - 1,
            group,
            group + 1,
            3 * group + 77,
        ] {
            let xs: Vec<f32> = (0..len)
                .map(|i| match i % 7 {
                    0 => 1e8,
                    1 => -0.0,
                    2 => -1e8,
                    _ => (i as f32 * 0.37).sin(),
                })
                .collect();
            let want = one_block_at_a_time(&xs);
            let m = F(0.0f32, <f32 as Real>::add);
            for parallel in [false, true] {
                let got = fold_row(&m, &xs, parallel);
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "len {len}, parallel {parallel}"
                );
            }
        }
    }

    /// Sums of products against the fold of the stored products, bit for bit: row lengths
    /// around the block and group edges, one row and several, magnitudes that make the
    /// order visible, f32 and f64.
    #[test]
    fn sums_of_products_fold_as_the_stored_products_do() {
        fn check<T: Real + Send + Sync + std::fmt::Debug>(from: fn(f64) -> T, bits: fn(T) -> u64) {
            for len in [1, 7, 63, 64, 65, 255, 256, 257, 2047, 2048, 2049, 5000] {
                for rows in [1, 3] {
                    let n = rows * len;
                    let big = |i: usize| if i.is_multiple_of(7) { 1e8 } else { 1.0 };
                    let a: Vec<T> = (0..n)
                        .map(|i| from(((i as f64) * 0.37).sin() * big(i)))
                        .collect();
                    let b: Vec<T> = (0..n)
                        .map(|i| from(((i as f64) * 0.11).cos() - 0.25))
                        .collect();
                    let stored: Vec<T> = a.iter().zip(&b).map(|(x, y)| x.mul(*y)).collect();
                    let (mut want, mut got) = (vec![from(0.0); rows], vec![from(0.0); rows]);
                    fold_rows_into(&F(T::zero(), T::add), &stored, len, &mut want);
                    sum_products_into(&a, &b, len, &mut got);
                    let (want, got): (Vec<u64>, Vec<u64>) = (
                        want.into_iter().map(bits).collect(),
                        got.into_iter().map(bits).collect(),
                    );
                    assert_eq!(got, want, "len {len}, rows {rows}");
                }
            }
        }
        check::<f32>(|x| x as f32, |x| x.to_bits() as u64);
        check::<f64>(|x| x, f64::to_bits);
    }
}
