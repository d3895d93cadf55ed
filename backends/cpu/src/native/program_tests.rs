//! Whole programs compiled as one function, against the interpreter bit for bit: the
//! straight-line code around a loop, and every way a result can leave (a scalar, a value
//! the code computed, a view of one copied out, a broadcast filled, an input or a constant
//! returned whole, one array returned twice, an input updated in place).

use super::tests::both_tiers;
use crate::exec::run;
use crate::plan::{Plan, Tier, WHOLE_PROGRAM_ELEMENTS};
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::Program;
use quabla_abi::{DType, TensorType};

/// A Newton iteration for `sqrt(a)` elementwise, its start and read-outs computed around it.
const NEWTON: &str = "program(%0: f64[], %1: f64[6]) {
  %2 = constant[value=[0.5]]() : f64[]
  %3 = broadcast_in_dim[dims=[]](%2) : f64[6]
  %4 = mul(%1, %3) : f64[6]
  %5 = exp(%3) : f64[6]
  %6 = add(%4, %5) : f64[6]
  %7 = constant[value=[0]]() : i32[]
  %8, %9 = while(%7, %6) : i32[], f64[6] {
    cond(%0: i32[], %1: f64[6]) {
      %2 = constant[value=[60]]() : i32[]
      %3 = compare[dir=lt](%0, %2) : bool[]
      return %3
    }
    body(%0: i32[], %1: f64[6]) {
      %2 = constant[value=[1]]() : i32[]
      %3 = add(%0, %2) : i32[]
      %4 = iota[dim=0]() : f64[6]
      %5 = div(%4, %1) : f64[6]
      %6 = add(%1, %5) : f64[6]
      %7 = constant[value=[0.5]]() : f64[]
      %8 = broadcast_in_dim[dims=[]](%7) : f64[6]
      %9 = mul(%6, %8) : f64[6]
      return %3, %9
    }
  }
  %10 = reduce[kind=sum, axes=[0]](%9) : f64[]
  %11 = mul(%10, %0) : f64[]
  %12 = slice[start=[1], limit=[6], strides=[2]](%9) : f64[3]
  %13 = broadcast_in_dim[dims=[]](%11) : f64[4]
  %14 = constant[value=[7, 8]]() : i32[2]
  %15 = reshape(%9) : f64[2,3]
  %16 = transpose[perm=[1,0]](%15) : f64[3,2]
  return %11, %9, %12, %13, %1, %14, %9, %16, %8
}";

fn f64s(shape: &[usize], v: &[f64]) -> Tensor {
    Tensor::new(
        TensorType::new(DType::F64, shape.to_vec()),
        Storage::F64(v.to_vec()),
    )
}

#[test]
fn the_code_around_a_loop_and_every_kind_of_result_give_the_interpreters_bits() {
    let p = Program::parse(NEWTON).unwrap();
    p.validate().unwrap();
    let (compiled, reference) = both_tiers(&p, 0);
    let inputs = || {
        vec![
            f64s(&[], &[0.75]),
            f64s(&[6], &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0]),
        ]
    };
    let (a, b) = (compiled.run(inputs()), run(&reference, inputs()));
    assert_eq!(a.len(), 9);
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(
            (&x.ty, x.data.to_bytes()),
            (&y.ty, y.data.to_bytes()),
            "output {k}"
        );
    }
    // The loop converged on the square roots, the read-outs follow from them.
    let Storage::F64(roots) = &*a[1].data else {
        panic!("f64 roots")
    };
    for (i, r) in roots.iter().enumerate() {
        assert!((r - (i as f64).sqrt()).abs() < 1e-9, "sqrt({i}) = {r}");
    }
    assert_eq!(a[7].ty.shape, vec![3, 2]);
}

#[test]
fn programs_without_loops_or_with_large_values_are_planned_node_by_node() {
    let straight = Program::parse(
        "program(%0: f64[4]) {
           %1 = exp(%0) : f64[4]
           return %1
         }",
    )
    .unwrap();
    assert!(Plan::new(straight, Tier::Compiled).whole.is_none());
    let n = WHOLE_PROGRAM_ELEMENTS + 1;
    let large = Program::parse(&format!(
        "program(%0: f64[{n}]) {{
           %1 = constant[value=[0]]() : i32[]
           %2, %3 = while(%1, %0) : i32[], f64[{n}] {{
             cond(%0: i32[], %1: f64[{n}]) {{
               %2 = constant[value=[3]]() : i32[]
               %3 = compare[dir=lt](%0, %2) : bool[]
               return %3
             }}
             body(%0: i32[], %1: f64[{n}]) {{
               %2 = constant[value=[1]]() : i32[]
               %3 = add(%0, %2) : i32[]
               %4 = add(%1, %1) : f64[{n}]
               return %3, %4
             }}
           }}
           return %3
         }}"
    ))
    .unwrap();
    let plan = Plan::new(large, Tier::Compiled);
    assert!(plan.whole.is_none());
    assert!(
        plan.native.iter().any(Option::is_some),
        "its loop still compiles"
    );
}
