//! The loop IR: the backend-neutral level between QIR and machine code that compiled tiers
//! emit from, so a backend writes an emitter, not a compiler.
//!
//! Every value with one element is a typed register (a `fori_loop` over scalars, a
//! bisection, a step-size controller), every elementwise op one instruction, `while` and
//! `cond` structured control flow. Larger values live in memory ([`ArrayDecl`]): the node's
//! array operands, constants, and one scratch array per value the function computes (the
//! caller provides it once per call, so iterations allocate nothing).
//! - Element access: [`Inst::Load`] and [`Inst::Store`] at an [`ElementIndex`] of clamped
//!   start terms (one-element `dynamic_slice` / `dynamic_update_slice`); a slice (static
//!   or dynamic), a transpose, a broadcast or a reshape of row-major memory is a view (the
//!   same memory at other strides), never a copy; `pad` and `concatenate` write windows.
//! - Element loops ([`Inst::Loop`], nested one level per axis): an elementwise op over
//!   arrays, a fill, a copy; a one-element `broadcast_in_dim` is not filled at all for
//!   elementwise consumers (its register is read in the loop). [`fuse`] then fuses
//!   consecutive loops over one index space, their intermediates in registers.
//! - Library calls: [`Inst::Dot`] (a matrix product read in place), [`Inst::Reduce`]
//!   (rows over trailing axes) and [`Inst::Linalg`] (a factorisation or triangular solve,
//!   so an implicit stepper's Newton solve stays compiled), which a backend implements with
//!   its reference kernels.
//! - Value semantics in place: an update writes the memory of a value nothing reads
//!   afterwards (liveness per region), else a copy; a carry's new value is copied into its
//!   memory at the end of the body; [`Function::check`] proves every access in bounds.
//!
//! That covers reverse-mode `fori_loop`s and `scan`s over scalars (their tapes), small
//! recurrent cells, ODE stepper bodies. The
//! semantics of every instruction are those of the QIR op it comes from,
//! exactly: an emitter must give the reference interpreter's bits (integer division by zero,
//! NaN in `max`, saturating float-to-integer conversion and the rest are spelled out on the
//! QIR ops and in the CPU backend's `elementwise.rs`).
//!
//! ```
//! use quabla_abi::loop_ir::lower_while;
//! use quabla_abi::qir::Program;
//!
//! // x <- 0.5 x until x < 1e-3: every value a scalar, so the whole loop lowers.
//! let p = Program::parse(
//!     "program(%0: f64[]) {
//!        %1 = while(%0) : f64[] {
//!          cond(%0: f64[]) {
//!            %1 = constant[value=[0.001]]() : f64[]
//!            %2 = compare[dir=lt](%1, %0) : bool[]
//!            return %2
//!          }
//!          body(%0: f64[]) {
//!            %1 = constant[value=[0.5]]() : f64[]
//!            %2 = mul(%0, %1) : f64[]
//!            return %2
//!          }
//!        }
//!        return %1
//!      }",
//! )
//! .unwrap();
//! let f = lower_while(&p.nodes[0]).unwrap();
//! assert_eq!(f.params.len(), 1);
//! assert_eq!(f.results.len(), 1);
//! ```

mod fuse;
mod lower;
mod outer_product;

pub use fuse::{fuse, Accept};
pub use lower::{lower_program, lower_while, Declined};
pub use outer_product::outer_products;

/// An array operand in memory: the node's operand of that index (see [`Operand`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArrayId(pub u32);

impl ArrayId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The element type and length of an array the function reads (and, if `written`, updates
/// in place: the caller hands it memory of its own, which becomes the node's result).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArrayDecl {
    pub dtype: DType,
    pub len: usize,
    pub written: bool,
    pub role: ArrayRole,
}

/// Where an array's memory comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArrayRole {
    /// One of the node's operands (see [`Operand`]).
    Operand,
    /// Memory the caller provides for each call, holding a value the function computes
    /// (one array per such value, reused by every iteration). The function writes every
    /// element before reading it, so the caller need not clear it (the CPU plugin's debug
    /// builds fill it with all-ones bits to check that).
    Scratch,
    /// A constant of the program, these elements; never written.
    Constant(HostArray),
}

