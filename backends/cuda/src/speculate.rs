//! A `cond` inside a loop whose branches are kernels alone runs every branch and picks the
//! results of the one its index names with a kernel (`pick_kernel`), instead of reading the
//! index back: a branch decided on the host is a wait for the device at every iteration, and
//! it keeps the loop out of a CUDA graph (`loop_graph.rs`). The branches are pure (kernels
//! only, QIR's ops defined for every input), so running the untaken ones changes nothing but
//! the work done; branches are speculated only while they are small (`MAX_ELEMENTS`).

use crate::elementwise::c_type;
use crate::fusion::Kernel;
use crate::plan::{Plan, Step};
use quabla_abi::{DType, TensorType};

/// The most elements the kernels of a `cond`'s branches may compute together for the
/// branches to be speculated: above it, the untaken branches' work would outweigh a wait.
pub const MAX_ELEMENTS: usize = 1 << 22;

/// Whether `p` only queues kernels (regions that are speculated `cond`s included): what a
/// speculated branch or a CUDA graph may hold.
pub fn device_only(p: &Plan) -> bool {
    let mut stack = vec![p];
    while let Some(q) = stack.pop() {
        for s in &q.steps {
            match s {
                Step::Constant { .. }
                | Step::Kernel(_)
                | Step::Update { .. }
                | Step::Alias { .. } => {}
                Step::Speculate { branches, .. } => stack.extend(branches.iter()),
                Step::Linalg { .. }
                | Step::HostCallback { .. }
                | Step::Cond { .. }
                | Step::While { .. } => return false,
            }
        }
    }
    true
}

/// The elements the kernels of `p` compute (regions included); a kernel running a whole
/// loop (`device_loop.rs`) counts as more than `MAX_ELEMENTS`, being no cheap branch to run
/// in vain.
pub fn work(p: &Plan) -> usize {
    p.kernels()
        .iter()
        .map(|k| {
            if k.device_loop {
                MAX_ELEMENTS + 1
            } else {
                k.elements
            }
        })
        .fold(0, usize::saturating_add)
}

/// The kernel picking a `cond`'s results: parameters the index (of type `index`), then each
/// branch's results in branch-major order, then `results` (value ids of the plan, of types
/// `types`) it writes: `out_r = branch[clamp(index)]_r`, an out-of-range index taking the
/// last branch, as `cond`.
pub fn pick_kernel(
    name: &str,
    index: DType,
    branches: usize,
    results: &[usize],
    types: &[TensorType],
) -> Kernel {
    let mut params = vec![format!("const {}* __restrict__ idx", c_type(index))];
    for j in 0..branches {
        for (r, &v) in results.iter().enumerate() {
            params.push(format!(
                "const {}* __restrict__ b{j}_{r}",
                c_type(types[v].dtype)
            ));
        }
    }
    let mut lines = String::new();
    for (r, &v) in results.iter().enumerate() {
        params.push(format!("{}* __restrict__ out{r}", c_type(types[v].dtype)));
        let pick = (0..branches.saturating_sub(1)).rev().fold(
            format!("b{}_{r}[i]", branches.saturating_sub(1)),
            |rest, j| format!("(b == {j} ? b{j}_{r}[i] : {rest})"),
        );
        lines.push_str(&format!(
            "    if (i < {}ull) out{r}[i] = {pick};\n",
            types[v].num_elements()
        ));
    }
    params.push("unsigned long long n".into());
    let body = format!(
        "extern \"C\" __global__ void {name}({}) {{\n  long long b = (long long)idx[0];\n  if (b < 0 || b >= {branches}) b = {};\n  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n       i += (unsigned long long)gridDim.x * blockDim.x) {{\n{lines}  }}\n}}\n",
        params.join(", "),
        branches.saturating_sub(1)
    );
    let mut param_types = vec![index];
    for _ in 0..branches {
        param_types.extend(results.iter().map(|&v| types[v].dtype));
    }
    param_types.extend(results.iter().map(|&v| types[v].dtype));
    Kernel {
        source: format!("{}\n{body}", crate::elementwise::PRELUDE),
        body,
        param_types,
        name: name.to_string(),
        reads: (0..1 + branches * results.len()).collect(),
        writes: results.to_vec(),
        elements: results
            .iter()
            .map(|&v| types[v].num_elements())
            .max()
            .unwrap_or(0),
        block_per_element: false,
        single_block: false,
        device_loop: false,
        shared_scratch: 0,
        gemm: None,
        fused: 0,
        reuses: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pick_clamps_the_index_and_selects_per_result() {
        let types = vec![
            TensorType::new(DType::I32, vec![]),
            TensorType::new(DType::F32, vec![4]),
            TensorType::new(DType::Bool, vec![]),
        ];
        let k = pick_kernel("p", DType::I32, 3, &[1, 2], &types);
        assert_eq!(
            (k.reads.len(), k.writes.clone(), k.elements),
            (7, vec![1, 2], 4)
        );
        assert!(k.body.contains("if (b < 0 || b >= 3) b = 2;"), "{}", k.body);
        assert!(
            k.body
                .contains("out0[i] = (b == 0 ? b0_0[i] : (b == 1 ? b1_0[i] : b2_0[i]));"),
            "{}",
            k.body
        );
        assert!(k.body.contains("if (i < 1ull) out1[i]"), "{}", k.body);
    }
}
