//! Reductions over axes and cumulative scans along one axis.

use super::apply1;
use super::shape::axis_index;
use crate::array::Array;
use crate::error::Result;
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
                        return Err(crate::Error::shape(format!("axis {a} is repeated")));
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

    /// Product over `axes`; 1 for empty axes.
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(x.prod(Axes::Some(&[1]), false)?.to_vec::<f32>()?, [2.0, 12.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn prod(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::Prod, axes, keepdims)
    }

    /// Maximum over `axes`; NaN propagates; -inf (or the dtype's minimum) for empty axes.
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f32, 5.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(x.max(Axes::Some(&[0]), false)?.to_vec::<f32>()?, [3.0, 5.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn max(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::Max, axes, keepdims)
    }

    /// Minimum over `axes`; NaN propagates; +inf (or the dtype's maximum) for empty axes.
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f32, 5.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(x.min(Axes::All, false)?.item::<f32>()?, 1.0);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn min(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::Min, axes, keepdims)
    }

    /// Whether every element is true (non-zero).
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f32, -2.0], &[2])?;
    /// assert!(x.gt(-3.0)?.all(Axes::All, false)?.item::<bool>()?);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn all(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::And, axes, keepdims)
    }

    /// Whether any element is true (non-zero).
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f32, f32::NAN], &[2])?;
    /// let has_nan = x.is_finite()?.logical_not()?.any(Axes::All, false)?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn any(&self, axes: Axes, keepdims: bool) -> Result<Array> {
        self.reduce(ReduceKind::Or, axes, keepdims)
    }

    /// Arithmetic mean over `axes`; integers average in f32, as jnp does.
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f64, 2.0, 3.0, 6.0], &[2, 2])?;
    /// assert_eq!(x.mean(Axes::Some(&[0]), false)?.to_vec::<f64>()?, [2.0, 4.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
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
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// assert_eq!(x.cumsum(0, false)?.to_vec::<f32>()?, [1.0, 3.0, 6.0]);
    /// assert_eq!(x.cumsum(0, true)?.to_vec::<f32>()?, [6.0, 5.0, 3.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn cumsum(&self, axis: isize, reverse: bool) -> Result<Array> {
        self.cumulative(CumulativeKind::Sum, axis, reverse)
    }

    /// Inclusive cumulative product along `axis` (from the end with `reverse`).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// assert_eq!(x.cumprod(0, false)?.to_vec::<f32>()?, [1.0, 2.0, 6.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn cumprod(&self, axis: isize, reverse: bool) -> Result<Array> {
        self.cumulative(CumulativeKind::Prod, axis, reverse)
    }

    /// Running maximum along `axis` (from the end with `reverse`).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, 3.0, 2.0], &[3])?;
    /// assert_eq!(x.cummax(0, false)?.to_vec::<f32>()?, [1.0, 3.0, 3.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn cummax(&self, axis: isize, reverse: bool) -> Result<Array> {
        self.cumulative(CumulativeKind::Max, axis, reverse)
    }

    /// Running minimum along `axis` (from the end with `reverse`).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[3.0f32, 1.0, 2.0], &[3])?;
    /// assert_eq!(x.cummin(0, false)?.to_vec::<f32>()?, [3.0, 1.0, 1.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn cummin(&self, axis: isize, reverse: bool) -> Result<Array> {
        self.cumulative(CumulativeKind::Min, axis, reverse)
    }
}

// ---- AD rules -------------------------------------------------------------------------

use crate::ad::rules::{no_rule, JvpArgs, TransposeArgs};
use crate::ops::iota_like;

/// `x[start:limit:step]` along one axis.
fn slice_axis(x: &Array, axis: usize, start: usize, limit: usize, step: usize) -> Result<Array> {
    let mut s = vec![0; x.ndim()];
    let mut l = x.shape().to_vec();
    let mut st = vec![1; x.ndim()];
    s[axis] = start;
    l[axis] = limit;
    st[axis] = step;
    x.slice(&s, &l, &st)
}

/// Interleaves `even` (positions 0, 2, ...) and `odd` (1, 3, ...) along `axis`, exactly (a
/// select, so no `-0 + 0` rounding).
fn interleave(even: &Array, odd: &Array, axis: usize) -> Result<Array> {
    let n = even.shape()[axis] + odd.shape()[axis];
    let pad = |x: &Array, lo: i64, hi: i64| {
        let (mut low, mut high, mut interior) =
            (vec![0; x.ndim()], vec![0; x.ndim()], vec![0; x.ndim()]);
        low[axis] = lo;
        high[axis] = hi;
        interior[axis] = 1;
        x.pad(0, &low, &high, &interior)
    };
    let e = pad(even, 0, n.is_multiple_of(2) as i64)?;
    let o = pad(odd, 1, (n % 2 == 1) as i64)?;
    let mut shape = even.shape().to_vec();
    shape[axis] = n;
    let idx = iota_like(even, DType::I32, &shape, axis)?;
    idx.rem(2)?.eq(0)?.select(&e, &o)
}

