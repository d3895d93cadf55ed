//! Loop IR to Cranelift IR. Registers are Cranelift variables (the frontend builds SSA);
//! bool is an `i8` holding 0 or 1, i32 and u32 are both `i32` (the instruction picks signed
//! or unsigned), f32 and f64 are themselves. Arrays are the caller's memory, one base pointer
//! each, read once at entry.

use super::callouts::{
    dot_symbol, f32_kernel_symbol, f64_symbol, linalg_code, linalg_symbol, reduce_kind_code,
    reduce_symbol, sum_products_symbol, typed_symbol,
};
use crate::elementwise::via_f64;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{
    self, types, AbiParam, FuncRef, InstBuilder, MemFlagsData, Type, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};
use quabla_abi::loop_ir::{
    ArrayId, Block, DenseOperand, DotShape, ElementIndex, Function, Inst, Reg,
};
use quabla_abi::qir::{BinaryOp, CompareDir, LinalgOp, ReduceKind, UnaryOp};
use quabla_abi::DType;
use std::collections::HashMap;

mod hoist;
mod vector;

const SLOT_BYTES: i32 = 8;

fn clif_type(d: DType) -> Type {
    match d {
        DType::Bool => types::I8,
        DType::I32 | DType::U32 => types::I32,
        DType::F32 => types::F32,
        DType::F64 => types::F64,
    }
}

fn element_bytes(d: DType) -> i64 {
    match d {
        DType::Bool => 1,
        DType::I32 | DType::U32 | DType::F32 => 4,
        DType::F64 => 8,
    }
}

/// Emits `f` into `func`, whose signature is `(slots: pointer, arrays: pointer)`: `slots`
/// holds the scalar parameters' bits and receives the results', `arrays` the arrays' base
/// pointers in `Function::arrays` order.
pub fn function(
    module: &mut JITModule,
    func: &mut ir::Function,
    f: &Function,
) -> Result<(), String> {
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(func, &mut fctx);
    let vars: Vec<Variable> = f
        .regs
        .iter()
        .map(|d| b.declare_var(clif_type(*d)))
        .collect();
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let slots = b.block_params(entry)[0];
    let table = b.block_params(entry)[1];
    let pointer = module.target_config().pointer_type();
    let bases: Vec<Value> = (0..f.arrays.len())
        .map(|k| {
            let offset = pointer.bytes() as i32 * k as i32;
            b.ins()
                .load(pointer, MemFlagsData::trusted(), table, offset)
        })
        .collect();
    for (k, p) in f.params.iter().enumerate() {
        let ty = clif_type(f.dtype(*p));
        let v = b
            .ins()
            .load(ty, MemFlagsData::trusted(), slots, SLOT_BYTES * k as i32);
        b.def_var(vars[p.index()], v);
    }
    let mut e = Emitter {
        b,
        vars,
        f,
        module,
        imported: HashMap::new(),
        bases,
        pointer,
        counters: HashMap::new(),
        hoisted: HashMap::new(),
    };
    e.block(&f.body)?;
    let results: Vec<Value> = f.results.iter().map(|r| e.get(*r)).collect();
    for (k, v) in results.into_iter().enumerate() {
        e.b.ins()
            .store(MemFlagsData::trusted(), v, slots, SLOT_BYTES * k as i32);
    }
    e.b.ins().return_(&[]);
    e.b.seal_all_blocks();
    let config = e.module.target_config();
    e.b.finalize(config);
    Ok(())
}

/// Element loops that stay scalar code (their bodies are not lane-wise) longer than this
/// lose to the interpreter's fused, vectorised tiles; a function with one is not compiled.
/// Measured on the RNN gradient's 64x64 accumulations: 4096-element scalar loops made the
/// loop 1.2x slower than interpreted; 64-element ones made the forward scan 2x faster.
pub const SCALAR_LOOP_LIMIT: u64 = 1024;

