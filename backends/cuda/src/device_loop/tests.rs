//! Device loops run on the host emulation (the generated CUDA C built by the system's C++
//! compiler, one thread), against the same computation written out in Rust.

use crate::emulate::{Emulated, Storage};
use crate::plan::{plan_node_by_node, plan_with, Step};
use quabla_abi::qir::Program;
use std::sync::Arc;

fn f64s(s: &Storage) -> Vec<f64> {
    s.bytes()
        .chunks(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Block sizes the emulation runs device loops with: one thread, a few, more threads than
/// the loops have elements.
const THREADS: [u32; 5] = [1, 2, 3, 8, 64];

/// `p`'s plan, which must be one device-loop kernel.
fn one_device_loop(p: &Program) -> crate::plan::Plan {
    let plan = plan_with(p, "t", 0).unwrap();
    let kernels = plan.kernels();
    assert!(
        kernels.len() == 1 && kernels[0].device_loop,
        "{:#?}",
        plan.steps
    );
    plan
}

fn storage(xs: &[f64]) -> Arc<Storage> {
    let bytes: Vec<u8> = xs.iter().flat_map(|v| v.to_le_bytes()).collect();
    Arc::new(Storage::from_bytes(&bytes))
}

/// A recurrent cell over a sequence, `h <- tanh(W h + x_t)`, storing `sum(h)` at step `t`
/// of a tape: a matrix product, an element loop, a reduction and a one-element store per
/// iteration, with a scalar counter deciding the loop.
fn rnn(n: usize, steps: usize) -> Program {
    Program::parse(&format!(
        "program(%0: f64[{n},{n}], %1: f64[{n}], %2: f64[{steps},{n}]) {{
  %3 = constant[value=[0]]() : i32[]
  %4 = constant[value=[{zeros}]]() : f64[{steps}]
  %5, %6, %7, %8, %9 = while(%3, %0, %1, %2, %4) : i32[], f64[{n},{n}], f64[{n}], f64[{steps},{n}], f64[{steps}] {{
    cond(%0: i32[], %1: f64[{n},{n}], %2: f64[{n}], %3: f64[{steps},{n}], %4: f64[{steps}]) {{
      %5 = constant[value=[{steps}]]() : i32[]
      %6 = compare[dir=lt](%0, %5) : bool[]
      return %6
    }}
    body(%0: i32[], %1: f64[{n},{n}], %2: f64[{n}], %3: f64[{steps},{n}], %4: f64[{steps}]) {{
      %5 = constant[value=[0]]() : i32[]
      %6 = dynamic_slice[sizes=[1,{n}]](%3, %0, %5) : f64[1,{n}]
      %7 = reshape(%6) : f64[{n}]
      %8 = reshape(%2) : f64[{n},1]
      %9 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%1, %8) : f64[{n},1]
      %10 = reshape(%9) : f64[{n}]
      %11 = add(%10, %7) : f64[{n}]
      %12 = tanh(%11) : f64[{n}]
      %13 = reduce[kind=sum, axes=[0]](%12) : f64[]
      %14 = constant[value=[1]]() : i32[]
      %15 = add(%0, %14) : i32[]
      %16 = reshape(%13) : f64[1]
      %17 = dynamic_update_slice(%4, %16, %0) : f64[{steps}]
      return %15, %1, %12, %3, %17
    }}
  }}
  return %7, %9
}}",
        zeros = vec!["0.0"; steps].join(", ")
    ))
    .unwrap()
}

