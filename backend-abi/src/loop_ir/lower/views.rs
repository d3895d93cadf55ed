//! Views: a value's elements read in place, at strides, from memory another value owns. A
//! slice, a transpose, a broadcast (stride 0) or a reshape of dense memory costs no
//! instruction; `pad` and `concatenate` write their operands into windows of new memory.
//! Element loops walk views of any strides (`levels`), so a stencil's shifted slices of a
//! padded array are read where they lie.

use super::{decline, Declined, Lowering, Val};
use crate::loop_ir::{Block, ElementIndex, IndexTerm, Reg};
use crate::qir::{Node, Op};

/// The elements of an array that a value of `shape` is: element `(i_0, ..)` of the value is
/// element `index + Σ i_d * strides[d]` of the array.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct View {
    pub(super) index: ElementIndex,
    pub(super) shape: Vec<usize>,
    /// Each axis's step in elements: row-major for memory a value owns; a slice, transpose
    /// or broadcast (step 0) of it reads the same memory at other steps.
    pub(super) strides: Vec<u64>,
    /// The array's generation the view was taken at: an in-place store starts a new one,
    /// and reading a view of an older one would see the store, so it declines.
    pub(super) generation: u32,
}

pub(super) fn row_major_strides(shape: &[usize]) -> Vec<u64> {
    let mut s = vec![1u64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1] as u64;
    }
    s
}

impl View {
    /// Row-major memory of `shape` from `index`.
    pub(super) fn dense(index: ElementIndex, shape: Vec<usize>, generation: u32) -> View {
        View {
            index,
            strides: row_major_strides(&shape),
            shape,
            generation,
        }
    }

    /// Row-major, as a library call (a matrix product, a row reduction) reads memory.
    pub(super) fn is_dense(&self) -> bool {
        let row_major = row_major_strides(&self.shape);
        (0..self.shape.len()).all(|d| self.shape[d] == 1 || self.strides[d] == row_major[d])
    }

    /// No two of its elements share memory, so an update may write it in place (a
    /// broadcast's may not).
    pub(super) fn writable(&self) -> bool {
        self.shape
            .iter()
            .zip(&self.strides)
            .all(|(n, s)| *n == 1 || *s != 0)
    }

    pub(super) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// The piece of `shape` from element `offset` on, at this view's strides times `steps`.
    fn window(&self, offset: u64, shape: Vec<usize>, steps: &[u64]) -> View {
        let mut index = self.index.clone();
        index.offset += offset;
        View {
            index,
            strides: self.strides.iter().zip(steps).map(|(s, k)| s * k).collect(),
            shape,
            generation: self.generation,
        }
    }
}

/// The element loops that walk `shape` in row-major order through every view of `views`
/// (each of that shape): one level per axis, none for axes of length 1 (`fuse` merges the
/// levels every access steps through evenly, after fusing nests of one index space). Each
/// level is its trip count and each view's step.
pub(super) fn levels(shape: &[usize], views: &[&View]) -> Vec<(u64, Vec<u64>)> {
    shape
        .iter()
        .enumerate()
        .filter(|(_, n)| **n != 1)
        .map(|(d, n)| (*n as u64, views.iter().map(|v| v.strides[d]).collect()))
        .collect()
}

/// `clamp(start, 0, dim - size)` for every axis, as terms of an element index at the
/// axes' `strides` (an axis the slice spans whole clamps every start to 0 and adds nothing).
pub(super) fn start_terms(
    starts: &[Reg],
    dims: &[usize],
    sizes: &[usize],
    strides: &[u64],
) -> Vec<IndexTerm> {
    starts
        .iter()
        .zip(dims.iter().zip(sizes))
        .zip(strides)
        .filter(|((_, (d, z)), _)| d > z)
        .map(|((start, (d, z)), stride)| IndexTerm {
            start: *start,
            max: (d - z) as u64,
            stride: *stride,
        })
        .collect()
}

/// The shape of a value of rank `rank`.
fn shape_of(v: &Val, rank: usize) -> Vec<usize> {
    match v {
        Val::Array(v) => v.shape.clone(),
        Val::Splat { shape, .. } => shape.clone(),
        Val::Scalar(_) => vec![1; rank],
    }
}

/// `Lowering::node` fills splats before the nodes that read memory; one reaching them is a
/// bug, declined rather than miscompiled.
pub(super) fn unfilled(op: &Op) -> Declined {
    decline(op, "a splat reached a node that reads memory (a bug)")
}

impl Lowering {
    /// `v` as row-major memory: itself, or a copy.
    pub(super) fn dense(&mut self, v: &View, op: &Op, out: &mut Block) -> Result<View, Declined> {
        self.current(v, op)?;
        if v.is_dense() {
            Ok(v.clone())
        } else {
            self.own_copy(v, op, out)
        }
    }

    /// The same elements under the node's result shape (row-major: a strided view is
    /// copied first).
    pub(super) fn reshape(
        &mut self,
        n: &Node,
        v: &View,
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let v = self.dense(v, &n.op, out)?;
        Ok(vec![Val::Array(View::dense(
            v.index,
            n.results[0].shape.clone(),
            v.generation,
        ))])
    }

