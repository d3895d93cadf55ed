//! Matrix-vector products (`m == 1` or `n == 1`) below gemm's threading size, on explicit
//! SIMD vectors.
//!
//! Why not gemm: its microkernels are built for panels. One step of a 64-wide tanh RNN
//! (`W h` with `W` 64x64 and `U x` with `U` 64x8) spent 0.36 us in gemm (perf), against
//! JAX's whole step of 0.23 us; these kernels take about 0.22 us, and the RNN went from
//! 6.0 to 4.6 ms per 10k steps (f32, one thread). Plain Rust loops came out as 2-lane code
//! (LLVM's SLP vectoriser), so the loops are written on pulp's vectors, compiled once per
//! instruction set and dispatched at run time.
//!
//! Layouts: rows of the matrix contiguous ([`RowDots`]: lanes of partial sums per row,
//! then the lanes summed) or columns contiguous ([`ColumnSums`]: rows in lanes, summed
//! term by term); others go to gemm.
//!
//! Bits: each output is summed in one fixed order for a given machine (one instruction set,
//! no threads), whichever tier calls it: both tiers hand over the same operands and strides
//! (`dot::gemm_batched_into`). Like gemm's, the order depends on the vector width, so two
//! instruction sets may differ in the last bits. A one-term sum is the exact product (no
//! `+0` seed, so `-0` survives): the loop IR lowers `k = 1` products to multiplies, and the
//! two tiers must agree there too.

use pulp::Simd;

/// A float type's pulp vector operations.
pub(crate) trait Lane: Copy + Default + std::ops::Mul<Output = Self> + 'static {
    /// The vector of this element type on instruction set `S`.
    type V<S: Simd>: Copy;
    /// `x` as whole vectors and the elements after them.
    fn as_simd<S: Simd>(x: &[Self]) -> (&[Self::V<S>], &[Self]);
    /// `x` as whole vectors and the elements after them, writable.
    fn as_mut_simd<S: Simd>(x: &mut [Self]) -> (&mut [Self::V<S>], &mut [Self]);
    fn splat<S: Simd>(s: S, x: Self) -> Self::V<S>;
    fn vmul<S: Simd>(s: S, a: Self::V<S>, b: Self::V<S>) -> Self::V<S>;
    /// `a * b + c`, fused where the instruction set has it.
    fn vmul_add<S: Simd>(s: S, a: Self::V<S>, b: Self::V<S>, c: Self::V<S>) -> Self::V<S>;
    /// The lanes' sum, in the instruction set's fixed order.
    fn sum<S: Simd>(s: S, a: Self::V<S>) -> Self;
    /// The first `x.len()` lanes from `x`, the rest zero.
    fn partial_load<S: Simd>(s: S, x: &[Self]) -> Self::V<S>;
    /// The first `x.len()` lanes into `x`.
    fn partial_store<S: Simd>(s: S, x: &mut [Self], v: Self::V<S>);
    /// The bitwise and of two vectors.
    fn and<S: Simd>(s: S, a: Self::V<S>, b: Self::V<S>) -> Self::V<S>;
    /// The element whose bits are all ones.
    const ONES: Self;
}

