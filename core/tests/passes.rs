//! The program passes keep every result bit for bit, and do what they say.

mod common;

use common::cpu;
use quabla::passes::{canonicalize, cse, dce, fold_constants, optimize};
use quabla::qir::Program;
use quabla::{call_program, Array};

fn edge_inputs() -> Array {
    Array::from_slice_on(
        &cpu(),
        &[-0.0f32, 0.0, f32::NAN, -1.5, f32::INFINITY, 1e-40],
        &[6],
    )
    .unwrap()
}

fn bits(outs: &[Array]) -> Vec<Vec<u32>> {
    outs.iter()
        .map(|o| {
            o.to_vec::<f32>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect()
        })
        .collect()
}

const IDENTITIES: &str = "program(%0: f32[6]) {
  %1 = constant[value=[1.0]]() : f32[]
  %2 = broadcast_in_dim[dims=[]](%1) : f32[6]
  %3 = mul(%0, %2) : f32[6]
  %4 = constant[value=[-0.0]]() : f32[]
  %5 = broadcast_in_dim[dims=[]](%4) : f32[6]
  %6 = add(%3, %5) : f32[6]
  %7 = constant[value=[0.0]]() : f32[]
  %8 = broadcast_in_dim[dims=[]](%7) : f32[6]
  %9 = add(%6, %8) : f32[6]
  %10 = sub(%6, %8) : f32[6]
  %11 = reshape(%10) : f32[2,3]
  %12 = reshape(%11) : f32[3,2]
  %13 = transpose[perm=[1,0]](%12) : f32[2,3]
  %14 = transpose[perm=[1,0]](%13) : f32[3,2]
  %15 = reshape(%14) : f32[6]
  %16 = convert(%15) : f32[6]
  return %9, %16
}
";

#[test]
fn canonicalisation_removes_only_bit_exact_identities() {
    let p = Program::parse(IDENTITIES).unwrap();
    let q = dce(&canonicalize(&p));
    q.validate().unwrap();
    let text = q.to_text();
    // x + 0.0 stays (-0 + 0 is +0); x * 1, x + -0, x - 0, the transpose pair, and the convert go.
    assert!(!text.contains("mul("), "{text}");
    assert!(!text.contains("sub("), "{text}");
    assert!(!text.contains("transpose"), "{text}");
    assert!(!text.contains("convert"), "{text}");
    assert_eq!(text.matches("add(").count(), 1, "{text}");
    let x = edge_inputs();
    assert_eq!(
        bits(&call_program(&p, std::slice::from_ref(&x)).unwrap()),
        bits(&call_program(&q, &[x]).unwrap())
    );
}

#[test]
fn cse_dce_and_folding_keep_results() {
    let p = Program::parse(
        "program(%0: f32[6]) {
  %1 = exp(%0) : f32[6]
  %2 = exp(%0) : f32[6]
  %3 = add(%1, %2) : f32[6]
  %4 = constant[value=[3.0]]() : f32[]
  %5 = constant[value=[0.1]]() : f32[]
  %6 = mul(%4, %5) : f32[]
  %7 = sin(%6) : f32[]
  %8 = broadcast_in_dim[dims=[]](%7) : f32[6]
  %9 = mul(%3, %8) : f32[6]
  %10 = log(%0) : f32[6]
  return %9
}
",
    )
    .unwrap();
    let q = dce(&fold_constants(&optimize(&p), &cpu()));
    q.validate().unwrap();
    let text = q.to_text();
    assert_eq!(text.matches("exp(").count(), 1, "{text}");
    assert!(!text.contains("log("), "{text}");
    assert!(!text.contains("sin("), "folded: {text}");
    // The folded constant carries the device's f32 rounding of sin(3 * 0.1).
    let folded = (3.0f32 * 0.1f32) as f64;
    assert!(
        text.contains(&format!("{:?}", folded.sin() as f32)),
        "{text}"
    );
    let x = edge_inputs();
    assert_eq!(
        bits(&call_program(&p, std::slice::from_ref(&x)).unwrap()),
        bits(&call_program(&q, &[x]).unwrap())
    );
    assert_eq!(cse(&p).nodes.len(), p.nodes.len() - 1);
}

#[test]
fn ir_dumps_are_written_when_asked() {
    let dir = std::env::temp_dir().join(format!("quabla-dump-{}", std::process::id()));
    std::env::set_var("QUABLA_DUMP_IR", &dir);
    let _ = optimize(&Program::parse(IDENTITIES).unwrap());
    std::env::remove_var("QUABLA_DUMP_IR");
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().any(|n| n.ends_with("-traced.qir")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.ends_with("-optimized.qir")),
        "{names:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Values whose products cover signed zeros, NaN, infinities, overflow, and underflow to
/// a subnormal and to zero of either sign.
const EDGES: [f32; 9] = [
    -0.0,
    0.0,
    f32::NAN,
    -1.5,
    f32::INFINITY,
    1e-40,
    -1e-30,
    3e38,
    2.5,
];

fn edge_array(shape: &[usize], shift: usize) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n)
        .map(|i| EDGES[(i * 5 + shift) % EDGES.len()])
        .collect();
    Array::from_slice_on(&cpu(), &v, shape).unwrap()
}