impl ArrayDecl {
    /// Not an operand: memory the caller provides for each call (written before read).
    pub fn is_scratch(&self) -> bool {
        self.role == ArrayRole::Scratch
    }
}

/// A batched matrix product's sizes, `(batch, m, k) x (batch, k, n) -> (batch, m, n)`, and
/// its operands' element strides inside one batch (row, column): each operand is read in
/// place, row-major or transposed, as the CPU interpreter reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DotShape {
    pub batch: u64,
    pub m: u64,
    pub k: u64,
    pub n: u64,
    pub lhs_strides: (u64, u64),
    pub rhs_strides: (u64, u64),
}

/// An operand a library call reads whole: the row-major elements of `ty` from `start`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DenseOperand {
    pub start: ElementIndex,
    pub ty: TensorType,
}

/// One term of an element index: `clamp(start, 0, max) * stride`, `start` an `i32`
/// register read as signed, as QIR's dynamic slices clamp their starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IndexTerm {
    pub start: Reg,
    pub max: u64,
    pub stride: u64,
}

/// The element `offset + sum(terms)` of an array. Every element it can name lies inside
/// the array (`Function::check` proves it before an emitter runs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElementIndex {
    pub array: ArrayId,
    pub offset: u64,
    pub terms: Vec<IndexTerm>,
}

impl ElementIndex {
    /// The largest element this index can name.
    pub fn max_element(&self) -> u64 {
        self.terms.iter().fold(self.offset, |acc, t| {
            acc.saturating_add(t.max.saturating_mul(t.stride))
        })
    }
}

/// How an operand of the lowered node enters the function, and so how its result leaves.
/// A `while`'s result `k` is its carry `k`: a scalar comes back in `Function::results`
/// (in order), an array is the memory it was handed (updated in place if `written`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// The next register of `Function::params` (and of `Function::results`).
    Scalar,
    /// An array in memory.
    Array(ArrayId),
}

use crate::qir::{infer_result_types, BinaryOp, CompareDir, LinalgOp, Op, ReduceKind, UnaryOp};
use crate::{DType, HostArray, TensorType};

/// A register: one scalar of the dtype `Function::regs` gives it. Registers are variables,
/// not SSA values: a `While` writes its carries every iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reg(pub u32);

