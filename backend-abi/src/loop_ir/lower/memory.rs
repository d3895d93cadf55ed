//! Arrays in memory: views, element loads and in-place stores, element loops (elementwise
//! ops over arrays, fills, copies), constants, matrix products and row reductions.

use super::{decline, Declined, Lowering, Val};
use crate::loop_ir::{
    ArrayDecl, ArrayId, ArrayRole, Block, DotShape, ElementIndex, IndexTerm, Inst, Reg,
};
use crate::qir::{DotDims, Node, Op, ReduceKind};
use crate::{DType, TensorType};

/// A contiguous piece of an array, row-major in `shape`, starting at element `index`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct View {
    pub(super) index: ElementIndex,
    pub(super) shape: Vec<usize>,
    /// The array's generation the view was taken at: an in-place store starts a new one,
    /// and reading a view of an older one would see the store, so it declines.
    pub(super) generation: u32,
}

fn row_major_strides(shape: &[usize]) -> Vec<u64> {
    let mut s = vec![1u64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * shape[d + 1] as u64;
    }
    s
}

/// `clamp(start, 0, dim - size)` for every axis, as terms of an element index (an axis the
/// slice spans whole clamps every start to 0 and adds nothing).
fn start_terms(starts: &[Reg], dims: &[usize], sizes: &[usize]) -> Vec<IndexTerm> {
    let strides = row_major_strides(dims);
    starts
        .iter()
        .zip(dims.iter().zip(sizes))
        .zip(strides)
        .filter(|((_, (d, z)), _)| d > z)
        .map(|((start, (d, z)), stride)| IndexTerm {
            start: *start,
            max: (d - z) as u64,
            stride,
        })
        .collect()
}

/// Whether a slice of `sizes` out of `dims` is one contiguous run of memory: ones, then at
/// most one partial axis, then whole axes.
fn contiguous(dims: &[usize], sizes: &[usize]) -> bool {
    let first = sizes.iter().position(|&z| z != 1).unwrap_or(sizes.len());
    dims[first.saturating_add(1).min(dims.len())..]
        == sizes[first.saturating_add(1).min(sizes.len())..]
}

/// `Lowering::node` fills splats before the nodes that read memory; one reaching them is a
/// bug, declined rather than miscompiled.
fn unfilled(op: &Op) -> Declined {
    decline(op, "a splat reached a node that reads memory (a bug)")
}

impl View {
    /// The element `counter` of this view (a contiguous run).
    fn at(&self, counter: Reg) -> ElementIndex {
        let mut i = self.index.clone();
        let len = self.shape.iter().product::<usize>() as u64;
        i.terms.push(IndexTerm {
            start: counter,
            max: len - 1,
            stride: 1,
        });
        i
    }

    fn len(&self) -> usize {
        self.shape.iter().product()
    }
}

impl Lowering {
    /// The registers of a dynamic slice's start operands.
    fn starts(&self, args: &[Val], op: &Op) -> Result<Vec<Reg>, Declined> {
        args.iter().map(|a| self.scalar(a, op)).collect()
    }

    /// `dynamic_slice`: one element is a load; a contiguous piece is a view.
    pub(super) fn dynamic_slice(
        &mut self,
        n: &Node,
        args: &[Val],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let Op::DynamicSlice { sizes } = &n.op else {
            return Err(decline(&n.op, "not a dynamic_slice"));
        };
        let v = match &args[0] {
            Val::Scalar(r) => return Ok(vec![self.copy(*r, out)]),
            Val::Array(v) => v,
            Val::Splat { .. } => return Err(unfilled(&n.op)),
        };
        self.current(v, &n.op)?;
        let starts = self.starts(&args[1..], &n.op)?;
        if !contiguous(&v.shape, sizes) {
            return Err(decline(&n.op, "the slice is not contiguous in memory"));
        }
        let mut index = v.index.clone();
        index.terms.extend(start_terms(&starts, &v.shape, sizes));
        if n.results[0].num_elements() == 1 {
            let dst = self.reg(n.results[0].dtype);
            out.0.push(Inst::Load { dst, index });
            return Ok(vec![Val::Scalar(dst)]);
        }
        Ok(vec![Val::Array(View {
            index,
            shape: sizes.clone(),
            generation: v.generation,
        })])
    }