/// The parallel prefix scan JAX's `associative_scan` uses. Its JVP (through the slice,
/// pad and combine rules) gives cumulative products, maxima and minima derivatives that are
/// exact with zeros and split ties as JAX does.
fn associative_scan(
    x: &Array,
    axis: usize,
    f: &dyn Fn(&Array, &Array) -> Result<Array>,
) -> Result<Array> {
    let n = x.shape()[axis];
    if n < 2 {
        return Ok(x.clone());
    }
    let reduced = f(
        &slice_axis(x, axis, 0, n - 1, 2)?,
        &slice_axis(x, axis, 1, n, 2)?,
    )?;
    let odd = associative_scan(&reduced, axis, f)?;
    let rest = slice_axis(x, axis, 2, n, 2)?;
    let even = if n.is_multiple_of(2) {
        let m = odd.shape()[axis];
        f(&slice_axis(&odd, axis, 0, m - 1, 1)?, &rest)?
    } else {
        f(&odd, &rest)?
    };
    let even = Array::concatenate(&[&slice_axis(x, axis, 0, 1, 1)?, &even], axis as isize)?;
    interleave(&even, &odd, axis)
}

fn reduce_jvp(
    kind: ReduceKind,
    axes: &[usize],
    x: &Array,
    y: &Array,
    t: &Array,
) -> Result<Option<Array>> {
    let ax: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
    let kept: Vec<usize> = (0..x.ndim()).filter(|d| !axes.contains(d)).collect();
    Ok(match kind {
        ReduceKind::Sum => Some(t.sum(Axes::Some(&ax), false)?),
        ReduceKind::And | ReduceKind::Or => None,
        ReduceKind::Max | ReduceKind::Min => {
            // Ties share the tangent equally (1/k each), as JAX's reduce_max.
            let yb = y.broadcast_in_dim(x.shape(), &kept)?;
            let ind = x.eq(&yb)?.astype(x.dtype())?;
            let counts = ind
                .sum(Axes::Some(&ax), false)?
                .broadcast_in_dim(x.shape(), &kept)?;
            Some((t * &(&ind / &counts)?)?.sum(Axes::Some(&ax), false)?)
        }
        ReduceKind::Prod => {
            // sum_i t_i * prod_{j != i} x_j, with the exclusive products from two scans, so
            // zeros need no division.
            let mut perm = kept.clone();
            perm.extend(axes);
            let rows: usize = kept.iter().map(|&d| x.shape()[d]).product();
            let flat = |a: &Array| a.transpose(&perm)?.reshape(&[rows as isize, -1]);
            let (x2, t2) = (flat(x)?, flat(t)?);
            let n = x2.shape()[1] as i64;
            let left = x2.cumprod(1, false)?.pad(1.0, &[0, 1], &[0, -1], &[0, 0])?;
            let right = x2.cumprod(1, true)?.pad(1.0, &[0, -1], &[0, 1], &[0, 0])?;
            let others = if n == 0 {
                x2.clone()
            } else {
                (&left * &right)?
            };
            let out_shape: Vec<isize> = y.shape().iter().map(|&d| d as isize).collect();
            Some(
                (&t2 * &others)?
                    .sum(Axes::Some(&[1]), false)?
                    .reshape(&out_shape)?,
            )
        }
    })
}

pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    let Some(t) = &a.tangents[0] else {
        return Ok(vec![None]);
    };
    let x = &a.primals[0];
    Ok(vec![match &a.node.op {
        Op::Reduce { kind, axes } => reduce_jvp(*kind, axes, x, &a.outs[0], t)?,
        Op::Cumulative {
            kind: CumulativeKind::Sum,
            ..
        } => Some(apply1(a.node.op.clone(), &[t], vec![])?),
        Op::Cumulative {
            kind,
            axis,
            reverse,
        } => {
            let combine: fn(&Array, &Array) -> Result<Array> = match kind {
                CumulativeKind::Prod => |p, q| p * q,
                CumulativeKind::Max => |p, q| p.maximum(q),
                _ => |p, q| p.minimum(q),
            };
            let (axis, reverse) = (*axis, *reverse);
            let scan = move |v: &[Array]| -> Result<Vec<Array>> {
                let x = if reverse {
                    v[0].flip(&[axis])?
                } else {
                    v[0].clone()
                };
                let s = associative_scan(&x, axis, &combine)?;
                Ok(vec![if reverse { s.flip(&[axis])? } else { s }])
            };
            Some(
                crate::ad::jvp(scan, std::slice::from_ref(x), std::slice::from_ref(t))?
                    .1
                    .remove(0),
            )
        }
        op => return no_rule("jvp", op),
    }])
}

pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let Some(ct) = &a.cts[0] else {
        return Ok(vec![None]);
    };
    let x_ty = a.operands[0].ty();
    Ok(vec![Some(match &a.node.op {
        Op::Reduce {
            kind: ReduceKind::Sum,
            axes,
        } => {
            let kept: Vec<usize> = (0..x_ty.rank()).filter(|d| !axes.contains(d)).collect();
            ct.broadcast_in_dim(&x_ty.shape, &kept)?
        }
        Op::Cumulative {
            kind: CumulativeKind::Sum,
            axis,
            reverse,
        } => apply1(
            Op::Cumulative {
                kind: CumulativeKind::Sum,
                axis: *axis,
                reverse: !reverse,
            },
            &[ct],
            vec![],
        )?,
        op => return no_rule("transpose", op),
    })])
}

/// Batching: reduced and scanned axes shift by one.
pub(crate) fn batch(a: &crate::batching::BatchArgs) -> Result<Vec<(Array, bool)>> {
    let x = &a.args[0];
    let op = match &a.node.op {
        Op::Reduce { kind, axes } => Op::Reduce {
            kind: *kind,
            axes: axes.iter().map(|d| d + 1).collect(),
        },
        Op::Cumulative {
            kind,
            axis,
            reverse,
        } => Op::Cumulative {
            kind: *kind,
            axis: axis + 1,
            reverse: *reverse,
        },
        op => return no_rule("batching", op),
    };
    Ok(vec![(apply1(op, &[x], vec![])?, true)])
}
