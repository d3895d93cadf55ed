//! The solvers' behaviour pinned, not only their accuracy: the adaptive ODE drivers'
//! accepted and rejected step counts and final states against an independent numpy
//! re-implementation of the same controller, and cg / gmres iteration counts against
//! scipy, on the same problems (goldens written once by `tests/tools/solver_reference.py`).

mod common;

use common::cpu;
use quabla::linalg::{cg, dense, gmres, SolveOptions};
use quabla::ode::{odeint, Gradient, Method, OdeOptions};
use quabla::test_util::{robertson, rosenbrock};
use quabla::{Array, Result};
use serde_json::Value;

fn goldens() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/goldens/solver_behaviour.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("the goldens are committed"))
        .expect("the goldens are JSON")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn vec_on(v: &[f64]) -> Array {
    Array::from_slice_on(&cpu(), v, &[v.len()]).unwrap()
}

fn entry(y: &Array, i: usize) -> Result<Array> {
    y.slice(&[i], &[i + 1], &[1])
}

fn van_der_pol(y: &[Array], _t: &Array, _a: &[Array]) -> Result<Vec<Array>> {
    let (p, q) = (entry(&y[0], 0)?, entry(&y[0], 1)?);
    let damping = (&(&(&p * &p)?.neg()? + 1.0)? * 5.0)?;
    let dq = (&(&damping * &q)? - &p)?;
    Ok(vec![Array::concatenate(&[&q, &dq], 0)?])
}

fn forced_decay(y: &[Array], t: &Array, _a: &[Array]) -> Result<Vec<Array>> {
    let force = (t * 3.0)?.sin()?.reshape(&[1])?;
    Ok(vec![(&(&y[0] * -2.0)? + &force)?])
}

