//! Running a closed program on arrays: compiled on the device when the arguments are
//! concrete, inlined node by node into the current trace when they are traced.

use crate::array::{Array, Repr};
use crate::error::{Error, Result};
use crate::ops::apply_at;
use crate::runtime::Device;
use quabla_abi::host::Executable;
use quabla_abi::qir::Program;
use quabla_abi::TensorType;
use std::sync::Arc;

/// Evaluates `p` on `args` (which must match its input types).
pub(crate) fn eval_program(p: &Program, args: &[Array]) -> Result<Vec<Array>> {
    if args.len() != p.inputs.len() {
        return Err(crate::Error::value(format!(
            "the program takes {} arguments, {} given",
            p.inputs.len(),
            args.len()
        )));
    }
    for (i, (a, t)) in args.iter().zip(&p.inputs).enumerate() {
        if &a.ty != t {
            return Err(crate::Error::shape(format!(
                "argument {i} must be {t}, got {}",
                a.ty
            )));
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
    let refs: Vec<&Array> = args.iter().collect();
    run_executable(&device, &exe, &refs, p.output_types())
}

/// Runs a compiled executable on concrete arrays of `device` and wraps the results.
pub(crate) fn run_executable(
    device: &Arc<Device>,
    exe: &Executable,
    args: &[&Array],
    out_types: Vec<TensorType>,
) -> Result<Vec<Array>> {
    let mut bufs = Vec::with_capacity(args.len());
    for a in args {
        same_device(a, device)?;
        bufs.push(a.buffer().ok_or(Error::TracedValue)?.as_ref());
    }
    let outs = exe.run(&bufs).map_err(|e| device.backend_err(e))?;
    Ok(wrap_outputs(device, outs, out_types))
}

/// Like [`run_executable`], consuming the arguments: those marked in `donate` whose buffer
/// nothing else holds are donated (the backend may reuse their memory); the rest are lent.
pub(crate) fn run_executable_donating(
    device: &Arc<Device>,
    exe: &Executable,
    args: Vec<Array>,
    donate: &[bool],
    out_types: Vec<TensorType>,
) -> Result<Vec<Array>> {
    use quabla_abi::host::{Arg, Buffer};
    enum Slot {
        Donated(Buffer),
        Lent(usize),
    }
    // Lent buffers stay owned here for the call; donated ones move to the backend.
    let mut lent: Vec<Arc<Buffer>> = Vec::new();
    let mut slots = Vec::with_capacity(args.len());
    for (i, a) in args.into_iter().enumerate() {
        same_device(&a, device)?;
        let Repr::Concrete { buffer, .. } = a.repr else {
            return Err(Error::TracedValue);
        };
        let wanted = donate.get(i).copied().unwrap_or(false);
        match if wanted {
            Arc::try_unwrap(buffer)
        } else {
            Err(buffer)
        } {
            Ok(b) => slots.push(Slot::Donated(b)),
            Err(shared) => {
                slots.push(Slot::Lent(lent.len()));
                lent.push(shared);
            }
        }
    }
    let call: Vec<Arg> = slots
        .into_iter()
        .map(|s| match s {
            Slot::Donated(b) => Arg::Donate(b),
            Slot::Lent(k) => Arg::Keep(&lent[k]),
        })
        .collect();
    let outs = exe.execute(call).map_err(|e| device.backend_err(e))?;
    Ok(wrap_outputs(device, outs, out_types))
}

fn same_device(a: &Array, device: &Arc<Device>) -> Result<()> {
    if !Arc::ptr_eq(a.device(), device) {
        return Err(Error::Mismatch(format!(
            "arrays on different devices (`{}` and `{}`) cannot meet in one computation; move one first",
            a.device().platform(),
            device.platform()
        )));
    }
    Ok(())
}

fn wrap_outputs(
    device: &Arc<Device>,
    outs: Vec<quabla_abi::host::Buffer>,
    out_types: Vec<TensorType>,
) -> Vec<Array> {
    outs.into_iter()
        .zip(out_types)
        .map(|(b, ty)| Array {
            ty,
            repr: Repr::Concrete {
                device: device.clone(),
                buffer: Arc::new(b),
            },
        })
        .collect()
}
