//! Shape ops: reshape, transpose, slice, pad, concatenate, flip, and the numpy conveniences
//! built from them.

use super::creation::filled;
use super::{apply1, constant_like};
use crate::array::Array;
use crate::error::Result;
use crate::promotion::Scalar;
use quabla_abi::qir::Op;
use quabla_abi::TensorType;

/// Resolves a negative axis against `rank`.
pub(crate) fn axis_index(axis: isize, rank: usize) -> Result<usize> {
    let a = if axis < 0 { axis + rank as isize } else { axis };
    if a < 0 || a as usize >= rank {
        return Err(crate::Error::shape(format!(
            "axis {axis} is out of range for an array of rank {rank}"
        )));
    }
    Ok(a as usize)
}

impl Array {
    /// Row-major reshape; one entry may be -1 (inferred).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::arange(6).unwrap().reshape(&[2, -1]).unwrap();
    /// assert_eq!(x.shape(), &[2, 3]);
    /// ```
    pub fn reshape(&self, shape: &[isize]) -> Result<Array> {
        let known: usize = shape
            .iter()
            .filter(|d| **d >= 0)
            .map(|d| *d as usize)
            .product();
        let holes = shape.iter().filter(|d| **d < 0).count();
        let resolved: Vec<usize> = match holes {
            0 => shape.iter().map(|d| *d as usize).collect(),
            1 if known > 0 && self.size().is_multiple_of(known) => shape
                .iter()
                .map(|d| {
                    if *d < 0 {
                        self.size() / known
                    } else {
                        *d as usize
                    }
                })
                .collect(),
            _ => {
                return Err(crate::Error::shape(format!(
                    "cannot reshape {} to {shape:?}",
                    self.ty
                )))
            }
        };
        if resolved.iter().product::<usize>() != self.size() {
            return Err(crate::Error::shape(format!(
                "cannot reshape {} ({} elements) to {resolved:?}",
                self.ty,
                self.size()
            )));
        }
        if resolved == self.shape() {
            return Ok(self.clone());
        }
        apply1(
            Op::Reshape,
            &[self],
            vec![TensorType::new(self.dtype(), resolved)],
        )
    }

    /// Permutes the dims: result dim `i` is dim `perm[i]`.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[0.0f32; 24], &[2, 3, 4])?;
    /// assert_eq!(x.transpose(&[2, 0, 1])?.shape(), &[4, 2, 3]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn transpose(&self, perm: &[usize]) -> Result<Array> {
        apply1(
            Op::Transpose {
                perm: perm.to_vec(),
            },
            &[self],
            vec![],
        )
    }

    /// Reverses the order of the dims (numpy's `.T`).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let m = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// assert_eq!(m.t()?.to_vec::<f32>()?, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn t(&self) -> Result<Array> {
        self.transpose(&(0..self.ndim()).rev().collect::<Vec<_>>())
    }

    /// `x[start:limit:strides]` per dim.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[0.0f32, 1.0, 2.0, 3.0, 4.0, 5.0], &[6])?;
    /// assert_eq!(x.slice(&[1], &[6], &[2])?.to_vec::<f32>()?, [1.0, 3.0, 5.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn slice(&self, start: &[usize], limit: &[usize], strides: &[usize]) -> Result<Array> {
        apply1(
            Op::Slice {
                start: start.to_vec(),
                limit: limit.to_vec(),
                strides: strides.to_vec(),
            },
            &[self],
            vec![],
        )
    }

    /// Pads with `value`: `low`/`high` per dim (negative crops), `interior` between elements.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0], &[2])?;
    /// // One zero before, two after, one between: [0, 1, 0, 2, 0, 0].
    /// let p = x.pad(0.0, &[1], &[2], &[1])?;
    /// assert_eq!(p.to_vec::<f32>()?, [0.0, 1.0, 0.0, 2.0, 0.0, 0.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn pad(
        &self,
        value: impl Into<Scalar>,
        low: &[i64],
        high: &[i64],
        interior: &[usize],
    ) -> Result<Array> {
        let v = constant_like(self, filled(self.dtype(), &[], value.into()))?;
        apply1(
            Op::Pad {
                low: low.to_vec(),
                high: high.to_vec(),
                interior: interior.to_vec(),
            },
            &[self, &v],
            vec![],
        )
    }

    /// Joins arrays along `axis` (negative counts from the end).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let a = Array::from_slice(&[1.0f32, 2.0], &[1, 2])?;
    /// let b = Array::from_slice(&[3.0f32, 4.0], &[1, 2])?;
    /// assert_eq!(Array::concatenate(&[&a, &b], 0)?.shape(), &[2, 2]);
    /// assert_eq!(Array::concatenate(&[&a, &b], -1)?.shape(), &[1, 4]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn concatenate(arrays: &[&Array], axis: isize) -> Result<Array> {
        let first = match arrays.first() {
            Some(a) => a,
            None => return Err(crate::Error::value("concatenate needs at least one array")),
        };
        let dim = axis_index(axis, first.ndim())?;
        apply1(Op::Concatenate { dim }, arrays, vec![])
    }

    /// Reverses the order of elements along `axes`.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// assert_eq!(x.flip(&[0])?.to_vec::<f32>()?, [3.0, 2.0, 1.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn flip(&self, axes: &[usize]) -> Result<Array> {
        apply1(
            Op::Reverse {
                dims: axes.to_vec(),
            },
            &[self],
            vec![],
        )
    }

    /// Inserts a size-1 dim at `axis`.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// assert_eq!(x.expand_dims(0)?.shape(), &[1, 3]);
    /// assert_eq!(x.expand_dims(-1)?.shape(), &[3, 1]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn expand_dims(&self, axis: isize) -> Result<Array> {
        let a = axis_index(axis, self.ndim() + 1)?;
        let mut shape: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
        shape.insert(a, 1);
        self.reshape(&shape)
    }

    /// Removes every size-1 dim.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[1, 3, 1])?;
    /// assert_eq!(x.squeeze()?.shape(), &[3]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn squeeze(&self) -> Result<Array> {
        let shape: Vec<isize> = self
            .shape()
            .iter()
            .filter(|&&d| d != 1)
            .map(|&d| d as isize)
            .collect();
        self.reshape(&shape)
    }
}

