//! Data movement: broadcasts, pads, iota, static and dynamic slices, gather and scatter-add,
//! with XLA's index rules (clamped starts, dropped out-of-bounds scatter windows) made
//! explicit, since MLX neither clamps nor checks indices.

use crate::elementwise::scalar;
use crate::shim::{Binary, MlxArray};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::{GatherDims, ScatterDims};
use quabla_abi::{DType, TensorType};

type R = Result<MlxArray, AbiError>;

/// Counts along `dim` of `ty`.
pub fn iota(dim: usize, ty: &TensorType) -> R {
    let n = ty.shape[dim];
    let counts = if matches!(ty.dtype, DType::I32 | DType::U32) {
        MlxArray::arange(n, ty.dtype)?
    } else {
        MlxArray::arange(n, DType::I32)?.astype(ty.dtype)?
    };
    let mut shape = vec![1; ty.shape.len()];
    shape[dim] = n;
    counts.reshape(&shape)?.broadcast_to(&ty.shape)
}

/// Operand axis `i` (of length `from[i]`) becomes result axis `dims[i]`; the others repeat.
pub fn broadcast_in_dim(x: &MlxArray, from: &[usize], dims: &[usize], out: &TensorType) -> R {
    // Order the operand's axes by where they land, then give the other axes length 1.
    let mut order: Vec<usize> = (0..dims.len()).collect();
    order.sort_by_key(|&i| dims[i]);
    let mut lifted = vec![1; out.shape.len()];
    for &i in &order {
        lifted[dims[i]] = from[i];
    }
    x.transpose(&order)?
        .reshape(&lifted)?
        .broadcast_to(&out.shape)
}

/// XLA's pad: `interior` copies of `value` between neighbours, then `low`/`high` edges, a
/// negative edge cropping instead.
pub fn pad(
    x: &MlxArray,
    value: &MlxArray,
    ty: &TensorType,
    low: &[i64],
    high: &[i64],
    interior: &[usize],
) -> R {
    let mut cur = x.view(ty.dtype)?;
    let mut shape = ty.shape.clone();
    for (axis, &k) in interior.iter().enumerate() {
        let n = shape[axis];
        if k == 0 || n < 2 {
            continue;
        }
        // [n] -> [n, 1 + k] (each element, then k fills) -> [n (1 + k)] -> drop the last k.
        let mut split = shape.clone();
        split.insert(axis + 1, 1);
        let mut fill_shape = split.clone();
        fill_shape[axis + 1] = k;
        let fill = value.broadcast_to(&fill_shape)?;
        let joined = MlxArray::concatenate(&[&cur.reshape(&split)?, &fill], axis + 1)?;
        let mut flat = shape.clone();
        flat[axis] = n * (1 + k);
        let grown = joined.reshape(&flat)?;
        let mut stop = flat.clone();
        stop[axis] = n + (n - 1) * k;
        cur = grown.slice(&vec![0; flat.len()], &stop, &vec![1; flat.len()])?;
        shape = stop;
    }
    let grow = |v: &[i64]| v.iter().map(|&e| e.max(0) as usize).collect::<Vec<_>>();
    let (lo, hi) = (grow(low), grow(high));
    if lo.iter().chain(&hi).any(|&e| e > 0) {
        cur = cur.pad(&lo, &hi, value)?;
        for a in 0..shape.len() {
            shape[a] += lo[a] + hi[a];
        }
    }
    if low.iter().chain(high).any(|&e| e < 0) {
        let start: Vec<usize> = low.iter().map(|&e| (-e).max(0) as usize).collect();
        let stop: Vec<usize> = (0..shape.len())
            .map(|a| shape[a] - (-high[a]).max(0) as usize)
            .collect();
        cur = cur.slice(&start, &stop, &vec![1; shape.len()])?;
    }
    Ok(cur)
}

