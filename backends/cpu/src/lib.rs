//! `quabla-cpu`: the CPU backend plugin and the reference semantics of every QIR op.
//!
//! Loaded at run time as `libquabla_cpu.so` (the `export` feature), or linked statically and
//! registered in-process through [`backend_module`].
//!
//! How it runs a program: chains of elementwise nodes over one shape are fused and evaluated
//! tile by tile (4096 elements) in parallel with rayon, with no full-size temporaries for
//! values used only inside the chain; every other node runs on whole arrays. Reductions fold
//! fixed blocks in a fixed tree and gemm calls cover fixed row chunks, so results are bitwise
//! identical whatever `RAYON_NUM_THREADS` is.

mod dot;
mod elementwise;
mod exec;
mod movement;
mod plan;
mod reduce;
mod tensor;

use quabla_abi::abi::AbiError;
use quabla_abi::plugin::{Arg, Backend, DeviceBuffer, Executable, PluginInfo};
use quabla_abi::qir::{all_op_names, Program, QIR_VERSION, QIR_VERSION_MIN};
use quabla_abi::{DType, HostArray};
use std::sync::Arc;
use tensor::{CpuBuffer, Storage, Tensor};

/// The CPU backend.
pub struct CpuBackend;

struct CpuExecutable(plan::Plan);

impl Executable for CpuExecutable {
    fn execute(&self, args: Vec<Arg>) -> Result<Vec<Arc<dyn DeviceBuffer>>, AbiError> {
        let mut inputs = Vec::with_capacity(args.len());
        for a in args {
            let b = a
                .buffer
                .as_any()
                .downcast_ref::<CpuBuffer>()
                .ok_or_else(|| AbiError::invalid("argument buffer does not belong to the CPU backend"))?;
            inputs.push(b.0.clone());
        }
        let outs = exec::run(&self.0, inputs);
        Ok(outs.into_iter().map(|t| Arc::new(CpuBuffer(t)) as Arc<dyn DeviceBuffer>).collect())
    }
}

impl Backend for CpuBackend {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "cpu".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            qir_min: QIR_VERSION_MIN,
            qir_max: QIR_VERSION,
            devices: vec![("cpu".into(), format!("host CPU ({} threads)", rayon::current_num_threads()), 0)],
            ops: all_op_names().into_iter().map(String::from).collect(),
            dtypes: DType::ALL.to_vec(),
            region_kinds: vec!["cond".into(), "while".into()],
            synchronous_readback: true,
            extensions: vec![],
        }
    }

    fn compile(&self, program: Program) -> Result<Arc<dyn Executable>, AbiError> {
        Ok(Arc::new(CpuExecutable(plan::Plan::new(program))))
    }

    fn upload(&self, _device: u32, array: HostArray) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        let data = Storage::from_host(&array);
        Ok(Arc::new(CpuBuffer(Tensor::new(array.ty, data))))
    }
}

quabla_abi::export_backend!(CpuBackend);