macro_rules! lane {
    ($t:ty, $v:ident, $as:ident, $as_mut:ident, $splat:ident, $mul:ident, $fma:ident,
     $sum:ident, $load:ident, $store:ident, $and:ident, $ones:expr) => {
        impl Lane for $t {
            type V<S: Simd> = S::$v;
            const ONES: Self = $ones;
            #[inline(always)]
            fn and<S: Simd>(s: S, a: S::$v, b: S::$v) -> S::$v {
                s.$and(a, b)
            }
            #[inline(always)]
            fn as_simd<S: Simd>(x: &[Self]) -> (&[S::$v], &[Self]) {
                S::$as(x)
            }
            #[inline(always)]
            fn as_mut_simd<S: Simd>(x: &mut [Self]) -> (&mut [S::$v], &mut [Self]) {
                S::$as_mut(x)
            }
            #[inline(always)]
            fn splat<S: Simd>(s: S, x: Self) -> S::$v {
                s.$splat(x)
            }
            #[inline(always)]
            fn vmul<S: Simd>(s: S, a: S::$v, b: S::$v) -> S::$v {
                s.$mul(a, b)
            }
            #[inline(always)]
            fn vmul_add<S: Simd>(s: S, a: S::$v, b: S::$v, c: S::$v) -> S::$v {
                s.$fma(a, b, c)
            }
            #[inline(always)]
            fn sum<S: Simd>(s: S, a: S::$v) -> Self {
                s.$sum(a)
            }
            #[inline(always)]
            fn partial_load<S: Simd>(s: S, x: &[Self]) -> S::$v {
                s.$load(x)
            }
            #[inline(always)]
            fn partial_store<S: Simd>(s: S, x: &mut [Self], v: S::$v) {
                s.$store(x, v)
            }
        }
    };
}

lane!(
    f32,
    f32s,
    as_simd_f32s,
    as_mut_simd_f32s,
    splat_f32s,
    mul_f32s,
    mul_add_e_f32s,
    reduce_sum_f32s,
    partial_load_f32s,
    partial_store_f32s,
    and_f32s,
    f32::from_bits(u32::MAX)
);
lane!(
    f64,
    f64s,
    as_simd_f64s,
    as_mut_simd_f64s,
    splat_f64s,
    mul_f64s,
    mul_add_e_f64s,
    reduce_sum_f64s,
    partial_load_f64s,
    partial_store_f64s,
    and_f64s,
    f64::from_bits(u64::MAX)
);

/// `out[i] = sum_k a[i * row + k] * v[k]`: rows of `a` contiguous, `v` contiguous, each
/// row summed in vector lanes (four rows at a time, for four independent chains) and the
/// lanes then summed.
struct RowDots<'a, T> {
    out: &'a mut [T],
    a: &'a [T],
    row: usize,
    v: &'a [T],
}

// The kernels use no closures and no `array::map`: those are separate functions that do
// not inherit pulp's target features, and each vector operation then became a call.

/// Row `i` of `a` (`k` elements from `i * row`) as whole vectors and the rest.
#[inline(always)]
fn row_at<S: Simd, T: Lane>(a: &[T], row: usize, k: usize, i: usize) -> (&[T::V<S>], &[T]) {
    T::as_simd::<S>(&a[i * row..i * row + k])
}

/// The lanes after a row's whole vectors: `len` elements from `a[start]`, zero past them.
/// pulp's partial load is an out-of-line call per use, so where a whole vector's worth of
/// `a` follows `start` it is loaded whole and the lanes past `len` cleared by `mask` (a
/// bitwise and, so a NaN or infinity past the row cannot leak into the sum).
#[inline(always)]
fn tail_lanes<S: Simd, T: Lane>(
    s: S,
    a: &[T],
    start: usize,
    len: usize,
    mask: Option<T::V<S>>,
) -> T::V<S> {
    let lanes = size_of::<T::V<S>>() / size_of::<T>();
    match mask {
        Some(mask) if start + lanes <= a.len() => {
            T::and(s, T::as_simd::<S>(&a[start..start + lanes]).0[0], mask)
        }
        _ => T::partial_load(s, &a[start..start + len]),
    }
}

/// A vector whose first `len` lanes have every bit set and the rest none, when one vector
/// has at most 16 lanes (every instruction set pulp has today).
#[inline(always)]
fn lane_mask<S: Simd, T: Lane>(len: usize) -> Option<T::V<S>> {
    let lanes = size_of::<T::V<S>>() / size_of::<T>();
    let mut bits = [T::default(); 16];
    if lanes > bits.len() {
        return None;
    }
    for b in bits.iter_mut().take(len) {
        *b = T::ONES;
    }
    Some(T::as_simd::<S>(&bits[..lanes]).0[0])
}