/// The trips of an element loop of `f` that would be scalar code past
/// [`SCALAR_LOOP_LIMIT`], if there is one: an inner loop of a nest counts the trips of the
/// loops around it (an outer level whose body is only its inner loop is not scalar work).
pub fn long_scalar_loop(f: &Function) -> Option<u64> {
    let mut pending: Vec<(&Block, u64)> = vec![(&f.body, 1)];
    while let Some((block, around)) = pending.pop() {
        for inst in &block.0 {
            match inst {
                Inst::Loop {
                    counter,
                    count,
                    body,
                } => {
                    let trips = around.saturating_mul(*count);
                    if let [Inst::Loop { .. }] = &body.0[..] {
                        pending.push((body, trips));
                        continue;
                    }
                    let vectorised = vector::lanes(f, *counter, body).is_some()
                        || vector::vmath_map(f, *counter, body).is_some();
                    if trips > SCALAR_LOOP_LIMIT && !vectorised {
                        return Some(trips);
                    }
                    pending.push((body, trips));
                }
                other => pending.extend(other.regions().into_iter().map(|b| (b, around))),
            }
        }
    }
    None
}

/// Whether an element loop fused from several (`loop_ir::fuse`) stays SIMD code: fusing
/// one that would not (a kernel call, a conversion) with lane-wise ones would make all of
/// it scalar.
pub fn fusible(f: &Function, counter: Reg, body: &Block) -> bool {
    vector::lanes(f, counter, body).is_some()
}

/// Validation admits no such op; reaching one means the lowering is wrong.
fn not_qir(op: &str, d: DType) -> String {
    format!("`{op}` on {} is not a QIR op", d.name())
}

struct Emitter<'a, 'f> {
    b: FunctionBuilder<'f>,
    vars: Vec<Variable>,
    f: &'a Function,
    module: &'a mut JITModule,
    imported: HashMap<String, FuncRef>,
    /// Each array's base pointer.
    bases: Vec<Value>,
    pointer: Type,
    /// The counters of the element loops being emitted, with their trip counts.
    counters: HashMap<Reg, u64>,
    /// The loop-invariant parts of the addresses in the element loops being emitted.
    hoisted: HashMap<usize, hoist::Hoisted>,
}

impl Emitter<'_, '_> {
    fn get(&mut self, r: Reg) -> Value {
        self.b.use_var(self.vars[r.index()])
    }

    fn set(&mut self, r: Reg, v: Value) {
        self.b.def_var(self.vars[r.index()], v)
    }

    fn dtype(&self, r: Reg) -> DType {
        self.f.dtype(r)
    }

    /// Region nesting is bounded by the decoder's `MAX_REGION_DEPTH`, so this recursion is.
    fn block(&mut self, block: &Block) -> Result<(), String> {
        for inst in &block.0 {
            self.inst(inst)?;
        }
        Ok(())
    }

