//! QIR to loop IR: one-element values in registers, larger ones as arrays in memory, read
//! and updated one element at a time.

use super::{
    ArrayDecl, ArrayId, ArrayRole, Block, Branch, ElementIndex, Function, Inst, Operand, Reg,
};
use crate::qir::{BinaryOp, Node, Op, Program, ReduceKind, ValueId};
use crate::{DType, TensorType};
use std::fmt;
use views::View;

/// Why a node stays with the interpreter: the op, or the shape, the loop IR does not cover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declined {
    pub op: &'static str,
    pub reason: &'static str,
}

impl fmt::Display for Declined {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.op, self.reason)
    }
}

impl std::error::Error for Declined {}

/// Lowers one `while` node of a validated program. Its one-element carries, and every
/// one-element value of its regions, become registers; larger values stay in memory
/// (`Function::arrays`): read through loads and views, computed by element loops, matrix
/// products and row reductions, updated in place where nothing reads the old value (else
/// on a copy); slices, transposes and broadcasts are views of it read in place, `pad` and
/// `concatenate` write windows of new memory. Anything else that touches an array
/// (`reverse`, gather/scatter, cumulative ops, linear algebra) is `Declined`, naming the
/// op.
///
/// ```
/// use quabla_abi::loop_ir::{lower_while, Operand};
/// use quabla_abi::qir::Program;
///
/// // A while that reverses a matrix stays with the interpreter.
/// let p = Program::parse(
///     "program(%0: f32[2,2]) {
///        %1 = while(%0) : f32[2,2] {
///          cond(%0: f32[2,2]) {
///            %1 = constant[value=[false]]() : bool[]
///            return %1
///          }
///          body(%0: f32[2,2]) {
///            %1 = reverse[dims=[0]](%0) : f32[2,2]
///            return %1
///          }
///        }
///        return %1
///      }",
/// )
/// .unwrap();
/// assert_eq!(lower_while(&p.nodes[0]).unwrap_err().op, "reverse");
///
/// // One that writes one element a step updates its memory in place.
/// let p = Program::parse(
///     "program(%0: i32[], %1: f32[8]) {
///        %2, %3 = while(%0, %1) : i32[], f32[8] {
///          cond(%0: i32[], %1: f32[8]) {
///            %2 = constant[value=[8]]() : i32[]
///            %3 = compare[dir=lt](%0, %2) : bool[]
///            return %3
///          }
///          body(%0: i32[], %1: f32[8]) {
///            %2 = convert(%0) : f32[1]
///            %3 = dynamic_update_slice(%1, %2, %0) : f32[8]
///            %4 = constant[value=[1]]() : i32[]
///            %5 = add(%0, %4) : i32[]
///            return %5, %3
///          }
///        }
///        return %3
///      }",
/// )
/// .unwrap();
/// let f = lower_while(&p.nodes[0]).unwrap();
/// assert!(matches!(f.operands[..], [Operand::Scalar, Operand::Array(_)]));
/// assert!(f.arrays[0].written);
/// ```
pub fn lower_while(node: &Node) -> Result<Function, Declined> {
    let Op::While { cond, body } = &node.op else {
        return Err(decline(&node.op, "only `while` nodes are compiled"));
    };
    let mut l = Lowering::default();
    let Entry {
        params,
        operands,
        args,
    } = l.entry(&node.results, &node.op)?;
    let mut body_block = Block::default();
    let (cond, body) = (super::outer_products(cond), super::outer_products(body));
    // The node's array operands are the function's own (the caller copies what it must).
    let outs = l.while_loop(&node.op, &cond, &body, &args, &[], &mut body_block)?;
    let results = outs
        .iter()
        .filter_map(|v| match v {
            Val::Scalar(r) => Some(*r),
            Val::Array(_) | Val::Splat { .. } => None,
        })
        .collect();
    let f = Function {
        regs: l.regs,
        params,
        arrays: l.arrays,
        outputs: operands.clone(),
        operands,
        body: body_block,
        results,
    };
    // The lowering only builds checked functions; a failure here is a bug in it, and the
    // interpreter is the safe answer.
    f.check()
        .map_err(|_| decline(&node.op, "the lowering broke its own invariant (a bug)"))?;
    Ok(f)
}

