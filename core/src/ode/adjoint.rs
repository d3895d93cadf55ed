//! Reverse mode by the continuous adjoint method, as `jax.experimental.ode`: the solve is a
//! `custom_vjp` whose backward pass integrates the augmented system
//! `(y, a, a_t, a_θ)' = (-f, aᵀ∂f/∂y, aᵀ∂f/∂t, aᵀ∂f/∂θ)` in reversed time between
//! consecutive requested times, adding each time's cotangent on the way.

use super::driver::{integrate, Looping, Settings};
use crate::ad::vjp;
use crate::array::Array;
use crate::error::Result;
use crate::eval::eval_program;
use crate::ops::control_flow::fori_loop;
use crate::ops::custom::custom_vjp;
use crate::ops::Axes;
use quabla_abi::qir::Program;
use quabla_abi::DType;
use std::sync::Arc;

/// `(ys, [steps, accepted, rejected])` with an adjoint-method VJP; `params` are the
/// field's extra inputs after `(y..., t)`.
pub(crate) fn solve(
    fp: Arc<Program>,
    y0: &[Array],
    t: &Array,
    params: &[Array],
    s: Settings,
) -> Result<(Vec<Array>, [Array; 4])> {
    let ny = y0.len();
    let np = params.len();
    let s = Arc::new(s);
    let forward = {
        let (fp, s) = (fp.clone(), s.clone());
        move |a: &[Array]| -> Result<Vec<Array>> {
            let (y0, t, params) = (&a[..ny], &a[ny], &a[ny + 1..]);
            let field = |y: &[Array], tt: &Array| {
                eval_program(&fp, &[y, std::slice::from_ref(tt), params].concat())
            };
            let (ys, stats, _) = integrate(&field, y0, t, &s, Looping::While)?;
            Ok([ys, stats.to_vec()].concat())
        }
    };
    let fwd = {
        let forward = forward.clone();
        move |a: &[Array]| -> Result<(Vec<Array>, Vec<Array>)> {
            let outs = forward(a)?;
            // Residuals: the trajectory, the times and the parameters.
            let mut res = outs[..ny].to_vec();
            res.extend(a[ny..].iter().cloned());
            Ok((outs, res))
        }
    };
    let bwd = move |res: &[Array], cts: &[Array]| -> Result<Vec<Array>> {
        backward(
            &fp,
            &s,
            &res[..ny],
            &res[ny],
            &res[ny + 1..ny + 1 + np],
            cts,
        )
    };
    let operands: Vec<Array> = y0
        .iter()
        .chain(std::iter::once(t))
        .chain(params)
        .cloned()
        .collect();
    let mut outs = custom_vjp(forward, fwd, bwd)(&operands)?;
    let stats = outs.split_off(ny);
    let [steps, accepted, rejected, reached] = <[Array; 4]>::try_from(stats).map_err(|s| {
        crate::Error::Internal(format!("the adjoint solve returned {} counts", s.len()))
    })?;
    Ok((outs, [steps, accepted, rejected, reached]))
}

/// Row `i` of a stacked trajectory.
fn row(a: &Array, i: &Array) -> Result<Array> {
    let zero = i.zeros_like()?;
    let mut starts = vec![i.clone()];
    starts.extend(vec![zero; a.ndim() - 1]);
    let refs: Vec<&Array> = starts.iter().collect();
    let mut sizes = a.shape().to_vec();
    sizes[0] = 1;
    let shape: Vec<isize> = a.shape()[1..].iter().map(|&d| d as isize).collect();
    a.dynamic_slice(&refs, &sizes)?.reshape(&shape)
}