    /// `dynamic_update_slice`: a store of one element, or an element loop copying a
    /// contiguous window, into the operand's memory (its generation ends), or into a copy
    /// of it where a later node still reads the operand (or the region may not write it).
    pub(super) fn dynamic_update_slice(
        &mut self,
        n: &Node,
        args: &[Val],
        live: &[ArrayId],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let v = match &args[0] {
            // The update covers the whole one-element operand.
            Val::Scalar(_) => {
                let src = self.scalar(&args[1], &n.op)?;
                return Ok(vec![self.copy(src, out)]);
            }
            Val::Array(v) if self.frozen > 0 || live.contains(&v.index.array) => {
                &self.own_copy(v, &n.op, out)?
            }
            Val::Array(v) => v,
            Val::Splat { .. } => return Err(unfilled(&n.op)),
        };
        self.current(v, &n.op)?;
        let starts = self.starts(&args[2..], &n.op)?;
        let src = match &args[1] {
            Val::Scalar(src) => *src,
            Val::Splat { .. } => return Err(unfilled(&n.op)),
            Val::Array(u) => {
                // A window of several elements: copied in by an element loop.
                self.current(u, &n.op)?;
                if !contiguous(&v.shape, &u.shape) || u.index.array == v.index.array {
                    return Err(decline(
                        &n.op,
                        "the window is not contiguous, or the update overlaps it",
                    ));
                }
                let mut index = v.index.clone();
                index.terms.extend(start_terms(&starts, &v.shape, &u.shape));
                let window = View {
                    index,
                    shape: u.shape.clone(),
                    generation: v.generation,
                };
                self.copy_into(&window, u, &n.op, out)?;
                let generation = self.generations[v.index.array.index()];
                return Ok(vec![Val::Array(View {
                    generation,
                    ..v.clone()
                })]);
            }
        };
        let ones = vec![1; v.shape.len()];
        let mut index = v.index.clone();
        index.terms.extend(start_terms(&starts, &v.shape, &ones));
        self.arrays[v.index.array.index()].written = true;
        out.0.push(Inst::Store { index, src });
        let generation = self.bump(v.index.array);
        Ok(vec![Val::Array(View {
            generation,
            ..v.clone()
        })])
    }

    /// The same elements under the node's result shape.
    pub(super) fn reshape(&mut self, n: &Node, v: &View) -> Result<Vec<Val>, Declined> {
        self.current(v, &n.op)?;
        Ok(vec![Val::Array(View {
            shape: n.results[0].shape.clone(),
            ..v.clone()
        })])
    }

    /// A constant of more than one element: an array of its own, never written.
    pub(super) fn constant(&mut self, h: &crate::HostArray) -> Val {
        self.arrays.push(ArrayDecl {
            dtype: h.ty.dtype,
            len: h.ty.num_elements(),
            written: false,
            role: ArrayRole::Constant(h.clone()),
        });
        self.generations.push(0);
        Val::Array(View {
            index: ElementIndex {
                array: ArrayId((self.arrays.len() - 1) as u32),
                offset: 0,
                terms: Vec::new(),
            },
            shape: h.ty.shape.clone(),
            generation: 0,
        })
    }

    /// Memory for an array value computed inside the function, one per value.
    pub(super) fn scratch(&mut self, t: &TensorType, op: &Op) -> Result<View, Declined> {
        let len = t.num_elements();
        if len == 0 || len > i32::MAX as usize {
            return Err(decline(op, "an empty array, or one past i32 indices"));
        }
        self.arrays.push(ArrayDecl {
            dtype: t.dtype,
            len,
            written: true,
            role: ArrayRole::Scratch,
        });
        self.generations.push(0);
        Ok(View {
            index: ElementIndex {
                array: ArrayId((self.arrays.len() - 1) as u32),
                offset: 0,
                terms: Vec::new(),
            },
            shape: t.shape.clone(),
            generation: 0,
        })
    }

    /// A copy of `v` in new memory: what an update works on when the value it updates is
    /// still read afterwards or shared.
    pub(super) fn own_copy(
        &mut self,
        v: &View,
        op: &Op,
        out: &mut Block,
    ) -> Result<View, Declined> {
        self.current(v, op)?;
        let t = TensorType::new(self.arrays[v.index.array.index()].dtype, v.shape.clone());
        let mut copy = self.scratch(&t, op)?;
        self.copy_into(&copy, v, op, out)?;
        copy.generation = self.generations[copy.index.array.index()];
        Ok(copy)
    }

    /// An element loop of `len` trips, its body appended by `each` given the counter.
    fn element_loop(
        &mut self,
        len: usize,
        op: &Op,
        out: &mut Block,
        each: impl FnOnce(&mut Self, Reg, &mut Block) -> Result<(), Declined>,
    ) -> Result<(), Declined> {
        if len > i32::MAX as usize {
            return Err(decline(op, "an element loop past i32 indices"));
        }
        let counter = self.reg(DType::I32);
        let mut body = Block::default();
        each(self, counter, &mut body)?;
        out.0.push(Inst::Loop {
            counter,
            count: len as u64,
            body,
        });
        Ok(())
    }