/// How a function's operands enter: its parameter registers, how each operand enters, and
/// each operand's value inside.
struct Entry {
    params: Vec<Reg>,
    operands: Vec<Operand>,
    args: Vec<Val>,
}

impl Lowering {
    /// The function's entry for operands of `types`: a one-element one is the next
    /// parameter register, a larger one an array operand of its own (the caller copies what
    /// the function may not update in place).
    fn entry(&mut self, types: &[TensorType], op: &Op) -> Result<Entry, Declined> {
        let mut params = Vec::new();
        let mut operands = Vec::with_capacity(types.len());
        let mut args = Vec::with_capacity(types.len());
        for t in types {
            if t.num_elements() == 1 {
                let r = self.fresh(t, op)?;
                params.push(r);
                operands.push(Operand::Scalar);
                args.push(Val::Scalar(r));
            } else if t.num_elements() == 0 {
                return Err(decline(op, "an empty array"));
            } else {
                let id = self.array(t);
                operands.push(Operand::Array(id));
                args.push(Val::Array(View::dense(
                    ElementIndex {
                        array: id,
                        offset: 0,
                        terms: Vec::new(),
                    },
                    t.shape.clone(),
                    0,
                )));
            }
        }
        Ok(Entry {
            params,
            operands,
            args,
        })
    }
}

/// The identity's bits and the combining op the CPU interpreter folds a `reduce` of `kind`
/// over `dtype` with (`reduce.rs`: float sums start from +0, max from -inf, ...).
fn reduce_step(kind: ReduceKind, dtype: DType) -> (u64, BinaryOp) {
    let float = |x: f64| match dtype {
        DType::F32 => (x as f32).to_bits() as u64,
        _ => x.to_bits(),
    };
    let int = |i: i64, u: u32| match dtype {
        DType::I32 => i as i32 as u32 as u64,
        _ => u as u64,
    };
    match (kind, dtype.is_float()) {
        (ReduceKind::Sum, true) => (float(0.0), BinaryOp::Add),
        (ReduceKind::Prod, true) => (float(1.0), BinaryOp::Mul),
        (ReduceKind::Max, true) => (float(f64::NEG_INFINITY), BinaryOp::Max),
        (ReduceKind::Min, true) => (float(f64::INFINITY), BinaryOp::Min),
        (ReduceKind::Sum, false) => (0, BinaryOp::Add),
        (ReduceKind::Prod, false) => (1, BinaryOp::Mul),
        (ReduceKind::Max, false) => (int(i32::MIN as i64, 0), BinaryOp::Max),
        (ReduceKind::Min, false) => (int(i32::MAX as i64, u32::MAX), BinaryOp::Min),
        (ReduceKind::And, _) => (1, BinaryOp::And),
        (ReduceKind::Or, _) => (0, BinaryOp::Or),
    }
}

fn decline(op: &Op, reason: &'static str) -> Declined {
    Declined {
        op: op.name(),
        reason,
    }
}

/// A QIR value during lowering.
#[derive(Clone, Debug, PartialEq)]
enum Val {
    Scalar(Reg),
    Array(View),
    /// One element broadcast to `shape`, not in memory: element loops read the register;
    /// whatever needs memory gets it filled (`Lowering::materialize_all`).
    Splat {
        x: Reg,
        shape: Vec<usize>,
    },
}

#[derive(Default)]
struct Lowering {
    regs: Vec<DType>,
    arrays: Vec<ArrayDecl>,
    /// Each array's current generation.
    generations: Vec<u32>,
    /// Above 0 while lowering a region that must not write memory it did not make (a
    /// `while` condition, a `cond` branch): updates there always work on copies.
    frozen: u32,
}

