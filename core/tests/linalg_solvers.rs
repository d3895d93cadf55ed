//! Iterative solvers (`linalg::cg`, `linalg::gmres`) against a host Gaussian elimination,
//! their implicit derivatives against finite differences and the analytic adjoint formulas,
//! second order, `vmap` with per-element stopping, and `jit`.

mod common;

use common::cpu;
use quabla::ad::{grad, hessian, jvp};
use quabla::linalg::{self, SolveOptions};
use quabla::test_util::check_grads;
use quabla::{jit, vmap, Array, Axes, DType, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>().unwrap()
}

/// Dense solve by Gaussian elimination with partial pivoting (the independent reference).
fn host_solve(a: &[f64], b: &[f64], transpose: bool) -> Vec<f64> {
    let n = b.len();
    let mut m: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            let mut row: Vec<f64> = (0..n)
                .map(|j| {
                    if transpose {
                        a[j * n + i]
                    } else {
                        a[i * n + j]
                    }
                })
                .collect();
            row.push(b[i]);
            row
        })
        .collect();
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs()))
            .unwrap();
        m.swap(c, p);
        let pivot = m[c].clone();
        for row in m.iter_mut().skip(c + 1) {
            let f = row[c] / pivot[c];
            for (x, p) in row.iter_mut().zip(&pivot).skip(c) {
                *x -= f * p;
            }
        }
    }
    let mut x = vec![0.0; n];
    for r in (0..n).rev() {
        let s: f64 = (r + 1..n).map(|k| m[r][k] * x[k]).sum();
        x[r] = (m[r][n] - s) / m[r][r];
    }
    x
}

const SPD: [f64; 16] = [
    5.0, 1.0, 0.5, 0.0, //
    1.0, 4.0, 1.0, 0.3, //
    0.5, 1.0, 3.0, 0.2, //
    0.0, 0.3, 0.2, 2.0,
];
const NONSYM: [f64; 16] = [
    4.0, -1.0, 0.5, 2.0, //
    1.0, 3.0, -2.0, 0.3, //
    -0.5, 1.0, 5.0, 0.2, //
    1.0, 0.0, 0.7, 2.5,
];
const B: [f64; 4] = [1.0, -2.0, 0.5, 3.0];
const C: [f64; 4] = [0.3, 0.9, -1.1, 0.4];

fn tight() -> SolveOptions {
    SolveOptions {
        tol: 1e-13,
        ..Default::default()
    }
}

type Solver = fn(
    linalg::LinearFn,
    &[Array],
    Option<&[Array]>,
    Option<linalg::LinearFn>,
    &SolveOptions,
) -> Result<(Vec<Array>, Array)>;

fn solvers() -> Vec<(&'static str, Solver, &'static [f64; 16])> {
    vec![
        ("cg", linalg::cg as Solver, &SPD),
        ("gmres", linalg::gmres as Solver, &NONSYM),
    ]
}

fn close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

#[test]
fn solutions_match_gaussian_elimination() {
    for (name, solve, a) in solvers() {
        let am = f64s(a, &[4, 4]);
        let (x, info) =
            solve(&linalg::dense(&am), &[f64s(&B, &[4])], None, None, &tight()).unwrap();
        assert_eq!(info.item::<i32>().unwrap(), 0, "{name} converged");
        close(&vals(&x[0]), &host_solve(a, &B, false), 1e-10, name);
    }
}

#[test]
fn gradients_follow_the_adjoint_formulas() {
    // L = c·x with A x = b: dL/db = A⁻ᵀ c, dL/dA = -(A⁻ᵀ c) xᵀ.
    for (name, solve, a) in solvers() {
        let loss = move |args: &[Array]| -> Result<Vec<Array>> {
            let (am, b) = (&args[0], &args[1]);
            let (x, _) = solve(
                &linalg::dense(am),
                std::slice::from_ref(b),
                None,
                None,
                &tight(),
            )?;
            Ok(vec![(&x[0] * &f64s(&C, &[4]))?.sum(Axes::All, false)?])
        };
        let g = grad(loss, &[0, 1])(&[f64s(a, &[4, 4]), f64s(&B, &[4])]).unwrap();
        let lam = host_solve(a, &C, true);
        let x = host_solve(a, &B, false);
        close(&vals(&g[1]), &lam, 1e-9, &format!("{name} dL/db"));
        let da: Vec<f64> = (0..16).map(|k| -lam[k / 4] * x[k % 4]).collect();
        close(&vals(&g[0]), &da, 1e-9, &format!("{name} dL/dA"));
    }
}