/// Where a product's rows are and how their tails are read.
struct Rows<'a, S: Simd, T: Lane> {
    a: &'a [T],
    row: usize,
    k: usize,
    /// The elements of a row before its tail.
    head: usize,
    /// `v`'s whole vectors and its tail (zero past `k`), if it has one.
    vs: &'a [T::V<S>],
    tail: Option<T::V<S>>,
    mask: Option<T::V<S>>,
}

/// `out[..R]` = the lane sums of rows `i .. i + R`, in `R` independent chains: the first
/// whole vector's products (the tails' when `v` is shorter than a vector), then the other
/// whole vectors' and the tails' added.
#[inline(always)]
fn row_group<const R: usize, S: Simd, T: Lane>(s: S, p: &Rows<'_, S, T>, i: usize, out: &mut [T]) {
    let zero = T::splat(s, T::default());
    let tail_len = p.k - p.head;
    let mut xs: [&[T::V<S>]; R] = [&[]; R];
    for (j, x) in xs.iter_mut().enumerate() {
        *x = row_at::<S, T>(p.a, p.row, p.k, i + j).0;
    }
    let mut acc = [zero; R];
    for j in 0..R {
        acc[j] = match p.vs.first() {
            Some(v) => T::vmul(s, xs[j][0], *v),
            None => {
                let x = tail_lanes(s, p.a, (i + j) * p.row + p.head, tail_len, p.mask);
                T::vmul(s, x, p.tail.unwrap_or(zero))
            }
        };
    }
    for (c, v) in p.vs.iter().enumerate().skip(1) {
        for (acc, x) in acc.iter_mut().zip(&xs) {
            *acc = T::vmul_add(s, x[c], *v, *acc);
        }
    }
    if let (Some(t), false) = (p.tail, p.vs.is_empty()) {
        for (j, acc) in acc.iter_mut().enumerate() {
            let x = tail_lanes(s, p.a, (i + j) * p.row + p.head, tail_len, p.mask);
            *acc = T::vmul_add(s, x, t, *acc);
        }
    }
    for (o, acc) in out.iter_mut().zip(acc) {
        *o = T::sum(s, acc);
    }
}

impl<T: Lane> pulp::WithSimd for RowDots<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        let Self { out, a, row, v } = self;
        let k = v.len();
        let (vs, vt) = T::as_simd::<S>(v);
        let tail = if vt.is_empty() {
            None
        } else {
            Some(T::partial_load(s, vt))
        };
        let rows = Rows {
            a,
            row,
            k,
            head: k - vt.len(),
            vs,
            tail,
            mask: lane_mask::<S, T>(vt.len()),
        };
        let mut groups = out.chunks_exact_mut(4);
        let mut i = 0;
        for o in &mut groups {
            row_group::<4, S, T>(s, &rows, i, o);
            i += 4;
        }
        for o in groups.into_remainder().chunks_mut(1) {
            row_group::<1, S, T>(s, &rows, i, o);
            i += 1;
        }
    }
}

/// `out[i] = sum_k a[i + k * col] * v[k * v_stride]`: columns of `a` contiguous, summed
/// term by term in `k` order, four vectors of rows at a time in registers.
struct ColumnSums<'a, T> {
    out: &'a mut [T],
    a: &'a [T],
    col: usize,
    v: &'a [T],
    v_stride: usize,
    k: usize,
}

/// Column `p` of `a` (`m` elements from `p * col`) as whole vectors and the rest.
#[inline(always)]
fn column_at<S: Simd, T: Lane>(a: &[T], col: usize, m: usize, p: usize) -> (&[T::V<S>], &[T]) {
    T::as_simd::<S>(&a[p * col..p * col + m])
}

/// The read-only half of a [`ColumnSums`]: the matrix (`m` rows), `v`, and their strides.
struct Columns<'a, T> {
    a: &'a [T],
    col: usize,
    m: usize,
    v: &'a [T],
    v_stride: usize,
    k: usize,
}

