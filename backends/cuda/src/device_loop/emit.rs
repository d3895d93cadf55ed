//! A loop-IR function as the statements of a one-block CUDA kernel. Every thread runs the
//! scalar code (registers are C locals, each thread holding the same values, so control
//! flow is uniform and a barrier inside a `while` is reached by all); element loops,
//! matrix products and reductions share their iterations out among the threads
//! (`spread.rs` proves that safe for the loops); a scalar store is thread 0's. Barriers
//! separate memory accesses of different threads: before a load that may follow another
//! thread's write, and before a write that may follow another thread's read or write.
//!
//! The elementwise instructions are `elementwise::expression`'s, so they round as the
//! plugin's fused kernels do; products sum in order as `kernels::dot` does (f32 in f64),
//! reductions fold each row in order from its first element as `kernels::reduce` does;
//! factorizations call `kernels::factor`'s functions, as its kernels do.
//! Nesting is bounded by QIR's region depth and an array's rank, so the recursion is too.

use crate::elementwise::{c_type, expression};
use crate::kernels::{dot_accumulation, factor, reduce_fold};
use quabla_abi::loop_ir::{
    ArrayId, Block, DenseOperand, DotShape, ElementIndex, Function, Inst, Reg,
};
use quabla_abi::qir::{LinalgOp, Op, ReduceKind};
use quabla_abi::{DType, TensorType};
use std::collections::BTreeSet;
use std::fmt::Write;

/// The arrays accessed since the last barrier (`all`: any may have been).
#[derive(Clone, Default)]
struct Touched {
    all: bool,
    arrays: BTreeSet<u32>,
}

impl Touched {
    fn any_of(&self, arrays: &[ArrayId]) -> bool {
        self.all || arrays.iter().any(|a| self.arrays.contains(&a.0))
    }

    fn or(&mut self, o: &Touched) {
        self.all |= o.all;
        self.arrays.extend(&o.arrays);
    }
}

/// Which arrays were read and written since the last barrier.
#[derive(Clone, Default)]
struct Since {
    read: Touched,
    written: Touched,
}

impl Since {
    /// After code that may have accessed anything (a region entered from several places).
    fn unknown() -> Since {
        let all = Touched {
            all: true,
            arrays: BTreeSet::new(),
        };
        Since {
            read: all.clone(),
            written: all,
        }
    }

    fn or(&mut self, o: &Since) {
        self.read.or(&o.read);
        self.written.or(&o.written);
    }
}

pub(super) struct Emitter<'a> {
    f: &'a Function,
    /// Each array's pointer (a kernel parameter).
    arrays: &'a [String],
    out: String,
    since: Since,
    /// Distinct names for the spread loops' locals.
    fresh: usize,
    /// The factorizations the body calls (`kernels::factor`): each distinct instantiation's
    /// operation, dimensions and dtype.
    factors: Vec<(LinalgOp, factor::Dims, DType)>,
}

/// What [`Emitter::body`] gives: the statements, the device functions they call and the
/// shared memory those keep.
pub(super) struct Body {
    pub(super) statements: String,
    pub(super) functions: String,
    pub(super) shared_scratch: usize,
}

fn reg(r: Reg) -> String {
    format!("r{}", r.0)
}