/// An i32 start for each axis, clamped to `[0, dim - size]` and stacked as MLX wants.
fn clamped_starts(starts: &[&MlxArray], dims: &[usize], sizes: &[usize]) -> R {
    let mut parts = Vec::with_capacity(starts.len());
    for (k, s) in starts.iter().enumerate() {
        let hi = scalar(DType::I32, (dims[k] - sizes[k]) as f64)?;
        let c = s
            .binary(Binary::Maximum, &scalar(DType::I32, 0.0)?)?
            .binary(Binary::Minimum, &hi)?;
        parts.push(c.reshape(&[1])?);
    }
    MlxArray::concatenate(&parts.iter().collect::<Vec<_>>(), 0)
}

pub fn dynamic_slice(x: &MlxArray, starts: &[&MlxArray], ty: &TensorType, sizes: &[usize]) -> R {
    if ty.shape.is_empty() {
        return x.view(ty.dtype);
    }
    let start = clamped_starts(starts, &ty.shape, sizes)?;
    let axes: Vec<usize> = (0..ty.shape.len()).collect();
    x.dynamic_slice(&start, &axes, sizes)
}

pub fn dynamic_update_slice(
    x: &MlxArray,
    update: &MlxArray,
    starts: &[&MlxArray],
    ty: &TensorType,
    update_shape: &[usize],
) -> R {
    if ty.shape.is_empty() {
        return update.view(ty.dtype);
    }
    let start = clamped_starts(starts, &ty.shape, update_shape)?;
    let axes: Vec<usize> = (0..ty.shape.len()).collect();
    x.dynamic_update_slice(update, &start, &axes)
}

/// Index `k` of the index vectors: `indices[..., k]` with the vector axis dropped.
fn index_column(indices: &MlxArray, shape: &[usize], k: usize) -> R {
    let r = shape.len();
    let mut start = vec![0; r];
    let mut stop = shape.to_vec();
    start[r - 1] = k;
    stop[r - 1] = k + 1;
    indices
        .slice(&start, &stop, &vec![1; r])?
        .reshape(&shape[..r - 1])
}

/// XLA's gather (index vectors in the indices' last axis, starts clamped so each slice
/// fits) through MLX's gather, whose result is the batch shape then one axis per operand
/// axis; collapsed axes are then dropped and offset axes moved to their places.
pub fn gather(
    x: &MlxArray,
    indices: &MlxArray,
    x_ty: &TensorType,
    idx_shape: &[usize],
    d: &GatherDims,
    out: &TensorType,
) -> R {
    let batch = &idx_shape[..idx_shape.len() - 1];
    let nb = batch.len();
    let rank = x_ty.shape.len();
    let sliced = if d.start_index_map.is_empty() {
        let whole = x.slice(&vec![0; rank], &d.slice_sizes, &vec![1; rank])?;
        let full: Vec<usize> = batch.iter().chain(&d.slice_sizes).copied().collect();
        let mut lifted = vec![1; nb];
        lifted.extend(&d.slice_sizes);
        whole.reshape(&lifted)?.broadcast_to(&full)?
    } else {
        let mut cols = Vec::new();
        for (k, &axis) in d.start_index_map.iter().enumerate() {
            let hi = (x_ty.shape[axis] - d.slice_sizes[axis]) as f64;
            let c = index_column(indices, idx_shape, k)?
                .binary(Binary::Maximum, &scalar(DType::I32, 0.0)?)?
                .binary(Binary::Minimum, &scalar(DType::I32, hi)?)?;
            cols.push(c);
        }
        let refs: Vec<&MlxArray> = cols.iter().collect();
        x.gather(&refs, &d.start_index_map, &d.slice_sizes)?
    };
    // Drop the collapsed axes: [batch..., kept slice axes...].
    let kept: Vec<usize> = (0..rank)
        .filter(|a| !d.collapsed_slice_dims.contains(a))
        .map(|a| d.slice_sizes[a])
        .collect();
    let squeezed: Vec<usize> = batch.iter().chain(&kept).copied().collect();
    let y = sliced.reshape(&squeezed)?;
    // Output axis p is offset axis j when p = offset_dims[j], else the next batch axis.
    let mut perm = Vec::with_capacity(out.shape.len());
    let mut next_batch = 0;
    for p in 0..out.shape.len() {
        match d.offset_dims.iter().position(|&o| o == p) {
            Some(j) => perm.push(nb + j),
            None => {
                perm.push(next_batch);
                next_batch += 1;
            }
        }
    }
    y.transpose(&perm)
}

