//! `while` loops decided on the device: a loop the plugin kit's shared lowering covers
//! (`quabla_abi::loop_ir::lower_while`, fused by `loop_ir::fuse`, the same function the CPU
//! plugin's compiled tier emits as native code) becomes one CUDA kernel run by one block,
//! predicate and all (`emit.rs`). A solver's loop on a small state then costs one launch,
//! not a predicate read back (or a graph launch) per iteration. A program running such a
//! loop is one kernel whole where `loop_ir::lower_program` covers it ([`plan_program`]).
//!
//! Only loops of light iterations are taken: each element loop, product and reduction
//! within a few passes of one block ([`MAX_LOOP_ELEMENTS`], [`MAX_DOT_TERMS`],
//! [`MAX_REDUCE_ELEMENTS`]), since one block's threads do all the work that a full grid
//! would share, and no array past [`MAX_ARRAY_ELEMENTS`]; element loops whose iterations
//! are not provably independent (`spread.rs`), and factorizations that the plugin's own
//! kernels do not take (`kernels/factor.rs`: matrices past its bound, which cuSOLVER runs
//! from the host, or a loop whose eigh, QR and SVD would keep more shared memory than a
//! block has), leave the loop to the host-driven plan (`plan.rs`, `loops.rs`).
//! `QUABLA_CUDA_DEVICE_LOOPS=0` turns the whole path off.
//!
//! ```
//! use quabla_abi::qir::Program;
//! use quabla_cuda::plan::{plan_with, Step};
//! // Halve x until it is below 1e-3: one kernel runs the whole loop.
//! let p = Program::parse("program(%0: f64[]) {
//!   %1 = while(%0) : f64[] {
//!     cond(%0: f64[]) {
//!       %1 = constant[value=[0.001]]() : f64[]
//!       %2 = compare[dir=lt](%1, %0) : bool[]
//!       return %2
//!     }
//!     body(%0: f64[]) {
//!       %1 = constant[value=[0.5]]() : f64[]
//!       %2 = mul(%0, %1) : f64[]
//!       return %2
//!     }
//!   }
//!   return %1
//! }").unwrap();
//! let plan = plan_with(&p, "k", 0).unwrap();
//! assert!(matches!(&plan.steps[..], [Step::Kernel(k)] if k.device_loop));
//! ```

mod emit;
pub mod spread;
#[cfg(test)]
mod tests;

use crate::elementwise::{c_type, PRELUDE};
use crate::fusion::Kernel;
use crate::kernels::factor;
use crate::plan::{Plan, Step};
use quabla_abi::loop_ir::{
    fuse, lower_program, lower_while, ArrayRole, Block, Function, Inst, Operand,
};
use quabla_abi::qir::{Node, Op, Program};
use quabla_abi::{DType, TensorType};
use std::fmt::Write;

/// The most iterations one element loop of a device loop may have (each costs one thread an
/// element): one block of up to 256 threads walks it in at most 16 passes, where a kernel of
/// its own would spread it over the GPU.
pub const MAX_LOOP_ELEMENTS: u64 = 4096;

/// The most multiply-adds one matrix product of a device loop may make (an MLP layer on
/// one state: 64 x 64 is 4,096), as `kernels::dot_in_run` bounds those in fused runs.
pub const MAX_DOT_TERMS: u64 = 1 << 16;

/// The most elements one reduction of a device loop may read, as `one_block.rs` bounds the
/// parts it merges.
pub const MAX_REDUCE_ELEMENTS: u64 = 16_384;

/// The most multiply-adds (about) one factorization of a device loop may make, its batch
/// together: a 64 x 64 LU. One block factors the batch's matrices in turn.
pub const MAX_FACTOR_TERMS: u64 = 1 << 18;

/// The most elements any array of a device loop may have: a written carry is copied into
/// its result by the one block when the kernel starts (a scan's tape of 10,000 steps of
/// 64 is 640,000). Arrays only sliced (a sequence read step by step) cost nothing per
/// iteration.
pub const MAX_ARRAY_ELEMENTS: usize = 1 << 20;

/// The most loop-IR instructions of a device loop: NVRTC's time grows with the kernel, and a
/// loop this large (an adjoint's unrolled tape) has arrays past the bound anyway.
pub const MAX_INSTRUCTIONS: usize = 8192;

/// The most loop-IR instructions of a whole program made one kernel: past it, NVRTC's time
/// grows faster than the kernel (the checkpointed neural-ODE gradient, about 14,000 lines of
/// CUDA C as one kernel, took 25 s to compile here against 9 s as its four loops' kernels),
/// while the launches saved around the loops are a few microseconds.
pub const MAX_WHOLE_PROGRAM_INSTRUCTIONS: usize = 2048;

