//! Reverse mode as linearize + transpose.
//!
//! The JVP program of `f` is split by partial evaluation: nodes that do not depend on the
//! input tangents form the forward program (primal outputs plus the residuals the linear part
//! needs); the nodes that do are linear in the tangents, and are transposed one by one, in
//! reverse order, into the backward program (residuals and output cotangents in, input
//! cotangents out).

use super::jvp::{instantiate, jvp_walk};
use super::rules::{self, Primal, TransposeArgs};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::zeros_typed;
use crate::runtime::Device;
use crate::trace::trace_function;
use quabla_abi::qir::{Node, Op, Program, ValueId};
use quabla_abi::TensorType;
use std::collections::HashMap;
use std::sync::Arc;

/// The two halves of a VJP.
pub(crate) struct VjpPrograms {
    /// `primals -> (outputs..., residuals...)`
    pub forward: Program,
    /// `(residuals..., output cotangents...) -> cotangents of the active inputs`
    pub backward: Program,
    pub num_outputs: usize,
}

/// The JVP program: `(primals..., tangents of active inputs...) -> (outputs..., tangents...)`.
pub(crate) fn jvp_program(device: &Arc<Device>, p: &Program, active: &[usize]) -> Result<Program> {
    let n = p.inputs.len();
    let mut types = p.inputs.clone();
    types.extend(active.iter().map(|&i| p.inputs[i].clone()));
    trace_function(device, &types, |args: &[Array]| {
        let mut tangents: Vec<Option<Array>> = vec![None; n];
        for (k, &i) in active.iter().enumerate() {
            tangents[i] = Some(args[n + k].clone());
        }
        let (outs, touts) = jvp_walk(p, &args[..n], &tangents)?;
        let touts = instantiate(&outs, touts)?;
        let mut res = outs;
        res.extend(touts);
        Ok(res)
    })
}

/// Copies the chosen nodes of `j` into a program with inputs `j.inputs[..n_in]`, renumbering.
fn extract(j: &Program, n_in: usize, keep: &[usize], outputs: &[ValueId]) -> Program {
    let first = j.first_result_ids();
    let mut map: HashMap<ValueId, ValueId> =
        (0..n_in as u32).map(|i| (ValueId(i), ValueId(i))).collect();
    let mut next = n_in as u32;
    let mut nodes = Vec::with_capacity(keep.len());
    for &ni in keep {
        let node = &j.nodes[ni];
        for r in 0..node.results.len() as u32 {
            map.insert(ValueId(first[ni].0 + r), ValueId(next + r));
        }
        next += node.results.len() as u32;
        nodes.push(Node {
            op: node.op.clone(),
            operands: node.operands.iter().map(|o| map[o]).collect(),
            results: node.results.clone(),
        });
    }
    Program {
        inputs: j.inputs[..n_in].to_vec(),
        nodes,
        outputs: outputs.iter().map(|o| map[o]).collect(),
    }
}

fn add_ct(cts: &mut HashMap<ValueId, Array>, v: ValueId, ct: Array) -> Result<()> {
    let sum = match cts.remove(&v) {
        Some(prev) => (&prev + &ct)?,
        None => ct,
    };
    cts.insert(v, sum);
    Ok(())
}

/// Builds the forward and backward programs of `p` with respect to the inputs `active`.
pub(crate) fn vjp_programs(
    device: &Arc<Device>,
    p: &Program,
    active: &[usize],
) -> Result<VjpPrograms> {
    let j = jvp_program(device, p, active)?;
    let (forward, backward) = partial_eval_transpose(device, &j, p.inputs.len(), p.outputs.len())?;
    Ok(VjpPrograms {
        forward,
        backward,
        num_outputs: p.outputs.len(),
    })
}

