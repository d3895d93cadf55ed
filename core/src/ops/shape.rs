//! Shape ops: reshape, transpose, slice, pad, concatenate, flip, and the numpy conveniences
//! built from them.

use super::creation::filled;
use super::{apply1, constant_like};
use crate::array::Array;
use crate::error::{type_err, Result};
use crate::promotion::Scalar;
use quabla_abi::qir::Op;
use quabla_abi::TensorType;

/// Resolves a negative axis against `rank`.
pub(crate) fn axis_index(axis: isize, rank: usize) -> Result<usize> {
    let a = if axis < 0 { axis + rank as isize } else { axis };
    if a < 0 || a as usize >= rank {
        return type_err(format!(
            "axis {axis} is out of range for an array of rank {rank}"
        ));
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
            _ => return type_err(format!("cannot reshape {} to {shape:?}", self.ty)),
        };
        if resolved.iter().product::<usize>() != self.size() {
            return type_err(format!(
                "cannot reshape {} ({} elements) to {resolved:?}",
                self.ty,
                self.size()
            ));
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
    pub fn t(&self) -> Result<Array> {
        self.transpose(&(0..self.ndim()).rev().collect::<Vec<_>>())
    }

    /// `x[start:limit:strides]` per dim.
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
    pub fn concatenate(arrays: &[&Array], axis: isize) -> Result<Array> {
        let first = match arrays.first() {
            Some(a) => a,
            None => return type_err("concatenate needs at least one array"),
        };
        let dim = axis_index(axis, first.ndim())?;
        apply1(Op::Concatenate { dim }, arrays, vec![])
    }

    /// Reverses the order of elements along `axes`.
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
    pub fn expand_dims(&self, axis: isize) -> Result<Array> {
        let a = axis_index(axis, self.ndim() + 1)?;
        let mut shape: Vec<isize> = self.shape().iter().map(|&d| d as isize).collect();
        shape.insert(a, 1);
        self.reshape(&shape)
    }

    /// Removes every size-1 dim.
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