/// Whether device loops are on (`QUABLA_CUDA_DEVICE_LOOPS`, default on; `0` turns them off).
pub fn enabled() -> bool {
    std::env::var("QUABLA_CUDA_DEVICE_LOOPS").map_or(true, |v| v != "0")
}

/// The steps running a `while` node (or a whole program) on the device, and the types of
/// the values they add (scratch memory, constants, copies of carries updated in place),
/// numbered from the `first_new` they were given.
#[derive(Debug)]
pub struct DeviceLoop {
    pub steps: Vec<Step>,
    pub new_types: Vec<TensorType>,
}

/// The device loop of `node` (a `while` of operand values `operands` and result values
/// `results`), named `name`, or why it stays with the host-driven plan.
pub fn plan(
    name: &str,
    node: &Node,
    operands: &[usize],
    results: &[usize],
    first_new: usize,
) -> Result<DeviceLoop, String> {
    if !enabled() {
        return Err("QUABLA_CUDA_DEVICE_LOOPS=0".into());
    }
    let f = within_bounds(lower_while(node).map_err(|d| d.to_string())?)?;
    if f.outputs != f.operands {
        return Err("a lowering whose carries do not leave where they entered".into());
    }
    function_steps(name, &f, operands, results, first_new)
}

/// All of `p` as one kernel of one block, where `p` runs a `while` loop and the loop IR
/// covers it within the bounds and [`MAX_WHOLE_PROGRAM_INSTRUCTIONS`] (the straight-line
/// code around a solve, its initial step and read-out, then costs no launch of its own);
/// `None` plans it node by node.
///
/// ```
/// use quabla_abi::qir::Program;
/// // A counter loop and a sum after it: one launch.
/// let p = Program::parse("program(%0: f32[8]) {
///   %1 = constant[value=[0]]() : i32[]
///   %2, %3 = while(%1, %0) : i32[], f32[8] {
///     cond(%0: i32[], %1: f32[8]) {
///       %2 = constant[value=[3]]() : i32[]
///       %3 = compare[dir=lt](%0, %2) : bool[]
///       return %3
///     }
///     body(%0: i32[], %1: f32[8]) {
///       %2 = constant[value=[1]]() : i32[]
///       %3 = add(%0, %2) : i32[]
///       %4 = add(%1, %1) : f32[8]
///       return %3, %4
///     }
///   }
///   %4 = reduce[kind=sum, axes=[0]](%3) : f32[]
///   return %4
/// }").unwrap();
/// let plan = quabla_cuda::device_loop::plan_program(&p, "k").unwrap();
/// assert_eq!(plan.kernels().len(), 1);
/// ```
pub fn plan_program(p: &Program, name: &str) -> Option<Plan> {
    let loops = p.nodes.iter().any(|n| matches!(n.op, Op::While { .. }));
    if !enabled() || !loops {
        return None;
    }
    let f = within_bounds(lower_program(p).ok()?).ok()?;
    if f.body.instructions().len() > MAX_WHOLE_PROGRAM_INSTRUCTIONS {
        return None;
    }
    let mut types = p.value_types();
    let inputs: Vec<usize> = (0..p.inputs.len()).collect();
    // The outputs get values of their own: one may be an input, or two one value.
    let outputs: Vec<usize> = (types.len()..types.len() + p.outputs.len()).collect();
    types.extend(p.output_types());
    let d = function_steps(&format!("{name}_all"), &f, &inputs, &outputs, types.len()).ok()?;
    types.extend(d.new_types);
    Some(Plan::new(types, p.inputs.len(), d.steps, outputs))
}

/// `f` fused, if it is within the bounds and its element loops are safe to spread.
fn within_bounds(mut f: Function) -> Result<Function, String> {
    f.check()?;
    fuse(&mut f, &|_, _, _| true);
    f.check()
        .map_err(|e| format!("fusion broke an invariant (a bug): {e}"))?;
    if let Some(a) = f.arrays.iter().find(|a| a.len > MAX_ARRAY_ELEMENTS) {
        return Err(format!(
            "an array of {} elements (device loops take at most {MAX_ARRAY_ELEMENTS})",
            a.len
        ));
    }
    let n = f.body.instructions().len();
    if n > MAX_INSTRUCTIONS {
        return Err(format!(
            "{n} instructions (device loops take at most {MAX_INSTRUCTIONS})"
        ));
    }
    bounded_work(&f)?;
    spread::check(&f)?;
    Ok(f)
}