impl Reg {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One instruction. Operands and results of elementwise instructions follow the QIR op of
/// the same name; `dst`'s dtype is the QIR result's.
#[derive(Clone, Debug, PartialEq)]
pub enum Inst {
    /// `dst = bits`: the value's little-endian bits, zero-extended (bool: 0 or 1).
    Const {
        dst: Reg,
        bits: u64,
    },
    Unary {
        dst: Reg,
        op: UnaryOp,
        x: Reg,
    },
    Binary {
        dst: Reg,
        op: BinaryOp,
        a: Reg,
        b: Reg,
    },
    Compare {
        dst: Reg,
        dir: CompareDir,
        a: Reg,
        b: Reg,
    },
    Select {
        dst: Reg,
        pred: Reg,
        on_true: Reg,
        on_false: Reg,
    },
    /// QIR `convert` from `x`'s dtype to `dst`'s.
    Convert {
        dst: Reg,
        x: Reg,
    },
    /// QIR `bitcast` among the 32-bit dtypes.
    Bitcast {
        dst: Reg,
        x: Reg,
    },
    /// `dst = src` (the one-element movement ops: reshape, broadcast, transpose, ...).
    Copy {
        dst: Reg,
        src: Reg,
    },
    /// `dst = array[index]`: a one-element `dynamic_slice`.
    Load {
        dst: Reg,
        index: ElementIndex,
    },
    /// `array[index] = src`, in place: a one-element `dynamic_update_slice` whose operand
    /// nothing reads afterwards. Only arrays declared `written` are stored to.
    Store {
        index: ElementIndex,
        src: Reg,
    },
    /// Runs `body` `count` times with `counter` (an `i32` register) set to 0, 1, ...,
    /// `count - 1`: an element loop over arrays (elementwise ops, fills, copies).
    Loop {
        counter: Reg,
        count: u64,
        body: Block,
    },
    /// `dst = lhs @ rhs` in the QIR `dot_general`'s result layout (batch, m, n), from the
    /// operands' first elements `lhs` and `rhs`; floats only, computed exactly as the
    /// reference computes them (a backend calls its own matrix product).
    Dot {
        dtype: DType,
        dst: ArrayId,
        lhs: ElementIndex,
        rhs: ElementIndex,
        shape: DotShape,
    },
    /// `dst[r] = fold(kind, src[r * len .. (r + 1) * len])` for each of `rows` contiguous
    /// rows from element `src` (a QIR `reduce` over trailing axes), in the reference's fixed
    /// order (a backend calls its own reduction). With `times` (float sums only), element
    /// `i` of the rows is the product `src[i] * times[i]`, rounded as QIR's `mul`: the sum
    /// of a product nothing else reads, folded exactly as if the products were stored
    /// first ([`fuse`] makes these from a product loop and the reduction after it).
    Reduce {
        kind: ReduceKind,
        dtype: DType,
        dst: ArrayId,
        src: ElementIndex,
        times: Option<ElementIndex>,
        rows: u64,
        len: u64,
    },
    /// `results = op(operands)`: the QIR `linalg` op on row-major memory, each result a
    /// whole array of its own (none of them an operand's), in the op's result order; a
    /// backend calls its own kernels, so the bits are the reference's.
    Linalg {
        op: LinalgOp,
        operands: Vec<DenseOperand>,
        results: Vec<ArrayId>,
    },
    /// Runs `cond`; while its `test` register is true, runs `body` and then sets every
    /// `carries[k] = next[k]` at once (all `next` read before any carry is written).
    While {
        carries: Vec<Reg>,
        cond: Block,
        test: Reg,
        body: Block,
        next: Vec<Reg>,
    },
    /// Runs the branch `index` selects (an out-of-range index, negative too, runs the last,
    /// as QIR `cond`), then `results[k] = branch.results[k]`.
    Switch {
        index: Reg,
        branches: Vec<Branch>,
        results: Vec<Reg>,
    },
}

impl Inst {
    /// The registers this instruction itself reads, not those of its nested blocks: its
    /// operands and index starts; a `While` its test and next carries, a `Switch` its
    /// index and its branches' results (an element loop's body is walked on its own).
    ///
    /// ```
    /// use quabla_abi::loop_ir::{Inst, Reg};
    /// use quabla_abi::qir::BinaryOp;
    /// let add = Inst::Binary { dst: Reg(2), op: BinaryOp::Add, a: Reg(0), b: Reg(1) };
    /// assert_eq!(add.reads(), vec![Reg(0), Reg(1)]);
    /// assert_eq!(add.writes(), vec![Reg(2)]);
    /// ```
    pub fn reads(&self) -> Vec<Reg> {
        let starts = |i: &ElementIndex| i.terms.iter().map(|t| t.start).collect::<Vec<_>>();
        match self {
            Inst::Const { .. } | Inst::Loop { .. } => Vec::new(),
            Inst::Unary { x, .. }
            | Inst::Convert { x, .. }
            | Inst::Bitcast { x, .. }
            | Inst::Copy { src: x, .. } => vec![*x],
            Inst::Binary { a, b, .. } | Inst::Compare { a, b, .. } => vec![*a, *b],
            Inst::Select {
                pred,
                on_true,
                on_false,
                ..
            } => vec![*pred, *on_true, *on_false],
            Inst::Load { index, .. } => starts(index),
            Inst::Store { index, src } => {
                let mut r = starts(index);
                r.push(*src);
                r
            }
            Inst::Dot { lhs, rhs, .. } => [starts(lhs), starts(rhs)].concat(),
            Inst::Reduce { src, times, .. } => {
                std::iter::once(src).chain(times).flat_map(starts).collect()
            }
            Inst::Linalg { operands, .. } => {
                operands.iter().flat_map(|o| starts(&o.start)).collect()
            }
            Inst::While { test, next, .. } => {
                let mut r = next.clone();
                r.push(*test);
                r
            }
            Inst::Switch {
                index, branches, ..
            } => {
                let mut r: Vec<Reg> = branches.iter().flat_map(|b| b.results.clone()).collect();
                r.push(*index);
                r
            }
        }
    }

