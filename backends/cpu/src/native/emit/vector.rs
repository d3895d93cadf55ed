//! Element loops as 128-bit SIMD (`f32x4`, `i32x4`, `f64x2`), with a scalar tail. Only
//! bodies whose every instruction is exact lane by lane qualify: IEEE add, sub, mul, div,
//! float max and min, sqrt, neg and abs; integer add, sub, mul and bitwise ops; selects on
//! a predicate fixed for the loop; loads of a contiguous run, of a strided one (lane by
//! lane) or of one element fixed for the loop (splat); stores to a contiguous or strided
//! run. Each lane then computes what the scalar loop computes, the same instruction on the
//! same operands, so the bits are the scalar loop's (and the interpreter's). Anything else
//! (a callout, a conversion, a compare, whose bool result lives in memory as bytes) keeps
//! the loop scalar.

use super::Emitter;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type, Value};
use quabla_abi::loop_ir::{Block, ElementIndex, Function, Inst, Reg};
use quabla_abi::qir::{BinaryOp, UnaryOp};
use quabla_abi::DType;
use std::collections::HashMap;

/// The byte width of a dtype's lanes; `None` for bool, which is never a lane in memory.
fn lane_bytes(d: DType) -> Option<u64> {
    match d {
        DType::F32 | DType::I32 | DType::U32 => Some(4),
        DType::F64 => Some(8),
        DType::Bool => None,
    }
}

/// Vectors per trip of an unrolled element loop: one trip's loop overhead (compare,
/// branches, counter) and address arithmetic (the hoisted parts' stack loads) then serve
/// four vectors. A 256x256 stencil's loop had 7 such instructions per vector of 4 lanes.
const UNROLL: u64 = 4;

/// Bodies longer than this are not unrolled: their own work dwarfs a trip's overhead, and
/// copies would grow the compile time of the biggest functions.
const UNROLL_MAX_BODY: usize = 48;

fn vector_type(d: DType) -> Type {
    match d {
        DType::F32 => types::F32X4,
        DType::I32 | DType::U32 => types::I32X4,
        DType::F64 => types::F64X2,
        DType::Bool => unreachable!("bool registers are masks, typed by their compare"),
    }
}

/// How far apart (in elements) `i` names the elements of consecutive trips: 1 for a
/// contiguous run, more for a column of a row-major matrix, 0 for one element fixed for the
/// whole loop (a broadcast). `None` where another term moves during the loop.
fn step(i: &ElementIndex, counter: Reg, body: &Block) -> Option<u64> {
    let mut steps = i
        .terms
        .iter()
        .filter(|t| t.start == counter)
        .map(|t| t.stride);
    let step = steps.next().unwrap_or(0);
    let fixed = i
        .terms
        .iter()
        .all(|t| t.start == counter || !body.writes(t.start));
    (steps.next().is_none() && fixed).then_some(step)
}

/// An element loop that is one kernel of `vmath` (f32 or f64) over a contiguous run: its
/// op, dtype, source and destination. The whole loop is then one call of the kernel's
/// vector loop, whose bits are the scalar kernel's (`vmath` tests every length).
pub(super) type KernelMap<'b> = (UnaryOp, DType, &'b ElementIndex, &'b ElementIndex);

/// The [`KernelMap`] an element loop is, if it is one.
pub(super) fn vmath_map<'b>(f: &Function, counter: Reg, body: &'b Block) -> Option<KernelMap<'b>> {
    let [Inst::Load { dst: x, index: src }, Inst::Unary { dst: y, op, x: x2 }, Inst::Store {
        index: dst,
        src: y2,
    }] = &body.0[..]
    else {
        return None;
    };
    let d = f.dtype(*x);
    let kernel = match d {
        DType::F32 => crate::vmath::scalar(*op).is_some(),
        DType::F64 => crate::vmath::scalar_f64(*op).is_some(),
        DType::I32 | DType::U32 | DType::Bool => false,
    };
    (x == x2
        && y == y2
        && f.dtype(*y) == d
        && kernel
        && step(src, counter, body) == Some(1)
        && step(dst, counter, body) == Some(1))
    .then_some((*op, d, src, dst))
}

