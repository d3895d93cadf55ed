//! Plan-time constant folding: a node whose operands are all known when the plan is built
//! (constants, `iota`, and what is computed from them alone) is evaluated once, by the
//! interpreter's own kernels, and every call reuses the result.
//!
//! Why: transforms build such subgraphs all the time. `hessian` and `jacfwd` make their
//! basis vectors as `iota == iota` converted to floats, then slice, negate and scale them
//! with constants; for a 100x100 Rosenbrock Hessian that was a third of the nodes and a
//! quarter of the time of every call. The same kernels run either way, so the bits are
//! the ones evaluating the nodes at run time would give.

use crate::exec::eval_node;
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::{Node, Op, Program, ValueId};
use std::sync::Arc;

/// The largest result folded, in elements: a plan holds what it folds for as long as it
/// lives, and a bigger constant (a scalar broadcast over a large array, say) costs more
/// to read from memory than a fused step spends rebuilding it.
pub const MAX_FOLDED_ELEMENTS: usize = 1 << 16;

/// The data of each node of `program` known before it runs: a constant's elements, or the
/// folded result of a node whose operands are all known (`None` for every other node).
/// `first_ids` are the program's first result ids per node.
pub fn known_values(program: &Program, first_ids: &[ValueId]) -> Vec<Option<Arc<Storage>>> {
    let mut known: Vec<Option<Tensor>> = vec![None; program.num_values()];
    let mut out = Vec::with_capacity(program.nodes.len());
    for (node, first) in program.nodes.iter().zip(first_ids) {
        let data = match &node.op {
            Op::Constant(h) => Some(Arc::new(Storage::from_host(&h.view()))),
            _ if foldable(node) => {
                let operands: Option<Vec<&Tensor>> = node
                    .operands
                    .iter()
                    .map(|o| known[o.index()].as_ref())
                    .collect();
                operands.map(|a| {
                    let mut result = eval_node(node, &a, &[]);
                    result.swap_remove(0).data
                })
            }
            _ => None,
        };
        if let Some(d) = &data {
            known[first.index()] = Some(Tensor {
                ty: node.results[0].clone(),
                data: d.clone(),
            });
        }
        out.push(data);
    }
    out
}

