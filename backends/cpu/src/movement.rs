//! Data movement: every op here maps each output element to a source element (or a fill),
//! so one index-map builder serves transpose, slice, reverse, broadcast, pad and gather.

use crate::pool::{self, Pooled};
use crate::tensor::{map_storage, Storage, Tensor};
use quabla_abi::qir::{GatherDims, ScatterDims};
use quabla_abi::{row_major_strides, DType, TensorType};

/// Calls `f(linear_out_index, multi_index)` for every index of `shape` in row-major order.
fn for_each_index(shape: &[usize], mut f: impl FnMut(usize, &[usize])) {
    let n: usize = shape.iter().product();
    if n == 0 {
        return;
    }
    let mut idx = vec![0usize; shape.len()];
    for lin in 0..n {
        f(lin, &idx);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// The elements of a strided view of `src` (`offset + sum(i_k * strides_k)` for each
/// output index, row-major), copied without building an index map: the innermost dim is a
/// tight loop (a slice copy when contiguous) and the outer offset is updated incrementally.
fn strided_gather<T: Pooled>(
    src: &[T],
    shape: &[usize],
    offset: isize,
    strides: &[isize],
) -> Vec<T> {
    let n: usize = shape.iter().product();
    let mut out = pool::take(n);
    if n == 0 {
        return out;
    }
    let Some((&inner_n, outer)) = shape.split_last() else {
        out.push(src[offset as usize]);
        return out;
    };
    let inner_s = strides[shape.len() - 1];
    let mut idx = vec![0usize; outer.len()];
    let mut base = offset;
    loop {
        if inner_s == 1 {
            out.extend_from_slice(&src[base as usize..base as usize + inner_n]);
        } else {
            let mut p = base;
            for _ in 0..inner_n {
                out.push(src[p as usize]);
                p += inner_s;
            }
        }
        // Odometer over the outer dims, moving `base` by one stride at a time.
        let mut d = outer.len();
        loop {
            if d == 0 {
                return out;
            }
            d -= 1;
            idx[d] += 1;
            base += strides[d];
            if idx[d] < outer[d] {
                break;
            }
            base -= strides[d] * outer[d] as isize;
            idx[d] = 0;
        }
    }
}

pub(crate) fn strided(
    x: &Tensor,
    out_shape: &[usize],
    offset: isize,
    strides: &[isize],
) -> Storage {
    map_storage!(&*x.data, v => strided_gather(v, out_shape, offset, strides))
}

pub(crate) fn istrides(shape: &[usize]) -> Vec<isize> {
    row_major_strides(shape)
        .into_iter()
        .map(|s| s as isize)
        .collect()
}

pub fn transpose(x: &Tensor, perm: &[usize], out: &TensorType) -> Storage {
    let s = istrides(x.shape());
    let strides: Vec<isize> = perm.iter().map(|&p| s[p]).collect();
    strided(x, &out.shape, 0, &strides)
}

pub fn slice(x: &Tensor, start: &[usize], steps: &[usize], out: &TensorType) -> Storage {
    let s = istrides(x.shape());
    let offset: isize = start.iter().zip(&s).map(|(a, b)| *a as isize * b).sum();
    let strides: Vec<isize> = steps.iter().zip(&s).map(|(a, b)| *a as isize * b).collect();
    strided(x, &out.shape, offset, &strides)
}

pub fn reverse(x: &Tensor, dims: &[usize]) -> Storage {
    let mut strides = istrides(x.shape());
    let mut offset = 0isize;
    for &d in dims {
        if x.shape()[d] > 0 {
            offset += (x.shape()[d] as isize - 1) * strides[d];
        }
        strides[d] = -strides[d];
    }
    strided(x, x.shape(), offset, &strides)
}

pub fn broadcast_in_dim(x: &Tensor, dims: &[usize], out: &TensorType) -> Storage {
    if repeats_operand(&x.ty, dims, out) {
        return x.data.repeated(0, out.num_elements());
    }
    let s = istrides(x.shape());
    let mut strides = vec![0isize; out.rank()];
    for (i, &d) in dims.iter().enumerate() {
        if x.shape()[i] != 1 {
            strides[d] = s[i];
        }
    }
    strided(x, &out.shape, 0, &strides)
}

/// Whether `broadcast_in_dim(x, dims) : out`, read flat, repeats `x`'s elements end to
/// end: a single element broadcast anywhere, or an array broadcast along new leading axes
/// (its axes are the result's trailing ones, at the same sizes). Such a broadcast is a
/// copy loop, and a fused step rebuilds it per tile instead of reading it from memory.
pub fn repeats_operand(x: &TensorType, dims: &[usize], out: &TensorType) -> bool {
    let lead = out.rank().saturating_sub(x.rank());
    x.num_elements() == 1
        || (dims.iter().copied().eq(lead..out.rank()) && x.shape[..] == out.shape[lead..])
}

pub fn pad(
    x: &Tensor,
    value: &Tensor,
    low: &[i64],
    interior: &[usize],
    out: &TensorType,
) -> Storage {
    let fill = fill_of(&value.data);
    map_storage!(&*x.data, v => pad_into(v, x.shape(), FromFill::from_fill(&fill), low, interior, &out.shape))
}

/// The padded array: `value` everywhere, then each operand row written where the low and
/// interior padding put it (a contiguous copy where the row has no interior padding);
/// elements a negative padding crops are skipped. Runs over the operand, so no element
/// index is divided back into coordinates.
fn pad_into<T: Pooled + Copy>(
    v: &[T],
    shape: &[usize],
    value: T,
    low: &[i64],
    interior: &[usize],
    out_shape: &[usize],
) -> Vec<T> {
    let mut res = pool::filled(out_shape.iter().product(), value);
    let rank = shape.len();
    if rank == 0 {
        res.copy_from_slice(v);
        return res;
    }
    let os = row_major_strides(out_shape);
    let last = rank - 1;
    let (n, step) = (shape[last], interior[last] as i64 + 1);
    // The operand positions of the last axis that land inside the result.
    let inside = |i: usize| {
        let j = low[last] + i as i64 * step;
        j >= 0 && j < out_shape[last] as i64
    };
    let Some(first) = (0..n).find(|&i| inside(i)) else {
        return res;
    };
    let end = (first..n).find(|&i| !inside(i)).unwrap_or(n);
    for_each_index(&shape[..last], |row, idx| {
        let mut at = 0i64;
        for d in 0..last {
            let j = low[d] + idx[d] as i64 * (interior[d] as i64 + 1);
            if j < 0 || j >= out_shape[d] as i64 {
                return;
            }
            at += j * os[d] as i64;
        }
        let src = &v[row * n + first..row * n + end];
        let start = (at + low[last] + first as i64 * step) as usize;
        if step == 1 {
            res[start..start + src.len()].copy_from_slice(src);
        } else {
            for (k, x) in src.iter().enumerate() {
                res[start + k * step as usize] = *x;
            }
        }
    });
    res
}

/// The pad value, carried generically: `cast_fill` reads it back at the right type.
enum Fill {
    B(bool),
    I(i32),
    U(u32),
    F(f32),
    D(f64),
}

fn fill_of(s: &Storage) -> Fill {
    match s {
        Storage::Bool(v) => Fill::B(v[0]),
        Storage::I32(v) => Fill::I(v[0]),
        Storage::U32(v) => Fill::U(v[0]),
        Storage::F32(v) => Fill::F(v[0]),
        Storage::F64(v) => Fill::D(v[0]),
    }
}

trait FromFill {
    fn from_fill(f: &Fill) -> Self;
}
macro_rules! from_fill {
    ($t:ty, $v:ident) => {
        impl FromFill for $t {
            fn from_fill(f: &Fill) -> Self {
                match f {
                    Fill::$v(x) => *x,
                    _ => unreachable!("validation: pad value has the operand dtype"),
                }
            }
        }
    };
}
from_fill!(bool, B);
from_fill!(i32, I);
from_fill!(u32, U);
from_fill!(f32, F);
from_fill!(f64, D);

pub fn concatenate(xs: &[&Tensor], dim: usize, out: &TensorType) -> Storage {
    let outer: usize = out.shape[..dim].iter().product();
    let inner: usize = out.shape[dim + 1..].iter().product();
    let mut res = Storage::zeros(out.dtype, 0);
    for o in 0..outer {
        for x in xs {
            let chunk = x.shape()[dim] * inner;
            res.extend_from(&x.data, o * chunk, (o + 1) * chunk);
        }
    }
    res
}

pub fn iota(dim: usize, out: &TensorType) -> Storage {
    let outer: usize = out.shape[..dim].iter().product();
    let inner: usize = out.shape[dim + 1..].iter().product();
    let n = out.shape[dim];
    // Runs of `inner` equal counts, 0..n, repeated `outer` times.
    fn runs<T: Pooled + Copy>(
        outer: usize,
        n: usize,
        inner: usize,
        at: impl Fn(usize) -> T,
    ) -> Vec<T> {
        let mut v = pool::take(outer * n * inner);
        for _ in 0..outer {
            for i in 0..n {
                v.extend(std::iter::repeat_n(at(i), inner));
            }
        }
        v
    }
    match out.dtype {
        DType::I32 => Storage::I32(runs(outer, n, inner, |i| i as i32)),
        DType::U32 => Storage::U32(runs(outer, n, inner, |i| i as u32)),
        DType::F32 => Storage::F32(runs(outer, n, inner, |i| i as f32)),
        DType::F64 => Storage::F64(runs(outer, n, inner, |i| i as f64)),
        DType::Bool => unreachable!("validation rejects bool iota"),
    }
}

/// Start indices clamped into `[0, dim - size]`, as XLA's dynamic slices do.
fn clamped_starts(starts: &[&Tensor], dims: &[usize], sizes: &[usize]) -> Vec<usize> {
    starts
        .iter()
        .zip(dims.iter().zip(sizes))
        .map(|(s, (d, z))| s.data.scalar_i64().clamp(0, (*d - *z) as i64) as usize)
        .collect()
}

pub fn dynamic_slice(x: &Tensor, starts: &[&Tensor], out: &TensorType) -> Storage {
    let st = clamped_starts(starts, x.shape(), &out.shape);
    slice(x, &st, &vec![1; st.len()], out)
}

/// Writes `update` into `x` at the clamped starts. Takes `x` by value: when its storage is
/// not shared (the value dies here) the write happens in place, so a loop filling an array
/// one slice per iteration does not copy the whole array each time.
pub fn dynamic_update_slice(x: Tensor, update: &Tensor, starts: &[&Tensor]) -> Tensor {
    let st = clamped_starts(starts, x.shape(), update.shape());
    let s = row_major_strides(x.shape());
    let mut targets = pool::take::<usize>(update.ty.num_elements());
    for_each_index(update.shape(), |_, idx| {
        targets.push(
            idx.iter()
                .zip(&st)
                .zip(&s)
                .map(|((i, a), b)| (i + a) * b)
                .sum::<usize>(),
        );
    });
    let Tensor { ty, mut data } = x;
    write_at(std::sync::Arc::make_mut(&mut data), &update.data, &targets);
    pool::give(targets);
    Tensor { ty, data }
}

fn write_at(dst: &mut Storage, src: &Storage, targets: &[usize]) {
    match (dst, src) {
        (Storage::Bool(d), Storage::Bool(s)) => targets.iter().zip(s).for_each(|(t, v)| d[*t] = *v),
        (Storage::I32(d), Storage::I32(s)) => targets.iter().zip(s).for_each(|(t, v)| d[*t] = *v),
        (Storage::U32(d), Storage::U32(s)) => targets.iter().zip(s).for_each(|(t, v)| d[*t] = *v),
        (Storage::F32(d), Storage::F32(s)) => targets.iter().zip(s).for_each(|(t, v)| d[*t] = *v),
        (Storage::F64(d), Storage::F64(s)) => targets.iter().zip(s).for_each(|(t, v)| d[*t] = *v),
        _ => unreachable!("validation guarantees matching dtypes"),
    }
}

fn index_vector(indices: &Tensor, batch_lin: usize, nvec: usize) -> Vec<i64> {
    match &*indices.data {
        Storage::I32(v) => v[batch_lin * nvec..(batch_lin + 1) * nvec]
            .iter()
            .map(|&a| a as i64)
            .collect(),
        _ => unreachable!("validation: indices are i32"),
    }
}

/// XLA gather with clamped start indices.
pub fn gather(x: &Tensor, indices: &Tensor, g: &GatherDims, out: &TensorType) -> Storage {
    let s = row_major_strides(x.shape());
    let nvec = *indices.shape().last().unwrap_or(&0);
    let batch_shape = &indices.shape()[..indices.ty.rank() - 1];
    let batch_strides = row_major_strides(batch_shape);
    let window_dims: Vec<usize> = (0..x.ty.rank())
        .filter(|d| !g.collapsed_slice_dims.contains(d))
        .collect();
    let mut map = pool::take::<usize>(out.num_elements());
    for_each_index(&out.shape, |_, idx| {
        let (mut b_lin, mut bi) = (0usize, 0usize);
        let mut offsets = Vec::with_capacity(g.offset_dims.len());
        for (d, &i) in idx.iter().enumerate() {
            if g.offset_dims.contains(&d) {
                offsets.push(i);
            } else {
                b_lin += i * batch_strides[bi];
                bi += 1;
            }
        }
        let start = index_vector(indices, b_lin, nvec);
        let mut full = vec![0usize; x.ty.rank()];
        for (k, &od) in g.start_index_map.iter().enumerate() {
            let hi = (x.shape()[od] - g.slice_sizes[od]) as i64;
            full[od] = start[k].clamp(0, hi) as usize;
        }
        for (w, &od) in window_dims.iter().enumerate() {
            full[od] += offsets[w];
        }
        map.push(full.iter().zip(&s).map(|(a, b)| a * b).sum());
    });
    let res = x.data.take(&map);
    pool::give(map);
    res
}

/// XLA scatter-add. Updates are applied in row-major order of `updates` (deterministic); a
/// window that does not lie wholly inside the operand is dropped.
pub fn scatter_add(x: Tensor, indices: &Tensor, updates: &Tensor, sd: &ScatterDims) -> Tensor {
    let s = row_major_strides(x.shape());
    let nvec = *indices.shape().last().unwrap_or(&0);
    let batch_shape = &indices.shape()[..indices.ty.rank() - 1];
    let batch_strides = row_major_strides(batch_shape);
    let window_operand_dims: Vec<usize> = (0..x.ty.rank())
        .filter(|d| !sd.inserted_window_dims.contains(d))
        .collect();
    let mut window_size = vec![1usize; x.ty.rank()];
    for (w, &od) in sd.update_window_dims.iter().zip(&window_operand_dims) {
        window_size[od] = updates.shape()[*w];
    }
    let mut targets = pool::take::<usize>(updates.ty.num_elements());
    for_each_index(updates.shape(), |_, idx| {
        let (mut b_lin, mut bi) = (0usize, 0usize);
        let mut win = Vec::with_capacity(sd.update_window_dims.len());
        for (d, &i) in idx.iter().enumerate() {
            if sd.update_window_dims.contains(&d) {
                win.push(i);
            } else {
                b_lin += i * batch_strides[bi];
                bi += 1;
            }
        }
        let start = index_vector(indices, b_lin, nvec);
        let mut full = vec![0i64; x.ty.rank()];
        for (k, &od) in sd.scatter_dims_to_operand_dims.iter().enumerate() {
            full[od] = start[k];
        }
        let in_bounds = (0..x.ty.rank())
            .all(|d| full[d] >= 0 && full[d] + window_size[d] as i64 <= x.shape()[d] as i64);
        if !in_bounds {
            targets.push(usize::MAX);
            return;
        }
        for (w, &od) in window_operand_dims.iter().enumerate() {
            full[od] += win[w] as i64;
        }
        targets.push(full.iter().zip(&s).map(|(a, b)| *a as usize * b).sum());
    });
    let Tensor { ty, mut data } = x;
    let res = std::sync::Arc::make_mut(&mut data);
    fn add_at<T: Copy>(d: &mut [T], s: &[T], t: &[usize], add: fn(T, T) -> T) {
        for (ti, v) in t.iter().zip(s) {
            if *ti != usize::MAX {
                d[*ti] = add(d[*ti], *v);
            }
        }
    }
    match (res, &*updates.data) {
        (Storage::F32(d), Storage::F32(u)) => add_at(d, u, &targets, |a, b| a + b),
        (Storage::F64(d), Storage::F64(u)) => add_at(d, u, &targets, |a, b| a + b),
        (Storage::I32(d), Storage::I32(u)) => add_at(d, u, &targets, i32::wrapping_add),
        (Storage::U32(d), Storage::U32(u)) => add_at(d, u, &targets, u32::wrapping_add),
        _ => unreachable!("validation: scatter_add is numeric"),
    }
    pool::give(targets);
    Tensor { ty, data }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pad` element by element from the definition: result element `j` on each axis is
    /// operand element `(j - low) / (interior + 1)` where that divides exactly and lies
    /// inside the operand, else the padding value.
    fn by_definition(
        x: &[i32],
        shape: &[usize],
        low: &[i64],
        interior: &[usize],
        out: &[usize],
    ) -> Vec<i32> {
        let s = row_major_strides(shape);
        let mut res = Vec::new();
        for_each_index(out, |_, idx| {
            let mut src = Some(0usize);
            for d in 0..idx.len() {
                let j = idx[d] as i64 - low[d];
                let step = interior[d] as i64 + 1;
                if j < 0 || j % step != 0 || j / step >= shape[d] as i64 {
                    src = None;
                } else if let Some(k) = src.as_mut() {
                    *k += (j / step) as usize * s[d];
                }
            }
            res.push(src.map_or(-1, |k| x[k]));
        });
        res
    }

    /// Low and high padding positive, negative (crops) and zero, with and without interior
    /// padding, over ranks 1 to 3.
    #[test]
    fn pad_puts_every_element_where_the_definition_does() {
        // (operand shape, low, high, interior)
        type Case<'a> = (&'a [usize], &'a [i64], &'a [i64], &'a [usize]);
        let cases: [Case; 7] = [
            (&[5], &[2], &[1], &[0]),
            (&[5], &[-2], &[3], &[1]),
            (&[4, 3], &[1, 1], &[1, 1], &[0, 0]),
            (&[4, 3], &[-1, 2], &[0, -2], &[0, 2]),
            (&[3, 4], &[0, -3], &[2, 1], &[1, 0]),
            (&[2, 3, 4], &[1, 0, -1], &[-1, 2, 1], &[1, 0, 1]),
            (&[3, 2], &[-7, 0], &[4, 0], &[0, 0]),
        ];
        for (shape, low, high, interior) in cases {
            let out: Vec<usize> = (0..shape.len())
                .map(|d| {
                    let n = shape[d] as i64;
                    (low[d] + high[d] + n + (n - 1) * interior[d] as i64) as usize
                })
                .collect();
            let n: usize = shape.iter().product();
            let x: Vec<i32> = (0..n as i32).collect();
            let got = pad_into(&x, shape, -1, low, interior, &out);
            let want = by_definition(&x, shape, low, interior, &out);
            assert_eq!(
                got, want,
                "shape {shape:?}, low {low:?}, high {high:?}, interior {interior:?}"
            );
        }
    }
}
