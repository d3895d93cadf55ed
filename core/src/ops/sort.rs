//! The `sort` primitive and its rules: a stable sort of several operands along one axis,
//! ordered by the first `num_keys` of them (numpy's float order: NaN last, `-0` ties `+0`).
//!
//! Its JVP sorts an extra `iota` operand beside the primals to learn the permutation and
//! gathers the tangents by it, so the tangent map is a `gather` (whose transpose is a
//! `scatter_add`): `sort` itself needs no transpose rule. Batching shifts the axis.

use super::apply;
use super::shape::axis_index;
use crate::ad::rules::{no_rule, JvpArgs, TransposeArgs};
use crate::array::Array;
use crate::error::{Error, Result};
use quabla_abi::qir::{GatherDims, Op};
use quabla_abi::DType;

/// Sorts `operands` (one shape, any dtypes) together along `axis`, stably, ordered
/// lexicographically by the first `num_keys` of them, as `jax.lax.sort`; `descending`
/// reverses the order of unequal keys and keeps ties in their original order.
///
/// ```no_run
/// # use quabla::Array;
/// let k = Array::from_slice(&[3.0f32, 1.0, 2.0], &[3]).unwrap();
/// let v = Array::from_slice(&[30i32, 10, 20], &[3]).unwrap();
/// let out = quabla::lax::sort(&[k, v], -1, 1, false).unwrap();
/// assert_eq!(out[1].to_vec::<i32>().unwrap(), vec![10, 20, 30]);
/// ```
pub fn sort(
    operands: &[Array],
    axis: isize,
    num_keys: usize,
    descending: bool,
) -> Result<Vec<Array>> {
    let first = operands
        .first()
        .ok_or_else(|| Error::value("sort needs at least one operand"))?;
    if first.ndim() == 0 {
        return Err(Error::shape(
            "sort needs operands with at least one dimension (reshape a scalar to [1])",
        ));
    }
    let axis = axis_index(axis, first.ndim())?;
    if num_keys == 0 || num_keys > operands.len() {
        return Err(Error::value(format!(
            "sort: num_keys must be between 1 and the number of operands ({}), got {num_keys}",
            operands.len()
        )));
    }
    let refs: Vec<&Array> = operands.iter().collect();
    apply(
        Op::Sort {
            axis,
            num_keys,
            descending,
        },
        &refs,
        vec![],
    )
}

impl Array {
    /// This array sorted along `axis` (stable; NaN last, or first when `descending`).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[2.0f32, f32::NAN, -1.0], &[3]).unwrap();
    /// let s = x.sort(0, false).unwrap().to_vec::<f32>().unwrap();
    /// assert_eq!(&s[..2], &[-1.0, 2.0]);
    /// assert!(s[2].is_nan());
    /// ```
    pub fn sort(&self, axis: isize, descending: bool) -> Result<Array> {
        Ok(sort(std::slice::from_ref(self), axis, 1, descending)?.remove(0))
    }

    /// The i32 indices that sort this array along `axis` (stable: ties keep their order).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[2.0f32, 1.0, 2.0, 0.0], &[4]).unwrap();
    /// let i = x.argsort(0, true).unwrap();
    /// assert_eq!(i.to_vec::<i32>().unwrap(), vec![0, 2, 1, 3]);
    /// ```
    pub fn argsort(&self, axis: isize, descending: bool) -> Result<Array> {
        let ax = axis_index(axis, self.ndim().max(1))?;
        let x = if self.ndim() == 0 {
            self.reshape(&[1])?
        } else {
            self.clone()
        };
        let iota = x.iota_beside(DType::I32, x.shape(), ax)?;
        let mut out = sort(&[x, iota], ax as isize, 1, descending)?;
        let perm = out.remove(1);
        if self.ndim() == 0 {
            perm.reshape(&[])
        } else {
            Ok(perm)
        }
    }

