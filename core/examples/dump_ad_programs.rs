//! Writes the QIR that Quabla's transformations emit for a set of representative functions
//! to `tests/conformance/tools/ad_programs/`, where the golden generator picks them up and
//! computes their expected outputs independently with numpy (`cargo xtask goldens`).

use quabla::ad::{grad, hvp, jvp, vjp};
use quabla::lax::{conv_general_dilated, scan, ConvOptions, Padding};
use quabla::qir::Program;
use quabla::{call_program, make_program, passes, vmap, Array, Axes, DType, Result};
use std::path::PathBuf;

fn zeros(shape: &[usize], d: DType) -> Array {
    Array::zeros(shape, d).unwrap()
}

fn rosenbrock(x: &Array) -> Result<Array> {
    let n = x.shape()[0];
    let head = x.slice(&[0], &[n - 1], &[1])?;
    let tail = x.slice(&[1], &[n], &[1])?;
    let t1 = (&tail - &(&head * &head)?)?;
    let t2 = (head.neg()? + 1.0)?;
    ((&(&t1 * &t1)? * 100.0)? + &(&t2 * &t2)?)?.sum(Axes::All, false)
}

/// `odeint`'s states at t = 0, 0.5, 1 from `a[0]` with parameters `a[1]`, and the gradient
/// of the last state's sum with respect to the parameters.
fn states_and_gradient(
    field: quabla::ode::VectorField,
    opts: &quabla::ode::OdeOptions,
    a: &[Array],
) -> Result<Vec<Array>> {
    let t = Array::from_slice_on(a[0].device(), &[0.0f64, 0.5, 1.0], &[3])?;
    let ys = |q: &[Array]| -> Result<Vec<Array>> {
        Ok(quabla::ode::odeint(field, &q[..1], &t, &q[1..2], opts)?.ys)
    };
    let last = |q: &[Array]| {
        let n = q[0].shape()[0];
        Ok(vec![ys(q)?[0]
            .slice(&[2, 0], &[3, n], &[1, 1])?
            .sum(Axes::All, false)?])
    };
    let g = grad(last, &[1])(a)?;
    Ok(vec![ys(a)?.remove(0), g[0].clone()])
}

const COND: &str = "program(%0: i32[], %1: f64[4]) {
  %2 = cond(%0, %1) : f64[4] {
    branch(%0: f64[4]) {
      %1 = exp(%0) : f64[4]
      return %1
    }
    branch(%0: f64[4]) {
      %1 = sin(%0) : f64[4]
      %2 = mul(%1, %0) : f64[4]
      return %2
    }
  }
  return %2
}
";

const WHILE: &str = "program(%0: f64[3], %1: i32[]) {
  %2 = constant[value=[0]]() : i32[]
  %3, %4, %5 = while(%2, %0, %1) : i32[], f64[3], i32[] {
    cond(%0: i32[], %1: f64[3], %2: i32[]) {
      %3 = compare[dir=lt](%0, %2) : bool[]
      return %3
    }
    body(%0: i32[], %1: f64[3], %2: i32[]) {
      %3 = constant[value=[1]]() : i32[]
      %4 = add(%0, %3) : i32[]
      %5 = sin(%1) : f64[3]
      %6 = add(%1, %5) : f64[3]
      return %4, %6, %2
    }
  }
  return %4
}
";

/// Stride (2, 1), `SAME` padding, kernel dilation (1, 2), two feature groups.
fn grouped_conv() -> ConvOptions {
    let mut o = ConvOptions::new(2);
    o.window_strides = vec![2, 1];
    o.padding = Padding::Same;
    o.rhs_dilation = vec![1, 2];
    o.feature_group_count = 2;
    o
}

/// Stride (2, 1), pads ((1, 1), (0, 1)).
fn strided_conv() -> ConvOptions {
    let mut o = ConvOptions::new(2);
    o.window_strides = vec![2, 1];
    o.padding = Padding::Explicit(vec![(1, 1), (0, 1)]);
    o
}