#[test]
fn outer_products_become_multiplies_with_the_dots_bits() {
    use quabla_abi::loop_ir::outer_products;
    // Plain, batched, contracting dims first, no contracting dims at all, and a
    // two-element contraction that must stay a dot.
    let p = Program::parse(
        "program(%0: f32[3,1], %1: f32[1,4], %2: f32[2,3,1], %3: f32[2,1,4], %4: f32[1,3], %5: f32[4,1], %6: f32[3], %7: f32[4], %8: f32[3,2], %9: f32[2,4]) {
  %10 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%0, %1) : f32[3,4]
  %11 = dot_general[lhs_batch=[0], rhs_batch=[0], lhs_contract=[2], rhs_contract=[1]](%2, %3) : f32[2,3,4]
  %12 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[0], rhs_contract=[1]](%4, %5) : f32[3,4]
  %13 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[], rhs_contract=[]](%6, %7) : f32[3,4]
  %14 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%8, %9) : f32[3,4]
  return %10, %11, %12, %13, %14
}
",
    )
    .unwrap();
    let q = dce(&canonicalize(&outer_products(&p)));
    q.validate().unwrap();
    let text = q.to_text();
    assert_eq!(text.matches("dot_general").count(), 1, "{text}");
    let shapes: [&[usize]; 10] = [
        &[3, 1],
        &[1, 4],
        &[2, 3, 1],
        &[2, 1, 4],
        &[1, 3],
        &[4, 1],
        &[3],
        &[4],
        &[3, 2],
        &[2, 4],
    ];
    let args: Vec<Array> = shapes
        .iter()
        .enumerate()
        .map(|(k, s)| edge_array(s, k))
        .collect();
    let (want, got) = (
        bits(&call_program(&p, &args).unwrap()),
        bits(&call_program(&q, &args).unwrap()),
    );
    assert_eq!(want, got);
    // The products above do hit -0 (which a sum started from +0 would not return) and NaN.
    let (neg_zero, nan) = ((-0.0f32).to_bits(), f32::NAN.to_bits());
    assert!(
        want[0].contains(&neg_zero) && want[0].contains(&nan),
        "{want:?}"
    );
}

#[test]
fn integer_outer_products_wrap_as_the_dot_does() {
    let p = Program::parse(
        "program(%0: i32[3,1], %1: i32[1,2]) {
  %2 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%0, %1) : i32[3,2]
  return %2
}
",
    )
    .unwrap();
    let q = dce(&canonicalize(&quabla_abi::loop_ir::outer_products(&p)));
    assert!(!q.to_text().contains("dot_general"), "{}", q.to_text());
    let l = Array::from_slice_on(&cpu(), &[i32::MAX, -7, 0], &[3, 1]).unwrap();
    let r = Array::from_slice_on(&cpu(), &[3i32, i32::MIN], &[1, 2]).unwrap();
    let args = [l, r];
    let run = |p: &Program| call_program(p, &args).unwrap()[0].to_vec::<i32>().unwrap();
    assert_eq!(run(&p), run(&q));
    assert_eq!(run(&q)[0], i32::MAX.wrapping_mul(3));
}

/// A loop carrying a counter, a live sum, a dead stack written every trip, and a dead
/// value that feeds only the stack; then a loop that carries the stack through unread,
/// holding a nested loop whose result feeds only a dead carry.
const DEAD_CARRIES: &str = "program(%0: f32[4], %1: f32[3,4]) {
  %2 = constant[value=[0]]() : i32[]
  %3 = constant[value=[0.0]]() : f32[]
  %4 = broadcast_in_dim[dims=[]](%3) : f32[4]
  %5, %6, %7, %8 = while(%2, %4, %1, %0) : i32[], f32[4], f32[3,4], f32[4] {
    cond(%0: i32[], %1: f32[4], %2: f32[3,4], %3: f32[4]) {
      %4 = constant[value=[3]]() : i32[]
      %5 = compare[dir=lt](%0, %4) : bool[]
      return %5
    }
    body(%0: i32[], %1: f32[4], %2: f32[3,4], %3: f32[4]) {
      %4 = constant[value=[1]]() : i32[]
      %5 = add(%0, %4) : i32[]
      %6 = exp(%3) : f32[4]
      %7 = reshape(%6) : f32[1,4]
      %8 = constant[value=[0]]() : i32[]
      %9 = dynamic_update_slice(%2, %7, %0, %8) : f32[3,4]
      %10 = sin(%1) : f32[4]
      %11 = add(%10, %1) : f32[4]
      return %5, %11, %9, %6
    }
  }
  %9, %10, %11, %12 = while(%2, %6, %7, %0) : i32[], f32[4], f32[3,4], f32[4] {
    cond(%0: i32[], %1: f32[4], %2: f32[3,4], %3: f32[4]) {
      %4 = constant[value=[2]]() : i32[]
      %5 = compare[dir=lt](%0, %4) : bool[]
      return %5
    }
    body(%0: i32[], %1: f32[4], %2: f32[3,4], %3: f32[4]) {
      %4 = constant[value=[1]]() : i32[]
      %5 = add(%0, %4) : i32[]
      %6 = mul(%1, %1) : f32[4]
      %7, %8 = while(%0, %3) : i32[], f32[4] {
        cond(%0: i32[], %1: f32[4]) {
          %2 = constant[value=[4]]() : i32[]
          %3 = compare[dir=lt](%0, %2) : bool[]
          return %3
        }
        body(%0: i32[], %1: f32[4]) {
          %2 = constant[value=[1]]() : i32[]
          %3 = add(%0, %2) : i32[]
          %4 = cos(%1) : f32[4]
          return %3, %4
        }
      }
      return %5, %6, %2, %8
    }
  }
  return %10, %6
}
";

