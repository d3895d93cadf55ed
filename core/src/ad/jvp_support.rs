//! Building the differentiated regions the region rules (`cond`, `while`, `checkpoint`,
//! custom rules) need.

use super::jvp::{instantiate, jvp_walk};
use crate::array::Array;
use crate::error::Result;
use crate::trace::trace_function;
use quabla_abi::qir::Program;
use quabla_abi::TensorType;

fn float_positions(ts: &[TensorType]) -> Vec<usize> {
    (0..ts.len()).filter(|&i| ts[i].dtype.is_float()).collect()
}

/// Tangents of the float entries of `primals` (zeros where `tangents` has none).
pub(crate) fn float_tangents(primals: &[Array], tangents: &[Option<Array>]) -> Result<Vec<Array>> {
    (0..primals.len())
        .filter(|&i| primals[i].dtype().is_float())
        .map(|i| {
            tangents[i]
                .clone()
                .map(Ok)
                .unwrap_or_else(|| primals[i].zeros_like())
        })
        .collect()
}

fn differentiate(p: &Program, like: &Array, keep_primal: bool) -> Result<Program> {
    let floats = float_positions(&p.inputs);
    let mut types = p.inputs.clone();
    types.extend(floats.iter().map(|&i| p.inputs[i].clone()));
    let n = p.inputs.len();
    trace_function(like.device(), &types, |args: &[Array]| {
        let mut tangents: Vec<Option<Array>> = vec![None; n];
        for (k, &i) in floats.iter().enumerate() {
            tangents[i] = Some(args[n + k].clone());
        }
        let (outs, touts) = jvp_walk(p, &args[..n], &tangents)?;
        let float_outs: Vec<usize> = (0..outs.len())
            .filter(|&i| outs[i].dtype().is_float())
            .collect();
        let touts = instantiate(&outs, touts)?;
        let mut res = if keep_primal { outs } else { vec![] };
        res.extend(float_outs.iter().map(|&i| touts[i].clone()));
        Ok(res)
    })
}

/// `(x..., float tangents...) -> (y..., float output tangents...)`.
pub(crate) fn jvp_region(p: &Program, like: &Array) -> Result<Program> {
    differentiate(p, like, true)
}

/// `(x..., float tangents...) -> float output tangents`: linear in the tangents.
pub(crate) fn tangent_region(p: &Program, like: &Array) -> Result<Program> {
    differentiate(p, like, false)
}

/// Every output tangent made explicit (zeros for symbolic zeros).
pub(crate) fn instantiate_all(outs: &[Array], tangents: Vec<Option<Array>>) -> Result<Vec<Array>> {
    instantiate(outs, tangents)
}

/// `jvp_walk`, for the region rules in the op families.
pub(crate) fn jvp_walk_pub(
    p: &Program,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    jvp_walk(p, primals, tangents)
}
