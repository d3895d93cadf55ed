//! The compiled tier against the interpreter, bit for bit, on loops whose body factors or
//! solves (an implicit stepper's Newton iteration, say): every linalg op and flag, batched
//! and single matrices, a one-element matrix (a register stored for the call, its results
//! loaded back) and an operand read through a transpose (copied dense first), each result
//! fed back into the next iteration so the loop's work, not its inputs, is compared.

use super::tests::both_tiers;
use crate::exec::run;
use crate::tensor::{Storage, Tensor};
use quabla_abi::qir::{infer_result_types, LinalgOp, Op, Program};
use quabla_abi::{DType, TensorType};

/// One loop to compare: `op` on `a` (through a transpose if `transposed`) and, for a
/// triangular solve, `b`.
struct Case {
    op: LinalgOp,
    name: &'static str,
    a: Vec<usize>,
    b: Option<Vec<usize>>,
    transposed: bool,
}

/// `op`'s attributes in the text form.
fn attributes(op: &LinalgOp) -> String {
    match op {
        LinalgOp::Cholesky | LinalgOp::Lu | LinalgOp::Eigh => String::new(),
        LinalgOp::TriangularSolve {
            left_side,
            lower,
            transpose_a,
            unit_diagonal,
        } => format!(
            "[left_side={left_side}, lower={lower}, transpose_a={transpose_a}, \
             unit_diagonal={unit_diagonal}]"
        ),
        LinalgOp::Qr { full_matrices } => format!("[full_matrices={full_matrices}]"),
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => format!("[full_matrices={full_matrices}, compute_uv={compute_uv}]"),
    }
}

/// Four iterations of: results = op(a, b); `s` += the sum of every result; `a` += a
/// thousandth of tanh(s) everywhere (symmetric stays symmetric); `b` = tanh of a solve's
/// result.
fn program(c: &Case, d: DType) -> Program {
    let ta = TensorType::new(d, c.a.clone());
    let tb = TensorType::new(d, c.b.clone().unwrap_or_else(|| vec![1, 1]));
    let s = TensorType::new(d, vec![]);
    let operand = if c.transposed { "%5" } else { "%1" };
    let mut operand_types = vec![&ta];
    let args = match &c.b {
        Some(_) => {
            operand_types.push(&tb);
            format!("{operand}, %2")
        }
        None => operand.to_string(),
    };
    let results = infer_result_types(&Op::Linalg(c.op), &operand_types, &[], &[])
        .unwrap_or_else(|e| panic!("{}: {e}", c.name));
    let ids: Vec<String> = (0..results.len()).map(|k| format!("%{}", 10 + k)).collect();
    let types: Vec<String> = results.iter().map(|t| t.to_string()).collect();
    let mut lines = vec![
        "%4 = constant[value=[1]]() : i32[]".to_string(),
        "%5 = transpose[perm=[1,0]](%1) : ".to_string() + &ta.to_string(),
        format!(
            "{} = {}{}({args}) : {}",
            ids.join(", "),
            c.op.name(),
            attributes(&c.op),
            types.join(", ")
        ),
    ];
    if !c.transposed {
        lines.remove(1);
    }
    let mut next = 10 + results.len();
    let mut push = |line: String, next: &mut usize| {
        lines.push(format!("%{next} = {line}"));
        *next += 1;
        *next - 1
    };
    let mut total = 3;
    for (k, t) in results.iter().enumerate() {
        let mut r = 10 + k;
        if !t.dtype.is_float() {
            r = push(
                format!("convert(%{r}) : {}", TensorType::new(d, t.shape.clone())),
                &mut next,
            );
        }
        let axes: Vec<String> = (0..t.shape.len()).map(|a| a.to_string()).collect();
        let sum = push(
            format!("reduce[kind=sum, axes=[{}]](%{r}) : {s}", axes.join(",")),
            &mut next,
        );
        total = push(format!("add(%{total}, %{sum}) : {s}"), &mut next);
    }
    let t = push(format!("tanh(%{total}) : {s}"), &mut next);
    let milli = push(format!("constant[value=[0.001]]() : {s}"), &mut next);
    let step = push(format!("mul(%{t}, %{milli}) : {s}"), &mut next);
    let spread = push(
        format!("broadcast_in_dim[dims=[]](%{step}) : {ta}"),
        &mut next,
    );
    let a = push(format!("add(%1, %{spread}) : {ta}"), &mut next);
    let b = match c.b {
        Some(_) => push(format!("tanh(%10) : {tb}"), &mut next),
        None => 2,
    };
    let counter = push("add(%0, %4) : i32[]".into(), &mut next);
    let sig = format!("%0: i32[], %1: {ta}, %2: {tb}, %3: {s}");
    let src = format!(
        "program({sig}) {{
           %4, %5, %6, %7 = while(%0, %1, %2, %3) : i32[], {ta}, {tb}, {s} {{
             cond({sig}) {{
               %4 = constant[value=[4]]() : i32[]
               %5 = compare[dir=lt](%0, %4) : bool[]
               return %5
             }}
             body({sig}) {{
               {}
               return %{counter}, %{a}, %{b}, %{total}
             }}
           }}
           return %5, %6, %7
         }}",
        lines.join("\n               ")
    );
    Program::parse(&src).unwrap_or_else(|e| panic!("{}: {e}\n{src}", c.name))
}

