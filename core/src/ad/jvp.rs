//! Forward mode: a program's JVP as a new program.

use super::rules::{self, JvpArgs};
use crate::array::Array;
use crate::error::Result;
use crate::ops::apply_at;
use quabla_abi::qir::Program;

/// Runs `p` on `primals` (arrays of the current trace) and pushes `tangents` through it,
/// emitting both computations. Returns the primal outputs and the output tangents.
pub(crate) fn jvp_walk(
    p: &Program,
    primals: &[Array],
    tangents: &[Option<Array>],
) -> Result<(Vec<Array>, Vec<Option<Array>>)> {
    let mut env: Vec<Array> = primals.to_vec();
    let mut tan: Vec<Option<Array>> = tangents.to_vec();
    for node in &p.nodes {
        let ins: Vec<Array> = node
            .operands
            .iter()
            .map(|o| env[o.index()].clone())
            .collect();
        let in_t: Vec<Option<Array>> = node
            .operands
            .iter()
            .map(|o| tan[o.index()].clone())
            .collect();
        let has_tangent = in_t.iter().any(Option::is_some);
        let (outs, out_t) = if has_tangent && !node.op.regions().is_empty() {
            // Region ops compute primal and tangent outputs together.
            match crate::ops::family(&node.op) {
                crate::ops::Family::ControlFlow => {
                    crate::ops::control_flow::jvp(node, &ins, &in_t)?
                }
                crate::ops::Family::LinearSolve => {
                    crate::ops::linear_solve::jvp(node, &ins, &in_t)?
                }
                _ => crate::ops::custom::jvp(node, &ins, &in_t)?,
            }
        } else {
            let refs: Vec<&Array> = ins.iter().collect();
            let outs = apply_at(
                primals.first(),
                node.op.clone(),
                &refs,
                node.results.clone(),
            )?;
            let t = if has_tangent {
                rules::jvp(&JvpArgs {
                    node,
                    primals: &ins,
                    outs: &outs,
                    tangents: &in_t,
                })?
            } else {
                vec![None; outs.len()]
            };
            (outs, t)
        };
        env.extend(outs);
        tan.extend(out_t);
    }
    Ok((
        p.outputs.iter().map(|o| env[o.index()].clone()).collect(),
        p.outputs.iter().map(|o| tan[o.index()].clone()).collect(),
    ))
}

/// Output tangents with symbolic zeros made explicit (zeros of each output's type).
pub(crate) fn instantiate(outs: &[Array], tangents: Vec<Option<Array>>) -> Result<Vec<Array>> {
    outs.iter()
        .zip(tangents)
        .map(|(o, t)| t.map(Ok).unwrap_or_else(|| o.zeros_like()))
        .collect()
}
