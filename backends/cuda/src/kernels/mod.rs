//! CUDA C for the ops that are not elementwise: one kernel per node, a grid-stride loop over
//! its output elements (or, for cumulative ops and sorts, over its lines), shapes baked in
//! as constants. Movement ops are index maps (`movement.rs`); reductions fold each output's
//! elements in one fixed order (`reduce.rs`); `dot.rs`, `indexing.rs` (gather,
//! deterministic scatter-add; many windows by sorted keys, `scatter_keyed.rs`),
//! `sort.rs` (a rank sort, or a merge sort in passes for long
//! lines) and `factor.rs` (small Cholesky, LU and triangular solves) hold the rest.

mod dot;
pub mod factor;
mod gemm;
mod indexing;
mod movement;
mod reduce;
mod scatter_keyed;
mod sort;

use crate::elementwise::c_type;
use crate::fusion::Kernel;
pub(crate) use dot::accumulation as dot_accumulation;
pub use dot::{in_run as dot_in_run, IN_RUN_MAX_TERMS};
pub use gemm::Gemm;
pub(crate) use movement::window_store;
use quabla_abi::qir::Op;
use quabla_abi::{DType, TensorType};
pub(crate) use reduce::fold as reduce_fold;
pub use sort::{FIRST_RUN as SORT_FIRST_RUN, RANK_MAX_LINE as SORT_RANK_MAX_LINE};

/// The steps of a node that takes several kernels, with values passed between them: a
/// `sort` of lines longer than [`SORT_RANK_MAX_LINE`] (a merge sort in passes, `sort.rs`), a
/// `scatter_add` of many windows (by sorted keys, `scatter_keyed.rs`); the types of the
/// values they add, numbered from `first_new`. `None` where the node's one kernel
/// ([`node_kernel`]) is the one to use.
pub(crate) fn node_steps(
    name: &str,
    node: &quabla_abi::qir::Node,
    operands: &[usize],
    types: &[TensorType],
    result: usize,
    first_new: usize,
) -> Option<(Vec<crate::plan::Step>, Vec<TensorType>)> {
    let n = Node {
        name,
        operands,
        types,
        result,
        out: types.get(result)?,
    };
    match &node.op {
        Op::Sort {
            axis,
            num_keys,
            descending,
        } if n
            .out
            .shape
            .get(*axis)
            .is_some_and(|&len| len > SORT_RANK_MAX_LINE) =>
        {
            Some(sort::merge_sort(
                &n,
                *axis,
                *num_keys,
                *descending,
                first_new,
            ))
        }
        Op::ScatterAdd(d) => scatter_keyed::steps(&n, d, first_new),
        _ => None,
    }
}

/// Statements that split the flat index `i` into coordinates `c0..` of `shape`.
pub(super) fn coordinates(shape: &[usize], var: &str, prefix: &str) -> String {
    let mut s = format!("    unsigned long long {prefix}t = {var};\n");
    for k in (0..shape.len()).rev() {
        if k == 0 {
            s.push_str(&format!(
                "    long long {prefix}{k} = (long long){prefix}t;\n"
            ));
        } else {
            s.push_str(&format!(
                "    long long {prefix}{k} = (long long)({prefix}t % {d}ull); {prefix}t /= {d}ull;\n",
                d = shape[k].max(1)
            ));
        }
    }
    s
}

/// The row-major flat index of coordinate expressions `coords` in `shape`.
pub(super) fn flat(coords: &[String], shape: &[usize]) -> String {
    if coords.is_empty() {
        return "0".into();
    }
    let mut stride = 1usize;
    let mut terms = Vec::new();
    for k in (0..shape.len()).rev() {
        terms.push(format!("({}) * {stride}ll", coords[k]));
        stride *= shape[k];
    }
    terms.join(" + ")
}

/// Each value once, in first-use order (an op may read one value twice: one pointer does).
pub(super) fn distinct(reads: &[(usize, DType)]) -> Vec<(usize, DType)> {
    let mut out: Vec<(usize, DType)> = Vec::new();
    for r in reads {
        if !out.iter().any(|o| o.0 == r.0) {
            out.push(*r);
        }
    }
    out
}

/// A kernel's parameter list: a read-only pointer `in<id>` per read, a pointer `out<id>`
/// per write, then the element count `n` (the runtime's and the emulation's calling
/// convention).
pub(crate) fn parameters(reads: &[(usize, DType)], writes: &[(usize, DType)]) -> String {
    let mut params: Vec<String> = reads
        .iter()
        .map(|(v, t)| format!("const {}* __restrict__ in{v}", c_type(*t)))
        .collect();
    params.extend(
        writes
            .iter()
            .map(|(v, t)| format!("{}* __restrict__ out{v}", c_type(*t))),
    );
    params.push("unsigned long long n".into());
    params.join(", ")
}