/// Symmetric, diagonally dominant matrices (so Cholesky and the solves are well posed),
/// or plain ones where they are not square.
fn matrices(shape: &[usize], d: DType, seed: f64) -> Tensor {
    let r = shape.len();
    let (m, n) = (shape[r - 2], shape[r - 1]);
    let len: usize = shape.iter().product();
    let v: Vec<f64> = (0..len)
        .map(|e| {
            let (i, j) = ((e / n) % m, e % n);
            let (lo, hi) = (i.min(j) as f64, i.max(j) as f64);
            let off = ((lo * 7.0 + hi * 3.0 + (e / (m * n)) as f64) * seed).sin();
            if i == j {
                n as f64 + off
            } else {
                off
            }
        })
        .collect();
    let data = match d {
        DType::F32 => Storage::F32(v.iter().map(|x| *x as f32).collect()),
        _ => Storage::F64(v),
    };
    Tensor::new(TensorType::new(d, shape.to_vec()), data)
}

fn cases() -> Vec<Case> {
    let one = |op: LinalgOp, name, a: &[usize]| Case {
        op,
        name,
        a: a.to_vec(),
        b: None,
        transposed: false,
    };
    let mut cases = vec![
        one(LinalgOp::Lu, "lu", &[4, 4]),
        one(LinalgOp::Lu, "lu batched", &[2, 3, 3]),
        one(LinalgOp::Lu, "lu of one element", &[1, 1]),
        one(LinalgOp::Cholesky, "cholesky", &[4, 4]),
        one(LinalgOp::Eigh, "eigh", &[3, 3]),
        Case {
            transposed: true,
            ..one(LinalgOp::Lu, "lu through a transpose", &[4, 4])
        },
    ];
    for full_matrices in [false, true] {
        cases.push(one(LinalgOp::Qr { full_matrices }, "qr", &[5, 3]));
        for compute_uv in [false, true] {
            let op = LinalgOp::Svd {
                full_matrices,
                compute_uv,
            };
            cases.push(one(op, "svd", &[3, 5]));
        }
    }
    for flags in 0..16u32 {
        let bit = |i: u32| flags & (1 << i) != 0;
        let left_side = bit(0);
        let op = LinalgOp::TriangularSolve {
            left_side,
            lower: bit(1),
            transpose_a: bit(2),
            unit_diagonal: bit(3),
        };
        let b = if left_side {
            vec![2, 4, 3]
        } else {
            vec![2, 3, 4]
        };
        cases.push(Case {
            b: Some(b),
            ..one(op, "triangular_solve", &[2, 4, 4])
        });
    }
    cases.push(Case {
        b: Some(vec![1, 1]),
        ..one(
            LinalgOp::TriangularSolve {
                left_side: true,
                lower: true,
                transpose_a: false,
                unit_diagonal: false,
            },
            "triangular_solve of one element",
            &[1, 1],
        )
    });
    cases
}

#[test]
fn loops_that_factor_and_solve_give_the_interpreters_bits() {
    for c in cases() {
        for d in [DType::F32, DType::F64] {
            let p = program(&c, d);
            p.validate()
                .unwrap_or_else(|e| panic!("{} {d}: {e}\n{}", c.name, p.to_text()));
            let (compiled, reference) = both_tiers(&p, 0);
            let b = c.b.clone().unwrap_or_else(|| vec![1, 1]);
            let inputs = vec![
                Tensor::new(TensorType::new(DType::I32, vec![]), Storage::I32(vec![0])),
                matrices(&c.a, d, 0.37),
                matrices(&b, d, 0.91),
                Tensor::new(TensorType::new(d, vec![]), scalar(d, 0.0)),
            ];
            let x = compiled.run(inputs.clone());
            let y = run(&reference, inputs.clone());
            for (k, (x, y)) in x.iter().zip(&y).enumerate() {
                assert_eq!(
                    x.data.to_bytes(),
                    y.data.to_bytes(),
                    "{} {d} {:?}: output {k}",
                    c.name,
                    c.op
                );
            }
            // The loop ran: the running sum left zero.
            assert_ne!(
                x[2].data.to_bytes(),
                inputs[3].data.to_bytes(),
                "{}",
                c.name
            );
        }
    }
}

fn scalar(d: DType, x: f64) -> Storage {
    match d {
        DType::F32 => Storage::F32(vec![x as f32]),
        _ => Storage::F64(vec![x]),
    }
}