impl Lowering {
    fn fresh(&mut self, t: &TensorType, op: &Op) -> Result<Reg, Declined> {
        if t.num_elements() != 1 {
            return Err(decline(op, "a value has more than one element"));
        }
        Ok(self.reg(t.dtype))
    }

    fn reg(&mut self, d: DType) -> Reg {
        self.regs.push(d);
        Reg((self.regs.len() - 1) as u32)
    }

    fn array(&mut self, t: &TensorType) -> ArrayId {
        self.arrays.push(ArrayDecl {
            dtype: t.dtype,
            len: t.num_elements(),
            written: false,
            role: ArrayRole::Operand,
        });
        self.generations.push(0);
        ArrayId((self.arrays.len() - 1) as u32)
    }

    fn constants(&self) -> Vec<ArrayId> {
        (0..self.arrays.len())
            .filter(|a| matches!(self.arrays[*a].role, ArrayRole::Constant(_)))
            .map(|a| ArrayId(a as u32))
            .collect()
    }

    /// A new generation of `a`: every view taken before is stale from here on.
    fn bump(&mut self, a: ArrayId) -> u32 {
        let g = &mut self.generations[a.index()];
        *g += 1;
        *g
    }

    fn current(&self, v: &View, op: &Op) -> Result<(), Declined> {
        if self.generations[v.index.array.index()] == v.generation {
            Ok(())
        } else {
            Err(decline(
                op,
                "it reads an array after an in-place update of it",
            ))
        }
    }

    fn scalar(&self, v: &Val, op: &Op) -> Result<Reg, Declined> {
        match v {
            Val::Scalar(r) => Ok(*r),
            Val::Array(_) | Val::Splat { .. } => Err(decline(op, "it reads an array as a whole")),
        }
    }

    /// Lowers a region whose inputs are `inputs`, appending to `out`; returns its outputs.
    /// Region nesting is bounded by the decoder's `MAX_REGION_DEPTH`, so the recursion
    /// through `node` is too.
    fn region(
        &mut self,
        p: &Program,
        inputs: &[Val],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let mut values: Vec<Val> = inputs.to_vec();
        // The last node reading each value (the outputs are read after every node).
        let mut last_use = vec![0usize; p.num_values()];
        let types = p.value_types();
        for (i, n) in p.nodes.iter().enumerate() {
            n.operands.iter().for_each(|o| last_use[o.index()] = i);
        }
        p.outputs
            .iter()
            .for_each(|o| last_use[o.index()] = usize::MAX);
        for (i, n) in p.nodes.iter().enumerate() {
            let args: Vec<Val> = n
                .operands
                .iter()
                .map(|o| values[o.index()].clone())
                .collect();
            // The arrays a later node still reads: an update of one works on a copy.
            let updates = matches!(n.op, Op::While { .. } | Op::DynamicUpdateSlice);
            let live: Vec<ArrayId> = if updates || n.op.is_elementwise() {
                values
                    .iter()
                    .zip(&last_use)
                    .filter(|(_, last)| **last > i)
                    .filter_map(|(v, _)| match v {
                        Val::Array(v) => Some(v.index.array),
                        Val::Scalar(_) | Val::Splat { .. } => None,
                    })
                    // A constant is always live: the next iteration reads it again.
                    .chain(self.constants())
                    .collect()
            } else {
                Vec::new()
            };
            let produced = match &n.op {
                Op::Linalg(op) => {
                    let operand_types: Vec<&TensorType> =
                        n.operands.iter().map(|o| &types[o.index()]).collect();
                    self.linalg(n, op, &args, &operand_types, out)?
                }
                _ => self.node(n, &args, &live, out)?,
            };
            values.extend(produced);
        }
        Ok(p.outputs
            .iter()
            .map(|o| values[o.index()].clone())
            .collect())
    }