// ---- AD rules -------------------------------------------------------------------------

use crate::ad::rules::{no_rule, JvpArgs, TransposeArgs};
use crate::ops::zeros_typed;

fn instantiate(t: &Option<Array>, like: &Array) -> Result<Array> {
    t.clone().map(Ok).unwrap_or_else(|| like.zeros_like())
}

/// These ops are linear: the tangent goes through the same op.
pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    if a.tangents.iter().all(Option::is_none) {
        return Ok(vec![None]);
    }
    let ts: Vec<Array> = a
        .tangents
        .iter()
        .zip(a.primals)
        .map(|(t, p)| instantiate(t, p))
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = ts.iter().collect();
    Ok(vec![Some(apply1(
        a.node.op.clone(),
        &refs,
        a.node.results.clone(),
    )?)])
}

fn inverse_perm(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    inv
}

pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let Some(ct) = &a.cts[0] else {
        return Ok(vec![None; a.operands.len()]);
    };
    let in_ty = a.operands[0].ty().clone();
    let in_shape: Vec<isize> = in_ty.shape.iter().map(|&d| d as isize).collect();
    Ok(match &a.node.op {
        Op::Reshape => vec![Some(ct.reshape(&in_shape)?)],
        Op::Transpose { perm } => vec![Some(ct.transpose(&inverse_perm(perm))?)],
        Op::Reverse { dims } => vec![Some(ct.flip(dims)?)],
        Op::BroadcastInDim { dims } => {
            let out_shape = ct.shape();
            let mut axes: Vec<isize> = (0..out_shape.len())
                .filter(|d| !dims.contains(d))
                .map(|d| d as isize)
                .collect();
            axes.extend(
                dims.iter()
                    .enumerate()
                    .filter(|(i, d)| in_ty.shape[*i] == 1 && out_shape[**d] != 1)
                    .map(|(_, d)| *d as isize),
            );
            let summed = if axes.is_empty() {
                ct.clone()
            } else {
                ct.sum(crate::Axes::Some(&axes), false)?
            };
            vec![Some(summed.reshape(&in_shape)?)]
        }
        Op::Slice { start, strides, .. } => {
            if ct.size() == 0 {
                vec![Some(zeros_typed(ct, &in_ty)?)]
            } else {
                let low: Vec<i64> = start.iter().map(|&s| s as i64).collect();
                let high: Vec<i64> = (0..in_ty.rank())
                    .map(|d| {
                        in_ty.shape[d] as i64
                            - (start[d] + (ct.shape()[d] - 1) * strides[d] + 1) as i64
                    })
                    .collect();
                let interior: Vec<usize> = strides.iter().map(|s| s - 1).collect();
                vec![Some(ct.pad(0, &low, &high, &interior)?)]
            }
        }
        Op::Pad {
            low,
            high,
            interior,
        } => {
            // Restore what negative padding cropped, then take every (interior+1)-th element.
            let grow_lo: Vec<i64> = low.iter().map(|&l| (-l).max(0)).collect();
            let grow_hi: Vec<i64> = high.iter().map(|&h| (-h).max(0)).collect();
            let full = ct.pad(0, &grow_lo, &grow_hi, &vec![0; low.len()])?;
            let start: Vec<usize> = low.iter().map(|&l| l.max(0) as usize).collect();
            let limit: Vec<usize> = (0..low.len())
                .map(|d| full.shape()[d] - high[d].max(0) as usize)
                .collect();
            let steps: Vec<usize> = interior.iter().map(|i| i + 1).collect();
            let x_ct = if in_ty.num_elements() == 0 {
                zeros_typed(ct, &in_ty)?
            } else {
                full.slice(&start, &limit, &steps)?
            };
            let v_ct = if a.operands[1].is_linear() {
                Some((ct.sum(crate::Axes::All, false)? - &x_ct.sum(crate::Axes::All, false)?)?)
            } else {
                None
            };
            vec![Some(x_ct), v_ct]
        }
        Op::Concatenate { dim } => {
            let mut offset = 0;
            let mut out = Vec::with_capacity(a.operands.len());
            for o in a.operands {
                let n = o.ty().shape[*dim];
                let mut start = vec![0; ct.ndim()];
                let mut limit = ct.shape().to_vec();
                start[*dim] = offset;
                limit[*dim] = offset + n;
                out.push(if o.is_linear() {
                    Some(ct.slice(&start, &limit, &vec![1; ct.ndim()])?)
                } else {
                    None
                });
                offset += n;
            }
            out
        }
        op => return no_rule("transpose", op),
    })
}