    /// The registers this instruction itself writes: its destination, a loop's counter, a
    /// `While`'s carries, a `Switch`'s results.
    pub fn writes(&self) -> Vec<Reg> {
        match self {
            Inst::Const { dst, .. }
            | Inst::Unary { dst, .. }
            | Inst::Binary { dst, .. }
            | Inst::Compare { dst, .. }
            | Inst::Select { dst, .. }
            | Inst::Convert { dst, .. }
            | Inst::Bitcast { dst, .. }
            | Inst::Copy { dst, .. }
            | Inst::Load { dst, .. } => vec![*dst],
            Inst::Loop { counter, .. } => vec![*counter],
            Inst::While { carries, .. } => carries.clone(),
            Inst::Switch { results, .. } => results.clone(),
            Inst::Store { .. } | Inst::Dot { .. } | Inst::Reduce { .. } | Inst::Linalg { .. } => {
                Vec::new()
            }
        }
    }

    /// The arrays this instruction itself reads (not those of blocks nested in it).
    pub fn arrays_read(&self) -> Vec<ArrayId> {
        match self {
            Inst::Load { index, .. } => vec![index.array],
            Inst::Dot { lhs, rhs, .. } => vec![lhs.array, rhs.array],
            Inst::Reduce { src, times, .. } => {
                std::iter::once(src).chain(times).map(|i| i.array).collect()
            }
            Inst::Linalg { operands, .. } => operands.iter().map(|o| o.start.array).collect(),
            Inst::Store { .. }
            | Inst::Const { .. }
            | Inst::Unary { .. }
            | Inst::Binary { .. }
            | Inst::Compare { .. }
            | Inst::Select { .. }
            | Inst::Convert { .. }
            | Inst::Bitcast { .. }
            | Inst::Copy { .. }
            | Inst::Loop { .. }
            | Inst::While { .. }
            | Inst::Switch { .. } => Vec::new(),
        }
    }

    /// The arrays this instruction itself writes (not those of blocks nested in it).
    pub fn arrays_written(&self) -> Vec<ArrayId> {
        match self {
            Inst::Store { index, .. } => vec![index.array],
            Inst::Dot { dst, .. } | Inst::Reduce { dst, .. } => vec![*dst],
            Inst::Linalg { results, .. } => results.clone(),
            Inst::Load { .. }
            | Inst::Const { .. }
            | Inst::Unary { .. }
            | Inst::Binary { .. }
            | Inst::Compare { .. }
            | Inst::Select { .. }
            | Inst::Convert { .. }
            | Inst::Bitcast { .. }
            | Inst::Copy { .. }
            | Inst::Loop { .. }
            | Inst::While { .. }
            | Inst::Switch { .. } => Vec::new(),
        }
    }

    /// The blocks of a `While` (condition, body) or a `Switch` (its branches); none for
    /// any other instruction (an element loop's body is not a region).
    pub fn regions(&self) -> Vec<&Block> {
        match self {
            Inst::While { cond, body, .. } => vec![cond, body],
            Inst::Switch { branches, .. } => branches.iter().map(|b| &b.block).collect(),
            Inst::Loop { .. }
            | Inst::Const { .. }
            | Inst::Unary { .. }
            | Inst::Binary { .. }
            | Inst::Compare { .. }
            | Inst::Select { .. }
            | Inst::Convert { .. }
            | Inst::Bitcast { .. }
            | Inst::Copy { .. }
            | Inst::Load { .. }
            | Inst::Store { .. }
            | Inst::Dot { .. }
            | Inst::Reduce { .. }
            | Inst::Linalg { .. } => Vec::new(),
        }
    }