/// Whether `node` may be evaluated at plan time once its operands are known: one result of
/// at most [`MAX_FOLDED_ELEMENTS`], and an op whose cost is linear in its operands and
/// result. Sorts, matrix products, linear algebra and control flow stay with the run (their cost
/// could dwarf the program's first call); core-level ops never reach a backend.
fn foldable(node: &Node) -> bool {
    let small = node.results.len() == 1 && node.results[0].num_elements() <= MAX_FOLDED_ELEMENTS;
    let linear = match &node.op {
        Op::Unary(_)
        | Op::Binary(_)
        | Op::Compare(_)
        | Op::Select
        | Op::Convert
        | Op::Bitcast
        | Op::Iota { .. }
        | Op::BroadcastInDim { .. }
        | Op::Reshape
        | Op::Transpose { .. }
        | Op::Slice { .. }
        | Op::Pad { .. }
        | Op::Concatenate { .. }
        | Op::Reverse { .. }
        | Op::Reduce { .. }
        | Op::Cumulative { .. }
        | Op::Gather(_)
        | Op::ScatterAdd(_)
        | Op::DynamicSlice { .. }
        | Op::DynamicUpdateSlice => true,
        Op::Constant(_)
        | Op::HostCallback { .. }
        | Op::Sort { .. }
        | Op::DotGeneral(_)
        | Op::Linalg(_)
        | Op::Cond { .. }
        | Op::While { .. }
        | Op::StopGradient
        | Op::CustomJvp { .. }
        | Op::CustomVjp { .. }
        | Op::CustomVjpLinear { .. }
        | Op::Checkpoint { .. }
        | Op::NamedAxis { .. }
        | Op::Scan { .. }
        | Op::BoundedWhile { .. }
        | Op::LinearSolve { .. } => false,
    };
    small && linear
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::run;
    use crate::plan::{Plan, Step, Tier};
    use crate::tests::{bits, node_by_node};
    use quabla_abi::{DType, TensorType};

    fn input(shape: Vec<usize>) -> Tensor {
        let n = shape.iter().product();
        let v = (0..n).map(|i| (i as f32 * 0.618).sin()).collect();
        Tensor::new(TensorType::new(DType::F32, shape), Storage::F32(v))
    }

    fn step_nodes(plan: &Plan) -> Vec<usize> {
        plan.steps
            .iter()
            .flat_map(|s| match s {
                Step::Fused(g) => g.nodes.clone(),
                Step::Node(i) => vec![*i],
            })
            .collect()
    }

    /// `jacfwd`'s basis, `-2 * convert(iota == iota)` sliced, is made once: only the last
    /// folded node the run reads has a step, and the results are the bits of evaluating
    /// every node at run time.
    #[test]
    fn a_basis_built_from_iota_is_made_once_with_the_run_times_bits() {
        let p = Program::parse(
            "program(%0: f32[4,5]) {
  %1 = iota[dim=0]() : i32[4,6]
  %2 = iota[dim=1]() : i32[4,6]
  %3 = compare[dir=eq](%2, %1) : bool[4,6]
  %4 = convert(%3) : f32[4,6]
  %5 = constant[value=[-2.0]]() : f32[]
  %6 = broadcast_in_dim[dims=[]](%5) : f32[4,6]
  %7 = mul(%4, %6) : f32[4,6]
  %8 = slice[start=[0,1], limit=[4,6], strides=[1,1]](%7) : f32[4,5]
  %9 = tanh(%0) : f32[4,5]
  %10 = add(%9, %8) : f32[4,5]
  return %10, %8
}",
        )
        .unwrap();
        p.validate().unwrap();
        let plan = Plan::new(p.clone(), Tier::Interpreter);
        let folded: Vec<bool> = plan.constants.iter().map(Option::is_some).collect();
        assert_eq!(
            folded,
            [true, true, true, true, true, true, true, true, false, false]
        );
        assert_eq!(
            step_nodes(&plan),
            [7, 8, 9],
            "only the slice %8 is handed out"
        );
        let reference = node_by_node(&p, vec![input(vec![4, 5])]);
        for _ in 0..2 {
            let out = run(&plan, vec![input(vec![4, 5])]);
            assert_eq!(bits(&out[0]), bits(&reference[10]));
            assert_eq!(bits(&out[1]), bits(&reference[8]));
        }
    }

    /// An in-place update of a folded array works on a copy: the next call sees the
    /// folded data unchanged.
    #[test]
    fn an_update_of_folded_data_leaves_the_plans_copy_alone() {
        let p = Program::parse(
            "program(%0: f32[1], %1: i32[]) {
  %2 = iota[dim=0]() : i32[6]
  %3 = convert(%2) : f32[6]
  %4 = dynamic_update_slice(%3, %0, %1) : f32[6]
  return %4
}",
        )
        .unwrap();
        p.validate().unwrap();
        let plan = Plan::new(p, Tier::Interpreter);
        let at = |i: i32| Tensor::new(TensorType::new(DType::I32, vec![]), Storage::I32(vec![i]));
        let x = || {
            Tensor::new(
                TensorType::new(DType::F32, vec![1]),
                Storage::F32(vec![9.0]),
            )
        };
        let first = run(&plan, vec![x(), at(1)]);
        let second = run(&plan, vec![x(), at(4)]);
        assert_eq!(
            *first[0].data,
            Storage::F32(vec![0.0, 9.0, 2.0, 3.0, 4.0, 5.0])
        );
        assert_eq!(
            *second[0].data,
            Storage::F32(vec![0.0, 1.0, 2.0, 3.0, 9.0, 5.0])
        );
    }

    /// Results past the size limit, and matrix products, are computed by the run.
    #[test]
    fn large_results_and_products_are_left_to_the_run() {
        let big = MAX_FOLDED_ELEMENTS + 1;
        let p = Program::parse(&format!(
            "program(%0: f32[2]) {{
  %1 = iota[dim=0]() : f32[{big}]
  %2 = iota[dim=0]() : f32[2,2]
  %3 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%2, %2) : f32[2,2]
  %4 = iota[dim=0]() : f32[2]
  %5 = mul(%0, %4) : f32[2]
  return %1, %3, %5
}}"
        ))
        .unwrap();
        p.validate().unwrap();
        let plan = Plan::new(p, Tier::Interpreter);
        let folded: Vec<bool> = plan.constants.iter().map(Option::is_some).collect();
        assert_eq!(folded, [false, true, false, true, false]);
        let out = run(&plan, vec![input(vec![2])]);
        assert_eq!(out[0].ty.num_elements(), big);
        assert_eq!(*out[1].data, Storage::F32(vec![0.0, 0.0, 1.0, 1.0]));
    }
}
