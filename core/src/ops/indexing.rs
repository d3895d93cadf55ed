//! Indexing: gather/scatter-add and dynamic slices. Out-of-bounds gather indices clamp;
//! out-of-bounds scatter updates are dropped (JAX's defaults).

use super::apply1;
use super::shape::axis_index;
use crate::array::Array;
use crate::error::Result;
use quabla_abi::qir::{GatherDims, Op, ScatterDims};
use quabla_abi::DType;

impl Array {
    /// XLA gather (the index vector is the last dim of `indices`).
    ///
    /// ```no_run
    /// # use quabla::{qir::GatherDims, Array};
    /// // Rows 2 and 0 of a 3x2 matrix.
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])?;
    /// let rows = Array::from_slice(&[2i32, 0], &[2, 1])?;
    /// let dims = GatherDims {
    ///     offset_dims: vec![1],
    ///     collapsed_slice_dims: vec![0],
    ///     start_index_map: vec![0],
    ///     slice_sizes: vec![1, 2],
    /// };
    /// assert_eq!(x.gather(&rows, dims)?.to_vec::<f32>()?, [5.0, 6.0, 1.0, 2.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn gather(&self, indices: &Array, dims: GatherDims) -> Result<Array> {
        apply1(
            Op::Gather(dims),
            &[self, &indices.astype(DType::I32)?],
            vec![],
        )
    }

    /// XLA scatter-add (the index vector is the last dim of `indices`).
    ///
    /// ```no_run
    /// # use quabla::{qir::ScatterDims, Array};
    /// // Adds 1 at positions 0, 2 and 2 of a 4-vector: [1, 0, 2, 0].
    /// let x = Array::from_slice(&[0.0f32; 4], &[4])?;
    /// let at = Array::from_slice(&[0i32, 2, 2], &[3, 1])?;
    /// let ones = Array::from_slice(&[1.0f32; 3], &[3])?;
    /// let dims = ScatterDims {
    ///     update_window_dims: vec![],
    ///     inserted_window_dims: vec![0],
    ///     scatter_dims_to_operand_dims: vec![0],
    /// };
    /// assert_eq!(x.scatter_add(&at, &ones, dims)?.to_vec::<f32>()?, [1.0, 0.0, 2.0, 0.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn scatter_add(
        &self,
        indices: &Array,
        updates: &Array,
        dims: ScatterDims,
    ) -> Result<Array> {
        apply1(
            Op::ScatterAdd(dims),
            &[
                self,
                &indices.astype(DType::I32)?,
                &updates.astype(self.dtype())?,
            ],
            vec![],
        )
    }

    /// `numpy.take(x, indices, axis)`: picks whole slices along `axis`; indices clamp.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[10.0f32, 20.0, 30.0], &[3]).unwrap();
    /// let i = Array::from_slice(&[2i32, 0, 7], &[3]).unwrap();
    /// assert_eq!(x.take(&i, 0).unwrap().to_vec::<f32>().unwrap(), vec![30.0, 10.0, 30.0]);
    /// ```
    pub fn take(&self, indices: &Array, axis: isize) -> Result<Array> {
        let axis = axis_index(axis, self.ndim())?;
        let idx = indices.expand_dims(-1)?;
        let nb = indices.ndim();
        let mut slice_sizes = self.shape().to_vec();
        slice_sizes[axis] = 1;
        // Output: indices' dims replace `axis`; the other operand dims keep their order.
        let offset_dims: Vec<usize> = (0..self.ndim() - 1)
            .map(|d| if d < axis { d } else { d + nb })
            .collect();
        self.gather(
            &idx,
            GatherDims {
                offset_dims,
                collapsed_slice_dims: vec![axis],
                start_index_map: vec![axis],
                slice_sizes,
            },
        )
    }

    /// A slice of `sizes` starting at traced or concrete scalar `starts` (clamped to fit).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[0.0f32, 1.0, 2.0, 3.0, 4.0], &[5])?;
    /// let i = Array::scalar(3i32)?;
    /// // Starts at 3, clamped to 2 so the window of 3 fits: [2, 3, 4].
    /// assert_eq!(x.dynamic_slice(&[&i], &[3])?.to_vec::<f32>()?, [2.0, 3.0, 4.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn dynamic_slice(&self, starts: &[&Array], sizes: &[usize]) -> Result<Array> {
        if starts.len() != self.ndim() {
            return Err(crate::Error::shape(format!(
                "dynamic_slice needs {} start indices, got {}",
                self.ndim(),
                starts.len()
            )));
        }
        let mut args = vec![self.clone()];
        for s in starts {
            args.push(s.astype(DType::I32)?.reshape(&[])?);
        }
        let refs: Vec<&Array> = args.iter().collect();
        apply1(
            Op::DynamicSlice {
                sizes: sizes.to_vec(),
            },
            &refs,
            vec![],
        )
    }

    /// Writes `update` at `starts` (clamped to fit).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[0.0f32; 4], &[4])?;
    /// let u = Array::from_slice(&[7.0f32, 8.0], &[2])?;
    /// let y = x.dynamic_update_slice(&u, &[&Array::scalar(1i32)?])?;
    /// assert_eq!(y.to_vec::<f32>()?, [0.0, 7.0, 8.0, 0.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn dynamic_update_slice(&self, update: &Array, starts: &[&Array]) -> Result<Array> {
        if starts.len() != self.ndim() {
            return Err(crate::Error::shape(format!(
                "dynamic_update_slice needs {} start indices, got {}",
                self.ndim(),
                starts.len()
            )));
        }
        let mut args = vec![self.clone(), update.astype(self.dtype())?];
        for s in starts {
            args.push(s.astype(DType::I32)?.reshape(&[])?);
        }
        let refs: Vec<&Array> = args.iter().collect();
        apply1(Op::DynamicUpdateSlice, &refs, vec![])
    }
}

