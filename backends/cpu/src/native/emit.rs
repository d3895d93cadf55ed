//! Loop IR to Cranelift IR. Registers are Cranelift variables (the frontend builds SSA);
//! bool is an `i8` holding 0 or 1, i32 and u32 are both `i32` (the instruction picks signed
//! or unsigned), f32 and f64 are themselves.

use super::callouts::{f32_kernel_symbol, f64_symbol, typed_symbol};
use crate::elementwise::via_f64;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{
    self, types, AbiParam, FuncRef, InstBuilder, MemFlagsData, Type, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Switch, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};
use quabla_abi::loop_ir::{Block, Function, Inst, Reg};
use quabla_abi::qir::{BinaryOp, CompareDir, UnaryOp};
use quabla_abi::DType;
use std::collections::HashMap;

const SLOT_BYTES: i32 = 8;

fn clif_type(d: DType) -> Type {
    match d {
        DType::Bool => types::I8,
        DType::I32 | DType::U32 => types::I32,
        DType::F32 => types::F32,
        DType::F64 => types::F64,
    }
}

/// Emits `f` into `func`, whose signature is `(slots: pointer)`.
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
                    self.b.switch_to_block(*blk);
                    self.block(&br.block)?;
                    let vals: Vec<Value> = br.results.iter().map(|r| self.get(*r)).collect();
                    for (r, v) in results.iter().zip(vals) {
                        self.set(*r, v);
                    }
                    self.b.ins().jump(merge, &[]);
                }
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
        self.b.switch_to_block(body_block);
        self.block(body)?;
        // All next values are read before any carry is written: a carry may feed another.
        let vals: Vec<Value> = next.iter().map(|r| self.get(*r)).collect();
        for (c, v) in carries.iter().zip(vals) {
            self.set(*c, v);
        }
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(exit);
        Ok(())
    }

    /// Calls an imported scalar function of the given parameter and result type.
    fn call(&mut self, name: String, ty: Type, args: &[Value]) -> Result<Value, String> {
        let fref = match self.imported.get(&name) {
            Some(f) => *f,
            None => {
                let mut sig = self.module.make_signature();
                sig.params.extend(args.iter().map(|_| AbiParam::new(ty)));
                sig.returns.push(AbiParam::new(ty));
                let id = self
                    .module
                    .declare_function(&name, Linkage::Import, &sig)
                    .map_err(|e| format!("import {name}: {e}"))?;
                let f = self.module.declare_func_in_func(id, self.b.func);
                self.imported.insert(name, f);
                f
            }
        };
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
                | Atan | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Erf | Erfc | Logistic => {
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
                | Erfc | Logistic | IsFinite,
                _,
            ) => return Err(not_qir(op.name(), d)),
        })
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
                Rem | Max | Min => self.call(typed_symbol(op.name(), d), clif_type(d), &[a, b])?,
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