    /// [`Inst::regions`], to update.
    pub fn regions_mut(&mut self) -> Vec<&mut Block> {
        match self {
            Inst::While { cond, body, .. } => vec![cond, body],
            Inst::Switch { branches, .. } => branches.iter_mut().map(|b| &mut b.block).collect(),
            Inst::Loop { .. }
            | Inst::Const { .. }
            | Inst::Unary { .. }
            | Inst::Binary { .. }
            | Inst::Compare { .. }
            | Inst::Select { .. }
            | Inst::Convert { .. }
            | Inst::Bitcast { .. }
            | Inst::Copy { .. }
            | Inst::Load { .. }
            | Inst::Store { .. }
            | Inst::Dot { .. }
            | Inst::Reduce { .. }
            | Inst::Linalg { .. } => Vec::new(),
        }
    }
}

/// Straight-line code with nested control flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Block(pub Vec<Inst>);

impl Block {
    /// Every instruction of this block and of the blocks nested in it (an explicit stack,
    /// not recursion; nesting is bounded by the decoder's `MAX_REGION_DEPTH` anyway).
    pub fn instructions(&self) -> Vec<&Inst> {
        let mut all = Vec::new();
        let mut pending: Vec<&Block> = vec![self];
        while let Some(b) = pending.pop() {
            for inst in &b.0 {
                all.push(inst);
                match inst {
                    Inst::Loop { body, .. } => pending.push(body),
                    other => pending.extend(other.regions()),
                }
            }
        }
        all
    }

    /// Runs `visit` on this block and on every block of the `While`s and `Switch`es in it,
    /// nested ones included, each before the blocks inside it (element-loop bodies are
    /// not visited: they hold no control flow). An explicit stack, as `instructions`.
    pub fn for_each_region_mut(&mut self, mut visit: impl FnMut(&mut Block)) {
        let mut pending: Vec<&mut Block> = vec![self];
        while let Some(b) = pending.pop() {
            visit(b);
            for inst in b.0.iter_mut() {
                pending.extend(inst.regions_mut());
            }
        }
    }

    /// Whether any instruction of this block, nested blocks included, writes `r`.
    pub fn writes(&self, r: Reg) -> bool {
        self.instructions()
            .iter()
            .any(|inst| inst.writes().contains(&r))
    }
}

/// One arm of a `Switch`: its code and the registers holding its results.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    pub block: Block,
    pub results: Vec<Reg>,
}

/// A compiled unit (a `while` node, or a whole program): its scalar parameters arrive in
/// `params` and its arrays in memory, `body` runs, `results` are returned.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// The dtype of every register, by index.
    pub regs: Vec<DType>,
    /// The scalar operands, in operand order.
    pub params: Vec<Reg>,
    /// The array operands, in operand order.
    pub arrays: Vec<ArrayDecl>,
    /// How each operand of the node (or input of the program) enters.
    pub operands: Vec<Operand>,
    pub body: Block,
    /// The scalar results, in result order.
    pub results: Vec<Reg>,
    /// How each result leaves: a scalar as the next of `results`, an array as the whole
    /// memory of that array (row-major, the result's length). A `while`'s are its operands:
    /// a carry leaves where it entered.
    pub outputs: Vec<Operand>,
}

impl Function {
    /// The dtype of `r`.
    pub fn dtype(&self, r: Reg) -> DType {
        self.regs[r.index()]
    }