#[test]
fn a_recurrent_cell_runs_as_one_kernel_with_the_sums_written_out() {
    let (n, steps) = (20, 7);
    let p = rnn(n, steps);
    let plan = plan_with(&p, "t", 0).unwrap();
    let kernels: Vec<_> = plan.kernels().into_iter().collect();
    assert_eq!(kernels.len(), 1, "{:#?}", plan.steps);
    assert!(kernels[0].device_loop && kernels[0].single_block);
    assert!(
        !plan.steps.iter().any(|s| matches!(s, Step::While { .. })),
        "{:#?}",
        plan.steps
    );
    let w: Vec<f64> = (0..n * n)
        .map(|k| ((k * 7919 % 61) as f64 - 30.0) / 97.0)
        .collect();
    let h0: Vec<f64> = (0..n).map(|k| (k as f64 - 9.5) / 10.0).collect();
    let x: Vec<f64> = (0..steps * n)
        .map(|k| ((k % 13) as f64) / 6.5 - 1.0)
        .collect();
    // The whole program as one kernel, and node by node (the loop one kernel of its own).
    let whole = Emulated::new_with(&p, 0).unwrap();
    let node_by_node = plan_node_by_node(&p, "t", 0).unwrap();
    assert!(
        node_by_node.kernels().len() == 1 && node_by_node.kernels()[0].device_loop,
        "{:#?}",
        node_by_node.steps
    );
    let by_node = Emulated::of_plan(node_by_node).unwrap();
    // The same sums in the same order: each product's terms from the first, in f64.
    let mut h = h0.clone();
    let mut tape = vec![0.0; steps];
    for (t, sum) in tape.iter_mut().enumerate() {
        h = (0..n)
            .map(|i| {
                let mut acc = 0.0;
                for k in 0..n {
                    acc += w[i * n + k] * h[k];
                }
                (acc + x[t * n + i]).tanh()
            })
            .collect();
        *sum = h.iter().skip(1).fold(h[0], |a, b| a + b);
    }
    // The block's threads share the work out: the same bits whatever their number, fewer
    // or more than the elements.
    for mut exe in [whole, by_node] {
        for threads in THREADS {
            exe.set_threads(threads);
            let out = exe
                .run(vec![storage(&w), storage(&h0), storage(&x)])
                .unwrap();
            assert_eq!(f64s(&out[0]), h, "{threads} threads");
            assert_eq!(f64s(&out[1]), tape, "{threads} threads");
        }
    }
}

#[test]
fn a_loop_with_a_branch_and_an_inner_loop_runs_on_the_device() {
    // Even steps add y to x; odd steps double x k times (an inner `while`).
    let src = "program(%0: f64[3], %1: f64[3], %2: i32[], %3: i32[]) {
  %4 = constant[value=[0]]() : i32[]
  %5, %6, %7, %8, %9 = while(%4, %0, %1, %2, %3) : i32[], f64[3], f64[3], i32[], i32[] {
    cond(%0: i32[], %1: f64[3], %2: f64[3], %3: i32[], %4: i32[]) {
      %5 = compare[dir=lt](%0, %3) : bool[]
      return %5
    }
    body(%0: i32[], %1: f64[3], %2: f64[3], %3: i32[], %4: i32[]) {
      %5 = constant[value=[2]]() : i32[]
      %6 = rem(%0, %5) : i32[]
      %7 = cond(%6, %1, %2, %4) : f64[3] {
        branch(%0: f64[3], %1: f64[3], %2: i32[]) {
          %3 = add(%0, %1) : f64[3]
          return %3
        }
        branch(%0: f64[3], %1: f64[3], %2: i32[]) {
          %3, %4 = while(%0, %2) : f64[3], i32[] {
            cond(%0: f64[3], %1: i32[]) {
              %2 = constant[value=[0]]() : i32[]
              %3 = compare[dir=gt](%1, %2) : bool[]
              return %3
            }
            body(%0: f64[3], %1: i32[]) {
              %2 = add(%0, %0) : f64[3]
              %3 = constant[value=[1]]() : i32[]
              %4 = sub(%1, %3) : i32[]
              return %2, %4
            }
          }
          return %3
        }
      }
      %8 = constant[value=[1]]() : i32[]
      %9 = add(%0, %8) : i32[]
      return %9, %7, %2, %3, %4
    }
  }
  return %6
}";
    let p = Program::parse(src).unwrap();
    one_device_loop(&p);
    let i32s = |v: i32| Arc::new(Storage::from_bytes(&v.to_le_bytes()));
    let (x, y) = ([1.0, -2.0, 0.5], [0.25, 4.0, -8.0]);
    let mut want = x.to_vec();
    for step in 0..5 {
        for (w, y) in want.iter_mut().zip(y) {
            *w = if step % 2 == 0 { *w + y } else { *w * 8.0 };
        }
    }
    let mut exe = Emulated::new_with(&p, 0).unwrap();
    for threads in THREADS {
        exe.set_threads(threads);
        let out = exe
            .run(vec![storage(&x), storage(&y), i32s(5), i32s(3)])
            .unwrap();
        assert_eq!(f64s(&out[0]), want, "{threads} threads");
    }
}