    /// The `k` largest entries along the last axis and their i32 indices, largest first
    /// (ties: the lower index first), as `jax.lax.top_k`: floats in IEEE total order
    /// (`+NaN` first, then `+inf`, ..., `+0` before `-0`, ..., `-NaN` last; an f64 NaN's
    /// sign cannot be read without 64-bit integers, so every f64 NaN ranks as `+NaN`).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 5.0, 3.0, 5.0], &[4]).unwrap();
    /// let (v, i) = x.top_k(2).unwrap();
    /// assert_eq!(v.to_vec::<f32>().unwrap(), vec![5.0, 5.0]);
    /// assert_eq!(i.to_vec::<i32>().unwrap(), vec![1, 3]);
    /// ```
    pub fn top_k(&self, k: usize) -> Result<(Array, Array)> {
        let n = *self
            .shape()
            .last()
            .ok_or_else(|| Error::shape("top_k needs an operand with at least one dimension"))?;
        if k > n {
            return Err(Error::value(format!(
                "top_k: k = {k} is larger than the last axis ({n})"
            )));
        }
        let last = self.ndim() - 1;
        let mut operands = self.total_order_keys()?;
        let (value, num_keys) = match operands.len() {
            1 => (0, 1),
            _ => (1, 3),
        };
        operands.push(self.iota_beside(DType::I32, self.shape(), last)?);
        let out = sort(&operands, -1, num_keys, true)?;
        let mut limit = self.shape().to_vec();
        limit[last] = k;
        let start = vec![0; self.ndim()];
        let strides = vec![1; self.ndim()];
        Ok((
            out[value].slice(&start, &limit, &strides)?,
            out[num_keys].slice(&start, &limit, &strides)?,
        ))
    }

    /// Sort keys ordering this array as IEEE's total order does: itself when it is not a
    /// float; for floats `(NaN class, value, not signbit)`, where the class puts `+NaN`
    /// above and `-NaN` below every number and the last key puts `+0` above `-0`.
    fn total_order_keys(&self) -> Result<Vec<Array>> {
        if !self.dtype().is_float() {
            return Ok(vec![self.clone()]);
        }
        let nan = self.ne(self)?;
        let negative = if self.dtype() == DType::F32 {
            self.bitcast(DType::I32)?.lt(0)?
        } else {
            // 1 / -0 = -inf: the sign of a zero without its bits.
            let one = self.filled_beside(&[], 1.0, self.dtype())?;
            let negative_zero = self.eq(0.0)?.bitwise_and(&one.div(self)?.lt(0.0)?)?;
            self.lt(0.0)?.bitwise_or(&negative_zero)?
        };
        let minus_one = self.filled_beside(self.shape(), -1, DType::I32)?;
        let class = nan.select(&negative.select(&minus_one, 1)?, 0)?;
        let upper = negative.logical_not()?.astype(DType::I32)?;
        Ok(vec![class, self.clone(), upper])
    }

    /// Elements at `indices` along `axis`, every other axis matched one to one
    /// (`numpy.take_along_axis` with indices of this array's shape but for `axis`);
    /// indices clamp.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[10.0f32, 20.0, 30.0, 40.0], &[2, 2]).unwrap();
    /// let i = Array::from_slice(&[1i32, 0, 0, 0], &[2, 2]).unwrap();
    /// let y = x.take_along_axis(&i, 1).unwrap();
    /// assert_eq!(y.to_vec::<f32>().unwrap(), vec![20.0, 10.0, 30.0, 30.0]);
    /// ```
    pub fn take_along_axis(&self, indices: &Array, axis: isize) -> Result<Array> {
        let axis = axis_index(axis, self.ndim())?;
        let shape = indices.shape().to_vec();
        let others_match = indices.ndim() == self.ndim()
            && (0..self.ndim()).all(|d| d == axis || shape[d] == self.shape()[d]);
        if !others_match {
            return Err(Error::shape(format!(
                "take_along_axis: indices of shape {shape:?} must match the array's {:?} \
                 on every axis but {axis}",
                self.shape()
            )));
        }
        let idx = indices.astype(DType::I32)?;
        let mut columns = Vec::with_capacity(self.ndim());
        for d in 0..self.ndim() {
            let c = if d == axis {
                idx.clone()
            } else {
                idx.iota_beside(DType::I32, &shape, d)?
            };
            columns.push(c.expand_dims(-1)?);
        }
        let refs: Vec<&Array> = columns.iter().collect();
        let index = Array::concatenate(&refs, -1)?;
        self.gather(
            &index,
            GatherDims {
                offset_dims: vec![],
                collapsed_slice_dims: (0..self.ndim()).collect(),
                start_index_map: (0..self.ndim()).collect(),
                slice_sizes: vec![1; self.ndim()],
            },
        )
    }
}

/// Output tangents: every float operand's tangent gathered by the sorting permutation.
/// A `sort` node's `(axis, num_keys, descending)`; `no_rule` for any other op.
fn attributes(op: &Op, rule: &str) -> Result<(usize, usize, bool)> {
    match op {
        Op::Sort {
            axis,
            num_keys,
            descending,
        } => Ok((*axis, *num_keys, *descending)),
        other => no_rule(rule, other),
    }
}

pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    let (axis, num_keys, descending) = attributes(&a.node.op, "jvp")?;
    if a.tangents.iter().all(Option::is_none) {
        return Ok(vec![None; a.outs.len()]);
    }
    let first = &a.primals[0];
    let iota = first.iota_beside(DType::I32, first.shape(), axis)?;
    let mut with_iota: Vec<Array> = a.primals[..num_keys].to_vec();
    with_iota.push(iota);
    let perm = sort(&with_iota, axis as isize, num_keys, descending)?
        .pop()
        .ok_or_else(|| Error::Internal("sort returned no results".into()))?;
    a.tangents
        .iter()
        .map(|t| match t {
            Some(t) => Ok(Some(t.take_along_axis(&perm, axis as isize)?)),
            None => Ok(None),
        })
        .collect()
}

/// `sort` is not linear in any operand; a linear program never holds one.
pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    no_rule("transpose", &a.node.op)
}

/// Batching: the sorted axis shifts by one; unbatched operands get the batch axis.
pub(crate) fn batch(a: &crate::batching::BatchArgs) -> Result<Vec<(Array, bool)>> {
    let (axis, num_keys, descending) = attributes(&a.node.op, "batching")?;
    let args = (0..a.args.len())
        .map(|i| a.batched_arg(i))
        .collect::<Result<Vec<_>>>()?;
    let out = sort(&args, (axis + 1) as isize, num_keys, descending)?;
    Ok(out.into_iter().map(|r| (r, true)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_cpu<T: quabla_abi::Element>(v: &[T]) -> Array {
        Array::from_slice_on(&crate::test_util::linked_cpu(), v, &[v.len()]).unwrap()
    }

    fn f32s(v: &[f32]) -> Array {
        on_cpu(v)
    }

    #[test]
    fn nan_last_ascending_first_descending_and_zeros_tie() {
        let x = f32s(&[0.0, f32::NAN, -0.0, -1.0, f32::INFINITY]);
        let up = x.sort(0, false).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(up[0], -1.0);
        // -0 ties +0, so the stable sort keeps their original order.
        assert!(up[1] == 0.0 && up[1].is_sign_positive());
        assert!(up[2] == 0.0 && up[2].is_sign_negative());
        assert_eq!(up[3], f32::INFINITY);
        assert!(up[4].is_nan());
        let down = x.argsort(0, true).unwrap().to_vec::<i32>().unwrap();
        assert_eq!(down, vec![1, 4, 0, 2, 3]);
    }

    #[test]
    fn lexicographic_keys_and_payload() {
        let k1 = on_cpu(&[1i32, 0, 1, 0]);
        let k2 = on_cpu(&[2.0f32, 5.0, 1.0, 5.0]);
        let v = on_cpu(&[0u32, 1, 2, 3]);
        let out = sort(&[k1, k2, v], 0, 2, false).unwrap();
        assert_eq!(out[2].to_vec::<u32>().unwrap(), vec![1, 3, 2, 0]);
    }

    #[test]
    fn bad_arguments_are_typed_errors() {
        let x = f32s(&[1.0, 2.0]);
        assert!(sort(&[], 0, 1, false).is_err());
        assert!(sort(std::slice::from_ref(&x), 0, 2, false).is_err());
        assert!(sort(std::slice::from_ref(&x), 3, 1, false).is_err());
        let y = on_cpu(&[1.0f32, 2.0, 3.0]);
        assert!(sort(&[x.clone(), y], 0, 1, false).is_err());
        assert!(x.top_k(3).is_err());
    }

    #[test]
    fn top_k_ranks_floats_in_total_order() {
        let x = f32s(&[-0.0, 0.0, f32::NAN, -f32::NAN, 1.0, f32::NEG_INFINITY]);
        let (v, i) = x.top_k(6).unwrap();
        assert_eq!(i.to_vec::<i32>().unwrap(), vec![2, 4, 1, 0, 5, 3]);
        let v = v.to_vec::<f32>().unwrap();
        assert!(v[0].is_nan() && v[0].is_sign_positive());
        assert!(v[2] == 0.0 && v[2].is_sign_positive() && v[3].is_sign_negative());
        let y = on_cpu(&[-0.0f64, 0.0, 2.0, -0.0]);
        let (_, j) = y.top_k(3).unwrap();
        assert_eq!(j.to_vec::<i32>().unwrap(), vec![2, 1, 0]);
    }
}