    /// Checks what an emitter relies on for memory safety: the registers and arrays that
    /// memory accesses name exist, every element index stays inside its array, and stores go
    /// only to arrays declared `written`. The lowering builds functions that pass; a hand-written one may
    /// not.
    pub fn check(&self) -> Result<(), String> {
        let reg = |r: &Reg| {
            (r.index() < self.regs.len())
                .then_some(())
                .ok_or_else(|| format!("register {} is not declared", r.0))
        };
        let index = |i: &ElementIndex, store: bool| -> Result<(), String> {
            let a = self
                .arrays
                .get(i.array.index())
                .ok_or_else(|| format!("array {} is not declared", i.array.0))?;
            if i.max_element() >= a.len as u64 {
                return Err(format!(
                    "an index reaches element {} of array {}, of {} elements",
                    i.max_element(),
                    i.array.0,
                    a.len
                ));
            }
            if store && !a.written {
                return Err(format!(
                    "a store to array {}, which is read-only",
                    i.array.0
                ));
            }
            if let ArrayRole::Constant(h) = &a.role {
                if a.written || h.ty.dtype != a.dtype || h.ty.num_elements() != a.len {
                    return Err(format!(
                        "constant array {} is written or mistyped",
                        i.array.0
                    ));
                }
            }
            i.terms.iter().try_for_each(|t| {
                reg(&t.start)?;
                (self.dtype(t.start) == DType::I32)
                    .then_some(())
                    .ok_or_else(|| "an index start that is not i32".to_string())
            })
        };
        self.params.iter().chain(&self.results).try_for_each(reg)?;
        self.check_interface()?;
        for inst in self.body.instructions() {
            match inst {
                Inst::Load { dst, index: i } => {
                    reg(dst)?;
                    index(i, false)?;
                    if self.dtype(*dst) != self.arrays[i.array.index()].dtype {
                        return Err("a load of another dtype than its array's".into());
                    }
                }
                Inst::Store { index: i, src } => {
                    reg(src)?;
                    index(i, true)?;
                    if self.dtype(*src) != self.arrays[i.array.index()].dtype {
                        return Err("a store of another dtype than its array's".into());
                    }
                }
                Inst::While { .. } | Inst::Switch { .. } => {}
                Inst::Loop {
                    counter,
                    count,
                    body,
                } => {
                    reg(counter)?;
                    if self.dtype(*counter) != DType::I32 || *count > i32::MAX as u64 {
                        return Err("a loop counter that is not i32 or overflows".into());
                    }
                    // Emitters may skip clamping the counter: only the loop sets it.
                    if body.writes(*counter) {
                        return Err("a loop body that writes its counter".into());
                    }
                }
                Inst::Dot {
                    dtype,
                    dst,
                    lhs,
                    rhs,
                    shape: d,
                } => {
                    let bmn = d.batch.saturating_mul(d.m).saturating_mul(d.n);
                    let whole = ElementIndex {
                        array: *dst,
                        offset: bmn.saturating_sub(1),
                        terms: Vec::new(),
                    };
                    index(&whole, true)?;
                    for (i, (rows, cols), (rs, cs)) in [
                        (lhs, (d.m, d.k), d.lhs_strides),
                        (rhs, (d.k, d.n), d.rhs_strides),
                    ] {
                        // A batch is `rows * cols` elements, row-major or transposed.
                        let fits = (rs, cs) == (cols, 1) || (rs, cs) == (1, rows);
                        let mut last = i.clone();
                        last.offset = last.offset.saturating_add(
                            d.batch
                                .saturating_mul(rows)
                                .saturating_mul(cols)
                                .saturating_sub(1),
                        );
                        index(&last, false)?;
                        if !fits {
                            return Err(
                                "a dot operand that is neither row-major nor transposed".into()
                            );
                        }
                    }
                    let same = [dst.index(), lhs.array.index(), rhs.array.index()]
                        .iter()
                        .all(|a| self.arrays[*a].dtype == *dtype);
                    if !same || !dtype.is_float() || bmn == 0 {
                        return Err("a dot of other dtypes than its arrays' floats".into());
                    }
                }
                Inst::Reduce {
                    kind,
                    dtype,
                    dst,
                    src,
                    times,
                    rows,
                    len,
                } => {
                    let last = ElementIndex {
                        array: *dst,
                        offset: rows.saturating_sub(1),
                        terms: Vec::new(),
                    };
                    index(&last, true)?;
                    for operand in std::iter::once(src).chain(times) {
                        let mut end = operand.clone();
                        end.offset = end
                            .offset
                            .saturating_add(rows.saturating_mul(*len).saturating_sub(1));
                        index(&end, false)?;
                    }
                    let same = [
                        Some(dst),
                        Some(&src.array),
                        times.as_ref().map(|t| &t.array),
                    ]
                    .into_iter()
                    .flatten()
                    .all(|a| self.arrays[a.index()].dtype == *dtype);
                    if !same || *rows == 0 || *len == 0 {
                        return Err("a reduction of another dtype, or of nothing".into());
                    }
                    if times.is_some() && (*kind != ReduceKind::Sum || !dtype.is_float()) {
                        return Err("a reduction of products that is not a float sum".into());
                    }
                }
                Inst::Linalg {
                    op,
                    operands,
                    results,
                } => self.check_linalg(op, operands, results, &index)?,
                Inst::Const { .. }
                | Inst::Unary { .. }
                | Inst::Binary { .. }
                | Inst::Compare { .. }
                | Inst::Select { .. }
                | Inst::Convert { .. }
                | Inst::Bitcast { .. }
                | Inst::Copy { .. } => {}
            }
        }
        Ok(())
    }