    /// The operand's axes in another order, read in place.
    pub(super) fn transpose(
        &mut self,
        n: &Node,
        perm: &[usize],
        v: &View,
    ) -> Result<Vec<Val>, Declined> {
        self.current(v, &n.op)?;
        Ok(vec![Val::Array(View {
            shape: perm.iter().map(|&a| v.shape[a]).collect(),
            strides: perm.iter().map(|&a| v.strides[a]).collect(),
            ..v.clone()
        })])
    }

    /// The operand repeated along new axes (and along its own axes of length 1): those
    /// step 0, read in place.
    pub(super) fn broadcast(
        &mut self,
        n: &Node,
        dims: &[usize],
        v: &View,
    ) -> Result<Vec<Val>, Declined> {
        self.current(v, &n.op)?;
        let shape = n.results[0].shape.clone();
        let mut strides = vec![0u64; shape.len()];
        for (i, &d) in dims.iter().enumerate() {
            if v.shape[i] == shape[d] {
                strides[d] = v.strides[i];
            }
        }
        Ok(vec![Val::Array(View {
            shape,
            strides,
            ..v.clone()
        })])
    }

    /// A static slice: a window of the operand at its strides times the steps; one element
    /// is a load.
    pub(super) fn slice(
        &mut self,
        n: &Node,
        start: &[usize],
        steps: &[usize],
        v: &View,
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        self.current(v, &n.op)?;
        let offset = start
            .iter()
            .zip(&v.strides)
            .map(|(a, s)| *a as u64 * s)
            .sum();
        let steps: Vec<u64> = steps.iter().map(|&k| k as u64).collect();
        let w = v.window(offset, n.results[0].shape.clone(), &steps);
        if n.results[0].num_elements() == 1 {
            let dst = self.reg(n.results[0].dtype);
            out.0.push(crate::loop_ir::Inst::Load {
                dst,
                index: w.index,
            });
            return Ok(vec![Val::Scalar(dst)]);
        }
        Ok(vec![Val::Array(w)])
    }

    /// `pad`: new memory with the operand written into the window its low and interior
    /// padding leave, and the padding value everywhere else: the slabs around the window
    /// (or, with interior padding, the whole array first). A negative padding (a crop)
    /// declines.
    pub(super) fn pad(
        &mut self,
        n: &Node,
        (low, high): (&[i64], &[i64]),
        interior: &[usize],
        args: &[Val],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let value = self.scalar(&args[1], &n.op)?;
        let low: Vec<u64> = low
            .iter()
            .map(|&l| u64::try_from(l))
            .collect::<Result<_, _>>()
            .map_err(|_| decline(&n.op, "a negative padding (a crop)"))?;
        if high.iter().any(|h| *h < 0) {
            return Err(decline(&n.op, "a negative padding (a crop)"));
        }
        let mut dst = self.scratch(&n.results[0], &n.op)?;
        let inner = shape_of(&args[0], dst.shape.len());
        if interior.iter().any(|i| *i != 0) {
            self.fill(&dst, value, &n.op, out)?;
        } else {
            let ones = vec![1u64; dst.shape.len()];
            for d in 0..dst.shape.len() {
                let around = [
                    (0, low[d] as usize),
                    (low[d] as usize + inner[d], dst.shape[d]),
                ];
                for (from, to) in around.into_iter().filter(|(a, b)| a < b) {
                    let mut shape = dst.shape.clone();
                    shape[d] = to - from;
                    let slab = dst.window(from as u64 * dst.strides[d], shape, &ones);
                    self.fill(&slab, value, &n.op, out)?;
                }
            }
        }
        dst.generation = self.generations[dst.index.array.index()];
        let offset = low.iter().zip(&dst.strides).map(|(l, s)| l * s).sum();
        let steps: Vec<u64> = interior.iter().map(|&i| i as u64 + 1).collect();
        let window = dst.window(offset, inner, &steps);
        self.write_all(&window, &args[0], &n.op, out)?;
        dst.generation = self.generations[dst.index.array.index()];
        Ok(vec![Val::Array(dst)])
    }

    /// `concatenate`: new memory, each operand written into its window along the axis.
    pub(super) fn concatenate(
        &mut self,
        n: &Node,
        dim: usize,
        args: &[Val],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let mut dst = self.scratch(&n.results[0], &n.op)?;
        let ones = vec![1u64; dst.shape.len()];
        let mut at = 0u64;
        for a in args {
            let shape = shape_of(a, dst.shape.len());
            let extent = shape[dim] as u64;
            if extent > 0 {
                let window = dst.window(at * dst.strides[dim], shape, &ones);
                self.write_all(&window, a, &n.op, out)?;
            }
            at += extent;
        }
        dst.generation = self.generations[dst.index.array.index()];
        Ok(vec![Val::Array(dst)])
    }
}