    fn inst(&mut self, inst: &Inst) -> Result<(), String> {
        match inst {
            Inst::Const { dst, bits } => {
                let v = match self.dtype(*dst) {
                    DType::F32 => self.b.ins().f32const(Ieee32::with_bits(*bits as u32)),
                    DType::F64 => self.b.ins().f64const(Ieee64::with_bits(*bits)),
                    d => self.b.ins().iconst(clif_type(d), *bits as i64),
                };
                self.set(*dst, v);
            }
            Inst::Unary { dst, op, x } => {
                let d = self.dtype(*x);
                let x = self.get(*x);
                let v = self.unary(*op, d, x)?;
                self.set(*dst, v);
            }
            Inst::Binary { dst, op, a, b } => {
                let (a, b) = (self.get(*a), self.get(*b));
                let v = self.binary(*op, self.dtype(*dst), a, b)?;
                self.set(*dst, v);
            }
            Inst::Compare { dst, dir, a, b } => {
                let d = self.dtype(*a);
                let (a, b) = (self.get(*a), self.get(*b));
                let v = self.compare(*dir, d, a, b);
                self.set(*dst, v);
            }
            Inst::Select {
                dst,
                pred,
                on_true,
                on_false,
            } => {
                let (p, t, f) = (self.get(*pred), self.get(*on_true), self.get(*on_false));
                let v = self.b.ins().select(p, t, f);
                self.set(*dst, v);
            }
            Inst::Convert { dst, x } => {
                let from = self.dtype(*x);
                let x = self.get(*x);
                let v = self.convert(x, from, self.dtype(*dst));
                self.set(*dst, v);
            }
            Inst::Bitcast { dst, x } => {
                let (from, to) = (clif_type(self.dtype(*x)), clif_type(self.dtype(*dst)));
                let x = self.get(*x);
                let v = if from == to {
                    x
                } else {
                    self.b.ins().bitcast(to, MemFlagsData::new(), x)
                };
                self.set(*dst, v);
            }
            Inst::Copy { dst, src } => {
                let v = self.get(*src);
                self.set(*dst, v);
            }
            Inst::Load { dst, index } => {
                let addr = self.address(index);
                let ty = clif_type(self.dtype(*dst));
                let v = self.b.ins().load(ty, MemFlagsData::trusted(), addr, 0);
                self.set(*dst, v);
            }
            Inst::Store { index, src } => {
                let addr = self.address(index);
                let v = self.get(*src);
                self.b.ins().store(MemFlagsData::trusted(), v, addr, 0);
            }
            Inst::Loop {
                counter,
                count,
                body,
            } => self.element_loop(*counter, *count, body)?,
            Inst::Dot {
                dtype,
                dst,
                lhs,
                rhs,
                shape,
            } => self.dot(*dtype, *dst, lhs, rhs, shape)?,
            Inst::Reduce {
                kind,
                dtype,
                dst,
                src,
                times,
                rows,
                len,
            } => self.reduce(*kind, *dtype, *dst, src, times.as_ref(), (*rows, *len))?,
            Inst::Linalg {
                op,
                operands,
                results,
            } => self.linalg(op, operands, results)?,
            Inst::While {
                carries,
                cond,
                test,
                body,
                next,
            } => self.while_loop(carries, cond, *test, body, next)?,
            Inst::Switch {
                index,
                branches,
                results,
            } => {
                let idx = self.get(*index);
                let idx = self.widen_int(idx, self.dtype(*index));
                let merge = self.b.create_block();
                let blocks: Vec<ir::Block> =
                    branches.iter().map(|_| self.b.create_block()).collect();
                let mut switch = Switch::new();
                for (k, blk) in blocks.iter().enumerate() {
                    switch.set_entry(k as u128, *blk);
                }
                // Out of range (negative too, read unsigned) runs the last branch, as QIR.
                let last = *blocks.last().ok_or("a cond with no branch")?;
                switch.emit(&mut self.b, idx, last);
                for (blk, br) in blocks.iter().zip(branches) {
                    self.b.seal_block(*blk);
                    self.b.switch_to_block(*blk);
                    self.block(&br.block)?;
                    let vals: Vec<Value> = br.results.iter().map(|r| self.get(*r)).collect();
                    for (r, v) in results.iter().zip(vals) {
                        self.set(*r, v);
                    }
                    self.b.ins().jump(merge, &[]);
                }
                self.b.seal_block(merge);
                self.b.switch_to_block(merge);
            }
        }
        Ok(())
    }

    fn while_loop(
        &mut self,
        carries: &[Reg],
        cond: &Block,
        test: Reg,
        body: &Block,
        next: &[Reg],
    ) -> Result<(), String> {
        let header = self.b.create_block();
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        self.block(cond)?;
        let t = self.get(test);
        self.b.ins().brif(t, body_block, &[], exit, &[]);
        self.seal_exits(body_block, exit);
        self.b.switch_to_block(body_block);
        self.block(body)?;
        // All next values are read before any carry is written: a carry may feed another.
        let vals: Vec<Value> = next.iter().map(|r| self.get(*r)).collect();
        for (c, v) in carries.iter().zip(vals) {
            self.set(*c, v);
        }
        self.b.ins().jump(header, &[]);
        self.b.seal_block(header);
        self.b.switch_to_block(exit);
        Ok(())
    }

    /// Seals a loop's body and exit blocks as soon as the header branches to them (their
    /// only predecessor), and its header after the back edge: a variable read inside then
    /// resolves to its one definition instead of a block parameter in every loop header
    /// it crosses, which made register allocation dominate compile time on large loops.
    fn seal_exits(&mut self, body: ir::Block, exit: ir::Block) {
        self.b.seal_block(body);
        self.b.seal_block(exit);
    }

