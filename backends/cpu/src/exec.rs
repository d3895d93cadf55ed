//! Running a plan: fused tiles in parallel, other nodes one by one, regions recursively.

use crate::elementwise::View;
use crate::fused::{eval_elementwise, run_fused};
use crate::plan::{NativeFunction, Plan, Step};
use crate::tensor::{Storage, Tensor};
use crate::{dot, movement, reduce};
use quabla_abi::loop_ir::{ArrayRole, Operand};
use quabla_abi::qir::{Node, Op, ValueId};
use quabla_abi::TensorType;
use std::sync::Arc;

pub fn run(plan: &Plan, inputs: Vec<Tensor>) -> Vec<Tensor> {
    if let Some((code, outputs)) = &plan.whole {
        return call_native(code, inputs, outputs);
    }
    let mut values: Vec<Option<Tensor>> = vec![None; plan.program.num_values()];
    for (i, t) in inputs.into_iter().enumerate() {
        values[i] = Some(t);
    }
    for (si, step) in plan.steps.iter().enumerate() {
        match step {
            Step::Node(ni) => {
                let node = &plan.program.nodes[*ni];
                let outs = match &plan.native[*ni] {
                    Some(code) => run_native(plan, si, node, &mut values, code),
                    None => {
                        crate::stats::count(&node.op);
                        interpret_node(plan, si, *ni, &mut values)
                    }
                };
                for (k, t) in outs.into_iter().enumerate() {
                    values[plan.first_ids[*ni].index() + k] = Some(t);
                }
            }
            Step::Fused(g) => {
                for ni in &g.nodes {
                    crate::stats::count(&plan.program.nodes[*ni].op);
                }
                let outs = run_fused(plan, g, &values);
                for (v, t) in g.exports.iter().zip(outs) {
                    values[v.index()] = Some(t);
                }
            }
        }
        for v in &plan.free_after[si] {
            values[v.index()] = None;
        }
    }
    plan.program
        .outputs
        .iter()
        .map(|o| get(&values, *o).clone())
        .collect()
}

fn operands<'a>(values: &'a [Option<Tensor>], node: &Node) -> Vec<&'a Tensor> {
    node.operands.iter().map(|o| get(values, *o)).collect()
}

/// Interprets the node `ni` of step `si`.
fn interpret_node(plan: &Plan, si: usize, ni: usize, values: &mut [Option<Tensor>]) -> Vec<Tensor> {
    let node = &plan.program.nodes[ni];
    // An updated operand that dies here is handed over, so the update is in place.
    let owned = match node.op {
        Op::DynamicUpdateSlice | Op::ScatterAdd(_) => {
            let x = node.operands[0];
            let dies =
                plan.free_after[si].contains(&x) && node.operands[1..].iter().all(|o| *o != x);
            if dies {
                values[x.index()].take()
            } else {
                None
            }
        }
        _ => None,
    };
    match (owned, &plan.constants[ni]) {
        (_, Some(c)) => vec![Tensor {
            ty: node.results[0].clone(),
            data: c.clone(),
        }],
        (Some(x), None) => {
            let rest: Vec<&Tensor> = node.operands[1..].iter().map(|o| get(values, *o)).collect();
            vec![update_in_place(node, x, &rest)]
        }
        (None, None) => eval_node(node, &operands(values, node), &plan.regions[ni]),
    }
}

/// Runs a node's native code. An array the code updates in place gets memory of its own:
/// the operand itself where it dies here and nothing else holds it, else a copy
/// ([`call_native`]).
fn run_native(
    plan: &Plan,
    si: usize,
    node: &Node,
    values: &mut [Option<Tensor>],
    code: &NativeFunction,
) -> Vec<Tensor> {
    let mut operands = Vec::with_capacity(node.operands.len());
    for (o, how) in node.operands.iter().zip(code.operands()) {
        let handed_over = match how {
            Operand::Array(a) => {
                let once = node.operands.iter().filter(|x| *x == o).count() == 1;
                code.arrays()[a.index()].written && once && plan.free_after[si].contains(o)
            }
            Operand::Scalar => false,
        };
        let t = if handed_over {
            values[o.index()].take()
        } else {
            None
        };
        operands.push(t.unwrap_or_else(|| get(values, *o).clone()));
    }
    call_native(code, operands, &node.results)
}

/// Where one array of a native call lives.
enum Memory {
    /// An operand's tensor (updated in place once it is the storage's only holder).
    Operand(Tensor),
    /// A constant's elements, the code's own.
    Constant(Arc<Storage>),
    /// A scratch array that is a result: zeroed storage of its own, handed out after.
    Result(Arc<Storage>),
    /// A scratch array in the call's arena, from this f64 word.
    Arena(usize),
}

