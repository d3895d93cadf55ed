//! What the transposes of loops (`scan`, `bounded_while`) share: which carries are linear,
//! and a loop body reordered so partial evaluation can split it.

use super::known_part::result_linearity;
use crate::array::Array;
use crate::error::Result;
use crate::eval::eval_program;
use quabla_abi::qir::Program;
use quabla_abi::TensorType;

/// Which outputs of `p` depend on the inputs flagged in `linear` (a region node's known
/// part counts as known: its primal results do not depend on its tangent operands).
pub(super) fn linear_outputs(p: &Program, linear: &[bool]) -> Vec<bool> {
    let mut lin = linear.to_vec();
    for n in &p.nodes {
        let ops: Vec<bool> = n.operands.iter().map(|o| lin[o.index()]).collect();
        lin.extend(result_linearity(n, &ops));
    }
    p.outputs.iter().map(|o| lin[o.index()]).collect()
}

/// Grows `lin` (one flag per body input) to a fixed point: the carry that body output `k`
/// updates (input `first_carry + k`, for the first `num_carry` outputs) is linear if it
/// starts linear or its update reads anything linear.
pub(super) fn linear_carries(
    body: &Program,
    lin: &mut [bool],
    first_carry: usize,
    num_carry: usize,
) {
    loop {
        let out = linear_outputs(body, lin);
        let grown: Vec<usize> = (0..num_carry)
            .filter(|&k| out[k] && !lin[first_carry + k])
            .collect();
        if grown.is_empty() {
            return;
        }
        for k in grown {
            lin[first_carry + k] = true;
        }
    }
}

/// `body` with its inputs taken in the order `inputs` and its outputs given in the order
/// `outputs` (indices into the original's), as partial evaluation wants them: known first.
pub(super) fn reordered(
    device: &std::sync::Arc<crate::runtime::Device>,
    body: &Program,
    inputs: &[usize],
    outputs: &[usize],
) -> Result<Program> {
    let types: Vec<TensorType> = inputs.iter().map(|&i| body.inputs[i].clone()).collect();
    crate::trace::trace_function(device, &types, |x: &[Array]| {
        let mut args: Vec<Option<Array>> = vec![None; body.inputs.len()];
        for (pos, &i) in inputs.iter().enumerate() {
            args[i] = Some(x[pos].clone());
        }
        let outs = eval_program(body, &args.into_iter().flatten().collect::<Vec<_>>())?;
        Ok(outputs.iter().map(|&k| outs[k].clone()).collect())
    })
}
