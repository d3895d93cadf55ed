//! Program-level validation: value numbering, topological order, and each node's type rule.

use super::{infer_result_types, Op, Program, ValidationError};
use crate::TensorType;

fn err(location: &str, message: impl Into<String>) -> ValidationError {
    ValidationError {
        location: location.to_string(),
        message: message.into(),
    }
}

/// Validates `p` and returns its output types.
pub(super) fn validate(p: &Program, location: &str) -> Result<Vec<TensorType>, ValidationError> {
    for (i, t) in p.inputs.iter().enumerate() {
        t.checked_size_bytes()
            .map_err(|e| err(&format!("{location}/input {i}"), e.to_string()))?;
    }
    let mut types: Vec<TensorType> = p.inputs.clone();
    for (i, node) in p.nodes.iter().enumerate() {
        let here = format!("{location}/node {i} ({})", node.op.name());
        for t in &node.results {
            t.checked_size_bytes()
                .map_err(|e| err(&here, e.to_string()))?;
        }
        let mut operand_types = Vec::with_capacity(node.operands.len());
        for o in &node.operands {
            let t = types.get(o.index()).ok_or_else(|| {
                err(
                    &here,
                    format!(
                        "operand {o} is not defined before this node ({} values so far)",
                        types.len()
                    ),
                )
            })?;
            operand_types.push(t);
        }
        if let Op::Constant(a) = &node.op {
            if a.bytes.len() != a.ty.size_bytes() {
                return Err(err(
                    &here,
                    format!("constant of type {} holds {} bytes", a.ty, a.bytes.len()),
                ));
            }
        }
        let mut regions_out = Vec::new();
        for (r, region) in node.op.regions().into_iter().enumerate() {
            regions_out.push(validate(region, &format!("{here}/region {r}"))?);
        }
        let inferred = infer_result_types(&node.op, &operand_types, &node.results, &regions_out)
            .map_err(|m| err(&here, m))?;
        if inferred != node.results {
            let show = |ts: &[TensorType]| {
                ts.iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(err(
                &here,
                format!(
                    "declared result type ({}) but the op produces ({})",
                    show(&node.results),
                    show(&inferred)
                ),
            ));
        }
        types.extend(node.results.iter().cloned());
    }
    p.outputs
        .iter()
        .map(|o| {
            types.get(o.index()).cloned().ok_or_else(|| {
                err(
                    location,
                    format!("output {o} is not defined ({} values)", types.len()),
                )
            })
        })
        .collect()
}
