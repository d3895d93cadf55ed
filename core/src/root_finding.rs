//! Root finding with implicit derivatives: `newton` and `custom_root`.
//!
//! The root `x*(θ)` of `f(x, θ) = 0` is found by Newton-Krylov iterations (each step solves
//! `J dx = -f` by GMRES with `J v` from forward mode, so no Jacobian is ever formed) or by a
//! user solver, and differentiated by the implicit function theorem:
//! `dx* = -J⁻¹ (∂f/∂θ · dθ)`, one linear solve, never through the iterations. The tangent
//! solve is a `linear_solve` whose operator depends on `x*` and `θ`, so reverse mode, `vmap`
//! and use inside loops follow from the primitives' rules; higher derivatives apply the rule
//! again, to fourth order (`RULE_DEPTH`).

use crate::ad::jvp;
use crate::array::Array;
use crate::error::{Error, Result};
use crate::linalg::{gmres, SolveOptions};
use crate::ops::control_flow::while_loop;
use crate::ops::custom::custom_jvp;
use crate::ops::Axes;
use crate::trace::trace_function_capturing;
use quabla_abi::qir::Program;
use quabla_abi::{DType, TensorType};
use std::sync::Arc;

/// Stopping rule of [`newton`].
#[derive(Clone, Debug, Default)]
pub struct NewtonOptions {
    /// Stop when the Newton step satisfies `‖dx‖∞ <= tol·(1 + ‖x‖∞)`. Default: the square
    /// root of the dtype's machine epsilon (1.5e-8 in f64, 3.5e-4 in f32); since Newton's
    /// method converges quadratically, the error after such a step is near rounding level.
    pub tol: Option<f64>,
    /// Iteration limit (default 50).
    pub maxiter: Option<usize>,
}

/// A residual function `(x, args) -> f(x, args)`.
pub type Residual<'a> = &'a dyn Fn(&[Array], &[Array]) -> Result<Vec<Array>>;

/// Solves `f(x, args) = 0` for `x` by Newton's method from `x0`, as a `custom_root`.
///
/// `f` maps `x` (a list of arrays) and `args` to residuals shaped like `x`; it may close over
/// traced values, which are differentiated like `args`. Returns `(x, info)` with `info` an
/// i32 scalar: 0 when converged, else the iterations run. Derivatives with respect to `args`
/// (and captured values) come from the implicit function theorem, forward and reverse, to
/// fourth order; `x0` gets none. Under `vmap` each element stops on its own.
///
/// ```no_run
/// # use quabla::{newton, root_finding::NewtonOptions, Array};
/// // x³ = a, so x = a^(1/3).
/// let a = Array::from_slice(&[8.0f64], &[])?;
/// let x0 = Array::from_slice(&[1.0f64], &[])?;
/// let cube = |x: &[Array], a: &[Array]| Ok(vec![(&(&(&x[0] * &x[0])? * &x[0])? - &a[0])?]);
/// let (x, info) = newton(&cube, &[x0], &[a], &NewtonOptions::default())?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn newton(
    f: Residual,
    x0: &[Array],
    args: &[Array],
    opts: &NewtonOptions,
) -> Result<(Vec<Array>, Array)> {
    let mut out = root_call(f, x0, args, Primal::Newton(opts.clone()), "newton")?;
    let info = out
        .pop()
        .ok_or_else(|| Error::Internal("newton lost its info".into()))?;
    Ok((out, info))
}

/// A root of `f(x, args) = 0` found by `solve`, with implicit derivatives, as
/// `jax.lax.custom_root`: `solve(g, x0)` gets the residual `g(x) = f(x, args)` and the
/// initial guess and returns the root (by any method: bisection, fixed-point iteration, a
/// library call); it is never differentiated. Derivatives with respect to `args` (and
/// values `f` captures) solve `J dx = -∂f/∂args · dargs` by GMRES with `J v` from forward
/// mode, to fourth order, as [`newton`]'s.
///
/// ```no_run
/// # use std::sync::Arc;
/// # use quabla::{root_finding::custom_root, Array};
/// // x = cos(a x) by fixed-point iteration.
/// let f = |x: &[Array], a: &[Array]| Ok(vec![(&x[0] - &(&x[0] * &a[0])?.cos()?)?]);
/// let solve = Arc::new(|g: quabla::root_finding::FixedResidual, x0: &[Array]| {
///     let mut x = x0.to_vec();
///     for _ in 0..100 {
///         let r = g(&x)?;
///         x = vec![(&x[0] - &r[0])?];
///     }
///     Ok(x)
/// });
/// let a = Array::from_slice(&[0.5f64], &[])?;
/// let x = custom_root(&f, &[Array::from_slice(&[0.0f64], &[])?], &[a], solve)?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn custom_root(
    f: Residual,
    x0: &[Array],
    args: &[Array],
    solve: RootSolver,
) -> Result<Vec<Array>> {
    root_call(f, x0, args, Primal::Custom(solve), "custom_root")
}

