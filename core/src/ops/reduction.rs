//! Reductions over axes and cumulative scans along one axis.

use super::apply1;
use super::shape::axis_index;
use crate::array::Array;
use crate::error::{type_err, Result};
use quabla_abi::qir::{CumulativeKind, Op, ReduceKind};
use quabla_abi::DType;

/// Which axes to reduce: all of them, or a list (negative counts from the end).
pub enum Axes<'a> {
    All,
    Some(&'a [isize]),
}

impl Array {
    fn resolve_axes(&self, axes: Axes) -> Result<Vec<usize>> {
        match axes {
            Axes::All => Ok((0..self.ndim()).collect()),
            Axes::Some(list) => {
                let mut out = Vec::new();
                for a in list {
                    let i = axis_index(*a, self.ndim())?;
                    if out.contains(&i) {
                        return type_err(format!("axis {a} is repeated"));
                    }
                    out.push(i);
                }
                Ok(out)
            }
        }
    }

    fn reduce(&self, kind: ReduceKind, axes: Axes, keepdims: bool) -> Result<Array> {
        let ax = self.resolve_axes(axes)?;
        let x = match kind {
            ReduceKind::And | ReduceKind::Or if self.dtype() != DType::Bool => self.ne(0)?,
            ReduceKind::Sum | ReduceKind::Prod if self.dtype() == DType::Bool => {
                self.astype(DType::I32)?
            }
            _ => self.clone(),
        };
        let r = apply1(
            Op::Reduce {
                kind,
                axes: ax.clone(),
            },
            &[&x],
            vec![],
        )?;
        if !keepdims {
            return Ok(r);
        }
        let shape: Vec<isize> = (0..self.ndim())
            .map(|d| {
                if ax.contains(&d) {
                    1
                } else {
                    self.shape()[d] as isize
                }
            })
            .collect();
        r.reshape(&shape)
    }

    /// Sum over `axes` (bool sums count as i32). Floats are summed in a fixed blocked order,
    /// so the result does not depend on the thread count.
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    /// assert_eq!(x.sum(Axes::Some(&[1]), false).unwrap().to_vec::<f32>().unwrap(), vec![3.0, 7.0]);
    /// ```
    pub fn sum(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::Sum, axes, keepdims)
    }

    pub fn prod(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::Prod, axes, keepdims)
    }

    /// Maximum over `axes`; NaN propagates; -inf (or the dtype's minimum) for empty axes.
    pub fn max(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::Max, axes, keepdims)
    }

    pub fn min(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::Min, axes, keepdims)
    }

    /// Whether every element is true (non-zero).
    pub fn all(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::And, axes, keepdims)
    }

    /// Whether any element is true (non-zero).
    pub fn any(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::Or, axes, keepdims)
    }

    /// Arithmetic mean over `axes`; integers average in f32, as jnp does.
    pub fn mean(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        let ax = self.resolve_axes(axes)?;
        let n: usize = ax.iter().map(|&a| self.shape()[a]).product();
        let x = if self.dtype().is_float() {
            self.clone()
        } else {
            self.astype(DType::F32)?
        };
        let axes: Vec<isize> = ax.iter().map(|&a| a as isize).collect();
        x.sum(Axes::Some(&axes), keepdims)?.div(n as f64)
    }

    fn cumulative(&self, kind: CumulativeKind, axis: isize, reverse: bool) -> Result<Array> {
        let axis = axis_index(axis, self.ndim())?;
        let x = if self.dtype() == DType::Bool {
            self.astype(DType::I32)?
        } else {
            self.clone()
        };
        apply1(
            Op::Cumulative {
                kind,
                axis,
                reverse,
            },
            &[&x],
            vec![],
        )
    }

    /// Inclusive cumulative sum along `axis`, sequential along the axis.
    pub fn cumsum(&self, axis: isize, reverse: bool) -> Result<Array> {
        self.cumulative(CumulativeKind::Sum, axis, reverse)
    }

    pub fn cumprod(&self, axis: isize, reverse: bool) -> Result<Array> {
        self.cumulative(CumulativeKind::Prod, axis, reverse)
    }

    pub fn cummax(&self, axis: isize, reverse: bool) -> Result<Array> {
        self.cumulative(CumulativeKind::Max, axis, reverse)
    }

    pub fn cummin(&self, axis: isize, reverse: bool) -> Result<Array> {
        self.cumulative(CumulativeKind::Min, axis, reverse)
    }
}