    /// Whether array `a` leaves the function as a result (the caller reads it after).
    pub fn is_output(&self, a: ArrayId) -> bool {
        self.outputs.contains(&Operand::Array(a))
    }

    /// The operands and outputs match the parameters, results and arrays: one register per
    /// scalar, in order, arrays that exist, and each operand array named by one operand.
    fn check_interface(&self) -> Result<(), String> {
        let scalars = |ops: &[Operand]| ops.iter().filter(|o| **o == Operand::Scalar).count();
        let arrays_exist = self.operands.iter().chain(&self.outputs).all(|o| match o {
            Operand::Scalar => true,
            Operand::Array(a) => a.index() < self.arrays.len(),
        });
        let entered = |k: usize| {
            let named = self
                .operands
                .iter()
                .filter(|o| **o == Operand::Array(ArrayId(k as u32)));
            (self.arrays[k].role == ArrayRole::Operand) == (named.count() == 1)
        };
        if scalars(&self.operands) != self.params.len()
            || scalars(&self.outputs) != self.results.len()
            || !arrays_exist
            || !(0..self.arrays.len()).all(entered)
        {
            return Err(
                "operands or outputs that do not match the parameters, results and arrays".into(),
            );
        }
        Ok(())
    }

    /// An `Inst::Linalg` is the QIR op on operands inside their arrays, writing results
    /// whose arrays hold exactly the op's result types and are nobody else's.
    fn check_linalg(
        &self,
        op: &LinalgOp,
        operands: &[DenseOperand],
        results: &[ArrayId],
        index: &dyn Fn(&ElementIndex, bool) -> Result<(), String>,
    ) -> Result<(), String> {
        let types: Vec<&TensorType> = operands.iter().map(|o| &o.ty).collect();
        let want = infer_result_types(&Op::Linalg(*op), &types, &[], &[])?;
        for o in operands {
            let len = o.ty.num_elements() as u64;
            let mut last = o.start.clone();
            last.offset = last.offset.saturating_add(len.saturating_sub(1));
            index(&last, false)?;
            if len == 0 || self.arrays[o.start.array.index()].dtype != o.ty.dtype {
                return Err(format!(
                    "a {} operand of another dtype, or empty",
                    op.name()
                ));
            }
        }
        if results.len() != want.len() {
            return Err(format!(
                "{} has {} results, not {}",
                op.name(),
                want.len(),
                results.len()
            ));
        }
        for (k, (r, t)) in results.iter().zip(&want).enumerate() {
            let whole = ElementIndex {
                array: *r,
                offset: (t.num_elements() as u64).saturating_sub(1),
                terms: Vec::new(),
            };
            index(&whole, true)?;
            let a = &self.arrays[r.index()];
            let shared = operands.iter().any(|o| o.start.array == *r) || results[..k].contains(r);
            if a.dtype != t.dtype || a.len != t.num_elements() || shared {
                return Err(format!(
                    "{} result {k} is not an array of its own of {t}",
                    op.name()
                ));
            }
        }
        Ok(())
    }
}