fn mlp_loss(a: &[Array]) -> Result<Vec<Array>> {
    let h = a[2].matmul(&a[0])?.tanh()?;
    let d = (h.matmul(&a[1])? - &a[3])?;
    Ok(vec![(&d * &d)?.sum(Axes::All, false)?])
}

fn main() -> Result<()> {
    quabla::runtime::register_static("cpu", quabla_cpu::backend_module);
    let out =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance/tools/ad_programs");
    std::fs::create_dir_all(&out).map_err(|e| quabla::Error::Value(e.to_string()))?;
    let f64v = |s: &[usize]| zeros(s, DType::F64);
    let mut programs: Vec<(&str, Program)> = Vec::new();

    programs.push((
        "grad_sin_times_x",
        make_program(
            grad(
                |a: &[Array]| Ok(vec![(a[0].sin()? * &a[0])?.sum(Axes::All, false)?]),
                &[0],
            ),
            &[f64v(&[5])],
        )?,
    ));
    programs.push((
        "jvp_tanh_matmul",
        make_program(
            |a: &[Array]| {
                let (y, t) = jvp(
                    |b: &[Array]| Ok(vec![b[0].matmul(&b[1])?.tanh()?]),
                    &a[..2],
                    &[a[2].clone(), a[1].zeros_like()?],
                )?;
                Ok([y, t].concat())
            },
            &[f64v(&[3, 4]), f64v(&[4, 2]), f64v(&[3, 4])],
        )?,
    ));
    programs.push((
        "vjp_softmax",
        make_program(
            |a: &[Array]| {
                let (_, pb) = vjp(
                    |b: &[Array]| {
                        let e = b[0].exp()?;
                        Ok(vec![(&e / &e.sum(Axes::All, true)?)?])
                    },
                    &a[..1],
                )?;
                pb.call(&a[1..])
            },
            &[f64v(&[5]), f64v(&[5])],
        )?,
    ));
    programs.push((
        "vmap_matvec",
        make_program(
            vmap(
                |a: &[Array]| Ok(vec![a[0].matmul(&a[1])?]),
                &[None, Some(0)],
                &[],
            ),
            &[f64v(&[3, 4]), f64v(&[6, 4])],
        )?,
    ));
    programs.push((
        "vmap_grad_mlp",
        make_program(
            vmap(
                grad(mlp_loss, &[0, 1]),
                &[None, None, Some(0), Some(0)],
                &[],
            ),
            &[f64v(&[3, 4]), f64v(&[4, 1]), f64v(&[5, 3]), f64v(&[5, 1])],
        )?,
    ));
    programs.push((
        "hvp_rosenbrock",
        make_program(
            |a: &[Array]| hvp(|b: &[Array]| Ok(vec![rosenbrock(&b[0])?]), &a[..1], &a[1..]),
            &[f64v(&[6]), f64v(&[6])],
        )?,
    ));
    programs.push((
        "grad_cond",
        make_program(
            grad(
                |a: &[Array]| {
                    Ok(vec![
                        call_program(&Program::parse(COND)?, a)?[0].sum(Axes::All, false)?
                    ])
                },
                &[1],
            ),
            &[Array::zeros(&[], DType::I32)?, f64v(&[4])],
        )?,
    ));
    programs.push((
        "jvp_while",
        make_program(
            |a: &[Array]| {
                let (y, t) = jvp(
                    |b: &[Array]| call_program(&Program::parse(WHILE)?, b),
                    &a[..2],
                    &[a[2].clone(), a[1].clone()],
                )?;
                Ok([y, t].concat())
            },
            &[f64v(&[3]), Array::zeros(&[], DType::I32)?, f64v(&[3])],
        )?,
    ));
    programs.push((
        "grad_cumprod",
        make_program(
            grad(
                |a: &[Array]| Ok(vec![a[0].cumprod(0, false)?.sum(Axes::All, false)?]),
                &[0],
            ),
            &[f64v(&[6])],
        )?,
    ));
    programs.push((
        "grad_max_ties",
        make_program(
            grad(
                |a: &[Array]| {
                    Ok(vec![a[0]
                        .max(Axes::Some(&[1]), false)?
                        .sum(Axes::All, false)?])
                },
                &[0],
            ),
            &[f64v(&[3, 4])],
        )?,
    ));
    programs.push((
        "grad_take",
        make_program(
            grad(
                |a: &[Array]| {
                    let idx = Array::from_slice_on(a[0].device(), &[3i32, 0, 3, 9, -2], &[5])?;
                    Ok(vec![(a[0].take(&idx, 0)?.sin()?).sum(Axes::All, false)?])
                },
                &[0],
            ),
            &[f64v(&[6])],
        )?,
    ));
    programs.push((
        "conv2d_grouped_lowered",
        make_program(
            |a: &[Array]| Ok(vec![conv_general_dilated(&a[0], &a[1], &grouped_conv())?]),
            &[f64v(&[1, 4, 6, 5]), f64v(&[4, 2, 3, 3])],
        )?,
    ));
    programs.push((
        "grad_conv2d_lowered",
        make_program(
            grad(
                |a: &[Array]| {
                    let y = conv_general_dilated(&a[0], &a[1], &strided_conv())?;
                    Ok(vec![(&y * &a[2])?.sum(Axes::All, false)?])
                },
                &[0, 1],
            ),
            &[
                f64v(&[2, 3, 5, 4]),
                f64v(&[2, 3, 3, 2]),
                f64v(&[2, 2, 3, 4]),
            ],
        )?,
    ));
    programs.push((
        "grad_sort_lowered",
        make_program(
            grad(
                |a: &[Array]| Ok(vec![(&a[0].sort(1, false)? * &a[1])?.sum(Axes::All, false)?]),
                &[0],
            ),
            &[f64v(&[3, 5]), f64v(&[3, 5])],
        )?,
    ));
    programs.push((
        "vmap_while_trip_counts",
        make_program(
            vmap(
                |a: &[Array]| call_program(&Program::parse(WHILE)?, a),
                &[Some(0), Some(0)],
                &[],
            ),
            &[f64v(&[4, 3]), Array::zeros(&[4], DType::I32)?],
        )?,
    ));
    // Scans are core-level: what backends run is their lowering to while + dynamic slices.
    let dev = quabla::device("cpu")?;
    let rnn = |a: &[Array]| -> Result<Vec<Array>> {
        let step = |c: &[Array], x: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            let h = (a[0].matmul(&c[0])? + &x[0])?.tanh()?;
            Ok((vec![h.clone()], vec![h.sum(Axes::All, false)?]))
        };
        let (c, y) = scan(&step, &a[1..2], &a[2..3], None, false, 1)?;
        Ok([c, y].concat())
    };
    let rnn_args = [f64v(&[3, 3]), f64v(&[3]), f64v(&[5, 3])];
    programs.push((
        "scan_rnn_lowered",
        passes::lower(&make_program(rnn, &rnn_args)?, &dev)?,
    ));
    let rnn_loss = move |a: &[Array]| Ok(vec![rnn(a)?[1].sum(Axes::All, false)?]);
    programs.push((
        "grad_scan_rnn_lowered",
        passes::lower(&make_program(grad(rnn_loss, &[0, 1, 2]), &rnn_args)?, &dev)?,
    ));
    let fori = |a: &[Array]| -> Result<Vec<Array>> {
        let body =
            |i: &Array, c: &[Array]| Ok(vec![(&c[0] + &(&a[0] * &i.astype(DType::F64)?.sin()?)?)?]);
        quabla::lax::fori_loop(0, 5, &body, &[a[0].zeros_like()?])
    };
    programs.push((
        "fori_lowered",
        passes::lower(&make_program(fori, &[f64v(&[3])])?, &dev)?,
    ));
    let fori_loss = move |a: &[Array]| Ok(vec![fori(a)?[0].sum(Axes::All, false)?]);
    programs.push((
        "grad_fori_lowered",
        passes::lower(&make_program(grad(fori_loss, &[0]), &[f64v(&[3])])?, &dev)?,
    ));
    let capture = |a: &[Array]| -> Result<Vec<Array>> {
        let (w, x) = (&a[0], &a[1]);
        let t = |b: &[Array]| Ok(vec![(w * &b[0])?.sin()?]);
        let e = |_: &[Array]| Ok(vec![(w * w)?]);
        Ok(vec![quabla::lax::cond(
            &x.gt(0.0)?,
            &t,
            &e,
            std::slice::from_ref(x),
        )?
        .remove(0)])
    };
    programs.push((
        "grad_cond_capture_lowered",
        passes::lower(
            &make_program(grad(capture, &[0]), &[f64v(&[]), f64v(&[])])?,
            &dev,
        )?,
    ));
    // Adam / AdamW(+ clip_by_global_norm + schedule) training trajectories: 120 steps on a
    // quadratic, as one scan whose ys are the parameters after each step.
    let trajectory = |opt: quabla::optim::Optimizer| {
        move |a: &[Array]| -> Result<Vec<Array>> {
            let (p0, t, w) = (&a[0], &a[1], &a[2]);
            let loss = |q: &[Array]| {
                let d = (&q[0] - t)?;
                Ok(vec![(&(&d * &d)? * w)?.sum(Axes::All, false)?])
            };
            let state = opt.init(std::slice::from_ref(p0))?;
            let ns = state.len();
            let step = |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
                let g = grad(loss, &[0])(&c[..1])?;
                let (u, s) = opt.update(&g[..], &c[1..1 + ns], &c[..1])?;
                let p = quabla::optim::apply_updates(&c[..1], &u)?;
                let mut carry = p.clone();
                carry.extend(s);
                Ok((carry, p))
            };
            let mut init = vec![p0.clone()];
            init.extend(state);
            Ok(scan(&step, &init, &[], Some(120), false, 1)?.1)
        }
    };
    let f32v = |s: &[usize]| zeros(s, DType::F32);
    let adam_args = [f32v(&[4]), f32v(&[4]), f32v(&[4])];
    programs.push((
        "adam_quadratic",
        passes::lower(
            &make_program(trajectory(quabla::optim::adam(1e-2)), &adam_args)?,
            &dev,
        )?,
    ));
    let adamw_clip = quabla::optim::chain(vec![
        quabla::optim::clip_by_global_norm(1.0),
        quabla::optim::adamw(
            quabla::optim::LearningRate::Schedule(quabla::optim::exponential_decay(
                2e-2, 20, 0.5, false,
            )),
            1e-2,
        ),
    ]);
    programs.push((
        "adamw_clip_schedule_quadratic",
        passes::lower(&make_program(trajectory(adamw_clip), &adam_args)?, &dev)?,
    ));
    // Adam on a small MLP regression (2 -> 8 tanh -> 1, 16 points): 100 steps as one scan
    // whose ys are the loss before each step.
    let mlp_adam = |a: &[Array]| -> Result<Vec<Array>> {
        let (x, y) = (&a[4], &a[5]);
        let loss = |q: &[Array]| {
            let h = (&x.matmul(&q[0])? + &q[1])?.tanh()?;
            let r = (&(&h.matmul(&q[2])? + &q[3])? - y)?;
            Ok(vec![(&r * &r)?.mean(Axes::All, false)?])
        };
        let opt = quabla::optim::adam(1e-2);
        let state = opt.init(&a[..4])?;
        let ns = state.len();
        let step = |c: &[Array], _: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            let vg = quabla::ad::value_and_grad(loss, &[0, 1, 2, 3], false)(&c[..4])?;
            let (u, s) = opt.update(&vg[1..], &c[4..4 + ns], &c[..4])?;
            let mut carry = quabla::optim::apply_updates(&c[..4], &u)?;
            carry.extend(s);
            Ok((carry, vec![vg[0].clone()]))
        };
        let mut init = a[..4].to_vec();
        init.extend(state);
        Ok(scan(&step, &init, &[], Some(100), false, 1)?.1)
    };
    let mlp_args = [
        f32v(&[2, 8]),
        f32v(&[8]),
        f32v(&[8, 1]),
        f32v(&[1]),
        f32v(&[16, 2]),
        f32v(&[16, 1]),
    ];
    programs.push((
        "adam_mlp_regression",
        passes::lower(&make_program(mlp_adam, &mlp_args)?, &dev)?,
    ));
    // The solvers as every backend sees them (while loops, dynamic slices, conds): CG on a
    // 4x4 SPD system with the gradient of c·x in b (one transposed solve), and dopri5 on
    // y' = -k y through the solver (a scan) with dy(1)/dk.
    let cg_grad = |a: &[Array]| -> Result<Vec<Array>> {
        let opts = quabla::linalg::SolveOptions {
            tol: 1e-13,
            ..Default::default()
        };
        let solve = |q: &[Array]| -> Result<Array> {
            let op = quabla::linalg::dense(&q[0]);
            Ok(quabla::linalg::cg(&op, &q[1..2], None, None, &opts)?
                .0
                .remove(0))
        };
        let loss = |q: &[Array]| Ok(vec![(&solve(q)? * &q[2])?.sum(Axes::All, false)?]);
        let g = grad(loss, &[1])(a)?;
        Ok(vec![solve(a)?, g[0].clone()])
    };
    let f64v = |s: &[usize]| zeros(s, DType::F64);
    programs.push((
        "solver_cg_grad",
        passes::lower(
            &make_program(cg_grad, &[f64v(&[4, 4]), f64v(&[4]), f64v(&[4])])?,
            &dev,
        )?,
    ));
    let decay = |y: &[Array], _t: &Array, k: &[Array]| Ok(vec![(&y[0] * &k[0])?.neg()?]);
    let ode = move |a: &[Array]| -> Result<Vec<Array>> {
        let opts = quabla::ode::OdeOptions {
            rtol: 1e-10,
            atol: 1e-10,
            max_steps: 200,
            ..Default::default()
        };
        states_and_gradient(&decay, &opts, a)
    };
    programs.push((
        "solver_odeint_decay_grad",
        passes::lower(&make_program(ode, &[f64v(&[1]), f64v(&[])])?, &dev)?,
    ));
    // y' = -k A y by rosenbrock23: an LU factorisation and triangular solves every step,
    // inside the solver's while loop (the loop IR's linear-algebra calls).
    let linear = |y: &[Array], _t: &Array, k: &[Array]| -> Result<Vec<Array>> {
        let a = Array::from_slice_on(y[0].device(), &[2.0f64, 1.0, 1.0, 3.0], &[2, 2])?;
        Ok(vec![(&a.matmul(&y[0])? * &k[0])?.neg()?])
    };
    let stiff = move |a: &[Array]| -> Result<Vec<Array>> {
        let opts = quabla::ode::OdeOptions {
            method: quabla::ode::Method::Rosenbrock23,
            rtol: 1e-8,
            atol: 1e-10,
            max_steps: 4096,
            ..Default::default()
        };
        states_and_gradient(&linear, &opts, a)
    };
    programs.push((
        "solver_rosenbrock_linear_grad",
        passes::lower(&make_program(stiff, &[f64v(&[2]), f64v(&[])])?, &dev)?,
    ));
    for (name, p) in &programs {
        std::fs::write(out.join(format!("{name}.qir")), p.to_text())
            .map_err(|e| quabla::Error::Value(e.to_string()))?;
    }
    println!("wrote {} programs to {}", programs.len(), out.display());
    Ok(())
}
