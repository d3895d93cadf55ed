//! Indexing: gather/scatter-add and dynamic slices. Out-of-bounds gather indices clamp;
//! out-of-bounds scatter updates are dropped (JAX's defaults).

use super::apply1;
use super::shape::axis_index;
use crate::array::Array;
use crate::error::{type_err, Result};
use quabla_abi::qir::{GatherDims, Op, ScatterDims};
use quabla_abi::DType;

impl Array {
    /// XLA gather (the index vector is the last dim of `indices`).
    pub fn gather(&self, indices: &Array, dims: GatherDims) -> Result<Array> {
        apply1(
            Op::Gather(dims),
            &[self, &indices.astype(DType::I32)?],
            vec![],
        )
    }

    /// XLA scatter-add (the index vector is the last dim of `indices`).
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
    pub fn dynamic_slice(&self, starts: &[&Array], sizes: &[usize]) -> Result<Array> {
        if starts.len() != self.ndim() {
            return type_err(format!(
                "dynamic_slice needs {} start indices, got {}",
                self.ndim(),
                starts.len()
            ));
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
    pub fn dynamic_update_slice(&self, update: &Array, starts: &[&Array]) -> Result<Array> {
        if starts.len() != self.ndim() {
            return type_err(format!(
                "dynamic_update_slice needs {} start indices, got {}",
                self.ndim(),
                starts.len()
            ));
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
    let host = HostArray::from_slice(vec![v.len()], &v).map_err(crate::Error::Type)?;
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