/// How many lanes a body runs at once, if every instruction of it is exact lane by lane
/// and every value in it has one lane width.
pub(super) fn lanes(f: &Function, counter: Reg, body: &Block) -> Option<u64> {
    let mut width: Option<u64> = None;
    let mut same = |d: DType| -> bool {
        match (lane_bytes(d), width) {
            (Some(b), None) => {
                width = Some(b);
                true
            }
            (Some(b), Some(w)) => b == w,
            (None, _) => false,
        }
    };
    for inst in &body.0 {
        let fits = match inst {
            Inst::Load { dst, index } => {
                same(f.dtype(*dst)) && step(index, counter, body).is_some()
            }
            // A store at step 0 would write one element from every lane.
            Inst::Store { index, src } => {
                same(f.dtype(*src)) && step(index, counter, body).is_some_and(|s| s != 0)
            }
            Inst::Unary { dst, op, x } => {
                let d = f.dtype(*x);
                let exact = match op {
                    UnaryOp::Neg => true,
                    UnaryOp::Abs => d != DType::U32,
                    UnaryOp::Sqrt => d.is_float(),
                    _ => false,
                };
                exact && same(f.dtype(*dst))
            }
            Inst::Binary { dst, op, a, b } => {
                let d = f.dtype(*dst);
                let exact = match op {
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul => true,
                    BinaryOp::Div => d.is_float(),
                    // IEEE maximum/minimum lane by lane, NaN lanes made the one NaN.
                    BinaryOp::Max | BinaryOp::Min => d.is_float(),
                    BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => !d.is_float(),
                    _ => false,
                };
                exact && same(d) && same(f.dtype(*a)) && same(f.dtype(*b))
            }
            // A predicate fixed for the whole loop (a splat's) picks whole vectors.
            Inst::Select {
                dst,
                pred,
                on_true,
                on_false,
            } => {
                !body.writes(*pred)
                    && same(f.dtype(*dst))
                    && same(f.dtype(*on_true))
                    && same(f.dtype(*on_false))
            }
            Inst::Const { .. }
            | Inst::Copy { .. }
            | Inst::Compare { .. }
            | Inst::Convert { .. }
            | Inst::Bitcast { .. }
            | Inst::Loop { .. }
            | Inst::Dot { .. }
            | Inst::Reduce { .. }
            | Inst::Linalg { .. }
            | Inst::While { .. }
            | Inst::Switch { .. } => false,
        };
        if !fits {
            return None;
        }
    }
    width.map(|w| 16 / w)
}

impl Emitter<'_, '_> {
    /// The loop `vmath_map` recognised, as one call: `dst[0..count] = op(src[0..count])`.
    pub(super) fn map_call(
        &mut self,
        counter: Reg,
        count: u64,
        (op, dtype, src, dst): KernelMap,
    ) -> Result<(), String> {
        let zero = self.b.ins().iconst(types::I32, 0);
        self.set(counter, zero);
        let p = self.pointer;
        let fref = self.import(
            super::super::callouts::map_symbol(dtype),
            &[types::I32, p, p, types::I64],
            &[],
        )?;
        let code = self.b.ins().iconst(
            types::I32,
            i64::from(super::super::callouts::unary_code(op)),
        );
        let (d, s) = (self.address(dst), self.address(src));
        let n = self.b.ins().iconst(types::I64, count as i64);
        self.b.ins().call(fref, &[code, d, s, n]);
        Ok(())
    }

    /// `counter` from 0 in steps of `UNROLL` vectors while they fit (bodies of at most
    /// `UNROLL_MAX_BODY` instructions), then of one vector, each step running `body` on
    /// `lanes` elements at once; then a scalar loop finishes the rest, if any.
    pub(super) fn vector_loop(
        &mut self,
        counter: Reg,
        count: u64,
        lanes: u64,
        body: &Block,
    ) -> Result<(), String> {
        let mut done = 0;
        if body.0.len() <= UNROLL_MAX_BODY {
            let span = lanes * UNROLL;
            done = count - count % span;
            if done > 0 {
                self.counted_loop(counter, 0, done, span, count, |e| {
                    e.vector_body(counter, body, lanes, UNROLL)
                })?;
            }
        }
        let whole = count - count % lanes;
        if whole > done {
            self.counted_loop(counter, done, whole, lanes, count, |e| {
                e.vector_body(counter, body, lanes, 1)
            })?;
        }
        if whole == count {
            return Ok(());
        }
        self.scalar_loop_from(counter, whole, count, body)
    }

    /// A register as a vector: its lanes if the body made it, else its value splat.
    fn lanes_of(&mut self, vals: &HashMap<Reg, Value>, r: Reg) -> Value {
        match vals.get(&r) {
            Some(v) => *v,
            None => {
                let x = self.get(r);
                let ty = vector_type(self.dtype(r));
                self.b.ins().splat(ty, x)
            }
        }
    }

    /// The address of `index` at this trip's first element, computed once per trip
    /// (`addresses` caches it) and moved `offset` elements along its step.
    fn copy_address(
        &mut self,
        addresses: &mut HashMap<usize, Value>,
        index: &ElementIndex,
        step: u64,
        offset: u64,
    ) -> Value {
        let key = index as *const ElementIndex as usize;
        let addr = match addresses.get(&key) {
            Some(a) => *a,
            None => {
                let a = self.address(index);
                addresses.insert(key, a);
                a
            }
        };
        let bytes = super::element_bytes(self.f.arrays[index.array.index()].dtype) as u64;
        match offset * step * bytes {
            0 => addr,
            at => self.b.ins().iadd_imm_s(addr, at as i64),
        }
    }