#[test]
fn derivatives_match_finite_differences_to_second_order() {
    for (name, solve, a) in solvers() {
        // A(s) = A + s·diag(1..4) closes over the traced s; b is an argument.
        let f = move |args: &[Array]| -> Result<Vec<Array>> {
            let (s, b) = (&args[0], &args[1]);
            let d = f64s(&[1.0, 2.0, 3.0, 4.0], &[4]);
            let am = f64s(a, &[4, 4]);
            let mv = |v: &[Array]| Ok(vec![(&am.matmul(&v[0])? + &(&(&d * s)? * &v[0])?)?]);
            let (x, _) = solve(&mv, std::slice::from_ref(b), None, None, &tight())?;
            Ok(vec![x[0].tanh()?])
        };
        let args = [f64s(&[0.3], &[]), f64s(&B, &[4])];
        if let Err(e) = check_grads(&f, &args, 2, None) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn forward_mode_and_hessian_agree_with_the_closed_form() {
    // x = A⁻¹ b is linear in b: jvp gives A⁻¹ db; the Hessian of ½‖x‖² in b is A⁻ᵀA⁻¹.
    for (name, solve, a) in solvers() {
        let am = f64s(a, &[4, 4]);
        let x_of = |args: &[Array]| -> Result<Vec<Array>> {
            Ok(solve(
                &linalg::dense(&am),
                &[args[0].clone()],
                None,
                None,
                &tight(),
            )?
            .0)
        };
        let db = [0.5, 0.1, -0.3, 0.2];
        let (_, t) = jvp(x_of, &[f64s(&B, &[4])], &[f64s(&db, &[4])]).unwrap();
        close(
            &vals(&t[0]),
            &host_solve(a, &db, false),
            1e-9,
            &format!("{name} jvp"),
        );
        let half_sq = |args: &[Array]| -> Result<Vec<Array>> {
            let x = x_of(args)?.remove(0);
            Ok(vec![((&x * &x)?.sum(Axes::All, false)? * 0.5)?])
        };
        let h = hessian(half_sq, &[0])(&[f64s(&B, &[4])]).unwrap();
        let h = vals(&h[0]);
        for j in 0..4 {
            let e: Vec<f64> = (0..4).map(|i| if i == j { 1.0 } else { 0.0 }).collect();
            let col = host_solve(a, &host_solve(a, &e, false), true);
            let got: Vec<f64> = (0..4).map(|i| h[i * 4 + j]).collect();
            close(&got, &col, 1e-8, &format!("{name} hessian column {j}"));
        }
    }
}

#[test]
fn vmap_stops_each_element_at_its_own_tolerance() {
    for (name, solve, a) in solvers() {
        let am = f64s(a, &[4, 4]);
        let f = |args: &[Array]| -> Result<Vec<Array>> {
            let (x, info) = solve(
                &linalg::dense(&am),
                &[args[0].clone()],
                None,
                None,
                &tight(),
            )?;
            Ok(vec![x[0].clone(), info])
        };
        // A zero right-hand side converges before the first iteration; an iteration on it
        // would divide 0 by 0, so finite zeros show its loop was frozen while the others ran.
        let rows = [B.to_vec(), vec![0.0; 4], C.to_vec()].concat();
        let out = vmap(f, &[Some(0)], &[Some(0), Some(0)])(&[f64s(&rows, &[3, 4])]).unwrap();
        let xs = vals(&out[0]);
        assert_eq!(
            out[1].to_vec::<i32>().unwrap(),
            vec![0, 0, 0],
            "{name} info"
        );
        for (k, b) in [&B[..], &[0.0; 4], &C[..]].iter().enumerate() {
            close(
                &xs[k * 4..k * 4 + 4],
                &host_solve(a, b, false),
                1e-10,
                &format!("{name} row {k}"),
            );
        }
    }
}

#[test]
fn vmap_of_grad_matches_per_element_gradients() {
    let loss = |args: &[Array]| -> Result<Vec<Array>> {
        let am = f64s(&NONSYM, &[4, 4]);
        let (x, _) = linalg::gmres(
            &linalg::dense(&am),
            &[args[0].clone()],
            None,
            None,
            &tight(),
        )?;
        Ok(vec![(&x[0] * &x[0])?.sum(Axes::All, false)?])
    };
    let rows = [B.to_vec(), C.to_vec()].concat();
    let g = vmap(grad(loss, &[0]), &[Some(0)], &[Some(0)])(&[f64s(&rows, &[2, 4])]).unwrap();
    let g = vals(&g[0]);
    for (k, b) in [&B, &C].iter().enumerate() {
        // d‖x‖²/db = 2 A⁻ᵀ x.
        let x = host_solve(&NONSYM, &b[..], false);
        let want: Vec<f64> = host_solve(&NONSYM, &x, true)
            .iter()
            .map(|v| 2.0 * v)
            .collect();
        close(&g[k * 4..k * 4 + 4], &want, 1e-9, &format!("row {k}"));
    }
}

#[test]
fn matrix_free_laplacian_with_a_preconditioner_and_jit() {
    // -Δ on a 12x12 grid with Dirichlet boundaries, as a stencil over a 2-D array.
    let n = 12;
    let lap = |v: &[Array]| -> Result<Vec<Array>> {
        let u = &v[0];
        let p = u.pad(0.0, &[1, 1], &[1, 1], &[0, 0])?;
        let sh = |i: usize, j: usize| p.slice(&[i, j], &[i + n, j + n], &[1, 1]);
        let nb = (&(&sh(0, 1)? + &sh(2, 1)?)? + &(&sh(1, 0)? + &sh(1, 2)?)?)?;
        Ok(vec![(&(u * 4.0)? - &nb)?])
    };
    let jacobi = |r: &[Array]| Ok(vec![(&r[0] * 0.25)?]);
    let b: Vec<f64> = (0..n * n)
        .map(|k| ((k * 7 % 11) as f64 - 5.0) / 5.0)
        .collect();
    let solve = jit(move |a: &[Array]| {
        let opts = SolveOptions {
            tol: 1e-12,
            ..Default::default()
        };
        let (x, info) = linalg::cg(&lap, &[a[0].clone()], None, Some(&jacobi), &opts)?;
        Ok(vec![x[0].clone(), info])
    });
    let out = solve.call(&[f64s(&b, &[n, n])]).unwrap();
    assert_eq!(out[1].item::<i32>().unwrap(), 0);
    let back = lap(&[out[0].clone()]).unwrap();
    close(&vals(&back[0]), &b, 1e-9, "A x = b");
    // The dense reference: the same stencil as a matrix.
    let mut dense = vec![0.0; n * n * n * n];
    for i in 0..n {
        for j in 0..n {
            let r = i * n + j;
            dense[r * n * n + r] = 4.0;
            for (di, dj) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
                let (a, c) = (i as i64 + di, j as i64 + dj);
                if a >= 0 && c >= 0 && a < n as i64 && c < n as i64 {
                    dense[r * n * n + (a as usize) * n + c as usize] = -1.0;
                }
            }
        }
    }
    close(&vals(&out[0]), &host_solve(&dense, &b, false), 1e-9, "x");
}

/// Without a preconditioner the loop tests the carried `gamma = r·r` instead of computing
/// `‖r‖²` again: the identity given as a preconditioner takes the recomputing path, and the
/// two must agree bit for bit, in the solution and in the iterations run (`info` under an
/// iteration limit), on a 2-D stencil and on a dense matrix.
#[test]
fn cg_without_a_preconditioner_stops_exactly_as_with_the_identity() {
    let n = 16;
    let lap = |v: &[Array]| -> Result<Vec<Array>> {
        let p = v[0].pad(0.0, &[1, 1], &[1, 1], &[0, 0])?;
        let sh = |i: usize, j: usize| p.slice(&[i, j], &[i + n, j + n], &[1, 1]);
        let nb = (&(&sh(0, 1)? + &sh(2, 1)?)? + &(&sh(1, 0)? + &sh(1, 2)?)?)?;
        Ok(vec![(&(&v[0] * 4.0)? - &nb)?])
    };
    let identity = |r: &[Array]| Ok(r.to_vec());
    let b: Vec<f64> = (0..n * n).map(|k| ((k as f64) * 0.37).sin()).collect();
    let b = f64s(&b, &[n, n]);
    let am = f64s(&SPD, &[4, 4]);
    let dense = linalg::dense(&am);
    let cases: [(linalg::LinearFn, Array); 2] = [(&lap, b), (&dense, f64s(&B, &[4]))];
    for (a, b) in cases {
        for maxiter in [Some(3), None] {
            let opts = SolveOptions {
                tol: 1e-10,
                maxiter,
                ..Default::default()
            };
            let plain = linalg::cg(a, std::slice::from_ref(&b), None, None, &opts).unwrap();
            let with =
                linalg::cg(a, std::slice::from_ref(&b), None, Some(&identity), &opts).unwrap();
            let bits = |x: &Array| -> Vec<u64> { vals(x).iter().map(|v| v.to_bits()).collect() };
            assert_eq!(bits(&plain.0[0]), bits(&with.0[0]), "{maxiter:?}");
            assert_eq!(
                plain.1.item::<i32>().unwrap(),
                with.1.item::<i32>().unwrap()
            );
        }
    }
}

#[test]
fn iteration_limits_report_info_and_bad_input_is_refused() {
    let am = f64s(&SPD, &[4, 4]);
    let opts = SolveOptions {
        tol: 1e-14,
        maxiter: Some(1),
        ..Default::default()
    };
    let (_, info) = linalg::cg(&linalg::dense(&am), &[f64s(&B, &[4])], None, None, &opts).unwrap();
    assert_eq!(info.item::<i32>().unwrap(), 1);
    let opts = SolveOptions {
        tol: 1e-14,
        maxiter: Some(1),
        restart: 2,
        ..Default::default()
    };
    let nm = f64s(&NONSYM, &[4, 4]);
    let (_, info) =
        linalg::gmres(&linalg::dense(&nm), &[f64s(&B, &[4])], None, None, &opts).unwrap();
    assert_eq!(info.item::<i32>().unwrap(), 1);
    // A non-square operator, an integer right-hand side, a negative tolerance.
    let wide = |v: &[Array]| Ok(vec![v[0].slice(&[0], &[2], &[1])?]);
    let e = linalg::cg(&wide, &[f64s(&B, &[4])], None, None, &tight()).unwrap_err();
    assert!(e.to_string().contains("square"), "{e}");
    let ib = Array::from_slice_on(&cpu(), &[1i32, 2, 3, 4], &[4]).unwrap();
    let e = linalg::cg(&linalg::dense(&am), &[ib], None, None, &tight()).unwrap_err();
    assert!(e.to_string().contains("floating point"), "{e}");
    let bad = SolveOptions {
        tol: -1.0,
        ..Default::default()
    };
    let e = linalg::cg(&linalg::dense(&am), &[f64s(&B, &[4])], None, None, &bad).unwrap_err();
    assert!(e.to_string().contains("non-negative"), "{e}");
    let _ = DType::F64;
}

#[test]
fn vmap_over_a_parameter_of_the_operator() {
    // A(s) = SPD + s·I for a batch of s: each solve matches its own dense solution, and the
    // batched gradient in s matches -xᵀ x' ... checked against per-element gradients.
    let solve_s = |a: &[Array]| -> Result<Vec<Array>> {
        let am = f64s(&SPD, &[4, 4]);
        let s = &a[0];
        let mv = |v: &[Array]| Ok(vec![(&am.matmul(&v[0])? + &(&v[0] * s)?)?]);
        let (x, _) = linalg::cg(&mv, &[f64s(&B, &[4])], None, None, &tight())?;
        Ok(vec![(&x[0] * &x[0])?.sum(Axes::All, false)?])
    };
    let ss = [0.0, 0.5, 3.0];
    let batched = vmap(grad(solve_s, &[0]), &[Some(0)], &[Some(0)])(&[f64s(&ss, &[3])]).unwrap();
    let got = vals(&batched[0]);
    for (k, s) in ss.iter().enumerate() {
        // d‖x‖²/ds with (A + sI) x = b: -2 xᵀ (A + sI)⁻¹ x.
        let shifted: Vec<f64> = (0..16)
            .map(|i| SPD[i] + if i % 5 == 0 { *s } else { 0.0 })
            .collect();
        let x = host_solve(&shifted, &B, false);
        let y = host_solve(&shifted, &x, false);
        let want = -2.0 * x.iter().zip(&y).map(|(a, b)| a * b).sum::<f64>();
        assert!(
            (got[k] - want).abs() < 1e-9 * (1.0 + want.abs()),
            "s={s}: {} vs {want}",
            got[k]
        );
    }
}