// ---- AD rules -------------------------------------------------------------------------

use crate::ad::rules::{no_rule, JvpArgs, Primal, TransposeArgs};
use crate::ops::{constant_like, zeros_typed};
use quabla_abi::{HostArray, TensorType};

fn or_zeros(t: &Option<Array>, like: &Array) -> Result<Array> {
    t.clone().map(Ok).unwrap_or_else(|| like.zeros_like())
}

/// An i32 vector constant of `values` next to `like`, broadcast along the index vector dim.
fn index_bounds(like: &Array, values: &[i64]) -> Result<Array> {
    let v: Vec<i32> = values.iter().map(|&x| x as i32).collect();
    let host = HostArray::from_slice(vec![v.len()], &v).map_err(crate::Error::Internal)?;
    let c = constant_like(like, host)?;
    c.broadcast_in_dim(like.shape(), &[like.ndim() - 1])
}

pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    let (p, t) = (a.primals, a.tangents);
    let op = a.node.op.clone();
    let out = match &a.node.op {
        Op::Gather(_) | Op::DynamicSlice { .. } => match &t[0] {
            Some(tx) => {
                let mut args: Vec<&Array> = vec![tx];
                args.extend(&p[1..]);
                Some(apply1(op, &args, vec![])?)
            }
            None => None,
        },
        Op::ScatterAdd(_) => {
            if t[0].is_none() && t[2].is_none() {
                None
            } else {
                Some(apply1(
                    op,
                    &[&or_zeros(&t[0], &p[0])?, &p[1], &or_zeros(&t[2], &p[2])?],
                    vec![],
                )?)
            }
        }
        Op::DynamicUpdateSlice => {
            if t[0].is_none() && t[1].is_none() {
                None
            } else {
                let (tx, tu) = (or_zeros(&t[0], &p[0])?, or_zeros(&t[1], &p[1])?);
                let mut args: Vec<&Array> = vec![&tx, &tu];
                args.extend(&p[2..]);
                Some(apply1(op, &args, vec![])?)
            }
        }
        op => return no_rule("jvp", op),
    };
    Ok(vec![out])
}

pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let n = a.operands.len();
    let Some(ct) = &a.cts[0] else {
        return Ok(vec![None; n]);
    };
    let name = a.node.op.name();
    let known = |i: usize| a.operands[i].known(name);
    let mut out: Vec<Option<Array>> = vec![None; n];
    match &a.node.op {
        Op::Gather(g) => {
            // Gather clamped the starts; scatter the cotangent at the same clamped starts.
            let x_ty = a.operands[0].ty();
            let idx = known(1)?;
            let hi: Vec<i64> = g
                .start_index_map
                .iter()
                .map(|&d| (x_ty.shape[d] - g.slice_sizes[d]) as i64)
                .collect();
            let clamped = idx.maximum(0)?.minimum(&index_bounds(idx, &hi)?)?;
            let dims = ScatterDims {
                update_window_dims: g.offset_dims.clone(),
                inserted_window_dims: g.collapsed_slice_dims.clone(),
                scatter_dims_to_operand_dims: g.start_index_map.clone(),
            };
            out[0] = Some(apply1(
                Op::ScatterAdd(dims),
                &[&zeros_typed(ct, x_ty)?, &clamped, ct],
                vec![],
            )?);
        }
        Op::ScatterAdd(s) => {
            if a.operands[0].is_linear() {
                out[0] = Some(ct.clone());
            }
            if a.operands[2].is_linear() {
                let idx = known(1)?;
                let u_ty = a.operands[2].ty().clone();
                let x_ty = a.operands[0].ty();
                let window_dims: Vec<usize> = (0..x_ty.rank())
                    .filter(|d| !s.inserted_window_dims.contains(d))
                    .collect();
                let mut slice_sizes = vec![1; x_ty.rank()];
                for (w, od) in s.update_window_dims.iter().zip(&window_dims) {
                    slice_sizes[*od] = u_ty.shape[*w];
                }
                // Windows the scatter dropped (not wholly inside) get no cotangent.
                let hi: Vec<i64> = s
                    .scatter_dims_to_operand_dims
                    .iter()
                    .map(|&d| (x_ty.shape[d] - slice_sizes[d]) as i64)
                    .collect();
                let inside = idx
                    .ge(0)?
                    .bitwise_and(&idx.le(&index_bounds(idx, &hi)?)?)?
                    .all(crate::Axes::Some(&[-1]), false)?;
                let dims = GatherDims {
                    offset_dims: s.update_window_dims.clone(),
                    collapsed_slice_dims: s.inserted_window_dims.clone(),
                    start_index_map: s.scatter_dims_to_operand_dims.clone(),
                    slice_sizes,
                };
                let g = apply1(Op::Gather(dims), &[ct, idx], vec![])?;
                let scatter_dims: Vec<usize> = (0..u_ty.rank())
                    .filter(|d| !s.update_window_dims.contains(d))
                    .collect();
                let mask = inside.broadcast_in_dim(&u_ty.shape, &scatter_dims)?;
                out[2] = Some(mask.select(&g, 0.0)?);
            }
        }
        Op::DynamicSlice { .. } => {
            let x_ty = a.operands[0].ty();
            let mut args = vec![zeros_typed(ct, x_ty)?, ct.clone()];
            for i in 1..n {
                args.push(known(i)?.clone());
            }
            let refs: Vec<&Array> = args.iter().collect();
            out[0] = Some(apply1(Op::DynamicUpdateSlice, &refs, vec![])?);
        }
        Op::DynamicUpdateSlice => {
            let u_ty: TensorType = a.operands[1].ty().clone();
            let starts: Vec<Array> = (2..n).map(|i| known(i).cloned()).collect::<Result<_>>()?;
            if a.operands[0].is_linear() {
                let mut args = vec![ct.clone(), zeros_typed(ct, &u_ty)?];
                args.extend(starts.iter().cloned());
                let refs: Vec<&Array> = args.iter().collect();
                out[0] = Some(apply1(Op::DynamicUpdateSlice, &refs, vec![])?);
            }
            if matches!(a.operands[1], Primal::Linear(_)) {
                let mut args = vec![ct.clone()];
                args.extend(starts.iter().cloned());
                let refs: Vec<&Array> = args.iter().collect();
                out[1] = Some(apply1(
                    Op::DynamicSlice {
                        sizes: u_ty.shape.clone(),
                    },
                    &refs,
                    vec![],
                )?);
            }
        }
        op => return no_rule("transpose", op),
    }
    Ok(out)
}

/// An index vector `[i, idx...]` with `i` the batch position, for batched gathers/scatters.
fn with_batch_index(idx: &Array) -> Result<Array> {
    let mut shape = idx.shape().to_vec();
    let last = shape.len() - 1;
    shape[last] = 1;
    let iota = crate::ops::iota_like(idx, DType::I32, &shape, 0)?;
    Array::concatenate(&[&iota, idx], -1)
}

fn shift(v: &[usize]) -> Vec<usize> {
    v.iter().map(|d| d + 1).collect()
}

fn batch_gather(
    g: &GatherDims,
    x: &Array,
    xb: bool,
    idx: &Array,
    ib: bool,
    size: usize,
) -> Result<Array> {
    if !xb {
        // Only the indices are batched: their batch axis is one more index batch dim.
        let dims = GatherDims {
            offset_dims: shift(&g.offset_dims),
            ..g.clone()
        };
        return apply1(Op::Gather(dims), &[x, idx], vec![]);
    }
    let idx = crate::batching::with_batch(idx, ib, size)?;
    let dims = GatherDims {
        offset_dims: shift(&g.offset_dims),
        collapsed_slice_dims: [vec![0], shift(&g.collapsed_slice_dims)].concat(),
        start_index_map: [vec![0], shift(&g.start_index_map)].concat(),
        slice_sizes: [vec![1], g.slice_sizes.clone()].concat(),
    };
    apply1(Op::Gather(dims), &[x, &with_batch_index(&idx)?], vec![])
}