/// The steps running `f` as one kernel `name`: its operands the values `inputs`, its
/// outputs becoming the values `outputs` (scalars stored by the kernel, arrays aliases of
/// the memory holding them), new values numbered from `first_new`.
fn function_steps(
    name: &str,
    f: &Function,
    inputs: &[usize],
    outputs: &[usize],
    first_new: usize,
) -> Result<DeviceLoop, String> {
    if f.operands.len() != inputs.len() || f.outputs.len() != outputs.len() {
        return Err("a lowering of another interface than the node's".into());
    }
    let mut k = Interface {
        first_new,
        ..Interface::default()
    };
    // Per array, its pointer and the value holding its final contents.
    let mut arrays = vec![String::new(); f.arrays.len()];
    let mut holders = vec![0usize; f.arrays.len()];
    let mut params = f.params.iter();
    for (o, &v) in f.operands.iter().zip(inputs) {
        match o {
            Operand::Scalar => {
                let r = params
                    .next()
                    .ok_or("fewer parameters than scalar operands")?;
                k.read(v, f.dtype(*r));
                let _ = writeln!(k.entry, "  r{} = in{v}[0];", r.0);
            }
            Operand::Array(a) => {
                let decl = &f.arrays[a.index()];
                k.read(v, decl.dtype);
                if decl.written {
                    // Updated in place: on a copy of its own.
                    let w = k.new_value(decl.dtype, decl.len);
                    k.write(w, decl.dtype);
                    let _ = writeln!(
                        k.entry,
                        "  for (long long q = threadIdx.x; q < {}ll; q += blockDim.x) out{w}[q] = in{v}[q];",
                        decl.len
                    );
                    k.copied = true;
                    (arrays[a.index()], holders[a.index()]) = (format!("out{w}"), w);
                } else {
                    (arrays[a.index()], holders[a.index()]) = (format!("in{v}"), v);
                }
            }
        }
    }
    for (a, decl) in f.arrays.iter().enumerate() {
        let id = match &decl.role {
            ArrayRole::Operand => continue,
            ArrayRole::Scratch => {
                let id = k.new_value(decl.dtype, decl.len);
                k.write(id, decl.dtype);
                id
            }
            ArrayRole::Constant(h) => {
                let id = k.new_value(decl.dtype, decl.len);
                k.before.push(Step::Constant {
                    value: id,
                    bytes: h.bytes.clone(),
                });
                k.read(id, decl.dtype);
                id
            }
        };
        let io = if decl.is_scratch() { "out" } else { "in" };
        (arrays[a], holders[a]) = (format!("{io}{id}"), id);
    }
    let mut results = f.results.iter();
    for (o, &v) in f.outputs.iter().zip(outputs) {
        match o {
            Operand::Scalar => {
                let r = results.next().ok_or("fewer results than scalar outputs")?;
                k.write(v, f.dtype(*r));
                let _ = write!(k.exit, "out{v}[0] = r{}; ", r.0);
            }
            // The same bytes in the output's own shape.
            Operand::Array(a) => k.after.push(Step::Alias {
                from: holders[a.index()],
                to: v,
            }),
        }
    }
    let body = emit::Emitter::new(f, &arrays).body()?;
    let most = crate::kernels::factor::orthogonal::max_scratch();
    if body.shared_scratch > most {
        return Err(format!(
            "its factorizations keep {} bytes of shared memory (a block takes at most {most})",
            body.shared_scratch
        ));
    }
    Ok(k.finish(name, f, &body))
}