#[test]
fn a_loop_of_heavy_iterations_stays_host_driven() {
    let n = super::MAX_LOOP_ELEMENTS + 1;
    let p = Program::parse(&format!(
        "program(%0: f32[{n}]) {{
  %1 = while(%0) : f32[{n}] {{
    cond(%0: f32[{n}]) {{
      %1 = constant[value=[false]]() : bool[]
      return %1
    }}
    body(%0: f32[{n}]) {{
      %1 = add(%0, %0) : f32[{n}]
      return %1
    }}
  }}
  return %1
}}"
    ))
    .unwrap();
    let plan = plan_with(&p, "t", 0).unwrap();
    assert!(
        matches!(&plan.steps[..], [Step::While { .. }]),
        "{:#?}",
        plan.steps
    );
    let declined = super::plan("t", &p.nodes[0], &[0], &[1], 2).unwrap_err();
    assert!(
        declined.contains("an element loop of 4097 elements"),
        "{declined}"
    );
}

#[test]
fn a_whole_program_returns_inputs_duplicates_and_its_loops_results() {
    // x doubled three times, its sum after the loop; outputs: the sum, the input as it
    // came, the doubled array, the sum again.
    let p = Program::parse(
        "program(%0: f32[2,4]) {
  %1 = constant[value=[0]]() : i32[]
  %2, %3 = while(%1, %0) : i32[], f32[2,4] {
    cond(%0: i32[], %1: f32[2,4]) {
      %2 = constant[value=[3]]() : i32[]
      %3 = compare[dir=lt](%0, %2) : bool[]
      return %3
    }
    body(%0: i32[], %1: f32[2,4]) {
      %2 = constant[value=[1]]() : i32[]
      %3 = add(%0, %2) : i32[]
      %4 = add(%1, %1) : f32[2,4]
      return %3, %4
    }
  }
  %4 = reduce[kind=sum, axes=[0,1]](%3) : f32[]
  return %4, %0, %3, %4
}",
    )
    .unwrap();
    let plan = plan_with(&p, "t", 0).unwrap();
    assert_eq!(plan.kernels().len(), 1, "{:#?}", plan.steps);
    let x: Vec<f32> = vec![1.5, -0.25, 3.0, 0.0, -7.0, 2.5, 1e-3, 4.0];
    let doubled: Vec<f32> = x.iter().map(|v| v * 8.0).collect();
    let sum = doubled
        .iter()
        .skip(1)
        .fold(doubled[0] as f64, |a, b| a + *b as f64) as f32;
    let f32s = |s: &Storage| -> Vec<f32> {
        s.bytes()
            .chunks(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    };
    let mut exe = Emulated::new_with(&p, 0).unwrap();
    assert_eq!(
        exe.output_types()
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>(),
        ["f32[]", "f32[2,4]", "f32[2,4]", "f32[]"]
    );
    for threads in THREADS {
        exe.set_threads(threads);
        let input = Arc::new(Storage::from_bytes(
            &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>(),
        ));
        let out = exe.run(vec![input]).unwrap();
        assert_eq!(f32s(&out[0]), [sum], "{threads} threads");
        assert_eq!(f32s(&out[1]), x, "{threads} threads");
        assert_eq!(f32s(&out[2]), doubled, "{threads} threads");
        assert_eq!(f32s(&out[3]), [sum], "{threads} threads");
    }
}