/// Splits `j` (inputs: `n` known then linear; outputs: `k` known then linear) into
/// `forward: known inputs -> (known outputs, residuals)` and
/// `backward: (residuals, cotangents of the linear outputs) -> cotangents of the linear inputs`.
pub(crate) fn partial_eval_transpose(
    device: &Arc<Device>,
    j: &Program,
    n: usize,
    k: usize,
) -> Result<(Program, Program)> {
    let split = super::known_split::split_known_parts(j, n);
    let j: &Program = &split;
    let n_lin = j.inputs.len() - n;
    let first = j.first_result_ids();
    let mut linear = vec![false; j.num_values()];
    for v in linear.iter_mut().take(n + n_lin).skip(n) {
        *v = true;
    }
    let mut types: Vec<TensorType> = j.inputs.clone();
    let mut producer: HashMap<ValueId, usize> = HashMap::new();
    for (ni, node) in j.nodes.iter().enumerate() {
        let lin = node.operands.iter().any(|o| linear[o.index()]);
        for (r, t) in node.results.iter().enumerate() {
            let id = first[ni].index() + r;
            linear[id] = lin;
            producer.insert(ValueId(id as u32), ni);
            types.push(t.clone());
        }
    }
    // Dead-code elimination from the outputs (effects are always kept: a debug call in the
    // function runs in the forward pass, on primal values).
    let mut needed = vec![false; j.num_values()];
    for o in &j.outputs {
        needed[o.index()] = true;
    }
    let mut node_needed = vec![false; j.nodes.len()];
    for ni in (0..j.nodes.len()).rev() {
        let node = &j.nodes[ni];
        if node.op.has_effect() || (0..node.results.len()).any(|r| needed[first[ni].index() + r]) {
            node_needed[ni] = true;
            for o in &node.operands {
                needed[o.index()] = true;
            }
        }
    }
    let is_linear_node = |ni: usize| {
        linear[first[ni].index()]
            || (j.nodes[ni].results.is_empty()
                && j.nodes[ni].operands.iter().any(|o| linear[o.index()]))
    };
    let linear_nodes: Vec<usize> = (0..j.nodes.len())
        .filter(|&ni| node_needed[ni] && is_linear_node(ni))
        .collect();
    for &ni in &linear_nodes {
        if let Op::While { .. } = &j.nodes[ni].op {
            return Err(Error::Value(
                "reverse-mode differentiation through `while` is not supported: give the loop a bound \
                 (lax::bounded_while_loop; in Python while_loop(..., max_steps=N)), or use a loop \
                 with static bounds (scan, or fori_loop with constant bounds)"
                    .into(),
            ));
        }
    }
    let is_constant = |v: ValueId| {
        producer
            .get(&v)
            .is_some_and(|&ni| matches!(j.nodes[ni].op, Op::Constant(_)))
    };
    // Residuals: known values the linear nodes read (constants are re-emitted instead).
    let mut residuals: Vec<ValueId> = Vec::new();
    for &ni in &linear_nodes {
        for o in &j.nodes[ni].operands {
            if !linear[o.index()] && !is_constant(*o) && !residuals.contains(o) {
                residuals.push(*o);
            }
        }
    }
    let forward_nodes: Vec<usize> = (0..j.nodes.len())
        .filter(|&ni| node_needed[ni] && !is_linear_node(ni))
        .collect();
    let mut fwd_outputs: Vec<ValueId> = j.outputs[..k].to_vec();
    fwd_outputs.extend(&residuals);
    let forward = extract(j, n, &forward_nodes, &fwd_outputs);

    let mut bwd_types: Vec<TensorType> =
        residuals.iter().map(|r| types[r.index()].clone()).collect();
    bwd_types.extend(j.outputs[k..].iter().map(|o| types[o.index()].clone()));
    let nres = residuals.len();
    let backward = trace_function(device, &bwd_types, |args: &[Array]| {
        let anchor = args
            .first()
            .ok_or_else(|| Error::Value("vjp of a function without outputs".into()))?;
        let mut known: HashMap<ValueId, Array> = residuals
            .iter()
            .copied()
            .zip(args[..nres].iter().cloned())
            .collect();
        let mut cts: HashMap<ValueId, Array> = HashMap::new();
        for (i, ct) in args[nres..].iter().enumerate() {
            let t = j.outputs[k + i];
            if linear[t.index()] {
                add_ct(&mut cts, t, ct.clone())?;
            }
        }
        for &ni in linear_nodes.iter().rev() {
            let node = &j.nodes[ni];
            let out_cts: Vec<Option<Array>> = (0..node.results.len())
                .map(|r| cts.remove(&ValueId(first[ni].0 + r as u32)))
                .collect();
            if out_cts.iter().all(Option::is_none) {
                continue;
            }
            let mut operands = Vec::with_capacity(node.operands.len());
            for o in &node.operands {
                operands.push(if linear[o.index()] {
                    Primal::Linear(types[o.index()].clone())
                } else {
                    if !known.contains_key(o) {
                        let Op::Constant(h) = &j.nodes[producer[o]].op else {
                            unreachable!("non-residual known values are constants")
                        };
                        known.insert(*o, crate::ops::constant_like(anchor, h.clone())?);
                    }
                    Primal::Known(known[o].clone())
                });
            }
            let in_cts = rules::transpose(&TransposeArgs {
                node,
                operands: &operands,
                cts: &out_cts,
            })?;
            for ((o, prim), ct) in node.operands.iter().zip(&operands).zip(in_cts) {
                if let (true, Some(ct)) = (prim.is_linear(), ct) {
                    add_ct(&mut cts, *o, ct)?;
                }
            }
        }
        (0..n_lin)
            .map(|a| {
                let v = ValueId((n + a) as u32);
                cts.remove(&v)
                    .map(Ok)
                    .unwrap_or_else(|| zeros_typed(anchor, &types[v.index()]))
            })
            .collect()
    })?;
    Ok((forward, backward))
}

/// A region whose inputs are known where `known` says and linear elsewhere, and whose
/// outputs are linear, turned into its transpose
/// `(known inputs..., output cotangents...) -> cotangents of the linear inputs`. The known
/// part is recomputed inside (nothing is stored between the two passes).
pub(crate) fn transpose_region(
    device: &Arc<Device>,
    r: &Program,
    known: &[bool],
) -> Result<Program> {
    let order: Vec<usize> = (0..r.inputs.len())
        .filter(|&i| known[i])
        .chain((0..r.inputs.len()).filter(|&i| !known[i]))
        .collect();
    let n_known = known.iter().filter(|k| **k).count();
    let reordered_types: Vec<TensorType> = order.iter().map(|&i| r.inputs[i].clone()).collect();
    // The region with its known inputs first.
    let reordered = trace_function(device, &reordered_types, |a: &[Array]| {
        let mut args: Vec<Option<Array>> = vec![None; a.len()];
        for (pos, &i) in order.iter().enumerate() {
            args[i] = Some(a[pos].clone());
        }
        crate::eval::eval_program(r, &args.into_iter().flatten().collect::<Vec<_>>())
    })?;
    let (fwd, bwd) = partial_eval_transpose(device, &reordered, n_known, 0)?;
    let mut types = reordered_types[..n_known].to_vec();
    types.extend(r.output_types());
    trace_function(device, &types, |a: &[Array]| {
        let mut args = crate::eval::eval_program(&fwd, &a[..n_known])?;
        args.extend(a[n_known..].iter().cloned());
        crate::eval::eval_program(&bwd, &args)
    })
}