    fn load(&mut self, v: &View, counter: Reg, body: &mut Block) -> Reg {
        let dst = self.reg(self.arrays[v.index.array.index()].dtype);
        body.0.push(Inst::Load {
            dst,
            index: v.at(counter),
        });
        dst
    }

    /// An elementwise op over arrays of one shape: one element loop, each element computed
    /// by the op's scalar instruction (a splat operand is its register), into an operand's
    /// memory where that operand dies here (and no other operand overlaps it), else into a
    /// new array. Over splats alone it is one scalar instruction, a splat again.
    pub(super) fn map(
        &mut self,
        n: &Node,
        args: &[Val],
        live: &[ArrayId],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let t = &n.results[0];
        let splats: Option<Vec<Reg>> = args
            .iter()
            .map(|a| match a {
                Val::Splat { x, .. } => Some(*x),
                Val::Scalar(_) | Val::Array(_) => None,
            })
            .collect();
        if let Some(xs) = splats {
            let y = self.reg(t.dtype);
            self.scalar_node(n, &xs, &[y], out)?;
            return Ok(vec![Val::Splat {
                x: y,
                shape: t.shape.clone(),
            }]);
        }
        let mut views: Vec<View> = Vec::new();
        for a in args {
            match a {
                Val::Array(v) => {
                    self.current(v, &n.op)?;
                    views.push(v.clone());
                }
                Val::Splat { .. } => {}
                Val::Scalar(_) => {
                    return Err(decline(&n.op, "it mixes one-element and larger operands"))
                }
            }
        }
        let dying = views.iter().find(|u| {
            self.frozen == 0
                && !live.contains(&u.index.array)
                && self.arrays[u.index.array.index()].dtype == t.dtype
                && views
                    .iter()
                    .all(|w| w.index.array != u.index.array || w == *u)
        });
        let dst = match dying {
            Some(u) => {
                self.arrays[u.index.array.index()].written = true;
                View {
                    shape: t.shape.clone(),
                    ..u.clone()
                }
            }
            None => self.scratch(t, &n.op)?,
        };
        self.element_loop(dst.len(), &n.op, out, |l, i, body| {
            let xs: Vec<Reg> = args
                .iter()
                .map(|a| match a {
                    Val::Array(v) => l.load(v, i, body),
                    Val::Splat { x, .. } | Val::Scalar(x) => *x,
                })
                .collect();
            let y = l.reg(t.dtype);
            l.scalar_node(n, &xs, &[y], body)?;
            body.0.push(Inst::Store {
                index: dst.at(i),
                src: y,
            });
            Ok(())
        })?;
        let generation = self.bump(dst.index.array);
        Ok(vec![Val::Array(View { generation, ..dst })])
    }

    /// Fills `dst`'s memory with `x`, which starts a new generation of its array.
    pub(super) fn fill(
        &mut self,
        dst: &View,
        x: Reg,
        op: &Op,
        out: &mut Block,
    ) -> Result<(), Declined> {
        self.write_all(dst, &Val::Scalar(x), op, out)
    }

    /// Writes every element of `dst` from `src` (a view of its length, or one register),
    /// which starts a new generation of `dst`'s array.
    fn write_all(
        &mut self,
        dst: &View,
        src: &Val,
        op: &Op,
        out: &mut Block,
    ) -> Result<(), Declined> {
        self.element_loop(dst.len(), op, out, |l, i, body| {
            let x = match src {
                Val::Array(v) => l.load(v, i, body),
                Val::Scalar(x) | Val::Splat { x, .. } => *x,
            };
            body.0.push(Inst::Store {
                index: dst.at(i),
                src: x,
            });
            Ok(())
        })?;
        self.arrays[dst.index.array.index()].written = true;
        self.bump(dst.index.array);
        Ok(())
    }

    /// `args` with every splat filled into new memory, for a node that reads memory.
    pub(super) fn materialize_all(
        &mut self,
        args: &[Val],
        op: &Op,
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let mut filled = Vec::with_capacity(args.len());
        for a in args {
            filled.push(match a {
                Val::Splat { x, shape } => {
                    let t = TensorType::new(self.regs[x.index()], shape.clone());
                    let mut v = self.scratch(&t, op)?;
                    self.fill(&v, *x, op, out)?;
                    v.generation = self.generations[v.index.array.index()];
                    Val::Array(v)
                }
                Val::Scalar(_) | Val::Array(_) => a.clone(),
            });
        }
        Ok(filled)
    }