impl<'a> Emitter<'a> {
    /// An emitter of `f` whose array `k` is the C pointer `arrays[k]`, with no access to
    /// order before the body (the kernel's own statements before it end with a barrier
    /// where they copy carries in; reading scalar inputs, never written, needs none).
    pub(super) fn new(f: &'a Function, arrays: &'a [String]) -> Emitter<'a> {
        Emitter {
            f,
            arrays,
            out: String::new(),
            since: Since::default(),
            fresh: 0,
            factors: Vec::new(),
        }
    }

    /// The statements of `f`'s body, with the factorizations' functions they call.
    pub(super) fn body(mut self) -> Result<Body, String> {
        self.block(&self.f.body, 1)?;
        let mut functions: Vec<&str> = self
            .factors
            .iter()
            .map(|f| factor::functions(&f.0))
            .collect();
        functions.sort_unstable();
        functions.dedup();
        Ok(Body {
            statements: self.out,
            functions: functions.concat(),
            shared_scratch: self
                .factors
                .iter()
                .map(|(op, d, t)| factor::orthogonal::scratch_bytes(op, *d, *t))
                .sum(),
        })
    }

    fn line(&mut self, depth: usize, s: &str) {
        let _ = writeln!(self.out, "{}{s}", "  ".repeat(depth));
    }

    /// A barrier where reading `reads` and writing `writes` may meet another thread's
    /// access since the last one (a read after a write, a write after either); then the
    /// accesses are recorded.
    fn order(&mut self, depth: usize, reads: &[ArrayId], writes: &[ArrayId]) {
        let after_write = self.since.written.any_of(reads) || self.since.written.any_of(writes);
        if after_write || self.since.read.any_of(writes) {
            self.line(depth, "__syncthreads();");
            self.since = Since::default();
        }
        self.since.read.arrays.extend(reads.iter().map(|a| a.0));
        self.since.written.arrays.extend(writes.iter().map(|a| a.0));
    }

    fn index(&self, i: &ElementIndex) -> String {
        let mut s = format!("{}ll", i.offset);
        for t in &i.terms {
            let _ = write!(
                s,
                " + qclamp((long long){}, {}ll) * {}ll",
                reg(t.start),
                t.max,
                t.stride
            );
        }
        s
    }

    fn at(&self, i: &ElementIndex) -> String {
        format!("{}[{}]", self.arrays[i.array.index()], self.index(i))
    }

    fn block(&mut self, b: &Block, depth: usize) -> Result<(), String> {
        for inst in &b.0 {
            self.inst(inst, depth)?;
        }
        Ok(())
    }

    fn inst(&mut self, inst: &Inst, depth: usize) -> Result<(), String> {
        match inst {
            Inst::Load { dst, index } => {
                self.order(depth, &[index.array], &[]);
                let s = format!("{} = {};", reg(*dst), self.at(index));
                self.line(depth, &s);
            }
            Inst::Store { index, src } => {
                self.order(depth, &[], &[index.array]);
                let s = format!("if (threadIdx.x == 0) {} = {};", self.at(index), reg(*src));
                self.line(depth, &s);
            }
            Inst::Loop { .. } => self.spread_loop(inst, depth)?,
            Inst::Dot {
                dtype,
                dst,
                lhs,
                rhs,
                shape,
            } => {
                self.order(depth, &inst.arrays_read(), &inst.arrays_written());
                self.dot(*dtype, *dst, lhs, rhs, shape, depth)
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
                self.order(depth, &inst.arrays_read(), &inst.arrays_written());
                self.reduce(
                    *kind,
                    *dtype,
                    *dst,
                    src,
                    times.as_ref(),
                    (*rows, *len),
                    depth,
                )
            }
            Inst::Linalg {
                op,
                operands,
                results,
            } => {
                self.order(depth, &inst.arrays_read(), &inst.arrays_written());
                self.factor(op, operands, results, depth)?;
            }
            Inst::While {
                carries,
                cond,
                test,
                body,
                next,
            } => {
                self.line(depth, "while (1) {");
                // Entered from before the loop or from the end of its body.
                self.since = Since::unknown();
                self.block(cond, depth + 1)?;
                let s = format!("if (!{}) break;", reg(*test));
                self.line(depth + 1, &s);
                self.block(body, depth + 1)?;
                self.carry(carries, next, depth + 1);
                self.line(depth, "}");
                self.since = Since::unknown();
            }
            Inst::Switch {
                index,
                branches,
                results,
            } => {
                let s = format!("{{ long long q = (long long){};", reg(*index));
                self.line(depth, &s);
                let (entry, mut after) = (self.since.clone(), Since::default());
                for (k, b) in branches.iter().enumerate() {
                    let head = if k + 1 == branches.len() {
                        if k == 0 {
                            "{".to_string()
                        } else {
                            "else {".to_string()
                        }
                    } else {
                        format!("{}if (q == {k}) {{", if k == 0 { "" } else { "else " })
                    };
                    self.line(depth + 1, &head);
                    self.since = entry.clone();
                    self.block(&b.block, depth + 2)?;
                    for (r, v) in results.iter().zip(&b.results) {
                        let s = format!("{} = {};", reg(*r), reg(*v));
                        self.line(depth + 2, &s);
                    }
                    after.or(&self.since);
                    self.line(depth + 1, "}");
                }
                self.line(depth, "}");
                self.since = after;
            }
            scalar => {
                let s = self.scalar(scalar)?;
                self.line(depth, &s);
            }
        }
        Ok(())
    }

    /// Every `carries[k] = next[k]` at once.
    fn carry(&mut self, carries: &[Reg], next: &[Reg], depth: usize) {
        let mut s = String::from("{ ");
        for (k, n) in next.iter().enumerate() {
            let _ = write!(s, "{} q{k} = {}; ", c_type(self.f.dtype(*n)), reg(*n));
        }
        for (k, c) in carries.iter().enumerate() {
            let _ = write!(s, "{} = q{k}; ", reg(*c));
        }
        s.push('}');
        self.line(depth, &s);
    }

    /// A register instruction as one C statement.
    fn scalar(&self, inst: &Inst) -> Result<String, String> {
        let f = self.f;
        let e = |op: Op, args: &[Reg], dst: Reg| -> Result<String, String> {
            let names: Vec<String> = args.iter().map(|r| reg(*r)).collect();
            let x = expression(&op, &names, f.dtype(args[0]), f.dtype(dst))?;
            Ok(format!("{} = {x};", reg(dst)))
        };
        match inst {
            Inst::Const { dst, bits } => Ok(format!(
                "{} = {};",
                reg(*dst),
                constant(f.dtype(*dst), *bits)
            )),
            Inst::Unary { dst, op, x } => e(Op::Unary(*op), &[*x], *dst),
            Inst::Binary { dst, op, a, b } => e(Op::Binary(*op), &[*a, *b], *dst),
            Inst::Compare { dst, dir, a, b } => e(Op::Compare(*dir), &[*a, *b], *dst),
            Inst::Select {
                dst,
                pred,
                on_true,
                on_false,
            } => e(Op::Select, &[*pred, *on_true, *on_false], *dst),
            Inst::Convert { dst, x } => e(Op::Convert, &[*x], *dst),
            Inst::Bitcast { dst, x } => e(Op::Bitcast, &[*x], *dst),
            Inst::Copy { dst, src } => Ok(format!("{} = {};", reg(*dst), reg(*src))),
            other => Err(format!("{other:?} is not a register instruction")),
        }
    }

    /// A loop nest's iterations spread over the threads, its spread counters decoded from
    /// one flat index; inside, the body runs as written (inner loops in order).
    fn spread_loop(&mut self, inst: &Inst, depth: usize) -> Result<(), String> {
        let (levels, body) = super::spread::nest(inst).ok_or("not an element loop")?;
        let total = levels
            .iter()
            .try_fold(1u64, |a, (_, n)| a.checked_mul(*n))
            .ok_or("an element loop of more than 2^64 iterations")?;
        if total == 0 {
            return Ok(());
        }
        let (reads, writes) = accessed(body);
        self.order(depth, &reads, &writes);
        let q = self.fresh_name();
        let s = format!(
            "for (long long {q} = threadIdx.x; {q} < {total}ll; {q} += blockDim.x) {{ long long {q}t = {q};"
        );
        self.line(depth, &s);
        for (counter, n) in levels.iter().rev() {
            let s = format!("{} = (int)({q}t % {n}ll); {q}t /= {n}ll;", reg(*counter));
            self.line(depth + 1, &s);
        }
        self.element_block(body, depth + 1)?;
        self.line(depth, "}");
        Ok(())
    }

    /// An element loop's body, run by one thread: plain loads and stores, inner loops in
    /// order.
    fn element_block(&mut self, b: &Block, depth: usize) -> Result<(), String> {
        for inst in &b.0 {
            match inst {
                Inst::Load { dst, index } => {
                    let s = format!("{} = {};", reg(*dst), self.at(index));
                    self.line(depth, &s);
                }
                Inst::Store { index, src } => {
                    let s = format!("{} = {};", self.at(index), reg(*src));
                    self.line(depth, &s);
                }
                Inst::Loop {
                    counter,
                    count,
                    body,
                } => {
                    let c = reg(*counter);
                    let s = format!("for ({c} = 0; {c} < {count}; ++{c}) {{");
                    self.line(depth, &s);
                    self.element_block(body, depth + 1)?;
                    self.line(depth, "}");
                }
                scalar => {
                    let s = self.scalar(scalar)?;
                    self.line(depth, &s);
                }
            }
        }
        Ok(())
    }

    fn fresh_name(&mut self) -> String {
        self.fresh += 1;
        format!("q{}", self.fresh)
    }

    /// `dst = lhs @ rhs`, one thread per output element summing in order.
    fn dot(
        &mut self,
        dtype: DType,
        dst: ArrayId,
        lhs: &ElementIndex,
        rhs: &ElementIndex,
        d: &DotShape,
        depth: usize,
    ) {
        let q = self.fresh_name();
        let (acc_ty, step) = dot_accumulation(dtype);
        let (l, r) = (self.at_base(lhs), self.at_base(rhs));
        let (m, k, n) = (d.m, d.k, d.n);
        let s = format!(
            "for (long long {q} = threadIdx.x; {q} < {total}ll; {q} += blockDim.x) {{\n\
             {pad}  long long bb = {q} / {mn}ll, i = {q} / {n}ll % {m}ll, j = {q} % {n}ll;\n\
             {pad}  {acc_ty} acc = 0;\n\
             {pad}  for (long long kk = 0; kk < {k}ll; ++kk) {{\n\
             {pad}    {t} a = {l}[bb * {mk}ll + i * {ls0}ll + kk * {ls1}ll];\n\
             {pad}    {t} b = {r}[bb * {kn}ll + kk * {rs0}ll + j * {rs1}ll];\n\
             {pad}    {step}\n\
             {pad}  }}\n\
             {pad}  {dst}[{q}] = ({t})acc;\n\
             {pad}}}",
            total = d.batch * m * n,
            mn = m * n,
            mk = m * k,
            kn = k * n,
            ls0 = d.lhs_strides.0,
            ls1 = d.lhs_strides.1,
            rs0 = d.rhs_strides.0,
            rs1 = d.rhs_strides.1,
            t = c_type(dtype),
            dst = self.arrays[dst.index()],
            pad = "  ".repeat(depth),
        );
        self.line(depth, &s);
    }

    /// A factorization (`kernels::factor`), the block factoring each matrix of the batch in
    /// turn; the functions end with a barrier, so nothing is left to order after them.
    fn factor(
        &mut self,
        op: &LinalgOp,
        operands: &[DenseOperand],
        results: &[ArrayId],
        depth: usize,
    ) -> Result<(), String> {
        let types: Vec<&TensorType> = operands.iter().map(|o| &o.ty).collect();
        let d = factor::Dims::of(op, &types).ok_or("a factorization of no matrix")?;
        let ins: Vec<String> = operands.iter().map(|o| self.at_base(&o.start)).collect();
        let outs: Vec<String> = results
            .iter()
            .map(|r| self.arrays[r.index()].clone())
            .collect();
        let q = self.fresh_name();
        let t = c_type(types[0].dtype);
        let call = factor::call(op, d, t, &ins, &outs, &q);
        let s = format!(
            "for (long long {q} = 0; {q} < {}ll; ++{q}) {{ {call} }}",
            d.batch
        );
        self.line(depth, &s);
        // One instantiation per operation, sizes and dtype, whatever its batch.
        let key = (*op, factor::Dims { batch: 0, ..d }, types[0].dtype);
        if !self.factors.contains(&key) {
            self.factors.push(key);
        }
        self.since = Since::default();
        Ok(())
    }

    /// A pointer to an index's element (the start of a library call's operand).
    fn at_base(&self, i: &ElementIndex) -> String {
        format!("({} + ({}))", self.arrays[i.array.index()], self.index(i))
    }

    /// `dst[row] = fold(src[row])`, one thread per row folding from its first element.
    #[allow(clippy::too_many_arguments)]
    fn reduce(
        &mut self,
        kind: ReduceKind,
        dtype: DType,
        dst: ArrayId,
        src: &ElementIndex,
        times: Option<&ElementIndex>,
        (rows, len): (u64, u64),
        depth: usize,
    ) {
        let q = self.fresh_name();
        let (acc_ty, step) = reduce_fold(kind, dtype);
        let t = c_type(dtype);
        let element = match times {
            // The product rounds in the element type, as QIR's `mul` would store it.
            Some(w) => format!("({t})({}[at] * {}[at])", self.at_base(src), self.at_base(w)),
            None => format!("{}[at]", self.at_base(src)),
        };
        let s = format!(
            "for (long long {q} = threadIdx.x; {q} < {rows}ll; {q} += blockDim.x) {{\n\
             {pad}  {acc_ty} acc = 0;\n\
             {pad}  for (long long jj = 0; jj < {len}ll; ++jj) {{\n\
             {pad}    long long at = {q} * {len}ll + jj;\n\
             {pad}    {acc_ty} x = ({acc_ty}){element};\n\
             {pad}    if (jj == 0) {{ acc = x; continue; }}\n\
             {pad}    {step}\n\
             {pad}  }}\n\
             {pad}  {dst}[{q}] = ({t})acc;\n\
             {pad}}}",
            dst = self.arrays[dst.index()],
            pad = "  ".repeat(depth),
        );
        self.line(depth, &s);
    }
}

/// The arrays an element loop's body loads from and stores to.
fn accessed(body: &Block) -> (Vec<ArrayId>, Vec<ArrayId>) {
    let all = body.instructions();
    (
        all.iter().flat_map(|i| i.arrays_read()).collect(),
        all.iter().flat_map(|i| i.arrays_written()).collect(),
    )
}

/// A register constant from its bits.
fn constant(d: DType, bits: u64) -> String {
    match d {
        DType::Bool => format!("(unsigned char){}", (bits != 0) as u8),
        DType::I32 => format!("(int){}u", bits as u32),
        DType::U32 => format!("{}u", bits as u32),
        DType::F32 => format!("__uint_as_float({}u)", bits as u32),
        DType::F64 => format!("__longlong_as_double((long long){bits}ull)"),
    }
}