/// The most threads a block-per-element kernel runs with: the size of its shared arrays.
pub const FOLD_BLOCK: usize = 256;

/// How a kernel's loop over its elements is spread over the GPU.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Spread {
    /// One thread per element (a grid-stride loop over threads).
    Thread,
    /// One block per element (a grid-stride loop over blocks), the block folding together:
    /// shared arrays `qpart` (of the accumulator's C type) and `qhas` are declared.
    Block { acc_ty: &'static str },
}

/// Statements that fold the block's per-thread partials `acc` (present where `has`) in a
/// fixed tree order (thread t takes t + s's partial, s halving from blockDim.x / 2), then
/// store the fold into `out<result>[i]` from thread 0. The order depends only on the block
/// size, which the runtime fixes per kernel: results are identical run to run. `step` folds
/// `x` into `acc`, as `reduce::fold`'s steps do.
pub(super) fn block_fold(acc_ty: &str, step: &str, result: usize, out_ty: &str) -> String {
    format!(
        "    qpart[threadIdx.x] = acc; qhas[threadIdx.x] = has;
    __syncthreads();
    for (unsigned int s = blockDim.x >> 1; s > 0u; s >>= 1) {{
      if (threadIdx.x < s && qhas[threadIdx.x + s]) {{
        {acc_ty} x = qpart[threadIdx.x + s];
        if (qhas[threadIdx.x]) {{ acc = qpart[threadIdx.x]; {step} }} else {{ acc = x; }}
        qpart[threadIdx.x] = acc; qhas[threadIdx.x] = 1;
      }}
      __syncthreads();
    }}
    if (threadIdx.x == 0u) out{result}[i] = ({out_ty})qpart[0];
    __syncthreads();
"
    )
}

/// A kernel `name` reading `reads` and writing `writes` (pointers `in<id>`, `out<id>`),
/// whose `body` runs once per index `i` of a grid-stride loop over `elements`.
pub(super) fn kernel(
    name: &str,
    reads: &[(usize, DType)],
    writes: &[(usize, DType)],
    elements: usize,
    body: &str,
) -> Kernel {
    spread_kernel(name, reads, writes, elements, body, Spread::Thread)
}

/// `kernel`, its elements spread as `spread` says.
pub(super) fn spread_kernel(
    name: &str,
    reads: &[(usize, DType)],
    writes: &[(usize, DType)],
    elements: usize,
    body: &str,
    spread: Spread,
) -> Kernel {
    let reads = &distinct(reads);
    let head = match spread {
        Spread::Thread => "  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n       i += (unsigned long long)gridDim.x * blockDim.x) {\n".to_string(),
        Spread::Block { acc_ty } => format!(
            "  __shared__ {acc_ty} qpart[{FOLD_BLOCK}];\n  __shared__ unsigned char qhas[{FOLD_BLOCK}];\n  for (unsigned long long i = blockIdx.x; i < n; i += gridDim.x) {{\n"
        ),
    };
    let function = format!(
        "extern \"C\" __global__ void {name}({}) {{\n{head}{body}  }}\n}}\n",
        parameters(reads, writes)
    );
    Kernel {
        source: format!("{}\n{function}", crate::elementwise::PRELUDE),
        body: function,
        param_types: reads.iter().chain(writes).map(|r| r.1).collect(),
        reads: reads.iter().map(|r| r.0).collect(),
        writes: writes.iter().map(|w| w.0).collect(),
        elements,
        name: name.to_string(),
        block_per_element: spread != Spread::Thread,
        single_block: false,
        device_loop: false,
        shared_scratch: 0,
        gemm: None,
        fused: 0,
        reuses: Vec::new(),
    }
}

/// What a node's kernel is made from: its name, operands and result.
pub(super) struct Node<'a> {
    pub name: &'a str,
    pub operands: &'a [usize],
    pub types: &'a [TensorType],
    pub result: usize,
    pub out: &'a TensorType,
}

