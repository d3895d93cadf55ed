//! Arrays in memory: views, element loads and in-place stores, element loops (elementwise
//! ops over arrays, fills, copies), constants, matrix products and row reductions.

use super::views::{levels, start_terms, unfilled, View};
use super::{decline, Declined, Lowering, Val};
use crate::loop_ir::{
    ArrayDecl, ArrayId, ArrayRole, Block, DotShape, ElementIndex, IndexTerm, Inst, Reg,
};
use crate::qir::{DotDims, Node, Op, ReduceKind};
use crate::{DType, TensorType};

impl Lowering {
    /// The registers of a dynamic slice's start operands.
    fn starts(&self, args: &[Val], op: &Op) -> Result<Vec<Reg>, Declined> {
        args.iter().map(|a| self.scalar(a, op)).collect()
    }

    /// `dynamic_slice`: one element is a load; more are a view at clamped starts.
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
        let mut index = v.index.clone();
        index
            .terms
            .extend(start_terms(&starts, &v.shape, sizes, &v.strides));
        if n.results[0].num_elements() == 1 {
            let dst = self.reg(n.results[0].dtype);
            out.0.push(Inst::Load { dst, index });
            return Ok(vec![Val::Scalar(dst)]);
        }
        Ok(vec![Val::Array(View {
            index,
            shape: sizes.clone(),
            strides: v.strides.clone(),
            generation: v.generation,
        })])
    }

    /// `dynamic_update_slice`: a store of one element, or element loops copying a window,
    /// into the operand's memory (its generation ends), or into a copy of it where a later
    /// node still reads the operand (or the region may not write it, or it is a broadcast).
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
            Val::Array(v) if self.frozen > 0 || live.contains(&v.index.array) || !v.writable() => {
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
                if u.index.array == v.index.array {
                    return Err(decline(&n.op, "the update overlaps the operand"));
                }
                let mut index = v.index.clone();
                index
                    .terms
                    .extend(start_terms(&starts, &v.shape, &u.shape, &v.strides));
                let window = View {
                    index,
                    shape: u.shape.clone(),
                    strides: v.strides.clone(),
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
        index
            .terms
            .extend(start_terms(&starts, &v.shape, &ones, &v.strides));
        self.arrays[v.index.array.index()].written = true;
        out.0.push(Inst::Store { index, src });
        let generation = self.bump(v.index.array);
        Ok(vec![Val::Array(View {
            generation,
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
        Val::Array(View::dense(
            ElementIndex {
                array: ArrayId((self.arrays.len() - 1) as u32),
                offset: 0,
                terms: Vec::new(),
            },
            h.ty.shape.clone(),
            0,
        ))
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
        Ok(View::dense(
            ElementIndex {
                array: ArrayId((self.arrays.len() - 1) as u32),
                offset: 0,
                terms: Vec::new(),
            },
            t.shape.clone(),
            0,
        ))
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

    /// The element loops over `shape` (`views::levels`), their body appended by `each`
    /// given each view's element index (each of `views` of that shape).
    fn element_nest(
        &mut self,
        shape: &[usize],
        views: &[&View],
        op: &Op,
        out: &mut Block,
        each: impl FnOnce(&mut Self, &[ElementIndex], &mut Block) -> Result<(), Declined>,
    ) -> Result<(), Declined> {
        let levels = levels(shape, views);
        if levels.iter().any(|(count, _)| *count > i32::MAX as u64) {
            return Err(decline(op, "an element loop past i32 indices"));
        }
        let counters: Vec<Reg> = levels.iter().map(|_| self.reg(DType::I32)).collect();
        let indices: Vec<ElementIndex> = (0..views.len())
            .map(|k| {
                let mut i = views[k].index.clone();
                for ((count, steps), c) in levels.iter().zip(&counters) {
                    // A broadcast axis adds nothing to the address.
                    if steps[k] != 0 {
                        i.terms.push(IndexTerm {
                            start: *c,
                            max: count - 1,
                            stride: steps[k],
                        });
                    }
                }
                i
            })
            .collect();
        let mut body = Block::default();
        each(self, &indices, &mut body)?;
        for ((count, _), counter) in levels.iter().zip(&counters).rev() {
            body = Block(vec![Inst::Loop {
                counter: *counter,
                count: *count,
                body,
            }]);
        }
        out.0.extend(body.0);
        Ok(())
    }

    fn load(&mut self, index: &ElementIndex, body: &mut Block) -> Reg {
        let dst = self.reg(self.arrays[index.array.index()].dtype);
        body.0.push(Inst::Load {
            dst,
            index: index.clone(),
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
                && u.writable()
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
        let mut all = vec![&dst];
        all.extend(views.iter());
        self.element_nest(&t.shape, &all, &n.op, out, |l, at, body| {
            // `at[0]` is the result's; the operands' follow in order.
            let mut next = 1;
            let mut xs = Vec::with_capacity(args.len());
            for a in args {
                xs.push(match a {
                    Val::Array(_) => {
                        next += 1;
                        l.load(&at[next - 1], body)
                    }
                    Val::Splat { x, .. } | Val::Scalar(x) => *x,
                });
            }
            let y = l.reg(t.dtype);
            l.scalar_node(n, &xs, &[y], body)?;
            body.0.push(Inst::Store {
                index: at[0].clone(),
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

    /// Writes every element of `dst` from `src` (a view of its shape, or one register),
    /// which starts a new generation of `dst`'s array.
    pub(super) fn write_all(
        &mut self,
        dst: &View,
        src: &Val,
        op: &Op,
        out: &mut Block,
    ) -> Result<(), Declined> {
        let mut views = vec![dst];
        if let Val::Array(v) = src {
            self.current(v, op)?;
            if v.shape != dst.shape {
                return Err(decline(op, "a copy between shapes (a bug)"));
            }
            views.push(v);
        }
        self.element_nest(&dst.shape, &views, op, out, |l, at, body| {
            let x = match src {
                Val::Array(_) => l.load(&at[1], body),
                Val::Scalar(x) | Val::Splat { x, .. } => *x,
            };
            body.0.push(Inst::Store {
                index: at[0].clone(),
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

    /// Copies `src` into `dst`'s memory (views of one shape, different arrays), which
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

    /// `reduce` over any axes, as rows (each output element one contiguous row, read in
    /// place where the reduced axes are trailing, else from a transposed copy, as the
    /// interpreter reads them); one output element comes back as a register.
    pub(super) fn reduce(
        &mut self,
        n: &Node,
        kind: ReduceKind,
        axes: &[usize],
        v: &View,
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        self.current(v, &n.op)?;
        // As the interpreter does: the kept axes, then the reduced ones in order, so each
        // output element folds one contiguous row (a transpose is copied first).
        let mut sorted = axes.to_vec();
        sorted.sort_unstable();
        let perm: Vec<usize> = (0..v.shape.len())
            .filter(|a| !axes.contains(a))
            .chain(sorted)
            .collect();
        let v = View {
            shape: perm.iter().map(|&a| v.shape[a]).collect(),
            strides: perm.iter().map(|&a| v.strides[a]).collect(),
            ..v.clone()
        };
        let v = &self.dense(&v, &n.op, out)?;
        let t = &n.results[0];
        let rows = t.num_elements() as u64;
        let len = v.len() as u64 / rows.max(1);
        let dst = self.scratch(&TensorType::new(t.dtype, vec![rows as usize]), &n.op)?;
        out.0.push(Inst::Reduce {
            kind,
            dtype: t.dtype,
            dst: dst.index.array,
            src: v.index.clone(),
            times: None,
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
        Ok(vec![Val::Array(View::dense(
            dst.index,
            t.shape.clone(),
            dst.generation,
        ))])
    }

    /// `dot_general` of floats: operands read in place as batched matrices where they are
    /// row-major or transposed, else copied into that order first (as the interpreter
    /// reads them).
    pub(super) fn dot(
        &mut self,
        n: &Node,
        d: &DotDims,
        l: &View,
        r: &View,
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let mut l = self.dense(l, &n.op, out)?;
        let mut r = self.dense(r, &n.op, out)?;
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
        // An operand in another order is copied into (batch, rows, cols) first, as the
        // interpreter copies it, so the product reads the same matrices.
        let lhs_strides = match layout(
            [&d.lhs_batch, &lfree, &d.lhs_contract],
            [&d.lhs_batch, &d.lhs_contract, &lfree],
            m,
            k,
        ) {
            Some(s) => s,
            None => {
                l = self.ordered_copy(&l, [&d.lhs_batch, &lfree, &d.lhs_contract], &n.op, out)?;
                (k, 1)
            }
        };
        let rhs_strides = match layout(
            [&d.rhs_batch, &d.rhs_contract, &rfree],
            [&d.rhs_batch, &rfree, &d.rhs_contract],
            k,
            n_cols,
        ) {
            Some(s) => s,
            None => {
                r = self.ordered_copy(&r, [&d.rhs_batch, &d.rhs_contract, &rfree], &n.op, out)?;
                (n_cols, 1)
            }
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

    /// A row-major copy of `v` with its axes in `order` (the groups in turn).
    fn ordered_copy(
        &mut self,
        v: &View,
        order: [&[usize]; 3],
        op: &Op,
        out: &mut Block,
    ) -> Result<View, Declined> {
        let perm: Vec<usize> = order.iter().flat_map(|g| g.iter().copied()).collect();
        let permuted = View {
            shape: perm.iter().map(|&a| v.shape[a]).collect(),
            strides: perm.iter().map(|&a| v.strides[a]).collect(),
            ..v.clone()
        };
        self.own_copy(&permuted, op, out)
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
