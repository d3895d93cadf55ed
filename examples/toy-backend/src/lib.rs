//! `toy`: the smallest useful backend plugin, as a third party writes one against
//! `quabla-abi` alone (see `docs/writing-a-backend.md`, which walks through this file).
//!
//! It runs programs of `add`, `mul`, `neg` and `exp` over f32 arrays by interpreting their
//! nodes in order. The plugin kit does the rest: decoding and validating programs, refusing
//! ops and dtypes outside the capabilities below, checking arguments, handle tables and
//! catching panics.

use quabla_abi::abi::AbiError;
use quabla_abi::plugin::{
    Arg, Backend, DeviceBuffer, DownloadEvent, Executable, PluginInfo, ReadyEvent,
};
use quabla_abi::qir::{BinaryOp, LinalgKind, Op, OpKind, Program, UnaryOp};
use quabla_abi::qir::{QIR_VERSION, QIR_VERSION_MIN};
use quabla_abi::{DType, HostView, TensorType};
use std::any::Any;
use std::sync::Arc;

/// The capability allow-list: one arm per op kind and no wildcard over kinds, so a primitive
/// added to QIR is a compile error here until this backend implements or declines it.
fn implements(kind: OpKind) -> bool {
    match kind {
        OpKind::Unary(u) => matches!(u, UnaryOp::Neg | UnaryOp::Exp),
        OpKind::Binary(b) => matches!(b, BinaryOp::Add | BinaryOp::Mul),
        OpKind::Linalg(
            LinalgKind::Cholesky
            | LinalgKind::Lu
            | LinalgKind::TriangularSolve
            | LinalgKind::Eigh
            | LinalgKind::Qr
            | LinalgKind::Svd,
        ) => false,
        OpKind::Constant
        | OpKind::Compare
        | OpKind::Select
        | OpKind::Convert
        | OpKind::Bitcast
        | OpKind::Iota
        | OpKind::BroadcastInDim
        | OpKind::Reshape
        | OpKind::Transpose
        | OpKind::Slice
        | OpKind::Pad
        | OpKind::Concatenate
        | OpKind::Reverse
        | OpKind::Reduce
        | OpKind::Cumulative
        | OpKind::Sort
        | OpKind::DotGeneral
        | OpKind::Gather
        | OpKind::ScatterAdd
        | OpKind::DynamicSlice
        | OpKind::DynamicUpdateSlice
        | OpKind::Cond
        | OpKind::While
        | OpKind::HostCallback
        | OpKind::StopGradient
        | OpKind::CustomJvp
        | OpKind::CustomVjp
        | OpKind::CustomVjpLinear
        | OpKind::Checkpoint
        | OpKind::NamedAxis
        | OpKind::Scan
        | OpKind::BoundedWhile
        | OpKind::LinearSolve => false,
    }
}

/// The backend: stateless, its memory is host memory.
pub struct ToyBackend;

impl Backend for ToyBackend {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "toy".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            qir_min: QIR_VERSION_MIN,
            qir_max: QIR_VERSION,
            devices: vec![("cpu".into(), "toy interpreter".into(), 0)],
            ops: OpKind::backend_ops()
                .filter(|k| implements(*k))
                .map(|k| k.name().to_string())
                .collect(),
            dtypes: vec![DType::F32],
            region_kinds: vec![],
            synchronous_readback: true,
            extensions: vec![],
            max_buffer_bytes: 0,
            // f32 `exp` is computed in f64 and rounded once: correctly rounded in practice.
            accuracy: "exact".into(),
        }
    }

    fn compile(&self, program: Program) -> Result<Arc<dyn Executable>, AbiError> {
        Ok(Arc::new(ToyExecutable(program)))
    }

    fn upload(&self, _device: u32, array: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        let values = array.to_array().to_f32().map_err(AbiError::invalid)?;
        Ok(Arc::new(ToyBuffer {
            ty: array.ty,
            values,
        }))
    }
}

struct ToyBuffer {
    ty: TensorType,
    values: Vec<f32>,
}

impl DeviceBuffer for ToyBuffer {
    fn ty(&self) -> &TensorType {
        &self.ty
    }
    fn download(&self) -> Result<Box<dyn DownloadEvent>, AbiError> {
        let bytes = self.values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Ok(Box::new(ReadyEvent(bytes)))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A validated program of the four ops (the kit refused anything else).
struct ToyExecutable(Program);

impl Executable for ToyExecutable {
    fn execute(&self, args: Vec<Arg>) -> Result<Vec<Arc<dyn DeviceBuffer>>, AbiError> {
        let mut values: Vec<Arc<Vec<f32>>> = Vec::new();
        for a in &args {
            let b = a
                .buffer
                .as_any()
                .downcast_ref::<ToyBuffer>()
                .ok_or_else(|| AbiError::invalid("a buffer of another backend"))?;
            values.push(Arc::new(b.values.clone()));
        }
        for node in &self.0.nodes {
            let x = |k: usize| values[node.operands[k].index()].clone();
            let out: Vec<f32> = match &node.op {
                Op::Unary(UnaryOp::Neg) => x(0).iter().map(|v| -v).collect(),
                Op::Unary(UnaryOp::Exp) => x(0).iter().map(|v| (*v as f64).exp() as f32).collect(),
                Op::Binary(BinaryOp::Add) => {
                    x(0).iter().zip(x(1).iter()).map(|(a, b)| a + b).collect()
                }
                Op::Binary(BinaryOp::Mul) => {
                    x(0).iter().zip(x(1).iter()).map(|(a, b)| a * b).collect()
                }
                // Unreachable through the kit, which checks every op against `implements`;
                // an error rather than a panic all the same.
                op => {
                    return Err(AbiError::unimplemented(format!(
                        "toy has no `{}`",
                        op.name()
                    )))
                }
            };
            values.push(Arc::new(out));
        }
        // One buffer per output, of the program's output type: the host checks both.
        let types = self.0.value_types();
        Ok(self
            .0
            .outputs
            .iter()
            .map(|o| {
                Arc::new(ToyBuffer {
                    ty: types[o.index()].clone(),
                    values: values[o.index()].to_vec(),
                }) as Arc<dyn DeviceBuffer>
            })
            .collect())
    }
}

quabla_abi::export_backend!(ToyBackend);