/// XLA's scatter-add (a window that does not lie wholly inside the operand is dropped)
/// through MLX's scatter_add, which wants updates shaped as the batch then one axis per
/// operand axis and does not check bounds: dropped windows are sent to the origin with
/// additive identities (`-0.0` for floats keeps `-0` operands intact).
pub fn scatter_add(
    x: &MlxArray,
    indices: &MlxArray,
    updates: &MlxArray,
    x_ty: &TensorType,
    idx_shape: &[usize],
    upd_shape: &[usize],
    d: &ScatterDims,
) -> R {
    if x_ty.num_elements() == 0 {
        // Every window is dropped; MLX refuses updates larger than the operand.
        return scalar(x_ty.dtype, 0.0)?.broadcast_to(&x_ty.shape);
    }
    let rank = x_ty.shape.len();
    let scatter_axes: Vec<usize> = (0..upd_shape.len())
        .filter(|a| !d.update_window_dims.contains(a))
        .collect();
    let batch: Vec<usize> = scatter_axes.iter().map(|&a| upd_shape[a]).collect();
    // The window's extent along every operand axis (1 on the inserted ones).
    let mut window = vec![1; rank];
    let window_axes: Vec<usize> = (0..rank)
        .filter(|a| !d.inserted_window_dims.contains(a))
        .collect();
    for (j, &a) in window_axes.iter().enumerate() {
        window[a] = upd_shape[d.update_window_dims[j]];
    }
    let perm: Vec<usize> = scatter_axes
        .iter()
        .chain(&d.update_window_dims)
        .copied()
        .collect();
    let full: Vec<usize> = batch.iter().chain(&window).copied().collect();
    let upd = updates.transpose(&perm)?.reshape(&full)?;
    let zero = match x_ty.dtype {
        DType::F32 | DType::F64 => scalar(x_ty.dtype, -0.0)?,
        dt => scalar(dt, 0.0)?,
    };
    if d.scatter_dims_to_operand_dims.is_empty() {
        // Every window starts at the origin: their sum, padded out to the operand.
        let batch_axes: Vec<usize> = (0..batch.len()).collect();
        let total = upd.reduce(crate::shim::Fold::Sum, &batch_axes)?;
        let high: Vec<usize> = (0..rank).map(|a| x_ty.shape[a] - window[a]).collect();
        return x.binary(Binary::Add, &total.pad(&vec![0; rank], &high, &zero)?);
    }
    let mut cols = Vec::new();
    let mut inside = scalar(DType::Bool, 1.0)?;
    for (k, &axis) in d.scatter_dims_to_operand_dims.iter().enumerate() {
        let c = index_column(indices, idx_shape, k)?;
        let hi = (x_ty.shape[axis] as f64) - (window[axis] as f64);
        let ok = c.binary(Binary::Ge, &scalar(DType::I32, 0.0)?)?.binary(
            Binary::LogicalAnd,
            &c.binary(Binary::Le, &scalar(DType::I32, hi)?)?,
        )?;
        inside = inside.binary(Binary::LogicalAnd, &ok)?;
        cols.push(c);
    }
    let origin = scalar(DType::I32, 0.0)?;
    let cols = cols
        .iter()
        .map(|c| inside.select(c, &origin))
        .collect::<Result<Vec<_>, _>>()?;
    let mut lifted: Vec<usize> = batch.clone();
    lifted.extend(std::iter::repeat_n(1, rank));
    let keep = inside.broadcast_to(&batch)?.reshape(&lifted)?;
    let upd = keep.select(&upd, &zero)?;
    let refs: Vec<&MlxArray> = cols.iter().collect();
    x.scatter_add(&refs, &upd, &d.scatter_dims_to_operand_dims)
}
