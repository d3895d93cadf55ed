//! Running a plan: fused tiles in parallel, other nodes one by one, regions recursively.

use crate::elementwise::View;
use crate::fused::{eval_elementwise, run_fused};
use crate::plan::{NativeFunction, Plan, Step};
use crate::tensor::{Storage, Tensor};
use crate::{dot, movement, reduce};
use quabla_abi::loop_ir::{ArrayRole, Operand};
use quabla_abi::qir::{Node, Op, ValueId};
use std::sync::Arc;

pub fn run(plan: &Plan, inputs: Vec<Tensor>) -> Vec<Tensor> {
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

/// Runs a node's native code: one-element operands go in as bits, arrays as pointers to
/// their elements. An array the code updates in place gets memory of its own: the operand
/// itself where it dies here and nothing else holds it, else a copy. Every other array is
/// read where it is and comes back as the result unchanged (no copy). Scratch arrays (the
/// values the code computes) are taken from the buffer pool for the call; constants are the
/// code's own, converted once.
fn run_native(
    plan: &Plan,
    si: usize,
    node: &Node,
    values: &mut [Option<Tensor>],
    code: &NativeFunction,
) -> Vec<Tensor> {
    let mut bits = Vec::with_capacity(node.operands.len());
    let mut arrays: Vec<Option<Tensor>> = vec![None; code.arrays().len()];
    for (k, (o, how)) in node.operands.iter().zip(code.operands()).enumerate() {
        match how {
            Operand::Scalar => bits.push(get(values, *o).data.bits_at(0)),
            Operand::Array(a) => {
                let once = node.operands.iter().filter(|x| *x == o).count() == 1;
                let t = if code.arrays()[a.index()].written
                    && once
                    && plan.free_after[si].contains(o)
                {
                    values[o.index()].take()
                } else {
                    None
                };
                arrays[a.index()] =
                    Some(t.unwrap_or_else(|| get(values, node.operands[k]).clone()));
            }
        }
    }
    for (k, (t, decl)) in arrays.iter_mut().zip(code.arrays()).enumerate() {
        let ty = || quabla_abi::TensorType::new(decl.dtype, vec![decl.len]);
        match &decl.role {
            ArrayRole::Operand => {}
            ArrayRole::Scratch => {
                *t = Some(Tensor::new(ty(), Storage::zeros(decl.dtype, decl.len)))
            }
            ArrayRole::Constant(_) => *t = code.constant(k).map(|data| Tensor { ty: ty(), data }),
        }
    }
    let mut pointers = Vec::with_capacity(arrays.len());
    for (t, decl) in arrays.iter_mut().zip(code.arrays()) {
        let t = t.as_mut().expect("every array operand was set above");
        pointers.push(if decl.written {
            // Copies the elements unless this tensor is their only holder.
            Arc::make_mut(&mut t.data).as_mut_ptr()
        } else {
            t.data.as_ptr().cast_mut()
        });
    }
    // SAFETY: each pointer addresses a live tensor of the array's type (the node's operand
    // types are the lowered function's), and each written array's storage is held by
    // `arrays` alone (`make_mut`), which outlives the call.
    let mut out = unsafe { code.call(&bits, &pointers) }.into_iter();
    node.results
        .iter()
        .zip(code.operands())
        .map(|(ty, how)| match how {
            Operand::Scalar => {
                let b = out.next().unwrap_or_default();
                Tensor::new(ty.clone(), Storage::from_bits(ty.dtype, b))
            }
            Operand::Array(a) => arrays[a.index()]
                .clone()
                .expect("every array operand was set above"),
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
                if c[0].data.scalar_i64() == 0 {
                    return carry;
                }
                carry = run(body, carry);
            }
        }
        Op::Linalg(l) => crate::linalg::eval(l, a, &node.results),
        // The plugin kit refuses core-level ops at compile time: they are in no capability list.
        Op::StopGradient
        | Op::CustomJvp { .. }
        | Op::CustomVjp { .. }
        | Op::CustomVjpLinear { .. }
        | Op::Checkpoint { .. }
        | Op::Scan { .. }
        | Op::LinearSolve { .. } => {
            unreachable!("core-level op `{}` reached the CPU backend", node.op.name())
        }
    }
}