fn check_root(x: &[Array], x0: &[Array]) -> Result<()> {
    let same = x.len() == x0.len()
        && x.iter()
            .zip(x0)
            .all(|(a, b)| a.tensor_type() == b.tensor_type());
    if !same {
        return Err(Error::Shape(
            "custom_root: solve must return a root shaped like x0".into(),
        ));
    }
    Ok(())
}

/// Traces `f` (turning its captures into parameters) and calls the root function.
fn root_call(
    f: Residual,
    x0: &[Array],
    args: &[Array],
    primal: Primal,
    what: &str,
) -> Result<Vec<Array>> {
    let first = x0
        .first()
        .ok_or_else(|| Error::Value(format!("{what} needs an initial guess")))?;
    if let Some(bad) = x0.iter().find(|x| !x.dtype().is_float()) {
        return Err(Error::DType(format!(
            "{what}: x0 must be floating point, got {}",
            bad.tensor_type()
        )));
    }
    let nx = x0.len();
    let mut types: Vec<TensorType> = x0.iter().map(|a| a.tensor_type().clone()).collect();
    types.extend(args.iter().map(|a| a.tensor_type().clone()));
    let (fp, caps) =
        trace_function_capturing(first.device(), &types, |a: &[Array]| f(&a[..nx], &a[nx..]))?;
    if fp.output_types()[..] != types[..nx] {
        return Err(Error::Shape(format!(
            "{what}: f must return residuals shaped like x {}, got {}",
            crate::ops::show_types(&types[..nx]),
            crate::ops::show_types(&fp.output_types())
        )));
    }
    let root = RootFn {
        f: Arc::new(fp),
        nx,
        primal,
    };
    let operands: Vec<Array> = x0.iter().chain(args).chain(&caps).cloned().collect();
    root.call(0)(&operands)
}

/// The residual with the parameters fixed, `x -> f(x, params)`, as a [`RootSolver`] gets it:
/// owned (on the solving thread), so that a binding may hand it to another language's
/// solver (the parameters are values of the trace the solve is in; using it after the solve
/// returns is an error about a traced array, never a dangling call).
pub type FixedResidual = std::rc::Rc<dyn Fn(&[Array]) -> Result<Vec<Array>>>;

/// Finds a root of `g` (the residual with the parameters fixed) from `x0`.
pub type RootSolver = Arc<dyn Fn(FixedResidual, &[Array]) -> Result<Vec<Array>>>;

/// How the primal root is found: Newton-Krylov (returning `info` too) or a user solver.
#[derive(Clone)]
enum Primal {
    Newton(NewtonOptions),
    Custom(RootSolver),
}

/// `f` as a program over `(x..., params...)`, with everything a root call needs.
#[derive(Clone)]
struct RootFn {
    f: Arc<Program>,
    nx: usize,
    primal: Primal,
}

/// Derivative orders with exact implicit rules (a fifth would differentiate the iterations).
const RULE_DEPTH: usize = 4;

type Call = Box<dyn Fn(&[Array]) -> Result<Vec<Array>>>;

impl RootFn {
    fn residual(&self, x: &[Array], params: &[Array]) -> Result<Vec<Array>> {
        crate::eval::eval_program(&self.f, &[x, params].concat())
    }

    /// `J v` at `x`, with `J = ∂f/∂x`.
    fn jacobian_times(&self, x: &[Array], params: &[Array], v: &[Array]) -> Result<Vec<Array>> {
        Ok(jvp(|a: &[Array]| self.residual(a, params), x, v)?.1)
    }

    /// The custom_jvp function `(x0..., params...) -> (x*..., info)`. Its rule finds the
    /// root through the same function one level deeper, so that differentiating the rule
    /// applies the rule again; rules are traced when the function is, so the nesting stops
    /// at [`RULE_DEPTH`], below which the iterations themselves would be differentiated.
    fn call(&self, depth: usize) -> Call {
        let primal = self.clone();
        let iterate = move |a: &[Array]| {
            let (x0, params) = (&a[..primal.nx], &a[primal.nx..]);
            match &primal.primal {
                Primal::Newton(opts) => primal.iterate(x0, params, opts),
                Primal::Custom(solve) => {
                    let (f, params) = (primal.clone(), params.to_vec());
                    let g: FixedResidual =
                        std::rc::Rc::new(move |x: &[Array]| f.residual(x, &params));
                    let x = solve(g, x0)?;
                    check_root(&x, x0)?;
                    Ok(x)
                }
            }
        };
        if depth >= RULE_DEPTH {
            return Box::new(iterate);
        }
        let rule = self.clone();
        Box::new(custom_jvp(iterate, move |p: &[Array], t: &[Array]| {
            rule.tangent(p, t, depth)
        }))
    }