    /// An element loop: as vectors where the body is lane-wise, else one element a step.
    fn element_loop(&mut self, counter: Reg, count: u64, body: &Block) -> Result<(), String> {
        let saved = self.hoist_addresses(counter, body);
        let emitted = if let Some(map) = vector::vmath_map(self.f, counter, body) {
            self.map_call(counter, count, map)
        } else {
            match vector::lanes(self.f, counter, body) {
                Some(lanes) if count >= lanes => self.vector_loop(counter, count, lanes, body),
                _ => self.scalar_loop_from(counter, 0, count, body),
            }
        };
        self.restore_addresses(saved);
        emitted
    }

    /// `counter` from `start` while below `count`, one element a step.
    fn scalar_loop_from(
        &mut self,
        counter: Reg,
        start: u64,
        count: u64,
        body: &Block,
    ) -> Result<(), String> {
        self.counted_loop(counter, start, count, 1, count, |e| e.block(body))
    }

    /// `counter` from `start` in steps of `step` while below `end`, running `each` with
    /// the counter set: header, body, exit. Inside, the counter is known to lie in
    /// `[0, bound)` (`address` skips its clamp).
    fn counted_loop(
        &mut self,
        counter: Reg,
        start: u64,
        end: u64,
        step: u64,
        bound: u64,
        each: impl FnOnce(&mut Self) -> Result<(), String>,
    ) -> Result<(), String> {
        let header = self.b.create_block();
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        let first = self.b.ins().iconst(types::I32, start as i64);
        self.set(counter, first);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let c = self.get(counter);
        let more = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThan, c, end as i64);
        self.b.ins().brif(more, body_block, &[], exit, &[]);
        self.seal_exits(body_block, exit);
        self.b.switch_to_block(body_block);
        self.counters.insert(counter, bound);
        each(self)?;
        self.counters.remove(&counter);
        let c = self.get(counter);
        let c = self.b.ins().iadd_imm_s(c, step as i64);
        self.set(counter, c);
        self.b.ins().jump(header, &[]);
        self.b.seal_block(header);
        self.b.switch_to_block(exit);
        Ok(())
    }
    /// A row reduction by the interpreter's own fold (`callouts::reduce`), or with
    /// factors a sum of their products (`callouts::sum_products`; `Function::check` admits
    /// factors only in float sums).
    fn reduce(
        &mut self,
        kind: ReduceKind,
        dtype: DType,
        dst: ArrayId,
        src: &ElementIndex,
        times: Option<&ElementIndex>,
        (rows, len): (u64, u64),
    ) -> Result<(), String> {
        let dst = self.bases[dst.index()];
        let src = self.address(src);
        let rows = self.b.ins().iconst(types::I64, rows as i64);
        let len = self.b.ins().iconst(types::I64, len as i64);
        let (symbol, args) = match times {
            Some(times) => {
                let times = self.address(times);
                (sum_products_symbol(dtype), vec![dst, src, times, rows, len])
            }
            None => {
                let kind = i64::from(reduce_kind_code(kind));
                let kind = self.b.ins().iconst(types::I32, kind);
                (reduce_symbol(dtype), vec![dst, src, rows, len, kind])
            }
        };
        let params: Vec<Type> = args
            .iter()
            .map(|v| self.b.func.dfg.value_type(*v))
            .collect();
        let fref = self.import(symbol, &params, &[])?;
        self.b.ins().call(fref, &args);
        Ok(())
    }

    /// Calls the matrix product of `dtype` (`callouts::dot`).
    fn dot(
        &mut self,
        dtype: DType,
        dst: ArrayId,
        lhs: &ElementIndex,
        rhs: &ElementIndex,
        shape: &DotShape,
    ) -> Result<(), String> {
        let p = self.pointer;
        let mut params = vec![p, p, p];
        params.extend([types::I64; 8]);
        let fref = self.import(dot_symbol(dtype), &params, &[])?;
        let mut args = vec![
            self.bases[dst.index()],
            self.address(lhs),
            self.address(rhs),
        ];
        for w in [
            shape.batch,
            shape.m,
            shape.k,
            shape.n,
            shape.lhs_strides.0,
            shape.lhs_strides.1,
            shape.rhs_strides.0,
            shape.rhs_strides.1,
        ] {
            args.push(self.b.ins().iconst(types::I64, w as i64));
        }
        self.b.ins().call(fref, &args);
        Ok(())
    }

    /// Calls the interpreter's linear algebra (`callouts::linalg`) on matrices in the last
    /// two axes of each operand; absent operands and results are null.
    fn linalg(
        &mut self,
        op: &LinalgOp,
        operands: &[DenseOperand],
        results: &[ArrayId],
    ) -> Result<(), String> {
        let a = operands
            .first()
            .ok_or_else(|| format!("{} without operands (a bug)", op.name()))?;
        // `Function::check` held the operands to the op's shape rule: matrices, rank >= 2.
        let matrix = |t: &quabla_abi::TensorType| match t.shape[..] {
            [ref batch @ .., rows, cols] => Ok((
                batch.iter().product::<usize>() as u64,
                rows as u64,
                cols as u64,
            )),
            _ => Err(format!("{} of a non-matrix {t} (a bug)", op.name())),
        };
        let (batch, m, n) = matrix(&a.ty)?;
        let (_, p, q) = match operands.get(1) {
            Some(b) => matrix(&b.ty)?,
            None => (0, 0, 0),
        };
        let null = self.b.ins().iconst(self.pointer, 0);
        let mut args = vec![self.b.ins().iconst(types::I32, i64::from(linalg_code(op)))];
        args.push(self.address(&a.start));
        args.push(match operands.get(1) {
            Some(b) => self.address(&b.start),
            None => null,
        });
        for k in 0..3 {
            args.push(results.get(k).map_or(null, |r| self.bases[r.index()]));
        }
        for w in [batch, m, n, p, q] {
            args.push(self.b.ins().iconst(types::I64, w as i64));
        }
        let params: Vec<Type> = args
            .iter()
            .map(|v| self.b.func.dfg.value_type(*v))
            .collect();
        let fref = self.import(linalg_symbol(a.ty.dtype), &params, &[])?;
        self.b.ins().call(fref, &args);
        Ok(())
    }

    /// An imported function of these parameter and result types.
    fn import(
        &mut self,
        name: String,
        params: &[Type],
        returns: &[Type],
    ) -> Result<FuncRef, String> {
        if let Some(f) = self.imported.get(&name) {
            return Ok(*f);
        }
        let mut sig = self.module.make_signature();
        sig.params.extend(params.iter().map(|t| AbiParam::new(*t)));
        sig.returns
            .extend(returns.iter().map(|t| AbiParam::new(*t)));
        let id = self
            .module
            .declare_function(&name, Linkage::Import, &sig)
            .map_err(|e| format!("import {name}: {e}"))?;
        let f = self.module.declare_func_in_func(id, self.b.func);
        self.imported.insert(name, f);
        Ok(f)
    }

    /// Calls an imported scalar function of the given parameter and result type.
    fn call(&mut self, name: String, ty: Type, args: &[Value]) -> Result<Value, String> {
        let fref = self.import(name, &vec![ty; args.len()], &[ty])?;
        let call = self.b.ins().call(fref, args);
        Ok(self.b.inst_results(call)[0])
    }

    /// Calls the f64 function of a float op, widening f32 operands and rounding once.
    fn call_f64(&mut self, op_name: &str, d: DType, args: &[Value]) -> Result<Value, String> {
        let wide: Vec<Value> = if d == DType::F32 {
            args.iter()
                .map(|a| self.b.ins().fpromote(types::F64, *a))
                .collect()
        } else {
            args.to_vec()
        };
        let r = self.call(f64_symbol(op_name), types::F64, &wide)?;
        Ok(if d == DType::F32 {
            self.b.ins().fdemote(types::F32, r)
        } else {
            r
        })
    }

    /// A unary op on an operand of dtype `d`.
    fn unary(&mut self, op: UnaryOp, d: DType, x: Value) -> Result<Value, String> {
        use UnaryOp::*;
        if d.is_float() {
            if d == DType::F32 && crate::vmath::scalar(op).is_some() {
                return self.call(f32_kernel_symbol(op.name()), types::F32, &[x]);
            }
            if via_f64(op).is_some() {
                return self.call_f64(op.name(), d, &[x]);
            }
            let ins = self.b.ins();
            return Ok(match op {
                Neg => ins.fneg(x),
                Abs => ins.fabs(x),
                Floor => ins.floor(x),
                Ceil => ins.ceil(x),
                Round => ins.nearest(x),
                Sqrt => ins.sqrt(x),
                Sign => self.call(typed_symbol("sign", d), clif_type(d), &[x])?,
                // |x| < inf is false for NaN and both infinities.
                IsFinite => {
                    let a = ins.fabs(x);
                    let inf = if d == DType::F32 {
                        self.b.ins().f32const(f32::INFINITY)
                    } else {
                        self.b.ins().f64const(f64::INFINITY)
                    };
                    self.b.ins().fcmp(FloatCC::LessThan, a, inf)
                }
                Rsqrt | Exp | Exp2 | Expm1 | Log | Log1p | Cbrt | Sin | Cos | Tan | Asin | Acos
                | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Erf | Erfc | ErfInv
                | Logistic => {
                    unreachable!("{op:?} is called through via_f64")
                }
                Not => return Err(not_qir(op.name(), d)),
            });
        }
        let ins = self.b.ins();
        Ok(match (op, d) {
            (Not, DType::Bool) => ins.bxor_imm_u(x, 1),
            (Not, _) => ins.bnot(x),
            (Neg, DType::I32 | DType::U32) => ins.ineg(x),
            (Abs, DType::I32) => ins.iabs(x),
            (Abs, DType::U32) => x,
            // signum: clamp to [-1, 1].
            (Sign, DType::I32) => {
                let one = ins.iconst(types::I32, 1);
                let lo = self.b.ins().smin(x, one);
                let minus_one = self.b.ins().iconst(types::I32, -1);
                self.b.ins().smax(lo, minus_one)
            }
            (Sign, DType::U32) => {
                let nz = ins.icmp_imm_u(IntCC::NotEqual, x, 0);
                self.b.ins().uextend(types::I32, nz)
            }
            (Neg | Abs | Sign, _)
            | (
                Floor | Ceil | Round | Exp | Exp2 | Expm1 | Log | Log1p | Sqrt | Rsqrt | Cbrt | Sin
                | Cos | Tan | Asin | Acos | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Erf
                | Erfc | ErfInv | Logistic | IsFinite,
                _,
            ) => return Err(not_qir(op.name(), d)),
        })
    }

    /// QIR's float `max`/`min` (`elementwise::fmax`): IEEE maximum/minimum (-0 below +0),
    /// NaN if either operand is, the one NaN `f64::NAN` converts to. Cranelift's `fmax`
    /// leaves a NaN's sign unspecified, so NaN lanes are replaced. Scalars or vectors.
    fn float_max_min(&mut self, max: bool, d: DType, a: Value, b: Value) -> Value {
        let ty = self.b.func.dfg.value_type(a);
        let r = if max {
            self.b.ins().fmax(a, b)
        } else {
            self.b.ins().fmin(a, b)
        };
        let nan = match d {
            DType::F32 => self.b.ins().f32const(Ieee32::with_float(f32::NAN)),
            _ => self.b.ins().f64const(Ieee64::with_float(f64::NAN)),
        };
        let unordered = self.b.ins().fcmp(FloatCC::Unordered, a, b);
        if ty.is_vector() {
            let nan = self.b.ins().splat(ty, nan);
            let mask = self.b.ins().bitcast(ty, MemFlagsData::new(), unordered);
            self.b.ins().bitselect(mask, nan, r)
        } else {
            self.b.ins().select(unordered, nan, r)
        }
    }

    fn binary(&mut self, op: BinaryOp, d: DType, a: Value, b: Value) -> Result<Value, String> {
        use BinaryOp::*;
        if d.is_float() {
            let ins = self.b.ins();
            return Ok(match op {
                Add => ins.fadd(a, b),
                Sub => ins.fsub(a, b),
                Mul => ins.fmul(a, b),
                Div => ins.fdiv(a, b),
                Max | Min => return Ok(self.float_max_min(op == Max, d, a, b)),
                Rem => self.call(typed_symbol(op.name(), d), clif_type(d), &[a, b])?,
                Pow | Atan2 if d == DType::F32 && crate::vmath::scalar_binary(op).is_some() => {
                    self.call(f32_kernel_symbol(op.name()), types::F32, &[a, b])?
                }
                Pow | Atan2 => self.call_f64(op.name(), d, &[a, b])?,
                And | Or | Xor | ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => {
                    return Err(not_qir(op.name(), d))
                }
            });
        }
        let signed = d == DType::I32;
        let ins = self.b.ins();
        Ok(match op {
            Add => ins.iadd(a, b),
            Sub => ins.isub(a, b),
            Mul => ins.imul(a, b),
            Max if signed => ins.smax(a, b),
            Min if signed => ins.smin(a, b),
            Max => ins.umax(a, b),
            Min => ins.umin(a, b),
            And => ins.band(a, b),
            Or => ins.bor(a, b),
            Xor => ins.bxor(a, b),
            Div | Rem | Pow | ShiftLeft | ShiftRightLogical | ShiftRightArithmetic
                if d != DType::Bool =>
            {
                self.call(typed_symbol(op.name(), d), types::I32, &[a, b])?
            }
            Div | Rem | Pow | ShiftLeft | ShiftRightLogical | ShiftRightArithmetic | Atan2 => {
                return Err(not_qir(op.name(), d))
            }
        })
    }

    fn compare(&mut self, dir: CompareDir, d: DType, a: Value, b: Value) -> Value {
        if d.is_float() {
            let cc = match dir {
                CompareDir::Eq => FloatCC::Equal,
                // NaN is unequal to everything, so `ne` is unordered-or-unequal.
                CompareDir::Ne => FloatCC::NotEqual,
                CompareDir::Lt => FloatCC::LessThan,
                CompareDir::Le => FloatCC::LessThanOrEqual,
                CompareDir::Gt => FloatCC::GreaterThan,
                CompareDir::Ge => FloatCC::GreaterThanOrEqual,
            };
            return self.b.ins().fcmp(cc, a, b);
        }
        let signed = d == DType::I32;
        let cc = match (dir, signed) {
            (CompareDir::Eq, _) => IntCC::Equal,
            (CompareDir::Ne, _) => IntCC::NotEqual,
            (CompareDir::Lt, true) => IntCC::SignedLessThan,
            (CompareDir::Le, true) => IntCC::SignedLessThanOrEqual,
            (CompareDir::Gt, true) => IntCC::SignedGreaterThan,
            (CompareDir::Ge, true) => IntCC::SignedGreaterThanOrEqual,
            (CompareDir::Lt, false) => IntCC::UnsignedLessThan,
            (CompareDir::Le, false) => IntCC::UnsignedLessThanOrEqual,
            (CompareDir::Gt, false) => IntCC::UnsignedGreaterThan,
            (CompareDir::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
        };
        self.b.ins().icmp(cc, a, b)
    }

    /// An integer or bool widened to i64 by its dtype's signedness.
    fn widen_int(&mut self, x: Value, d: DType) -> Value {
        match d {
            DType::I32 => self.b.ins().sextend(types::I64, x),
            _ => self.b.ins().uextend(types::I64, x),
        }
    }

    /// QIR `convert`, as the interpreter does it: integers and bool widen to i64, floats to
    /// f64, then narrow (float to integer truncates and saturates, NaN to 0; integer to
    /// integer wraps; anything to bool is `!= 0`, NaN included).
    fn convert(&mut self, x: Value, from: DType, to: DType) -> Value {
        if from.is_float() {
            let w = if from == DType::F32 {
                self.b.ins().fpromote(types::F64, x)
            } else {
                x
            };
            return match to {
                DType::F32 => self.b.ins().fdemote(types::F32, w),
                DType::F64 => w,
                DType::I32 => self.b.ins().fcvt_to_sint_sat(types::I32, w),
                DType::U32 => self.b.ins().fcvt_to_uint_sat(types::I32, w),
                DType::Bool => {
                    let zero = self.b.ins().f64const(0.0);
                    self.b.ins().fcmp(FloatCC::NotEqual, w, zero)
                }
            };
        }
        let w = self.widen_int(x, from);
        match to {
            DType::F32 => self.b.ins().fcvt_from_sint(types::F32, w),
            DType::F64 => self.b.ins().fcvt_from_sint(types::F64, w),
            DType::I32 | DType::U32 => self.b.ins().ireduce(types::I32, w),
            DType::Bool => self.b.ins().icmp_imm_u(IntCC::NotEqual, w, 0),
        }
    }
}
