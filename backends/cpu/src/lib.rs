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
mod fold;
mod fused;
mod host_call;
mod linalg;
#[cfg(test)]
mod loop_allocation_tests;
mod matvec;
mod movement;
#[cfg(not(target_arch = "wasm32"))]
mod native;
mod plan;
mod pool;
mod reduce;
mod sort;
pub mod stats;
mod tensor;
pub mod vmath;

use quabla_abi::abi::AbiError;
use quabla_abi::plugin::{Arg, Backend, DeviceBuffer, Executable, PluginInfo};
use quabla_abi::qir::{OpKind, Program, QIR_VERSION, QIR_VERSION_MIN};
use quabla_abi::{DType, HostView, TensorType};
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
                .ok_or_else(|| {
                    AbiError::invalid("argument buffer does not belong to the CPU backend")
                })?;
            inputs.push(b.0.clone());
        }
        // A failure left by an earlier run that panicked midway must not be reported here.
        host_call::take_failure();
        let outs = exec::run(&self.0, inputs);
        if let Some(e) = host_call::take_failure() {
            return Err(e);
        }
        Ok(outs
            .into_iter()
            .map(|t| Arc::new(CpuBuffer(t)) as Arc<dyn DeviceBuffer>)
            .collect())
    }
}

impl Backend for CpuBackend {
    fn info(&self) -> PluginInfo {
        PluginInfo {
            name: "cpu".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            qir_min: QIR_VERSION_MIN,
            qir_max: QIR_VERSION,
            devices: vec![(
                "cpu".into(),
                format!("host CPU ({} threads)", rayon::current_num_threads()),
                host_memory_bytes(),
            )],
            ops: OpKind::backend_ops()
                .filter(|k| implements(*k))
                .map(|k| k.name().to_string())
                .collect(),
            dtypes: DType::ALL.to_vec(),
            region_kinds: vec!["cond".into(), "while".into()],
            synchronous_readback: true,
            extensions: vec![],
            max_buffer_bytes: host_memory_bytes(),
            accuracy: "exact".into(),
        }
    }

    fn compile(&self, program: Program) -> Result<Arc<dyn Executable>, AbiError> {
        Ok(Arc::new(CpuExecutable(plan::Plan::new(
            program,
            plan::Tier::from_env(),
        ))))
    }

    fn upload(&self, _device: u32, array: HostView<'_>) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        let data = Storage::from_host(&array);
        Ok(Arc::new(CpuBuffer(Tensor::new(array.ty, data))))
    }

    fn allocate(&self, _device: u32, ty: TensorType) -> Result<Arc<dyn DeviceBuffer>, AbiError> {
        let data = Storage::zeros(ty.dtype, ty.num_elements());
        Ok(Arc::new(CpuBuffer(Tensor::new(ty, data))))
    }
}

