//! Jacobians and Hessians from forward and reverse passes, one basis vector at a time (no
//! P x P identity is ever built).
//!
//! Jacobians of several outputs and arguments come back flattened, output-major: for outputs
//! `y0, y1` and argnums `[a, b]` the result is `[dy0/da, dy0/db, dy1/da, dy1/db]`, each of
//! shape `y.shape ++ x.shape`.

use super::{check_differentiable, linearize, trace_at};
use crate::array::Array;
use crate::error::Result;
use crate::eval::eval_program;
use crate::ops::{iota_like, zeros_typed};
use quabla_abi::DType;

/// Basis vectors are pushed through in chunks of this many (batched with vmap), so no
/// P x P identity is ever built.
const CHUNK: usize = 64;

/// Basis vectors `start..start + m` of `like`'s type, stacked: shape `[m] ++ like.shape`.
fn basis_chunk(like: &Array, start: usize, m: usize) -> Result<Array> {
    let n = like.size();
    let rows = iota_like(like, DType::I32, &[m, n], 0)?;
    let cols = iota_like(like, DType::I32, &[m, n], 1)?;
    let shape: Vec<isize> = std::iter::once(m as isize)
        .chain(like.shape().iter().map(|&d| d as isize))
        .collect();
    cols.eq(&(&rows + start as i32)?)?
        .astype(like.dtype())?
        .reshape(&shape)
}

/// `[P] ++ out` stacked chunk results turned into `out ++ in` (forward mode).
fn columns_to_jacobian(chunks: &[Array], out: &[usize], input: &[usize]) -> Result<Array> {
    let refs: Vec<&Array> = chunks.iter().collect();
    let stacked = Array::concatenate(&refs, 0)?;
    let p: usize = input.iter().product();
    let o: usize = out.iter().product();
    let shape: Vec<isize> = out.iter().chain(input).map(|&d| d as isize).collect();
    stacked
        .reshape(&[p as isize, o as isize])?
        .t()?
        .reshape(&shape)
}

/// `[Q] ++ in` stacked chunk results turned into `out ++ in` (reverse mode).
fn rows_to_jacobian(chunks: &[Array], out: &[usize], input: &[usize]) -> Result<Array> {
    let refs: Vec<&Array> = chunks.iter().collect();
    let shape: Vec<isize> = out.iter().chain(input).map(|&d| d as isize).collect();
    Array::concatenate(&refs, 0)?.reshape(&shape)
}

fn jac_type(out: &quabla_abi::TensorType, x: &Array) -> quabla_abi::TensorType {
    let mut shape = out.shape.clone();
    shape.extend_from_slice(x.shape());
    quabla_abi::TensorType::new(out.dtype, shape)
}

/// Forward-mode Jacobian with respect to `argnums`.
///
/// ```no_run
/// # use quabla::{ad::jacfwd, Array};
/// // d(sin x)/dx for x of 3 elements: a 3x3 diagonal.
/// let j = jacfwd(|a: &[Array]| Ok(vec![a[0].sin()?]), &[0])(&[Array::from_slice(&[0.0f64, 1.0, 2.0], &[3])?])?;
/// assert_eq!(j[0].shape(), &[3, 3]);
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn jacfwd<F>(f: F, argnums: &[usize]) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let argnums = argnums.to_vec();
    move |args: &[Array]| {
        check_differentiable(args, &argnums, "jacfwd")?;
        let (device, p, caps) = trace_at(&f, args)?;
        // Closed-over traced values travel as unbatched inputs after the arguments.
        let full: Vec<Array> = args.iter().chain(&caps).cloned().collect();
        let j = linearize::jvp_program(&device, &p, &argnums)?;
        let nout = p.outputs.len();
        let out_types = p.output_types();
        let mut per_arg: Vec<Vec<Vec<Array>>> = Vec::new();
        for (k, &i) in argnums.iter().enumerate() {
            // One JVP per basis vector, batched: the k-th tangent is the batched input.
            let push = |a: &[Array]| -> Result<Vec<Array>> {
                let n = full.len();
                let mut call = a[..n].to_vec();
                for (kk, &ii) in argnums.iter().enumerate() {
                    call.push(if kk == k {
                        a[n].clone()
                    } else {
                        zeros_typed(&a[ii], a[ii].tensor_type())?
                    });
                }
                Ok(eval_program(&j, &call)?.split_off(nout))
            };
            let mut axes: Vec<Option<usize>> = vec![None; full.len()];
            axes.push(Some(0));
            let batched = crate::batching::vmap(push, &axes, &[]);
            let mut columns: Vec<Vec<Array>> = vec![Vec::new(); nout];
            let size = args[i].size();
            for start in (0..size).step_by(CHUNK) {
                let m = CHUNK.min(size - start);
                let mut call = full.clone();
                call.push(basis_chunk(&args[i], start, m)?);
                for (o, t) in batched(&call)?.into_iter().enumerate() {
                    columns[o].push(t);
                }
            }
            per_arg.push(columns);
        }
        let mut res = Vec::new();
        for (o, t) in out_types.iter().enumerate() {
            for (k, &i) in argnums.iter().enumerate() {
                res.push(if args[i].size() == 0 {
                    zeros_typed(&args[i], &jac_type(t, &args[i]))?
                } else {
                    columns_to_jacobian(&per_arg[k][o], &t.shape, args[i].shape())?
                });
            }
        }
        Ok(res)
    }
}