/// `x <- a⁻¹ x` four times, each through a Cholesky factorization and two triangular
/// solves inside the loop: the loop is one device kernel (`kernels::factor`'s functions
/// called by the block), and `a x_next = x` holds at every step against Gaussian
/// elimination written out here.
#[test]
fn a_loop_factoring_a_matrix_each_step_runs_on_the_device() {
    let n = 5;
    let src = format!(
        "program(%0: f64[{n},{n}], %1: f64[{n},1]) {{
  %2 = constant[value=[0]]() : i32[]
  %3, %4, %5 = while(%2, %0, %1) : i32[], f64[{n},{n}], f64[{n},1] {{
    cond(%0: i32[], %1: f64[{n},{n}], %2: f64[{n},1]) {{
      %3 = constant[value=[4]]() : i32[]
      %4 = compare[dir=lt](%0, %3) : bool[]
      return %4
    }}
    body(%0: i32[], %1: f64[{n},{n}], %2: f64[{n},1]) {{
      %3 = cholesky(%1) : f64[{n},{n}]
      %4 = triangular_solve[left_side=true, lower=true, transpose_a=false, unit_diagonal=false](%3, %2) : f64[{n},1]
      %5 = triangular_solve[left_side=true, lower=true, transpose_a=true, unit_diagonal=false](%3, %4) : f64[{n},1]
      %6 = constant[value=[1]]() : i32[]
      %7 = add(%0, %6) : i32[]
      return %7, %1, %5
    }}
  }}
  return %5
}}"
    );
    let p = Program::parse(&src).unwrap();
    let plan = one_device_loop(&p);
    // a = B Bᵀ + n I.
    let b: Vec<f64> = (0..n * n)
        .map(|k| ((k * 37 % 23) as f64 - 11.0) / 13.0)
        .collect();
    let mut a = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            a[i * n + j] = (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum::<f64>()
                + if i == j { n as f64 } else { 0.0 };
        }
    }
    let x0: Vec<f64> = (0..n).map(|i| i as f64 - 1.5).collect();
    // Gaussian elimination without pivoting (a is positive definite).
    let solve = |rhs: &[f64]| -> Vec<f64> {
        let (mut m, mut y) = (a.clone(), rhs.to_vec());
        for k in 0..n {
            for i in k + 1..n {
                let f = m[i * n + k] / m[k * n + k];
                (k..n).for_each(|j| m[i * n + j] -= f * m[k * n + j]);
                y[i] -= f * y[k];
            }
        }
        for k in (0..n).rev() {
            let s: f64 = (k + 1..n).map(|j| m[k * n + j] * y[j]).sum();
            y[k] = (y[k] - s) / m[k * n + k];
        }
        y
    };
    let mut want = x0.clone();
    for _ in 0..4 {
        want = solve(&want);
    }
    let mut exe = Emulated::of_plan(plan).unwrap();
    for threads in THREADS {
        exe.set_threads(threads);
        let out = f64s(&exe.run(vec![storage(&a), storage(&x0)]).unwrap()[0]);
        for (g, w) in out.iter().zip(&want) {
            assert!(
                (g - w).abs() <= 1e-12 * w.abs().max(1e-3),
                "{threads} threads: {out:?} against {want:?}"
            );
        }
    }
}

/// Unshifted QR iterations `m <- r q` (with `q r = m`), each step also taking `eigh(m)` and
/// `m`'s singular values: the loop is one device kernel calling `kernels::factor::orthogonal`'s
/// functions, and as every step is a similarity, the last step's eigenvalues and singular
/// values are those of the start, `tridiag(-1, 2, -1)`: `2 - 2 cos(k π / (n + 1))`.
#[test]
fn a_loop_of_qr_iterations_with_eigh_and_svd_runs_on_the_device() {
    let n = 6;
    let src = format!(
        "program(%0: f64[{n},{n}]) {{
  %1 = constant[value=[0]]() : i32[]
  %2 = constant[value=[0, 0, 0, 0, 0, 0]]() : f64[{n}]
  %3, %4, %5, %6 = while(%1, %0, %2, %2) : i32[], f64[{n},{n}], f64[{n}], f64[{n}] {{
    cond(%0: i32[], %1: f64[{n},{n}], %2: f64[{n}], %3: f64[{n}]) {{
      %4 = constant[value=[5]]() : i32[]
      %5 = compare[dir=lt](%0, %4) : bool[]
      return %5
    }}
    body(%0: i32[], %1: f64[{n},{n}], %2: f64[{n}], %3: f64[{n}]) {{
      %4, %5 = qr[full_matrices=false](%1) : f64[{n},{n}], f64[{n},{n}]
      %6 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%5, %4) : f64[{n},{n}]
      %7, %8 = eigh(%6) : f64[{n}], f64[{n},{n}]
      %9 = svd[full_matrices=false, compute_uv=false](%6) : f64[{n}]
      %10 = constant[value=[1]]() : i32[]
      %11 = add(%0, %10) : i32[]
      return %11, %6, %7, %9
    }}
  }}
  return %5, %6
}}"
    );
    let p = Program::parse(&src).unwrap();
    let plan = one_device_loop(&p);
    let (a, ascending) = crate::kernels::factor::orthogonal::tests::tridiagonal(n);
    let mut exe = Emulated::of_plan(plan).unwrap();
    for threads in THREADS {
        exe.set_threads(threads);
        let out = exe.run(vec![storage(&a)]).unwrap();
        let (w, s) = (f64s(&out[0]), f64s(&out[1]));
        for k in 0..n {
            assert!(
                (w[k] - ascending[k]).abs() <= 1e-13,
                "{threads} threads: w = {w:?}"
            );
            assert!(
                (s[k] - ascending[n - 1 - k]).abs() <= 1e-13,
                "{threads} threads: s = {s:?}"
            );
        }
    }
}