fn batch_scatter(s: &ScatterDims, x: &Array, idx: &Array, upd: &Array) -> Result<Array> {
    let dims = ScatterDims {
        update_window_dims: shift(&s.update_window_dims),
        inserted_window_dims: [vec![0], shift(&s.inserted_window_dims)].concat(),
        scatter_dims_to_operand_dims: [vec![0], shift(&s.scatter_dims_to_operand_dims)].concat(),
    };
    apply1(
        Op::ScatterAdd(dims),
        &[x, &with_batch_index(idx)?, upd],
        vec![],
    )
}

/// The start scalars stacked into a `[B, rank]` index array.
fn stacked_starts(a: &crate::batching::BatchArgs, from: usize) -> Result<Array> {
    let cols: Vec<Array> = (from..a.args.len())
        .map(|i| a.batched_arg(i)?.reshape(&[-1, 1]))
        .collect::<Result<_>>()?;
    Array::concatenate(&cols.iter().collect::<Vec<_>>(), 1)
}

/// Batching: batched indices become an extra index batch dim; a batched operand gets the
/// batch position prepended to every index vector. Dynamic slices with batched starts become
/// gathers (and masked scatters for updates), with the same clamping.
pub(crate) fn batch(a: &crate::batching::BatchArgs) -> Result<Vec<(Array, bool)>> {
    let size = a.size;
    let out = match &a.node.op {
        Op::Gather(g) => batch_gather(g, &a.args[0], a.batched[0], &a.args[1], a.batched[1], size)?,
        Op::ScatterAdd(s) => batch_scatter(
            s,
            &a.batched_arg(0)?,
            &a.batched_arg(1)?,
            &a.batched_arg(2)?,
        )?,
        Op::DynamicSlice { sizes } => {
            let rank = sizes.len();
            if !a.batched[1..].iter().any(|b| *b) {
                let zero = zeros_typed(&a.args[1], &TensorType::scalar(DType::I32))?;
                let mut args = vec![a.batched_arg(0)?, zero];
                args.extend(a.args[1..].iter().cloned());
                let refs: Vec<&Array> = args.iter().collect();
                apply1(
                    Op::DynamicSlice {
                        sizes: [vec![size], sizes.clone()].concat(),
                    },
                    &refs,
                    vec![],
                )?
            } else {
                let g = GatherDims {
                    offset_dims: (1..=rank).collect(),
                    collapsed_slice_dims: vec![],
                    start_index_map: (0..rank).collect(),
                    slice_sizes: sizes.clone(),
                };
                // Per element: gather one window at a [rank] index vector (a batch of one).
                let idx = stacked_starts(a, 1)?;
                let per = GatherDims {
                    offset_dims: (0..rank).collect(),
                    ..g
                };
                batch_gather(&per, &a.args[0], a.batched[0], &idx, true, size)?
            }
        }
        Op::DynamicUpdateSlice => {
            let x = a.batched_arg(0)?;
            let u = a.batched_arg(1)?;
            if !a.batched[2..].iter().any(|b| *b) {
                let zero = zeros_typed(&a.args[2], &TensorType::scalar(DType::I32))?;
                let mut args = vec![x, u, zero];
                args.extend(a.args[2..].iter().cloned());
                let refs: Vec<&Array> = args.iter().collect();
                apply1(Op::DynamicUpdateSlice, &refs, vec![])?
            } else {
                // Clamp the starts as dynamic_update_slice does, scatter the update into
                // zeros and a mask, and select: exact, with no arithmetic on the values.
                let rank = u.ndim() - 1;
                let hi: Vec<i64> = (0..rank)
                    .map(|d| (x.shape()[d + 1] - u.shape()[d + 1]) as i64)
                    .collect();
                let idx = stacked_starts(a, 2)?;
                let idx = idx.maximum(0)?.minimum(&index_bounds(&idx, &hi)?)?;
                let s = ScatterDims {
                    update_window_dims: (0..rank).collect(),
                    inserted_window_dims: vec![],
                    scatter_dims_to_operand_dims: (0..rank).collect(),
                };
                let placed = batch_scatter(&s, &x.zeros_like()?, &idx, &u)?;
                let hits = batch_scatter(
                    &s,
                    &zeros_typed(&x, &TensorType::new(DType::I32, x.shape().to_vec()))?,
                    &idx,
                    &u.zeros_like()?.eq(0)?.astype(DType::I32)?,
                )?;
                hits.gt(0)?.select(&placed, &x)?
            }
        }
        op => return no_rule("batching", op),
    };
    Ok(vec![(out, true)])
}