#[test]
fn adaptive_steps_match_an_independent_controller_step_for_step() {
    let g = goldens();
    let mut failures = Vec::new();
    for run in g["ode"].as_array().unwrap() {
        let name = run["problem"].as_str().unwrap();
        let method = match run["method"].as_str().unwrap() {
            "dopri5" => Method::Dopri5,
            "tsit5" => Method::Tsit5,
            _ => Method::Rosenbrock23,
        };
        let field: quabla::ode::VectorField = match name {
            "van_der_pol" => &van_der_pol,
            "forced_decay" => &forced_decay,
            _ => &robertson,
        };
        let opts = OdeOptions {
            method,
            rtol: run["rtol"].as_f64().unwrap(),
            atol: run["atol"].as_f64().unwrap(),
            gradient: Gradient::ForwardOnly,
            save_step_times: true,
            ..Default::default()
        };
        let sol = odeint(
            field,
            &[vec_on(&floats(&run["y0"]))],
            &vec_on(&floats(&run["t"])),
            &[],
            &opts,
        )
        .unwrap();
        let count = |a: &Array| a.item::<i32>().unwrap() as i64;
        let (acc, rej) = (count(&sol.stats.accepted), count(&sol.stats.rejected));
        let want = (
            run["accepted"].as_i64().unwrap(),
            run["rejected"].as_i64().unwrap(),
        );
        let ys = sol.ys[0].to_vec::<f64>().unwrap();
        let d = ys.len() / 2;
        let y_end = &ys[d..];
        let want_end = floats(&run["y_end"]);
        // The same step sequence agrees to rounding; another one differs by the local
        // errors the tolerances allow (orders of magnitude more).
        let far = y_end
            .iter()
            .zip(&want_end)
            .any(|(a, b)| (a - b).abs() > 1e-9 * b.abs().max(1e-3));
        let times = sol
            .stats
            .step_times
            .as_ref()
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        let want_times = floats(&run["accepted_times"]);
        // Step sizes follow the error estimate, a difference of nearly equal stage sums
        // that keeps only a few digits at tight tolerances: the two implementations' steps
        // agree to about 1e-8 relative, a changed controller moves them by percents.
        let first_apart = want_times
            .iter()
            .zip(&times)
            .position(|(a, b)| (a - b).abs() > 1e-6 * a.abs().max(1e-3));
        let padded = times[want_times.len().min(times.len())..]
            .iter()
            .all(|v| v.is_nan());
        if (acc, rej) != want || far || first_apart.is_some() || !padded {
            failures.push(format!(
                "{name} by {:?}: accepted/rejected {acc}/{rej}, reference {}/{}; y_end {y_end:?}, \
                 reference {want_end:?}; accepted times first differ at step {first_apart:?}",
                method, want.0, want.1
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn matrix(v: &Value) -> Array {
    let rows = v.as_array().unwrap();
    let n = rows.len();
    let flat: Vec<f64> = rows.iter().flat_map(floats).collect();
    Array::from_slice_on(&cpu(), &flat, &[n, flat.len() / n]).unwrap()
}

#[test]
fn krylov_iteration_counts_match_scipy() {
    let g = goldens();
    let mut failures = Vec::new();
    for case in g["krylov"].as_array().unwrap() {
        let a = matrix(&case["a"]);
        let b = vec_on(&floats(&case["b"]));
        let solver = case["solver"].as_str().unwrap();
        let jacobi = case["jacobi"].as_bool().unwrap();
        let restart = case["restart"].as_u64().unwrap_or(20) as usize;
        let want = case["iterations"].as_u64().unwrap() as usize;
        let diag = {
            let n = a.shape()[0];
            let v = a.to_vec::<f64>().unwrap();
            vec_on(&(0..n).map(|i| v[i * n + i]).collect::<Vec<_>>())
        };
        let precondition = |r: &[Array]| Ok(vec![(&r[0] / &diag)?]);
        let op = dense(&a);
        // The count is the smallest iteration limit (cg: iterations; gmres: restart
        // cycles) under which the solver reports convergence.
        let info_at = |maxiter: usize| -> (i32, Vec<f64>) {
            let opts = SolveOptions {
                tol: case["tol"].as_f64().unwrap(),
                atol: 0.0,
                maxiter: Some(maxiter),
                restart,
            };
            let m: Option<quabla::linalg::LinearFn> =
                if jacobi { Some(&precondition) } else { None };
            let (x, info) = match solver {
                "cg" => cg(&op, std::slice::from_ref(&b), None, m, &opts),
                _ => gmres(&op, std::slice::from_ref(&b), None, m, &opts),
            }
            .unwrap();
            (info.item::<i32>().unwrap(), x[0].to_vec::<f64>().unwrap())
        };
        let (at, x) = info_at(want);
        let (below, _) = info_at(want - 1);
        let x_ref = floats(&case["x"]);
        let err = x
            .iter()
            .zip(&x_ref)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        if at != 0 || below == 0 || err > 1e-6 {
            failures.push(format!(
                "{solver} (jacobi {jacobi}, restart {restart}): info {at} at scipy's count \
                 {want}, {below} at one less; max |x - x_scipy| {err:e}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn lbfgs_steps_match_a_scalar_reference_evaluation_for_evaluation() {
    use quabla::optim::Lbfgs;
    let g = goldens();
    let mut failures = Vec::new();
    for run in g["lbfgs"].as_array().unwrap() {
        let opt = Lbfgs {
            memory: run["memory"].as_u64().unwrap() as usize,
            ..Default::default()
        };
        let loss = |p: &[Array]| -> Result<Array> { Ok(rosenbrock(p)?.remove(0)) };
        let mut params = vec![vec_on(&floats(&run["x0"]))];
        let mut state = opt.init(&params).unwrap();
        for (k, want) in run["steps"].as_array().unwrap().iter().enumerate() {
            let s = opt.step(&loss, &params, &state).unwrap();
            let evals = s.evaluations.item::<i32>().unwrap() as i64;
            let (f, alpha) = (
                s.value.item::<f64>().unwrap(),
                s.step_size.item::<f64>().unwrap(),
            );
            let (wf, wa) = (
                want["value"].as_f64().unwrap(),
                want["step_size"].as_f64().unwrap(),
            );
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-7 * b.abs() + 1e-14;
            if evals != want["evaluations"].as_i64().unwrap() || !close(f, wf) || !close(alpha, wa)
            {
                failures.push(format!(
                    "n={} step {k}: {evals} evaluations, value {f:e}, step {alpha:e}; reference \
                     {}, {wf:e}, {wa:e}",
                    params[0].size(),
                    want["evaluations"]
                ));
                break;
            }
            (params, state) = (s.params, s.state);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The step times come out the same through the reverse-mode loop (a `scan` with skipped
/// iterations) as through the `while` loop, and the adjoint method refuses to record them.
#[test]
fn step_times_agree_between_loop_forms() {
    let y0 = vec_on(&[2.0, 0.0]);
    let t = vec_on(&[0.0, 3.0]);
    let solve = |gradient| {
        let opts = OdeOptions {
            rtol: 1e-6,
            atol: 1e-8,
            max_steps: 256,
            gradient,
            save_step_times: true,
            ..Default::default()
        };
        odeint(&van_der_pol, std::slice::from_ref(&y0), &t, &[], &opts)
    };
    let bits = |g| -> Vec<u64> {
        let s = solve(g).unwrap();
        let v = s.stats.step_times.unwrap().to_vec::<f64>().unwrap();
        v.iter().map(|x| x.to_bits()).collect()
    };
    let forward = bits(Gradient::ForwardOnly);
    assert_eq!(forward.len(), 256);
    assert!(f64::from_bits(forward[0]) > 0.0);
    assert_eq!(forward, bits(Gradient::Direct));
    let e = solve(Gradient::Adjoint).err().expect("the adjoint refuses");
    assert!(e.to_string().contains("save_step_times"), "{e}");
}