    /// Copies `src` into `dst`'s memory (views of one length, different arrays), which
    /// starts a new generation of `dst`'s array.
    pub(super) fn copy_into(
        &mut self,
        dst: &View,
        src: &View,
        op: &Op,
        out: &mut Block,
    ) -> Result<(), Declined> {
        self.write_all(dst, &Val::Array(src.clone()), op, out)
    }

    /// `reduce` over trailing axes (each output element one contiguous row, read in place
    /// as the interpreter reads it); one output element comes back as a register.
    pub(super) fn reduce(
        &mut self,
        n: &Node,
        kind: ReduceKind,
        axes: &[usize],
        v: &View,
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        self.current(v, &n.op)?;
        let rank = v.shape.len();
        let mut sorted = axes.to_vec();
        sorted.sort_unstable();
        if sorted
            .iter()
            .enumerate()
            .any(|(i, a)| *a != rank - sorted.len() + i)
        {
            return Err(decline(
                &n.op,
                "it reduces a leading axis (the rows would need a transpose)",
            ));
        }
        let t = &n.results[0];
        let rows = t.num_elements() as u64;
        let len = v.len() as u64 / rows.max(1);
        let dst = self.scratch(&TensorType::new(t.dtype, vec![rows as usize]), &n.op)?;
        out.0.push(Inst::Reduce {
            kind,
            dtype: t.dtype,
            dst: dst.index.array,
            src: v.index.clone(),
            rows,
            len,
        });
        if rows == 1 {
            let x = self.reg(t.dtype);
            out.0.push(Inst::Load {
                dst: x,
                index: dst.index.clone(),
            });
            return Ok(vec![Val::Scalar(x)]);
        }
        Ok(vec![Val::Array(View {
            shape: t.shape.clone(),
            ..dst
        })])
    }

    /// `dot_general` of floats whose operands can be read in place as batched matrices
    /// (row-major or transposed, as the interpreter reads them without a copy).
    pub(super) fn dot(
        &mut self,
        n: &Node,
        d: &DotDims,
        l: &View,
        r: &View,
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        self.current(l, &n.op)?;
        self.current(r, &n.op)?;
        let dtype = n.results[0].dtype;
        if !dtype.is_float() {
            return Err(decline(&n.op, "an integer matrix product"));
        }
        let free = |rank: usize, batch: &[usize], contract: &[usize]| -> Vec<usize> {
            (0..rank)
                .filter(|i| !batch.contains(i) && !contract.contains(i))
                .collect()
        };
        let lfree = free(l.shape.len(), &d.lhs_batch, &d.lhs_contract);
        let rfree = free(r.shape.len(), &d.rhs_batch, &d.rhs_contract);
        let size = |shape: &[usize], dims: &[usize]| {
            dims.iter().map(|&i| shape[i] as u64).product::<u64>()
        };
        let (batch, m, k) = (
            size(&l.shape, &d.lhs_batch),
            size(&l.shape, &lfree),
            size(&l.shape, &d.lhs_contract),
        );
        let n_cols = size(&r.shape, &rfree);
        let lhs_strides = layout(
            [&d.lhs_batch, &lfree, &d.lhs_contract],
            [&d.lhs_batch, &d.lhs_contract, &lfree],
            m,
            k,
        );
        let rhs_strides = layout(
            [&d.rhs_batch, &d.rhs_contract, &rfree],
            [&d.rhs_batch, &rfree, &d.rhs_contract],
            k,
            n_cols,
        );
        let (Some(lhs_strides), Some(rhs_strides)) = (lhs_strides, rhs_strides) else {
            return Err(decline(&n.op, "an operand that would need a transpose"));
        };
        let dst = self.scratch(&n.results[0], &n.op)?;
        out.0.push(Inst::Dot {
            dtype,
            dst: dst.index.array,
            lhs: l.index.clone(),
            rhs: r.index.clone(),
            shape: DotShape {
                batch,
                m,
                k,
                n: n_cols,
                lhs_strides,
                rhs_strides,
            },
        });
        Ok(vec![Val::Array(dst)])
    }
}

/// The (row, column) strides of an operand read in place as (batch, rows, cols): its axes
/// in `order` are row-major, in `transposed` (batch, cols, rows) column-major; any other
/// order would need a copy. The same choice, in the same order, as the CPU interpreter's.
fn layout(
    order: [&[usize]; 3],
    transposed: [&[usize]; 3],
    rows: u64,
    cols: u64,
) -> Option<(u64, u64)> {
    let identity = |o: [&[usize]; 3]| {
        o.iter()
            .flat_map(|d| d.iter())
            .enumerate()
            .all(|(i, p)| i == *p)
    };
    if identity(order) {
        Some((cols, 1))
    } else if identity(transposed) {
        Some((1, rows))
    } else {
        None
    }
}