    /// A `while` over the values `args`: scalar carries are copied into registers of their
    /// own; an array carry the body returns unchanged is read where it is; one it updates
    /// gets memory of its own (the operand's, unless another carry shares it or a later
    /// node reads it: then a copy), updated in place there, or its next value copied in
    /// at the end of the body.
    fn while_loop(
        &mut self,
        op: &Op,
        cond: &Program,
        body: &Program,
        args: &[Val],
        live: &[ArrayId],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let mut carries = Vec::with_capacity(args.len());
        let mut regs = Vec::new();
        // The arrays of the carries the loop writes.
        let mut updated: Vec<ArrayId> = Vec::new();
        for (k, a) in args.iter().enumerate() {
            match a {
                Val::Scalar(r) => {
                    let c = self.reg(self.regs[r.index()]);
                    out.0.push(Inst::Copy { dst: c, src: *r });
                    regs.push(c);
                    carries.push(Val::Scalar(c));
                }
                Val::Splat { .. } => {
                    return Err(decline(
                        op,
                        "a carry not in memory (a bug: splats are filled)",
                    ))
                }
                Val::Array(v) => {
                    self.current(v, op)?;
                    let unchanged = body.outputs.get(k) == Some(&ValueId(k as u32));
                    if unchanged {
                        carries.push(a.clone());
                        continue;
                    }
                    let shared = args.iter().enumerate().any(|(j, b)| {
                        j != k && matches!(b, Val::Array(w) if w.index.array == v.index.array)
                    });
                    // The loop updates this carry's memory: its own, or a copy of it.
                    let v = if shared
                        || self.frozen > 0
                        || live.contains(&v.index.array)
                        || !v.writable()
                    {
                        self.own_copy(v, op, out)?
                    } else {
                        v.clone()
                    };
                    let generation = self.bump(v.index.array);
                    updated.push(v.index.array);
                    carries.push(Val::Array(View { generation, ..v }));
                }
            }
        }
        let mut cond_block = Block::default();
        let before = self.generations.clone();
        self.frozen += 1;
        let test = self.region(cond, &carries, &mut cond_block);
        self.frozen -= 1;
        let test = test?;
        let test = self.scalar(&test[0], op)?;
        // A store in the condition would change a carry the body then reads (arrays it
        // made itself, copies, are its own).
        if self.generations[..before.len()] != before[..] {
            return Err(decline(op, "the condition updates an array"));
        }
        let mut body_block = Block::default();
        let outs = self.region(body, &carries, &mut body_block)?;
        let mut next = Vec::with_capacity(regs.len());
        for (o, c) in outs.iter().zip(&carries) {
            match (o, c) {
                (Val::Scalar(r), Val::Scalar(_)) => next.push(*r),
                // A fill of the carry's memory at the end of the body.
                (Val::Splat { x, .. }, Val::Array(v)) => self.fill(v, *x, op, &mut body_block)?,
                (Val::Array(w), Val::Array(v)) => {
                    self.current(w, op)?;
                    if w.index == v.index && w.shape == v.shape && w.strides == v.strides {
                        continue;
                    }
                    // A new value: copied into the carry's memory at the end of the body,
                    // which must not be read by a copy after it.
                    if updated.contains(&w.index.array) {
                        return Err(decline(op, "a carry's next value is another carry"));
                    }
                    self.copy_into(v, w, op, &mut body_block)?;
                }
                _ => return Err(decline(op, "a carry changes between scalar and array")),
            }
        }
        out.0.push(Inst::While {
            carries: regs,
            cond: cond_block,
            test,
            body: body_block,
            next,
        });
        Ok(carries
            .into_iter()
            .map(|c| match c {
                Val::Array(v) => Val::Array(View {
                    generation: self.generations[v.index.array.index()],
                    ..v
                }),
                scalar => scalar,
            })
            .collect())
    }