/// The CPU backend's capability allow-list: one arm per kind and no wildcard, so a primitive
/// added to QIR does not compile here until it is implemented (in `exec::eval_node`, whose
/// match is exhaustive too) or declined. The unary, binary and factorization families are
/// whole: their kernels (`elementwise.rs`, `linalg.rs`) match every variant exhaustively.
fn implements(kind: OpKind) -> bool {
    match kind {
        OpKind::Constant
        | OpKind::Unary(_)
        | OpKind::Binary(_)
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
        | OpKind::Linalg(_) => true,
        // Lowered away by the core before any backend sees a program.
        OpKind::StopGradient
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

/// The machine's physical memory (Linux: `MemTotal` of `/proc/meminfo`), or 0 when unknown.
/// No one value can be larger, so the kit refuses such programs at compile time.
fn host_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(0)
}

quabla_abi::export_backend!(CpuBackend);

#[cfg(test)]
mod tests {
    use super::*;
    use quabla_abi::qir::Program;

    fn run(p: &Program, inputs: Vec<Tensor>) -> Vec<Tensor> {
        exec::run(&plan::Plan::new(p.clone(), plan::Tier::Interpreter), inputs)
    }

    fn f32_tensor(shape: Vec<usize>, seed: u32) -> Tensor {
        let n: usize = shape.iter().product();
        let mut s = seed;
        let v: Vec<f32> = (0..n)
            .map(|_| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                (s >> 8) as f32 / (1 << 24) as f32 - 0.5
            })
            .collect();
        Tensor::new(
            quabla_abi::TensorType::new(DType::F32, shape),
            Storage::F32(v),
        )
    }

    /// Every value of `p`, each node evaluated on its own (no fusion), inputs first.
    pub(crate) fn node_by_node(p: &Program, inputs: Vec<Tensor>) -> Vec<Tensor> {
        let mut values = inputs;
        for node in &p.nodes {
            let args: Vec<&Tensor> = node.operands.iter().map(|o| &values[o.index()]).collect();
            let out = exec::eval_node(node, &args, &[]);
            values.extend(out);
        }
        values
    }

    pub(crate) fn bits(t: &Tensor) -> Vec<u32> {
        match &*t.data {
            Storage::F32(v) => v.iter().map(|x| x.to_bits()).collect(),
            Storage::Bool(v) => v.iter().map(|x| *x as u32).collect(),
            _ => unreachable!(),
        }
    }

    /// Reductions, gemm and fused tiles give the same bits on 1 and on 2 threads.
    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let p = Program::parse(
            "program(%0: f32[300,200], %1: f32[200,150]) {
  %2 = dot_general[lhs_batch=[], rhs_batch=[], lhs_contract=[1], rhs_contract=[0]](%0, %1) : f32[300,150]
  %3 = tanh(%2) : f32[300,150]
  %4 = mul(%3, %3) : f32[300,150]
  %5 = reduce[kind=sum, axes=[0,1]](%4) : f32[]
  %6 = reduce[kind=sum, axes=[0]](%0) : f32[200]
  %7 = cumulative[kind=sum, axis=0, reverse=false](%0) : f32[300,200]
  return %4, %5, %6, %7
}
",
        )
        .unwrap();
        p.validate().unwrap();
        let inputs = vec![f32_tensor(vec![300, 200], 1), f32_tensor(vec![200, 150], 2)];
        let with = |n: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
                .install(|| run(&p, inputs.clone()))
        };
        let (one, two) = (with(1), with(2));
        for (a, b) in one.iter().zip(&two) {
            assert_eq!(bits(a), bits(b));
        }
    }

    /// A fused chain of elementwise nodes equals the same nodes run one at a time (over
    /// several tiles, on rayon).
    #[test]
    fn fused_groups_equal_node_by_node_evaluation() {
        let p = Program::parse(
            "program(%0: f32[40000], %1: f32[40000]) {
  %2 = mul(%0, %1) : f32[40000]
  %3 = exp(%2) : f32[40000]
  %4 = compare[dir=gt](%3, %1) : bool[40000]
  %5 = select(%4, %3, %0) : f32[40000]
  %6 = convert(%5) : f64[40000]
  %7 = convert(%6) : f32[40000]
  return %7, %4
}
",
        )
        .unwrap();
        let plan = plan::Plan::new(p.clone(), plan::Tier::Interpreter);
        assert_eq!(plan.steps.len(), 1, "one fused step");
        let ins = vec![f32_tensor(vec![40000], 3), f32_tensor(vec![40000], 4)];
        let fused = run(&p, ins.clone());
        let values = node_by_node(&p, ins.clone());
        assert_eq!(bits(&fused[0]), bits(&values[7]));
        assert_eq!(bits(&fused[1]), bits(&values[4]));
        // One export: the tiles write straight into the output.
        let one = Program::parse(&p.to_string().replace("return %7, %4", "return %7")).unwrap();
        assert_eq!(bits(&run(&one, ins)[0]), bits(&values[7]));
    }

    /// `x * 0.9 + 0.1` as traced (constants broadcast from scalars) is one fused step after
    /// the constants, with the same bits as node-by-node evaluation, across several tiles.
    #[test]
    fn scalar_broadcasts_join_the_fused_group() {
        let p = Program::parse(
            "program(%0: f32[40000], %1: f32[1,1]) {
  %2 = sin(%0) : f32[40000]
  %3 = constant[value=[0.9]]() : f32[]
  %4 = broadcast_in_dim[dims=[]](%3) : f32[40000]
  %5 = mul(%2, %4) : f32[40000]
  %6 = constant[value=[0.1]]() : f32[]
  %7 = broadcast_in_dim[dims=[]](%6) : f32[40000]
  %8 = add(%5, %7) : f32[40000]
  %9 = reshape(%1) : f32[1]
  %10 = broadcast_in_dim[dims=[0]](%9) : f32[40000]
  %11 = sub(%8, %10) : f32[40000]
  %12 = broadcast_in_dim[dims=[1]](%0) : f32[3,40000]
  return %11, %4, %12
}
",
        )
        .unwrap();
        p.validate().unwrap();
        let plan = plan::Plan::new(p.clone(), plan::Tier::Interpreter);
        let kinds: Vec<String> = plan
            .steps
            .iter()
            .map(|s| match s {
                plan::Step::Fused(g) => format!("fused{:?}", g.nodes),
                plan::Step::Node(i) => format!("node{i}"),
            })
            .collect();
        // Constants hoisted; the splat %4 is also returned, so it is built whole first; the
        // reshape stays apart; the 3x broadcast of a full array is not a splat.
        assert_eq!(
            kinds,
            [
                "node1",
                "node4",
                "node2",
                "fused[0, 3, 5, 6]",
                "node7",
                "fused[8, 9]",
                "node10"
            ]
            .map(String::from)
        );
        let ins = vec![f32_tensor(vec![40000], 5), f32_tensor(vec![1, 1], 6)];
        let fused = run(&p, ins.clone());
        let values = node_by_node(&p, ins);
        assert_eq!(bits(&fused[0]), bits(&values[11]));
        assert_eq!(bits(&fused[1]), bits(&values[4]));
        assert_eq!(bits(&fused[2]), bits(&values[12]));
    }

    /// Values without elements but with huge other axes (from `cpu_compile`'s fuzzing: the
    /// iota alone ran for hours, folded at compile time) compile and run at once on every
    /// tier, inside a loop too, and keep their types.
    #[test]
    fn empty_values_with_huge_axes_cost_nothing() {
        let p = Program::parse(
            "program(%0: i32[]) {
  %1 = iota[dim=1]() : u32[3332089315326,0]
  %2 = broadcast_in_dim[dims=[0,1]](%1) : u32[3332089315326,0,4000000]
  %3 = transpose[perm=[1,0]](%1) : u32[0,3332089315326]
  %4, %5 = while(%0, %3) : i32[], u32[0,3332089315326] {
    cond(%0: i32[], %1: u32[0,3332089315326]) {
      %2 = constant[value=[3]]() : i32[]
      %3 = compare[dir=lt](%0, %2) : bool[]
      return %3
    }
    body(%0: i32[], %1: u32[0,3332089315326]) {
      %2 = constant[value=[1]]() : i32[]
      %3 = add(%0, %2) : i32[]
      %4 = iota[dim=0]() : u32[0,3332089315326]
      %5 = add(%1, %4) : u32[0,3332089315326]
      return %3, %5
    }
  }
  return %2, %4, %5
}
",
        )
        .unwrap();
        p.validate().unwrap();
        let zero = Tensor::new(
            quabla_abi::TensorType::new(DType::I32, vec![]),
            Storage::I32(vec![0]),
        );
        for tier in [
            plan::Tier::Interpreter,
            plan::Tier::Loops,
            plan::Tier::Compiled,
        ] {
            let out = exec::run(&plan::Plan::new(p.clone(), tier), vec![zero.clone()]);
            assert_eq!(out[0].ty.shape, [3332089315326, 0, 4000000], "{tier:?}");
            assert_eq!(out[0].data.len(), 0, "{tier:?}");
            assert_eq!(
                *out[1].data,
                Storage::I32(vec![3]),
                "{tier:?}: the loop ran"
            );
            assert_eq!(out[2].ty.shape, [0, 3332089315326], "{tier:?}");
            assert_eq!(out[2].data.len(), 0, "{tier:?}");
        }
    }

    /// A bias row broadcast along a new leading axis joins the fused step and is rebuilt
    /// per tile (tiles start mid-row: 4096 is no multiple of 13), with the bits of the
    /// broadcast array; the same broadcast run as a node (returned whole) gives them too.
    #[test]
    fn row_broadcasts_join_the_fused_group_with_node_by_node_bits() {
        let p = Program::parse(
            "program(%0: f32[2000,13], %1: f32[13], %2: f32[3]) {
  %3 = broadcast_in_dim[dims=[1]](%1) : f32[2000,13]
  %4 = add(%0, %3) : f32[2000,13]
  %5 = tanh(%4) : f32[2000,13]
  %6 = broadcast_in_dim[dims=[2]](%2) : f32[5,2,3]
  %7 = broadcast_in_dim[dims=[0]](%2) : f32[3,4]
  return %5, %6, %7
}
",
        )
        .unwrap();
        p.validate().unwrap();
        let plan = plan::Plan::new(p.clone(), plan::Tier::Interpreter);
        let fused: Vec<Vec<usize>> = plan
            .steps
            .iter()
            .filter_map(|s| match s {
                plan::Step::Fused(g) => Some(g.nodes.clone()),
                plan::Step::Node(_) => None,
            })
            .collect();
        // %6 is returned whole, so it is built as a node; %7 (along a trailing axis)
        // repeats no row and is one anyway.
        assert_eq!(fused, [vec![0, 1, 2]]);
        let ins = vec![
            f32_tensor(vec![2000, 13], 7),
            f32_tensor(vec![13], 8),
            f32_tensor(vec![3], 9),
        ];
        let out = run(&p, ins.clone());
        let values = node_by_node(&p, ins.clone());
        assert_eq!(bits(&out[0]), bits(&values[5]));
        let strided = |ty: &quabla_abi::TensorType, x: &Tensor, dims: &[usize]| {
            let strides: Vec<isize> = (0..ty.rank())
                .map(|d| match dims.iter().position(|&k| k == d) {
                    Some(i) => movement::istrides(x.shape())[i],
                    None => 0,
                })
                .collect();
            movement::strided(x, &ty.shape, 0, &strides)
        };
        let want = strided(&values[3].ty, &ins[1], &[1]);
        assert_eq!(
            bits(&values[3]),
            bits(&Tensor::new(values[3].ty.clone(), want))
        );
        let want = strided(&out[1].ty, &ins[2], &[2]);
        assert_eq!(bits(&out[1]), bits(&Tensor::new(out[1].ty.clone(), want)));
        let want = strided(&out[2].ty, &ins[2], &[0]);
        assert_eq!(bits(&out[2]), bits(&Tensor::new(out[2].ty.clone(), want)));
    }
}