/// Runs native code on `operands`: one-element ones go in as bits, arrays as pointers to
/// their elements; an array the code updates in place is written where no one else holds
/// it, else copied first. Every other array is read where it is, and comes back unchanged
/// (no copy) where it is a result. Scratch arrays (the values the code computes) share
/// one arena from the buffer pool (not zeroed: see below), except those that are results,
/// which get storage of their own; constants are the code's own, converted once.
pub(crate) fn call_native(
    code: &NativeFunction,
    operands: Vec<Tensor>,
    results: &[TensorType],
) -> Vec<Tensor> {
    let mut bits = Vec::with_capacity(operands.len());
    let mut memory: Vec<Option<Memory>> = (0..code.arrays().len()).map(|_| None).collect();
    for (t, how) in operands.into_iter().zip(code.operands()) {
        match how {
            Operand::Scalar => bits.push(t.data.bits_at(0)),
            Operand::Array(a) => memory[a.index()] = Some(Memory::Operand(t)),
        }
    }
    for (k, (m, decl)) in memory.iter_mut().zip(code.arrays()).enumerate() {
        *m = match (&decl.role, code.arena_offset(k)) {
            (ArrayRole::Operand, _) => continue,
            (ArrayRole::Constant(_), _) => code.constant(k).map(Memory::Constant),
            (ArrayRole::Scratch, Some(at)) => Some(Memory::Arena(at)),
            (ArrayRole::Scratch, None) => Some(Memory::Result(Arc::new(Storage::zeros(
                decl.dtype, decl.len,
            )))),
        };
    }
    // Each scratch array holds one QIR value, which its operation defines whole before any
    // reader runs, so the arena needs no zeroing: a release build hands it over as the pool
    // returns it (zeroing the 1.4 MB of a neural ODE's direct gradient was 9% of its time,
    // measured on one core). Debug builds, which every test suite runs, fill it with
    // all-ones bits (NaN, -1) instead, so a read before a write would show as a wrong result
    // there.
    let words = code.arena_words();
    let mut arena: Vec<f64> = crate::pool::take(words);
    if cfg!(debug_assertions) {
        arena.resize(words, f64::from_bits(u64::MAX));
    }
    let mut pointers = Vec::with_capacity(memory.len());
    for (m, decl) in memory.iter_mut().zip(code.arrays()) {
        // `Function::check` names every operand array by one operand.
        pointers.push(match m.as_mut().expect("every array was placed above") {
            // Copies the elements unless this tensor is their only holder.
            Memory::Operand(t) if decl.written => Arc::make_mut(&mut t.data).as_mut_ptr(),
            Memory::Operand(t) => t.data.as_ptr().cast_mut(),
            Memory::Constant(c) => c.as_ptr().cast_mut(),
            Memory::Result(r) => Arc::make_mut(r).as_mut_ptr(),
            // Inside the arena's capacity (`take(words)`), whatever its length.
            Memory::Arena(at) => arena.as_mut_ptr().wrapping_add(*at).cast(),
        });
    }
    // SAFETY: each pointer addresses memory of the array's type and length, live for the
    // call (the operand types are the lowered function's; the arena's capacity holds each
    // of its arrays at a 16-byte aligned offset of its own, `NativeFunction::arena_offset`;
    // Rust never reads the arena's elements, the native code writes each before reading
    // it), and each written array's memory is held by this call alone (`make_mut`, the
    // arena).
    let mut out = unsafe { code.call(&bits, &pointers) }.into_iter();
    crate::pool::give(arena);
    results
        .iter()
        .zip(code.outputs())
        .map(|(ty, how)| match how {
            Operand::Scalar => {
                let b = out.next().unwrap_or_default();
                Tensor::new(ty.clone(), Storage::from_bits(ty.dtype, b))
            }
            Operand::Array(a) => {
                let data = match memory[a.index()].as_ref() {
                    Some(Memory::Operand(t)) => t.data.clone(),
                    Some(Memory::Constant(c) | Memory::Result(c)) => c.clone(),
                    // The arena holds no output (`native::arena_layout`).
                    Some(Memory::Arena(_)) | None => unreachable!("an output in the arena"),
                };
                // A wrong length would reach other native code as a bad bound: a panic (the
                // plugin boundary catches it) rather than memory errors later.
                assert_eq!(
                    data.len(),
                    ty.num_elements(),
                    "a native output of another length"
                );
                Tensor {
                    ty: ty.clone(),
                    data,
                }
            }
        })
        .collect()
}

pub(crate) fn get(values: &[Option<Tensor>], v: ValueId) -> &Tensor {
    values[v.index()]
        .as_ref()
        .expect("plan liveness keeps every operand alive until its last use")
}