#[test]
fn dead_loop_carries_go_and_results_stay() {
    use quabla::passes::while_carries;
    let p = Program::parse(DEAD_CARRIES).unwrap();
    let q = dce(&while_carries(&p));
    q.validate().unwrap();
    let text = q.to_text();
    // Both loops keep their counter and their sum; the stack, exp, the nested loop and
    // cos go.
    let loops = q.nodes.iter().filter(|n| n.results.len() == 2).count();
    assert_eq!(loops, 2, "{text}");
    for gone in ["dynamic_update_slice", "exp(", "cos("] {
        assert!(!text.contains(gone), "{gone} in {text}");
    }
    let stack_shape = [3usize, 4];
    assert!(q
        .nodes
        .iter()
        .flat_map(|n| &n.results)
        .all(|t| t.shape != stack_shape));
    assert!(text.contains("sin(") && text.contains("mul("), "{text}");
    let x = Array::from_slice_on(&cpu(), &[-0.0f32, f32::NAN, -1.5, 1e-40], &[4]).unwrap();
    let args = [x, edge_array(&[3, 4], 1)];
    assert_eq!(
        bits(&call_program(&p, &args).unwrap()),
        bits(&call_program(&q, &args).unwrap())
    );
}

#[test]
fn loop_carries_that_are_read_stay() {
    // The condition reads carry 1; carry 2 feeds the returned carry 0.
    let p = Program::parse(
        "program(%0: f32[]) {
  %1, %2, %3 = while(%0, %0, %0) : f32[], f32[], f32[] {
    cond(%0: f32[], %1: f32[], %2: f32[]) {
      %3 = constant[value=[10.0]]() : f32[]
      %4 = compare[dir=lt](%1, %3) : bool[]
      return %4
    }
    body(%0: f32[], %1: f32[], %2: f32[]) {
      %3 = add(%0, %2) : f32[]
      %4 = constant[value=[1.0]]() : f32[]
      %5 = add(%1, %4) : f32[]
      %6 = mul(%2, %4) : f32[]
      return %3, %5, %6
    }
  }
  return %1
}
",
    )
    .unwrap();
    assert_eq!(quabla::passes::while_carries(&p), p);
}

#[test]
fn transposed_outer_products_become_swapped_products() {
    // A batched outer product transposed rhs-first (reverse mode's per-example weight
    // gradient), a plain one, and a two-element contraction that must keep its transpose.
    let p = Program::parse(
        "program(%0: f32[2,1,3], %1: f32[2,1,4], %2: f32[3,1], %3: f32[1,4], %4: f32[3,2], %5: f32[2,4]) {
  %6 = dot_general[lhs_batch=[0], rhs_batch=[0], lhs_contract=[1], rhs_contract=[1]](%0, %1) : f32[2,3,4]
  %7 = transpose[perm=[0,2,1]](%6) : f32[2,4,3]
  %8 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%2, %3) : f32[3,4]
  %9 = transpose[perm=[1,0]](%8) : f32[4,3]
  %10 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%4, %5) : f32[3,4]
  %11 = transpose[perm=[1,0]](%10) : f32[4,3]
  return %7, %9, %11
}
",
    )
    .unwrap();
    let q = dce(&canonicalize(&p));
    q.validate().unwrap();
    let text = q.to_text();
    assert_eq!(text.matches("transpose").count(), 1, "{text}");
    assert_eq!(text.matches("dot_general").count(), 3, "{text}");
    let shapes: [&[usize]; 6] = [&[2, 1, 3], &[2, 1, 4], &[3, 1], &[1, 4], &[3, 2], &[2, 4]];
    let args: Vec<Array> = shapes
        .iter()
        .enumerate()
        .map(|(k, s)| edge_array(s, k))
        .collect();
    let want = bits(&call_program(&p, &args).unwrap());
    assert_eq!(want, bits(&call_program(&q, &args).unwrap()));
    let neg_zero = (-0.0f32).to_bits();
    assert!(
        want[0].contains(&neg_zero) && want[1].contains(&neg_zero),
        "{want:?}"
    );
}