    /// A `cond`: scalar results in registers; an array result is the branches' common
    /// view, or a new array each branch copies its value into. Branches update only
    /// arrays they made (an update of an operand works on a copy).
    fn cond(
        &mut self,
        op: &Op,
        branches: &[Program],
        node: &Node,
        args: &[Val],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        let index = self.scalar(&args[0], op)?;
        let before = self.generations.clone();
        let mut lowered = Vec::with_capacity(branches.len());
        for b in branches {
            let mut block = Block::default();
            self.frozen += 1;
            let outs = self.region(b, &args[1..], &mut block);
            self.frozen -= 1;
            let outs = outs?;
            if self.generations[..before.len()] != before[..] {
                return Err(decline(op, "a branch updates an array"));
            }
            lowered.push((block, outs));
        }
        let mut results = Vec::with_capacity(node.results.len());
        for (k, t) in node.results.iter().enumerate() {
            let first = lowered.first().map(|(_, o)| o[k].clone());
            let first = first.ok_or_else(|| decline(op, "a cond with no branch"))?;
            results.push(if t.num_elements() == 1 {
                Val::Scalar(self.reg(t.dtype))
            } else if lowered.iter().all(|(_, o)| o[k] == first) {
                // Every branch returns the same array (one of the operands, say).
                first
            } else {
                // A result array of its own, which each branch fills with its value.
                let mut result = self.scratch(t, op)?;
                for (block, outs) in &mut lowered {
                    match &outs[k] {
                        Val::Array(v) => self.copy_into(&result, &v.clone(), op, block)?,
                        Val::Splat { x, .. } => self.fill(&result, *x, op, block)?,
                        Val::Scalar(_) => {
                            return Err(decline(op, "a branch result of another size"))
                        }
                    }
                }
                result.generation = self.generations[result.index.array.index()];
                Val::Array(result)
            });
        }
        let scalars = |vals: &[Val]| -> Vec<Reg> {
            vals.iter()
                .filter_map(|v| match v {
                    Val::Scalar(r) => Some(*r),
                    Val::Array(_) | Val::Splat { .. } => None,
                })
                .collect()
        };
        let arms = lowered
            .into_iter()
            .map(|(block, outs)| Branch {
                block,
                results: scalars(&outs),
            })
            .collect();
        out.0.push(Inst::Switch {
            index,
            branches: arms,
            results: scalars(&results),
        });
        Ok(results)
    }

    fn copy(&mut self, src: Reg, out: &mut Block) -> Val {
        let dst = self.reg(self.regs[src.index()]);
        out.0.push(Inst::Copy { dst, src });
        Val::Scalar(dst)
    }