impl<T: Lane> Columns<'_, T> {
    /// Element `q` of `v`, in every lane.
    #[inline(always)]
    fn v_at<S: Simd>(&self, s: S, q: usize) -> T::V<S> {
        T::splat(s, self.v[q * self.v_stride])
    }

    /// `out[..R]` = row vectors `c .. c + R`, in `R` independent chains: the first column's
    /// products, then each other column's added in `k` order.
    #[inline(always)]
    fn group<const R: usize, S: Simd>(&self, s: S, c: usize, out: &mut [T::V<S>]) {
        let x0 = self.v_at(s, 0);
        let first = column_at::<S, T>(self.a, self.col, self.m, 0).0;
        let mut acc = [x0; R];
        for (j, acc) in acc.iter_mut().enumerate() {
            *acc = T::vmul(s, first[c + j], x0);
        }
        for q in 1..self.k {
            let (x, xq) = (
                column_at::<S, T>(self.a, self.col, self.m, q).0,
                self.v_at(s, q),
            );
            for (j, acc) in acc.iter_mut().enumerate() {
                *acc = T::vmul_add(s, x[c + j], xq, *acc);
            }
        }
        out.copy_from_slice(&acc);
    }

    /// The rows after the whole vectors (`out.len()` of them), the same sums one partial
    /// vector at a time.
    #[inline(always)]
    fn tail<S: Simd>(&self, s: S, out: &mut [T]) {
        let (len, mask) = (out.len(), lane_mask::<S, T>(out.len()));
        let head = self.m - len;
        let mut acc = T::vmul(s, tail_lanes(s, self.a, head, len, mask), self.v_at(s, 0));
        for q in 1..self.k {
            let x = tail_lanes(s, self.a, q * self.col + head, len, mask);
            acc = T::vmul_add(s, x, self.v_at(s, q), acc);
        }
        T::partial_store(s, out, acc);
    }
}

impl<T: Lane> pulp::WithSimd for ColumnSums<'_, T> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, s: S) {
        let Self {
            out,
            a,
            col,
            v,
            v_stride,
            k,
        } = self;
        let cols = Columns {
            a,
            col,
            m: out.len(),
            v,
            v_stride,
            k,
        };
        let (out_v, out_t) = T::as_mut_simd::<S>(out);
        let mut groups = out_v.chunks_exact_mut(4);
        let mut c = 0;
        for o in &mut groups {
            cols.group::<4, S>(s, c, o);
            c += 4;
        }
        for o in groups.into_remainder().chunks_mut(1) {
            cols.group::<1, S>(s, c, o);
            c += 1;
        }
        if !out_t.is_empty() {
            cols.tail(s, out_t);
        }
    }
}

/// A matrix-vector product: `out[i] = sum_k a[i * a_strides.0 + k * a_strides.1] *
/// v[k * v_stride]` for `i < out.len()`, `k < k`.
pub(crate) struct Matvec<'a, T> {
    pub out: &'a mut [T],
    pub a: &'a [T],
    pub a_strides: (usize, usize),
    pub v: &'a [T],
    pub v_stride: usize,
    pub k: usize,
}

/// Computes `p` when its layout has a kernel here: rows of `a` contiguous with `v`
/// contiguous, or columns of `a` contiguous. Returns `false`, writing nothing, otherwise
/// (gemm then takes it).
pub(crate) fn try_matvec<T: Lane>(p: Matvec<'_, T>) -> bool {
    let Matvec {
        out,
        a,
        a_strides: (row, col),
        v,
        v_stride,
        k,
    } = p;
    let m = out.len();
    if k == 0 || m == 0 {
        return false;
    }
    if k == 1 {
        for (i, o) in out.iter_mut().enumerate() {
            *o = a[i * row] * v[0];
        }
        return true;
    }
    let arch = pulp::Arch::new();
    if col == 1 && v_stride == 1 {
        arch.dispatch(RowDots {
            out,
            a,
            row,
            v: &v[..k],
        });
        return true;
    }
    if row == 1 {
        arch.dispatch(ColumnSums {
            out,
            a,
            col,
            v,
            v_stride,
            k,
        });
        return true;
    }
    false
}