impl Node<'_> {
    /// Operand `k`'s type.
    pub fn ty(&self, k: usize) -> &TensorType {
        &self.types[self.operands[k]]
    }

    /// Operand `k` as a kernel read.
    pub fn read(&self, k: usize) -> (usize, DType) {
        (self.operands[k], self.ty(k).dtype)
    }

    /// Every operand as a kernel read.
    pub fn reads(&self) -> Vec<(usize, DType)> {
        (0..self.operands.len()).map(|k| self.read(k)).collect()
    }

    /// The output coordinates' names `c0..`.
    pub fn oc(&self) -> Vec<String> {
        (0..self.out.shape.len()).map(|k| format!("c{k}")).collect()
    }

    /// A kernel writing `value` (an expression of the output coordinates) to each output
    /// element.
    pub fn map(&self, reads: &[(usize, DType)], value: &str) -> Kernel {
        self.map_with("", reads, value)
    }

    /// `map`, with `statements` (defining what `value` uses) before the store.
    pub fn map_with(&self, statements: &str, reads: &[(usize, DType)], value: &str) -> Kernel {
        let body = format!(
            "{}{statements}    out{}[i] = {value};\n",
            coordinates(&self.out.shape, "i", "c"),
            self.result
        );
        self.kernel(reads, self.out.num_elements(), &body)
    }

    /// A kernel of this node's one result over `elements` trips.
    pub fn kernel(&self, reads: &[(usize, DType)], elements: usize, body: &str) -> Kernel {
        self.spread_kernel(reads, elements, body, Spread::Thread)
    }

    /// `kernel`, its elements spread as `spread` says.
    pub fn spread_kernel(
        &self,
        reads: &[(usize, DType)],
        elements: usize,
        body: &str,
        spread: Spread,
    ) -> Kernel {
        spread_kernel(
            self.name,
            reads,
            &[(self.result, self.out.dtype)],
            elements,
            body,
            spread,
        )
    }
}

/// The kernel writing a `dynamic_update_slice`'s update into its operand's own buffer
/// (`Step::Update`): `node`'s result is then that buffer.
pub(crate) fn update_kernel(
    name: &str,
    operands: &[usize],
    types: &[TensorType],
    result: usize,
) -> Kernel {
    let n = Node {
        name,
        operands,
        types,
        result,
        out: &types[result],
    };
    movement::dynamic_update_window(&n)
}

/// The kernel of a node that is neither elementwise nor a region, a constant or a reshape
/// (which the plan handles); `Ok(None)` for ops this compiler does not cover yet. A `reduce`
/// with a `prologue` (the fused run that alone computes its operand) computes the operand
/// where it reads it.
pub fn node_kernel(
    name: &str,
    node: &quabla_abi::qir::Node,
    operands: &[usize],
    types: &[TensorType],
    result: usize,
    prologue: Option<&crate::fusion::Prologue>,
) -> Result<Option<Kernel>, String> {
    // A host call makes no kernel (and may have no result to name one after).
    if let Op::HostCallback { .. } = node.op {
        return Ok(None);
    }
    let n = Node {
        name,
        operands,
        types,
        result,
        out: &node.results[0],
    };
    Ok(match &node.op {
        Op::Iota { dim } => Some(n.map(&[], &format!("({})c{dim}", c_type(n.out.dtype)))),
        Op::BroadcastInDim { dims } => Some(movement::broadcast_in_dim(&n, dims)),
        Op::Transpose { perm } => Some(movement::transpose(&n, perm)),
        Op::Slice { start, strides, .. } => Some(movement::slice(&n, start, strides)),
        Op::Reverse { dims } => Some(movement::reverse(&n, dims)),
        Op::Pad { low, interior, .. } => Some(movement::pad(&n, low, interior)),
        Op::Concatenate { dim } => Some(movement::concatenate(&n, *dim)),
        Op::DynamicSlice { sizes } => Some(movement::dynamic_slice(&n, sizes)),
        Op::DynamicUpdateSlice => Some(movement::dynamic_update_slice(&n)),
        Op::Reduce { kind, axes } => Some(reduce::reduce(&n, *kind, axes, prologue)),
        Op::Cumulative {
            kind,
            axis,
            reverse,
        } => Some(reduce::cumulative(&n, *kind, *axis, *reverse)),
        Op::DotGeneral(d) => Some(dot::dot_general(&n, d)),
        Op::Gather(d) => Some(indexing::gather(&n, d)),
        Op::ScatterAdd(d) => Some(indexing::scatter_add(&n, d)),
        Op::Sort {
            axis,
            num_keys,
            descending,
        } => Some(sort::sort(&n, *axis, *num_keys, *descending)),
        Op::Constant(_)
        | Op::Unary(_)
        | Op::Binary(_)
        | Op::Compare(_)
        | Op::Select
        | Op::Convert
        | Op::Bitcast
        | Op::Reshape
        | Op::Cond { .. }
        | Op::While { .. }
        | Op::HostCallback { .. }
        | Op::StopGradient
        | Op::CustomJvp { .. }
        | Op::CustomVjp { .. }
        | Op::CustomVjpLinear { .. }
        | Op::Checkpoint { .. }
        | Op::NamedAxis { .. }
        | Op::Scan { .. }
        | Op::BoundedWhile { .. }
        | Op::LinearSolve { .. }
        | Op::Linalg(_) => None,
    })
}