    /// `copies` consecutive vectors of `body` (`copies` trips of the one-vector loop, in
    /// order, so the bits are the same), every address computed once for all of them.
    fn vector_body(
        &mut self,
        counter: Reg,
        body: &Block,
        lanes: u64,
        copies: u64,
    ) -> Result<(), String> {
        let mut addresses = HashMap::new();
        for copy in 0..copies {
            self.vector_copy(counter, body, &mut addresses, copy * lanes)?;
        }
        Ok(())
    }

    /// One vector of `body`, `offset` elements past the trip's first.
    fn vector_copy(
        &mut self,
        counter: Reg,
        body: &Block,
        addresses: &mut HashMap<usize, Value>,
        offset: u64,
    ) -> Result<(), String> {
        // Unaligned: a view may start at any element.
        let memory = MemFlagsData::new().with_notrap();
        let mut vals: HashMap<Reg, Value> = HashMap::new();
        for inst in &body.0 {
            match inst {
                Inst::Load { dst, index } => {
                    let s = step(index, counter, body);
                    let addr = self.copy_address(addresses, index, s.unwrap_or(0), offset);
                    let ty = vector_type(self.dtype(*dst));
                    let lane = ty.lane_type();
                    let v = match s {
                        Some(1) => self.b.ins().load(ty, memory, addr, 0),
                        Some(0) => {
                            let x = self.b.ins().load(lane, memory, addr, 0);
                            self.b.ins().splat(ty, x)
                        }
                        // Lane by lane from a strided run (a column, a transpose).
                        Some(s) => {
                            let x = self.b.ins().load(lane, memory, addr, 0);
                            let mut v = self.b.ins().splat(ty, x);
                            for k in 1..ty.lane_count() {
                                let at = u64::from(k) * s * u64::from(lane.bytes());
                                let at = self.b.ins().iadd_imm_s(addr, at as i64);
                                let x = self.b.ins().load(lane, memory, at, 0);
                                v = self.b.ins().insertlane(v, x, k as u8);
                            }
                            v
                        }
                        None => return Err(format!("{inst:?} moves (a bug in `lanes`)")),
                    };
                    vals.insert(*dst, v);
                }
                Inst::Store { index, src } => {
                    let v = self.lanes_of(&vals, *src);
                    let s = step(index, counter, body);
                    let addr = self.copy_address(addresses, index, s.unwrap_or(0), offset);
                    let ty = self.b.func.dfg.value_type(v);
                    match s {
                        Some(1) => {
                            self.b.ins().store(memory, v, addr, 0);
                        }
                        Some(s) if s > 1 => {
                            let bytes = u64::from(ty.lane_type().bytes());
                            for k in 0..ty.lane_count() {
                                let x = self.b.ins().extractlane(v, k as u8);
                                let at = self
                                    .b
                                    .ins()
                                    .iadd_imm_s(addr, (u64::from(k) * s * bytes) as i64);
                                self.b.ins().store(memory, x, at, 0);
                            }
                        }
                        _ => return Err(format!("{inst:?} stores at step 0 (a bug in `lanes`)")),
                    }
                }
                Inst::Unary { dst, op, x } => {
                    let d = self.dtype(*x);
                    let x = self.lanes_of(&vals, *x);
                    let v = self.unary(*op, d, x)?;
                    vals.insert(*dst, v);
                }
                Inst::Binary { dst, op, a, b } => {
                    let (a, b) = (self.lanes_of(&vals, *a), self.lanes_of(&vals, *b));
                    let v = self.binary(*op, self.dtype(*dst), a, b)?;
                    vals.insert(*dst, v);
                }
                Inst::Select {
                    dst,
                    pred,
                    on_true,
                    on_false,
                } => {
                    let p = self.get(*pred);
                    let (t, f) = (
                        self.lanes_of(&vals, *on_true),
                        self.lanes_of(&vals, *on_false),
                    );
                    let v = self.b.ins().select(p, t, f);
                    vals.insert(*dst, v);
                }
                Inst::Const { .. }
                | Inst::Copy { .. }
                | Inst::Compare { .. }
                | Inst::Convert { .. }
                | Inst::Bitcast { .. }
                | Inst::Loop { .. }
                | Inst::Dot { .. }
                | Inst::Reduce { .. }
                | Inst::Linalg { .. }
                | Inst::While { .. }
                | Inst::Switch { .. } => {
                    return Err(format!(
                        "{inst:?} is not a lane-wise instruction (a bug in `lanes`)"
                    ))
                }
            }
        }
        Ok(())
    }
}