    /// Lowers one node over `args`; `live` lists the arrays later nodes still read.
    fn node(
        &mut self,
        n: &Node,
        args: &[Val],
        live: &[ArrayId],
        out: &mut Block,
    ) -> Result<Vec<Val>, Declined> {
        if n.results.iter().any(|t| t.num_elements() == 0) {
            return Err(decline(&n.op, "an empty array"));
        }
        // Ops without results (a host call made for its effect) are no arrays to compute.
        if n.results.is_empty() {
            return Err(decline(&n.op, "an op without results"));
        }
        // Splats stay registers for what reads them element by element, only moves them,
        // or writes them into a window; everything else reads memory.
        let moves = matches!(
            n.op,
            Op::BroadcastInDim { .. }
                | Op::Reshape
                | Op::Transpose { .. }
                | Op::Slice { .. }
                | Op::Reverse { .. }
        );
        let keeps_splats = n.op.is_elementwise()
            || moves
            || matches!(n.op, Op::Pad { .. } | Op::Concatenate { .. });
        let filled;
        let args = if keeps_splats {
            args
        } else {
            filled = self.materialize_all(args, &n.op, out)?;
            &filled[..]
        };
        let result_shape = || n.results[0].shape.clone();
        match (&n.op, args) {
            (_, [Val::Splat { x, .. }]) if moves && n.results[0].num_elements() != 1 => {
                return Ok(vec![Val::Splat {
                    x: *x,
                    shape: result_shape(),
                }])
            }
            (Op::BroadcastInDim { .. }, [Val::Scalar(x)]) if n.results[0].num_elements() != 1 => {
                return Ok(vec![Val::Splat {
                    x: *x,
                    shape: result_shape(),
                }])
            }
            _ => {}
        }
        match &n.op {
            Op::DynamicSlice { .. } => return self.dynamic_slice(n, args, out),
            Op::DynamicUpdateSlice => return self.dynamic_update_slice(n, args, live, out),
            Op::While { cond, body } => return self.while_loop(&n.op, cond, body, args, live, out),
            Op::Cond { branches } => return self.cond(&n.op, branches, n, args, out),
            _ => {}
        }
        let many = n.results[0].num_elements() != 1;
        match (&n.op, args) {
            (Op::Reshape, [Val::Array(v)]) => return self.reshape(n, v, out),
            (Op::Transpose { perm }, [Val::Array(v)]) => return self.transpose(n, perm, v),
            (Op::BroadcastInDim { dims }, [Val::Array(v)]) => return self.broadcast(n, dims, v),
            (Op::Slice { start, strides, .. }, [Val::Array(v)]) => {
                return self.slice(n, start, strides, v, out)
            }
            (
                Op::Pad {
                    low,
                    high,
                    interior,
                },
                _,
            ) if many => return self.pad(n, (low, high), interior, args, out),
            (Op::Concatenate { dim }, _) if many => return self.concatenate(n, *dim, args, out),
            _ => {}
        }
        let reads_array = args.iter().any(|a| !matches!(a, Val::Scalar(_)));
        if n.op.is_elementwise() && reads_array {
            return self.map(n, args, live, out);
        }
        match (&n.op, args) {
            (Op::Constant(h), []) if h.ty.num_elements() != 1 => return Ok(vec![self.constant(h)]),
            // Its values are known when lowering: a constant, as the interpreter computes it.
            (Op::Iota { dim }, []) if n.results[0].num_elements() != 1 => {
                let h = iota_values(*dim, &n.results[0]).map_err(|why| decline(&n.op, why))?;
                return Ok(vec![self.constant(&h)]);
            }
            (Op::Reduce { kind, axes }, [Val::Array(v)]) => {
                return self.reduce(n, *kind, axes, v, out)
            }
            (Op::DotGeneral(d), [Val::Array(l), Val::Array(r)]) => {
                return self.dot(n, d, l, r, out)
            }
            _ => {}
        }
        let args = args
            .iter()
            .map(|a| self.scalar(a, &n.op))
            .collect::<Result<Vec<Reg>, Declined>>()?;
        let mut results = Vec::with_capacity(n.results.len());
        for t in &n.results {
            results.push(self.fresh(t, &n.op)?);
        }
        self.scalar_node(n, &args, &results, out)?;
        Ok(results.into_iter().map(Val::Scalar).collect())
    }