/// Cotangents of `(y0..., t, float params...)` given those of the trajectory.
fn backward(
    fp: &Program,
    s: &Settings,
    ys: &[Array],
    t: &Array,
    params: &[Array],
    g: &[Array],
) -> Result<Vec<Array>> {
    let ny = ys.len();
    let n_out = t.shape()[0];
    let float_params: Vec<usize> = (0..params.len())
        .filter(|&i| params[i].dtype().is_float())
        .collect();
    let np = float_params.len();
    let f_at =
        |y: &[Array], tt: &Array| eval_program(fp, &[y, std::slice::from_ref(tt), params].concat());
    // The augmented field in reversed time τ = -t: state (y, a, a_t, a_θ).
    let augmented = |state: &[Array], tau: &Array| -> Result<Vec<Array>> {
        let (y, a) = (&state[..ny], &state[ny..2 * ny]);
        let tt = tau.neg()?;
        let mut primals: Vec<Array> = y.to_vec();
        primals.push(tt);
        primals.extend(params.iter().cloned());
        let (ydot, pullback) = vjp(|p: &[Array]| eval_program(fp, p), &primals)?;
        let cts = pullback.call(a)?;
        let mut out: Vec<Array> = ydot.iter().map(Array::neg).collect::<Result<_>>()?;
        out.extend(cts[..=ny].iter().cloned());
        out.extend(float_params.iter().map(|&i| cts[ny + 1 + i].clone()));
        Ok(out)
    };
    let last = t.filled_beside(&[], (n_out - 1) as i32, DType::I32)?;
    let mut init: Vec<Array> = g.iter().map(|gi| row(gi, &last)).collect::<Result<_>>()?;
    init.push(t.filled_beside(&[], 0, t.dtype())?);
    for &i in &float_params {
        init.push(params[i].zeros_like()?);
    }
    init.push(t.zeros_like()?);
    // carry: a (ny), a_t0, a_θ (np), t_bar [n_out]
    let body = |k: &Array, c: &[Array]| -> Result<Vec<Array>> {
        let i = (&k.neg()? + (n_out as i32 - 1))?;
        let prev = (&i - 1)?;
        let (a, a_t0, a_p, t_bar) = (&c[..ny], &c[ny], &c[ny + 1..ny + 1 + np], &c[ny + 1 + np]);
        let yi: Vec<Array> = ys.iter().map(|y| row(y, &i)).collect::<Result<_>>()?;
        let gi: Vec<Array> = g.iter().map(|x| row(x, &i)).collect::<Result<_>>()?;
        let ti = row(t, &i)?;
        // Moving the measurement time t_i changes y(t_i) by f(y_i, t_i).
        let fi = f_at(&yi, &ti)?;
        let mut tb = ti.zeros_like()?;
        for (f, gg) in fi.iter().zip(&gi) {
            tb = (&tb + &(f * gg)?.sum(Axes::All, false)?)?;
        }
        let a_t0 = (a_t0 - &tb)?;
        let t_bar = t_bar.dynamic_update_slice(&tb.reshape(&[1])?, &[&i])?;
        let span = Array::concatenate(
            &[
                &ti.neg()?.reshape(&[1])?,
                &row(t, &prev)?.neg()?.reshape(&[1])?,
            ],
            0,
        )?;
        let mut state: Vec<Array> = yi.clone();
        state.extend(a.iter().cloned());
        state.push(a_t0);
        state.extend(a_p.iter().cloned());
        let settings = Settings {
            method: s.method,
            rtol: s.rtol,
            atol: s.atol,
            max_steps: s.max_steps,
            checkpoints: s.checkpoints,
            dt0: None,
            save_step_times: false,
        };
        let (traj, ..) = integrate(&augmented, &state, &span, &settings, Looping::While)?;
        let one = t.filled_beside(&[], 1, DType::I32)?;
        let end: Vec<Array> = traj.iter().map(|x| row(x, &one)).collect::<Result<_>>()?;
        let mut next: Vec<Array> = end[ny..2 * ny]
            .iter()
            .zip(g)
            .map(|(e, gg)| e + &row(gg, &prev)?)
            .collect::<Result<_>>()?;
        next.extend(end[2 * ny..].iter().cloned());
        next.push(t_bar);
        Ok(next)
    };
    let out = fori_loop(0, (n_out - 1) as i32, &body, &init)?;
    let mut cts: Vec<Array> = out[..ny].to_vec();
    let zero_i = t.filled_beside(&[], 0, DType::I32)?;
    let t_bar = out[ny + 1 + np].dynamic_update_slice(&out[ny].reshape(&[1])?, &[&zero_i])?;
    cts.push(t_bar);
    cts.extend(out[ny + 1..ny + 1 + np].iter().cloned());
    Ok(cts)
}
