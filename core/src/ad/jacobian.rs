//! Jacobians and Hessians from forward and reverse passes, one basis vector at a time (no
//! P x P identity is ever built).
//!
//! Jacobians of several outputs and arguments come back flattened, output-major: for outputs
//! `y0, y1` and argnums `[a, b]` the result is `[dy0/da, dy0/db, dy1/da, dy1/db]`, each of
//! shape `y.shape ++ x.shape`.

use super::{check_differentiable, linearize, trace_at, vjp_of_program};
use crate::array::Array;
use crate::error::Result;
use crate::eval::eval_program;
use crate::ops::{iota_like, zeros_typed};
use quabla_abi::DType;

/// The `e`-th basis vector of `like`'s type.
fn one_hot(like: &Array, e: usize) -> Result<Array> {
    let n = like.size();
    let idx = iota_like(like, DType::I32, &[n], 0)?;
    let shape: Vec<isize> = like.shape().iter().map(|&d| d as isize).collect();
    idx.eq(e as i32)?.astype(like.dtype())?.reshape(&shape)
}

fn stack(pieces: &[Array], lead: &[usize], trail: &[usize], rows: bool) -> Result<Array> {
    let refs: Vec<&Array> = pieces.iter().collect();
    let m = Array::concatenate(&refs, if rows { 0 } else { 1 })?;
    let shape: Vec<isize> = lead.iter().chain(trail).map(|&d| d as isize).collect();
    m.reshape(&shape)
}

/// Forward-mode Jacobian with respect to `argnums`.
pub fn jacfwd<F>(f: F, argnums: &[usize]) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let argnums = argnums.to_vec();
    move |args: &[Array]| {
        check_differentiable(args, &argnums, "jacfwd")?;
        let (device, p) = trace_at(&f, args)?;
        let j = linearize::jvp_program(&device, &p, &argnums)?;
        let zeros: Vec<Array> = argnums
            .iter()
            .map(|&i| zeros_typed(&args[i], args[i].tensor_type()))
            .collect::<Result<_>>()?;
        let nout = p.outputs.len();
        let out_types = p.output_types();
        let mut per_arg: Vec<Vec<Vec<Array>>> = Vec::new();
        for (k, &i) in argnums.iter().enumerate() {
            let mut columns: Vec<Vec<Array>> = vec![Vec::new(); nout];
            for e in 0..args[i].size() {
                let mut call = args.to_vec();
                for (kk, z) in zeros.iter().enumerate() {
                    call.push(if kk == k {
                        one_hot(&args[i], e)?
                    } else {
                        z.clone()
                    });
                }
                let outs = eval_program(&j, &call)?;
                for (o, col) in columns.iter_mut().enumerate() {
                    col.push(outs[nout + o].reshape(&[-1, 1])?);
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
                    stack(&per_arg[k][o], &t.shape, args[i].shape(), false)?
                });
            }
        }
        Ok(res)
    }
}

fn jac_type(out: &quabla_abi::TensorType, x: &Array) -> quabla_abi::TensorType {
    let mut shape = out.shape.clone();
    shape.extend_from_slice(x.shape());
    quabla_abi::TensorType::new(out.dtype, shape)
}

/// Reverse-mode Jacobian with respect to `argnums`.
pub fn jacrev<F>(f: F, argnums: &[usize]) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let argnums = argnums.to_vec();
    move |args: &[Array]| {
        check_differentiable(args, &argnums, "jacrev")?;
        let (device, p) = trace_at(&f, args)?;
        let (outs, pb) = vjp_of_program(&device, &p, args, argnums.clone())?;
        let zeros: Vec<Array> = outs.iter().map(|o| o.zeros_like()).collect::<Result<_>>()?;
        let mut res = Vec::new();
        for (o, out) in outs.iter().enumerate() {
            let mut rows: Vec<Vec<Array>> = vec![Vec::new(); argnums.len()];
            for e in 0..out.size() {
                let mut cts = zeros.clone();
                cts[o] = one_hot(out, e)?;
                let g = pb.call(&cts)?;
                for (k, &i) in argnums.iter().enumerate() {
                    rows[k].push(g[i].reshape(&[1, -1])?);
                }
            }
            for (k, &i) in argnums.iter().enumerate() {
                res.push(if out.size() == 0 {
                    zeros_typed(&args[i], &jac_type(out.tensor_type(), &args[i]))?
                } else {
                    stack(&rows[k], out.shape(), args[i].shape(), true)?
                });
            }
        }
        Ok(res)
    }
}

/// The Jacobian, by forward mode when the inputs are smaller than the outputs, else reverse.
pub fn jacobian<F>(f: F, argnums: &[usize]) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>> + Clone,
{
    let argnums = argnums.to_vec();
    move |args: &[Array]| {
        let (_, p) = trace_at(&f, args)?;
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
pub fn hessian<F>(f: F, argnums: &[usize]) -> impl Fn(&[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    jacfwd(super::grad(f, argnums), argnums)
}

/// Hessian-vector product: the JVP of the gradient along `v` (one tangent per primal).
pub fn hvp<F>(f: F, primals: &[Array], v: &[Array]) -> Result<Vec<Array>>
where
    F: Fn(&[Array]) -> Result<Vec<Array>>,
{
    let argnums: Vec<usize> = (0..primals.len()).collect();
    let (_, t) = super::jvp(super::grad(f, &argnums), primals, v)?;
    Ok(t)
}