    /// Lowers one node over one-element values: `args` in, `results` out.
    fn scalar_node(
        &mut self,
        n: &Node,
        args: &[Reg],
        results: &[Reg],
        out: &mut Block,
    ) -> Result<(), Declined> {
        let dst = results.first().copied();
        let one = |dst: Option<Reg>| dst.ok_or_else(|| decline(&n.op, "a node with no result"));
        let inst = match &n.op {
            Op::Constant(h) => Inst::Const {
                dst: one(dst)?,
                bits: h.bits_at(0),
            },
            // The one element of an iota is index 0, whose bits are zero in every dtype.
            Op::Iota { .. } => Inst::Const {
                dst: one(dst)?,
                bits: 0,
            },
            Op::Unary(op) => Inst::Unary {
                dst: one(dst)?,
                op: *op,
                x: args[0],
            },
            Op::Binary(op) => Inst::Binary {
                dst: one(dst)?,
                op: *op,
                a: args[0],
                b: args[1],
            },
            Op::Compare(dir) => Inst::Compare {
                dst: one(dst)?,
                dir: *dir,
                a: args[0],
                b: args[1],
            },
            Op::Select => Inst::Select {
                dst: one(dst)?,
                pred: args[0],
                on_true: args[1],
                on_false: args[2],
            },
            Op::Convert => Inst::Convert {
                dst: one(dst)?,
                x: args[0],
            },
            Op::Bitcast => Inst::Bitcast {
                dst: one(dst)?,
                x: args[0],
            },
            // With one element in and out, these move nothing.
            Op::Reshape
            | Op::BroadcastInDim { .. }
            | Op::Transpose { .. }
            | Op::Reverse { .. }
            | Op::Slice { .. } => Inst::Copy {
                dst: one(dst)?,
                src: args[0],
            },
            Op::DynamicSlice { .. }
            | Op::DynamicUpdateSlice
            | Op::While { .. }
            | Op::Cond { .. }
            | Op::Linalg(_) => return Err(decline(&n.op, "lowered before the scalar ops (a bug)")),
            // Over one element the interpreter folds `identity ⊕ x`: the same instructions.
            Op::Reduce { kind, .. } => {
                let (identity, combine) = reduce_step(*kind, n.results[0].dtype);
                let id = self.reg(n.results[0].dtype);
                out.0.push(Inst::Const {
                    dst: id,
                    bits: identity,
                });
                Inst::Binary {
                    dst: one(dst)?,
                    op: combine,
                    a: id,
                    b: args[0],
                }
            }
            Op::Pad { .. }
            | Op::Concatenate { .. }
            | Op::Cumulative { .. }
            | Op::Sort { .. }
            | Op::DotGeneral(_)
            | Op::Gather(_)
            | Op::ScatterAdd(_) => return Err(decline(&n.op, "not in the scalar loop IR yet")),
            Op::HostCallback { .. } => {
                return Err(decline(
                    &n.op,
                    "a call into the host runs outside compiled code",
                ))
            }
            Op::StopGradient
            | Op::CustomJvp { .. }
            | Op::CustomVjp { .. }
            | Op::CustomVjpLinear { .. }
            | Op::Checkpoint { .. }
            | Op::Scan { .. }
            | Op::BoundedWhile { .. }
            | Op::LinearSolve { .. }
            | Op::NamedAxis { .. } => {
                return Err(decline(&n.op, "a core-level op never reaches a backend"))
            }
        };
        out.0.push(inst);
        Ok(())
    }
}

mod linalg;
mod memory;
mod program;
pub use program::lower_program;
#[cfg(test)]
mod tests;
mod views;

/// The values of `iota(dim)` of type `t`: the index along `dim`, converted as by `as`.
fn iota_values(dim: usize, t: &TensorType) -> Result<crate::HostArray, &'static str> {
    let n = *t
        .shape
        .get(dim)
        .ok_or("an iota axis past the shape (a bug)")?;
    let inner: usize = t.shape[dim + 1..].iter().product();
    let index = |k: usize| (k / inner.max(1)) % n.max(1);
    fn values<T: crate::Element>(
        t: &TensorType,
        at: impl Fn(usize) -> T,
    ) -> Result<crate::HostArray, String> {
        let all: Vec<T> = (0..t.num_elements()).map(at).collect();
        crate::HostArray::from_slice(t.shape.clone(), &all)
    }
    let host = match t.dtype {
        DType::I32 => values(t, |k| index(k) as i32),
        DType::U32 => values(t, |k| index(k) as u32),
        DType::F32 => values(t, |k| index(k) as f32),
        DType::F64 => values(t, |k| index(k) as f64),
        DType::Bool => return Err("a bool iota (validation rejects it)"),
    };
    host.map_err(|_| "an iota too large for host memory")
}
