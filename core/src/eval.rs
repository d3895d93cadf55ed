//! Running a closed program on arrays: compiled on the device when the arguments are
//! concrete, inlined node by node into the current trace when they are traced.

use crate::array::{Array, Repr};
use crate::error::{type_err, Result};
use crate::ops::apply_at;
use quabla_abi::qir::Program;
use std::sync::Arc;

/// Evaluates `p` on `args` (which must match its input types).
pub(crate) fn eval_program(p: &Program, args: &[Array]) -> Result<Vec<Array>> {
    if args.len() != p.inputs.len() {
        return type_err(format!(
            "the program takes {} arguments, {} given",
            p.inputs.len(),
            args.len()
        ));
    }
    for (i, (a, t)) in args.iter().zip(&p.inputs).enumerate() {
        if &a.ty != t {
            return type_err(format!("argument {i} must be {t}, got {}", a.ty));
        }
    }
    if args.iter().any(|a| a.is_traced()) {
        let mut env: Vec<Array> = args.to_vec();
        for node in &p.nodes {
            let ins: Vec<&Array> = node.operands.iter().map(|o| &env[o.index()]).collect();
            let outs = apply_at(args.first(), node.op.clone(), &ins, node.results.clone())?;
            env.extend(outs);
        }
        return Ok(p.outputs.iter().map(|o| env[o.index()].clone()).collect());
    }
    let device = match args.first() {
        Some(a) => a.device().clone(),
        None => crate::runtime::default_device()?,
    };
    let exe = device.compile(p)?;
    let bufs: Vec<_> = args
        .iter()
        .map(|a| a.buffer().expect("concrete").as_ref())
        .collect();
    let outs = exe.run(&bufs).map_err(|e| device.backend_err(e))?;
    Ok(outs
        .into_iter()
        .zip(p.output_types())
        .map(|(b, ty)| Array {
            ty,
            repr: Repr::Concrete {
                device: device.clone(),
                buffer: Arc::new(b),
            },
        })
        .collect())
}
