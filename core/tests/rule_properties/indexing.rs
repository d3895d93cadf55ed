//! Generators for the data-dependent indexing ops: every dimension-number placement XLA
//! allows, and indices that run past the edges (gather and dynamic slices clamp, scatter
//! drops windows that do not fit).

use super::draw::*;
use quabla::qir::{GatherDims, Op, ScatterDims};
use quabla::DType;

pub fn gather(rng: &mut Rng, dt: DType) -> Option<Case> {
    let dims = rng.dims(1, 3, 2, 4);
    let r = dims.len();
    let m = rng.size(1, r);
    let start_index_map = rng.perm(r)[..m].to_vec();
    let collapsed_slice_dims = rng.subset(r);
    let slice_sizes: Vec<usize> = (0..r)
        .map(|d| {
            if collapsed_slice_dims.contains(&d) {
                1
            } else {
                rng.size(1, dims[d])
            }
        })
        .collect();
    let batch = rng.dims(0, 2, 1, 3);
    let offsets = r - collapsed_slice_dims.len();
    let out_rank = batch.len() + offsets;
    let mut offset_dims = rng.perm(out_rank)[..offsets].to_vec();
    offset_dims.sort_unstable();
    let mut idx_shape = batch;
    idx_shape.push(m);
    let most = *dims.iter().max()? as i64;
    let g = GatherDims {
        offset_dims,
        collapsed_slice_dims,
        start_index_map,
        slice_sizes,
    };
    single_case(
        format!("gather {dims:?} indices {idx_shape:?} {g:?}"),
        Op::Gather(g),
        vec![real(&dims, -2.0, 2.0), index(&idx_shape, -1, most)],
        dt,
        vec![],
    )
}

pub fn scatter_add(rng: &mut Rng, dt: DType) -> Option<Case> {
    let dims = rng.dims(1, 3, 2, 4);
    let r = dims.len();
    let m = rng.size(1, r);
    let scatter_dims_to_operand_dims = rng.perm(r)[..m].to_vec();
    let inserted_window_dims = rng.subset(r);
    let window: Vec<usize> = (0..r)
        .filter(|d| !inserted_window_dims.contains(d))
        .map(|d| rng.size(1, dims[d]))
        .collect();
    let batch = rng.dims(0, 2, 1, 3);
    let upd_rank = batch.len() + window.len();
    let mut update_window_dims = rng.perm(upd_rank)[..window.len()].to_vec();
    update_window_dims.sort_unstable();
    let (mut wi, mut bi) = (0, 0);
    let upd_shape: Vec<usize> = (0..upd_rank)
        .map(|d| {
            if update_window_dims.contains(&d) {
                wi += 1;
                window[wi - 1]
            } else {
                bi += 1;
                batch[bi - 1]
            }
        })
        .collect();
    let mut idx_shape = batch;
    idx_shape.push(m);
    let most = *dims.iter().max()? as i64;
    let s = ScatterDims {
        update_window_dims,
        inserted_window_dims,
        scatter_dims_to_operand_dims,
    };
    single_case(
        format!("scatter_add {dims:?} indices {idx_shape:?} updates {upd_shape:?} {s:?}"),
        Op::ScatterAdd(s),
        vec![
            real(&dims, -2.0, 2.0),
            index(&idx_shape, -1, most - 1),
            real(&upd_shape, -2.0, 2.0),
        ],
        dt,
        vec![],
    )
}

pub fn dynamic_slice(rng: &mut Rng, dt: DType) -> Option<Case> {
    let dims = rng.dims(1, 3, 1, 4);
    let sizes: Vec<usize> = dims.iter().map(|&d| rng.size(1, d)).collect();
    let mut args = vec![real(&dims, -2.0, 2.0)];
    args.extend(dims.iter().map(|&d| index(&[], -1, d as i64)));
    single_case(
        format!("dynamic_slice {dims:?} sizes {sizes:?}"),
        Op::DynamicSlice { sizes },
        args,
        dt,
        vec![],
    )
}

pub fn dynamic_update_slice(rng: &mut Rng, dt: DType) -> Option<Case> {
    let dims = rng.dims(1, 3, 1, 4);
    let upd: Vec<usize> = dims.iter().map(|&d| rng.size(1, d)).collect();
    let mut args = vec![real(&dims, -2.0, 2.0), real(&upd, -2.0, 2.0)];
    args.extend(dims.iter().map(|&d| index(&[], -1, d as i64)));
    single_case(
        format!("dynamic_update_slice {dims:?} update {upd:?}"),
        Op::DynamicUpdateSlice,
        args,
        dt,
        vec![],
    )
}