/// Reverse-mode Jacobian with respect to `argnums`.
///
/// ```no_run
/// # use quabla::{ad::jacrev, Array, Axes};
/// // Two outputs of three inputs: a 2x3 Jacobian.
/// let f = |a: &[Array]| Ok(vec![Array::concatenate(&[&a[0].sum(Axes::All, true)?, &a[0].max(Axes::All, true)?], 0)?]);
/// let j = jacrev(f, &[0])(&[Array::from_slice(&[1.0f64, 3.0, 2.0], &[3])?])?;
/// assert_eq!(j[0].shape(), &[2, 3]);
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn jacrev<F>(f: F, argnums: &[usize]) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let argnums = argnums.to_vec();
    move |args: &[Array]| {
        check_differentiable(args, &argnums, "jacrev")?;
        let (device, p, caps) = trace_at(&f, args)?;
        let v = linearize::vjp_programs(&device, &p, &argnums)?;
        let full: Vec<Array> = args.iter().chain(&caps).cloned().collect();
        let mut outs = eval_program(&v.forward, &full)?;
        let residuals = outs.split_off(v.num_outputs);
        let nres = residuals.len();
        let mut res = Vec::new();
        for (o, out) in outs.iter().enumerate() {
            // One pullback per basis cotangent, batched.
            let pull = |a: &[Array]| -> Result<Vec<Array>> {
                let mut call = a[..nres].to_vec();
                for (oo, other) in outs.iter().enumerate() {
                    call.push(if oo == o {
                        a[nres].clone()
                    } else {
                        zeros_typed(&a[0], other.tensor_type())?
                    });
                }
                eval_program(&v.backward, &call)
            };
            let mut axes: Vec<Option<usize>> = vec![None; nres];
            axes.push(Some(0));
            let batched = crate::batching::vmap(pull, &axes, &[]);
            let mut rows: Vec<Vec<Array>> = vec![Vec::new(); argnums.len()];
            for start in (0..out.size()).step_by(CHUNK) {
                let m = CHUNK.min(out.size() - start);
                let mut call = residuals.clone();
                call.push(basis_chunk(out, start, m)?);
                for (k, g) in batched(&call)?.into_iter().enumerate() {
                    rows[k].push(g);
                }
            }
            for (k, &i) in argnums.iter().enumerate() {
                res.push(if out.size() == 0 {
                    zeros_typed(&args[i], &jac_type(out.tensor_type(), &args[i]))?
                } else {
                    rows_to_jacobian(&rows[k], out.shape(), args[i].shape())?
                });
            }
        }
        Ok(res)
    }
}

/// The Jacobian, by forward mode when the inputs are smaller than the outputs, else reverse.
///
/// ```no_run
/// # use quabla::{ad::jacobian, Array};
/// let f = |a: &[Array]| Ok(vec![(&a[0] * &a[0])?]);
/// let j = jacobian(f, &[0])(&[Array::from_slice(&[1.0f64, 2.0], &[2])?])?; // diag(2, 4)
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn jacobian<F>(f: F, argnums: &[usize]) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Clone,
{
    let argnums = argnums.to_vec();
    move |args: &[Array]| {
        let (_, p, _) = trace_at(&f, args)?;
        let n_in: usize = argnums
            .iter()
            .filter_map(|&i| args.get(i))
            .map(|a| a.size())
            .sum();
        let n_out: usize = p.output_types().iter().map(|t| t.num_elements()).sum();
        if n_in < n_out {
            jacfwd(f.clone(), &argnums)(args)
        } else {
            jacrev(f.clone(), &argnums)(args)
        }
    }
}

/// The Hessian of a scalar function (forward over reverse): for argnums `[a, b]` the result
/// is `[d2f/da da, d2f/da db, d2f/db da, d2f/db db]`.
///
/// ```no_run
/// # use quabla::{ad::hessian, Array, Axes};
/// // f(x) = Σ x³: the Hessian is diag(6x).
/// let f = |a: &[Array]| Ok(vec![a[0].pow(3.0)?.sum(Axes::All, false)?]);
/// let h = hessian(f, &[0])(&[Array::from_slice(&[1.0f64, 2.0], &[2])?])?; // [[6, 0], [0, 12]]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn hessian<F>(f: F, argnums: &[usize]) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    jacfwd(super::grad(f, argnums), argnums)
}

/// Hessian-vector product: the JVP of the gradient along `v` (one tangent per primal).
///
/// ```no_run
/// # use quabla::{ad::hvp, Array, Axes};
/// let f = |a: &[Array]| Ok(vec![a[0].pow(3.0)?.sum(Axes::All, false)?]);
/// let x = Array::from_slice(&[1.0f64, 2.0], &[2])?;
/// let v = Array::from_slice(&[1.0f64, 0.0], &[2])?;
/// let hv = hvp(f, &[x], &[v])?; // [6, 0]
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn hvp<F>(f: F, primals: &[Array], v: &[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let argnums: Vec<usize> = (0..primals.len()).collect();
    let (_, t) = super::jvp(super::grad(f, &argnums), primals, v)?;
    Ok(t)
}