/// Batching: the batch axis stays in front; attributes shift by one.
pub(crate) fn batch(a: &crate::batching::BatchArgs) -> Result<Vec<(Array, bool)>> {
    let shift = |v: &[usize]| v.iter().map(|d| d + 1).collect::<Vec<_>>();
    let front = |first: usize, v: &[usize]| {
        std::iter::once(first)
            .chain(v.iter().copied())
            .collect::<Vec<_>>()
    };
    let out_ty = a.result_type(0);
    let x = || a.batched_arg(0);
    let out = match &a.node.op {
        Op::Reshape => apply1(Op::Reshape, &[&x()?], vec![out_ty])?,
        Op::BroadcastInDim { dims } => {
            x()?.broadcast_in_dim(&out_ty.shape, &front(0, &shift(dims)))?
        }
        Op::Transpose { perm } => x()?.transpose(&front(0, &shift(perm)))?,
        Op::Reverse { dims } => x()?.flip(&shift(dims))?,
        Op::Slice {
            start,
            limit,
            strides,
        } => x()?.slice(&front(0, start), &front(a.size, limit), &front(1, strides))?,
        Op::Concatenate { dim } => {
            let xs: Vec<Array> = (0..a.args.len())
                .map(|i| a.batched_arg(i))
                .collect::<Result<_>>()?;
            Array::concatenate(&xs.iter().collect::<Vec<_>>(), *dim as isize + 1)?
        }
        Op::Pad {
            low,
            high,
            interior,
        } => {
            let (lo, hi, it) = (
                [&[0][..], low].concat(),
                [&[0][..], high].concat(),
                front(0, interior),
            );
            if !a.batched[1] {
                apply1(
                    Op::Pad {
                        low: lo,
                        high: hi,
                        interior: it,
                    },
                    &[&x()?, &a.args[1]],
                    vec![],
                )?
            } else {
                // A per-element pad value: pad with zeros, then select the value outside.
                let xb = x()?;
                let zero = zeros_typed(&xb, &quabla_abi::TensorType::scalar(xb.dtype()))?;
                let attrs = Op::Pad {
                    low: lo,
                    high: hi,
                    interior: it,
                };
                let padded = apply1(attrs.clone(), &[&xb, &zero], vec![])?;
                let inside = xb.zeros_like()?.eq(0)?;
                let outside = constant_like(
                    &inside,
                    filled(quabla_abi::DType::Bool, &[], Scalar::Bool(false)),
                )?;
                let mask = apply1(attrs, &[&inside, &outside], vec![])?;
                let v = a.args[1].broadcast_in_dim(&out_ty.shape, &[0])?;
                mask.select(&padded, &v)?
            }
        }
        op => return no_rule("batching", op),
    };
    Ok(vec![(out, true)])
}