/// Every element loop, product and reduction of `f` within the work one block takes on.
fn bounded_work(f: &Function) -> Result<(), String> {
    let mut pending: Vec<&Block> = vec![&f.body];
    while let Some(b) = pending.pop() {
        for inst in &b.0 {
            let (work, max, what) = match inst {
                Inst::Loop { .. } => (loop_work(inst), MAX_LOOP_ELEMENTS, "an element loop"),
                Inst::Dot { shape: d, .. } => (
                    [d.batch, d.m, d.n, d.k]
                        .iter()
                        .fold(1u64, |a, x| a.saturating_mul(*x)),
                    MAX_DOT_TERMS,
                    "a matrix product",
                ),
                Inst::Reduce { rows, len, .. } => (
                    rows.saturating_mul(*len),
                    MAX_REDUCE_ELEMENTS,
                    "a reduction",
                ),
                Inst::Linalg { op, operands, .. } => {
                    let types: Vec<&TensorType> = operands.iter().map(|o| &o.ty).collect();
                    let d = factor::Dims::of(op, &types).ok_or("a factorization of no matrix")?;
                    let most = factor::max_order();
                    if !factor::fits(op, d, types[0].dtype, most) {
                        return Err(format!(
                            "a {} of {} rows and columns at most (the device's own take at most {most}, within {} bytes of shared memory)",
                            op.name(),
                            d.order(op),
                            factor::orthogonal::max_scratch()
                        ));
                    }
                    let order = d.order(op);
                    (
                        [d.batch, order, order, order.max(d.m)]
                            .iter()
                            .fold(1u64, |a, x| a.saturating_mul(*x)),
                        MAX_FACTOR_TERMS,
                        "a factorization",
                    )
                }
                _ => {
                    pending.extend(inst.regions());
                    continue;
                }
            };
            if work > max {
                return Err(format!(
                    "{what} of {work} elements (device loops take at most {max})"
                ));
            }
        }
    }
    Ok(())
}

/// The iterations of an element loop, its inner loops' included (an explicit stack: a nest
/// is as deep as an array's rank).
fn loop_work(l: &Inst) -> u64 {
    let mut total = 0u64;
    let mut pending: Vec<(&Inst, u64)> = vec![(l, 1)];
    while let Some((inst, outer)) = pending.pop() {
        let Inst::Loop { count, body, .. } = inst else {
            continue;
        };
        let trips = outer.saturating_mul(*count);
        let inner: Vec<(&Inst, u64)> = body
            .0
            .iter()
            .filter(|i| matches!(i, Inst::Loop { .. }))
            .map(|i| (i, trips))
            .collect();
        if inner.is_empty() {
            total = total.saturating_add(trips);
        }
        pending.extend(inner);
    }
    total
}

/// The kernel's parameters and the statements around its body, as they are gathered.
#[derive(Default)]
struct Interface {
    reads: Vec<(usize, DType)>,
    writes: Vec<(usize, DType)>,
    /// Statements before the body: scalar parameters read, written carries copied in.
    entry: String,
    /// Thread 0's stores of the scalar results.
    exit: String,
    copied: bool,
    before: Vec<Step>,
    after: Vec<Step>,
    /// The first id of the values this kernel adds, and their types.
    first_new: usize,
    new_types: Vec<TensorType>,
}

impl Interface {
    fn read(&mut self, v: usize, d: DType) {
        if !self.reads.iter().any(|r| r.0 == v) {
            self.reads.push((v, d));
        }
    }

    fn write(&mut self, v: usize, d: DType) {
        self.writes.push((v, d));
    }

    /// A new value of `len` elements.
    fn new_value(&mut self, d: DType, len: usize) -> usize {
        self.new_types.push(TensorType::new(d, vec![len]));
        self.first_new + self.new_types.len() - 1
    }

    /// The kernel `name` running `body`, after the device `functions` it calls.
    fn finish(self, name: &str, f: &Function, body: &emit::Body) -> DeviceLoop {
        let mut regs = String::new();
        for (r, d) in f.regs.iter().enumerate() {
            let _ = writeln!(regs, "  {} r{r} = 0;", c_type(*d));
        }
        let sync = if self.copied {
            "  __syncthreads();\n"
        } else {
            ""
        };
        let function = format!(
            "{}extern \"C\" __global__ void {name}({}) {{\n{regs}{}{sync}{}  if (threadIdx.x == 0) {{ {}}}\n}}\n",
            body.functions,
            crate::kernels::parameters(&self.reads, &self.writes),
            self.entry,
            body.statements,
            self.exit,
        );
        let kernel = Kernel {
            source: format!("{PRELUDE}\n{function}"),
            body: function,
            param_types: self.reads.iter().chain(&self.writes).map(|r| r.1).collect(),
            reads: self.reads.iter().map(|r| r.0).collect(),
            writes: self.writes.iter().map(|w| w.0).collect(),
            // One block runs it whatever the count; the emulation skips kernels of none.
            elements: 1,
            name: name.to_string(),
            block_per_element: false,
            single_block: true,
            gemm: None,
            fused: 0,
            reuses: Vec::new(),
            device_loop: true,
            shared_scratch: body.shared_scratch,
        };
        let mut steps = self.before;
        steps.push(Step::Kernel(kernel));
        steps.extend(self.after);
        DeviceLoop {
            steps,
            new_types: self.new_types,
        }
    }
}