/// `dynamic_update_slice` or `scatter_add` into `x` (in place when `x` is not shared).
fn update_in_place(node: &Node, x: Tensor, rest: &[&Tensor]) -> Tensor {
    match &node.op {
        Op::ScatterAdd(s) => movement::scatter_add(x, rest[0], rest[1], s),
        Op::DynamicUpdateSlice => movement::dynamic_update_slice(x, rest[0], &rest[1..]),
        op => unreachable!(
            "`{}` updates nothing in place (the plan hands over only update operands)",
            op.name()
        ),
    }
}

/// Evaluates one non-fused node.
pub fn eval_node(node: &Node, a: &[&Tensor], regions: &[Plan]) -> Vec<Tensor> {
    // Results without elements need no work whatever their other axes: the loops below walk
    // the axes before a zero one, so an `iota` of `u32[3332089315326, 0]` (a fuzzer's input,
    // folded at compile time) ran for hours. Effects (host calls, nested ones too) still run.
    if !node.op.has_effect() && node.results.iter().all(|t| t.num_elements() == 0) {
        return node
            .results
            .iter()
            .map(|t| Tensor::new(t.clone(), Storage::zeros(t.dtype, 0)))
            .collect();
    }
    let out_ty = || node.results[0].clone();
    let one = |s: Storage| vec![Tensor::new(node.results[0].clone(), s)];
    match &node.op {
        Op::Constant(h) => one(Storage::from_host(&h.view())),
        Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::Select | Op::Convert | Op::Bitcast => {
            let views: Vec<View> = a.iter().map(|t| View::all(&t.data)).collect();
            one(eval_elementwise(node, &views))
        }
        Op::Iota { dim } => one(movement::iota(*dim, &out_ty())),
        Op::BroadcastInDim { dims } => one(movement::broadcast_in_dim(a[0], dims, &out_ty())),
        Op::Reshape => vec![Tensor {
            ty: out_ty(),
            data: a[0].data.clone(),
        }],
        Op::Transpose { perm } => one(movement::transpose(a[0], perm, &out_ty())),
        Op::Slice { start, strides, .. } => one(movement::slice(a[0], start, strides, &out_ty())),
        Op::Pad { low, interior, .. } => one(movement::pad(a[0], a[1], low, interior, &out_ty())),
        Op::Concatenate { dim } => one(movement::concatenate(a, *dim, &out_ty())),
        Op::Reverse { dims } => one(movement::reverse(a[0], dims)),
        Op::Reduce { kind, axes } => one(reduce::reduce(a[0], *kind, axes, &out_ty())),
        Op::Cumulative {
            kind,
            axis,
            reverse,
        } => one(reduce::cumulative(a[0], *kind, *axis, *reverse)),
        Op::Sort {
            axis,
            num_keys,
            descending,
        } => crate::sort::sort(a, *axis, *num_keys, *descending)
            .into_iter()
            .zip(&node.results)
            .map(|(s, ty)| Tensor::new(ty.clone(), s))
            .collect(),
        Op::DotGeneral(d) => one(dot::dot_general(a[0], a[1], d)),
        Op::Gather(g) => one(movement::gather(a[0], a[1], g, &out_ty())),
        Op::ScatterAdd(_) | Op::DynamicUpdateSlice => {
            vec![update_in_place(node, a[0].clone(), &a[1..])]
        }
        Op::DynamicSlice { .. } => one(movement::dynamic_slice(a[0], &a[1..], &out_ty())),
        Op::Cond { .. } => {
            // An out-of-range index runs the last branch, as XLA's case does.
            let idx = a[0].data.scalar_i64();
            let b = if idx < 0 || idx as usize >= regions.len() {
                regions.len() - 1
            } else {
                idx as usize
            };
            run(&regions[b], a[1..].iter().map(|t| (*t).clone()).collect())
        }
        Op::While { .. } => {
            let (cond, body) = (&regions[0], &regions[1]);
            let mut carry: Vec<Tensor> = a.iter().map(|t| (*t).clone()).collect();
            loop {
                let c = run(cond, carry.clone());
                // After a failed host call the run's result is an error: stop looping.
                if c[0].data.scalar_i64() == 0 || crate::host_call::failed() {
                    return carry;
                }
                carry = run(body, carry);
            }
        }
        Op::Linalg(l) => crate::linalg::eval(l, a, &node.results),
        Op::HostCallback { callback, .. } => crate::host_call::call(node, *callback, a),
        // The plugin kit refuses core-level ops at compile time: they are in no capability list.
        Op::StopGradient
        | Op::CustomJvp { .. }
        | Op::CustomVjp { .. }
        | Op::CustomVjpLinear { .. }
        | Op::Checkpoint { .. }
        | Op::NamedAxis { .. }
        | Op::Scan { .. }
        | Op::BoundedWhile { .. }
        | Op::LinearSolve { .. } => {
            unreachable!("core-level op `{}` reached the CPU backend", node.op.name())
        }
    }
}