    /// Newton-Krylov iterations from `x0`.
    fn iterate(&self, x0: &[Array], params: &[Array], opts: &NewtonOptions) -> Result<Vec<Array>> {
        let nx = self.nx;
        let eps = crate::ops::machine_eps(x0[0].dtype());
        let tol = opts.tol.unwrap_or(eps.sqrt());
        if tol.is_nan() || tol < 0.0 {
            return Err(Error::Value(format!(
                "newton: tol must be a non-negative number, got {tol}"
            )));
        }
        let maxiter = opts.maxiter.unwrap_or(50) as i32;
        let inner = jacobian_solve_options(x0);
        let k0 = x0[0].filled_beside(&[], 0, DType::I32)?;
        let not_done = x0[0].filled_beside(&[], true, DType::Bool)?;
        let init = [x0.to_vec(), vec![k0, not_done]].concat();
        let keep_going = |c: &[Array]| Ok(vec![c[nx + 1].bitwise_and(&c[nx].lt(maxiter)?)?]);
        let step = |c: &[Array]| {
            let x = &c[..nx];
            let fx = self.residual(x, params)?;
            let rhs: Vec<Array> = fx.iter().map(Array::neg).collect::<Result<_>>()?;
            let jv = |v: &[Array]| self.jacobian_times(x, params, v);
            let (dx, _) = gmres(&jv, &rhs, None, None, &inner)?;
            let next: Vec<Array> = x
                .iter()
                .zip(&dx)
                .map(|(a, d)| a + d)
                .collect::<Result<_>>()?;
            let step_size = inf_norm(&dx)?;
            let scale = (&inf_norm(&next)? + 1.0)?;
            let still = step_size
                .gt(&(&scale * tol)?)?
                .bitwise_and(&step_size.is_finite()?)?;
            Ok([next, vec![(&c[nx] + 1)?, still]].concat())
        };
        let out = while_loop(&keep_going, &step, &init)?;
        let converged = out[nx + 1]
            .logical_not()?
            .bitwise_and(&inf_norm(&out[..nx])?.is_finite()?)?;
        let info = converged.select(&out[nx].zeros_like()?, &out[nx])?;
        Ok([out[..nx].to_vec(), vec![info]].concat())
    }

    /// `dx* = -J⁻¹ (∂f/∂params · dparams)`: one GMRES solve on the implicit system.
    fn tangent(
        &self,
        primals: &[Array],
        tangents: &[Array],
        depth: usize,
    ) -> Result<(Vec<Array>, Vec<Array>)> {
        let nx = self.nx;
        let outs = self.call(depth + 1)(primals)?;
        let xs = &outs[..nx];
        let params = &primals[nx..];
        // Tangents come one per float primal: x0's first (ignored), then the params'.
        let float_params: Vec<usize> = (0..params.len())
            .filter(|&i| params[i].dtype().is_float())
            .collect();
        let dparams = &tangents[nx..];
        let g = |p: &[Array]| {
            let mut full = params.to_vec();
            for (k, &i) in float_params.iter().enumerate() {
                full[i] = p[k].clone();
            }
            self.residual(xs, &full)
        };
        let fp: Vec<Array> = float_params.iter().map(|&i| params[i].clone()).collect();
        let df = if fp.is_empty() {
            xs.iter()
                .map(Array::zeros_like)
                .collect::<Result<Vec<_>>>()?
        } else {
            jvp(g, &fp, dparams)?.1
        };
        let rhs: Vec<Array> = df.iter().map(Array::neg).collect::<Result<_>>()?;
        let jv = |v: &[Array]| self.jacobian_times(xs, params, v);
        let (dx, _) = gmres(&jv, &rhs, None, None, &jacobian_solve_options(xs))?;
        Ok((outs, dx))
    }
}

/// GMRES settings for systems with the Jacobian in `x`'s space: a full Krylov space, so the
/// solve is exact up to rounding, and a tolerance near the dtype's epsilon.
fn jacobian_solve_options(x: &[Array]) -> SolveOptions {
    let size: usize = x.iter().map(Array::size).sum();
    SolveOptions {
        tol: 100.0 * crate::ops::machine_eps(x[0].dtype()),
        restart: size.max(1),
        maxiter: Some(3),
        ..Default::default()
    }
}

fn inf_norm(v: &[Array]) -> Result<Array> {
    let mut m: Option<Array> = None;
    for x in v {
        let a = x.abs()?.max(Axes::All, false)?;
        m = Some(match m {
            Some(p) => p.maximum(&a)?,
            None => a,
        });
    }
    m.ok_or_else(|| Error::Value("newton: empty x".into()))
}
