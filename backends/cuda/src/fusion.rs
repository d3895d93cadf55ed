//! Elementwise fusion (`plan.rs` calls it): each run of consecutive elementwise nodes over
//! one shape becomes one CUDA kernel (a grid-stride loop over the elements, the
//! intermediates in registers), which reads the values defined before the run and writes
//! only those used after it.

use crate::elementwise::{c_type, expression, PRELUDE};
use quabla_abi::qir::Program;
use quabla_abi::{DType, TensorType};

/// One generated kernel.
#[derive(Clone, Debug)]
pub struct Kernel {
    /// The `extern "C"` entry point's name.
    pub name: String,
    /// The whole CUDA C source (prelude included).
    pub source: String,
    /// The kernel function alone (what follows the prelude in `source`).
    pub body: String,
    /// The parameters' dtypes: `reads` then `writes`.
    pub param_types: Vec<DType>,
    /// Values read, in parameter order (pointers), then values written.
    pub reads: Vec<usize>,
    pub writes: Vec<usize>,
    /// Elements of the region's shape: the loop's trip count (its last parameter).
    pub elements: usize,
    /// One block of threads per element, folding cooperatively in a fixed tree order
    /// (`kernels::block_fold`), instead of one thread per element: the launch gives it a
    /// power-of-two block of at most `kernels::FOLD_BLOCK` threads and a block per element.
    pub block_per_element: bool,
    /// Where the kernel is a `dot_general` that is a (batched) matrix product of row-major
    /// operands, its shape: the GPU runtime may run it on cuBLAS instead (the kernel stays the
    /// fallback, and what the host emulation runs).
    pub gemm: Option<crate::kernels::Gemm>,
}

/// Per value, the index of the last node that reads it (0 when none does).
pub fn last_uses(p: &Program, values: usize) -> Vec<usize> {
    let mut last_use = vec![0usize; values];
    for (k, node) in p.nodes.iter().enumerate() {
        for o in &node.operands {
            last_use[o.index()] = k;
        }
    }
    last_use
}

/// The kernel of the elementwise run starting at node `start` (following elementwise nodes
/// of the same shape), and the run's end: it reads the values defined before the run and
/// writes those used after it or returned.
pub fn fuse_run(
    p: &Program,
    start: usize,
    first: &[quabla_abi::qir::ValueId],
    types: &[TensorType],
    last_use: &[usize],
    outputs: &[usize],
    name: &str,
) -> Result<(Kernel, usize), String> {
    let shape = &p.nodes[start].results[0].shape;
    let mut end = start + 1;
    while end < p.nodes.len()
        && p.nodes[end].op.is_elementwise()
        && &p.nodes[end].results[0].shape == shape
    {
        end += 1;
    }
    let defined: Vec<usize> = (start..end).map(|j| first[j].index()).collect();
    let mut reads = Vec::new();
    for node in &p.nodes[start..end] {
        for o in &node.operands {
            let v = o.index();
            if !defined.contains(&v) && !reads.contains(&v) {
                reads.push(v);
            }
        }
    }
    let writes: Vec<usize> = defined
        .iter()
        .copied()
        .filter(|&v| outputs.contains(&v) || last_use[v] >= end)
        .collect();
    let statements = region_body(p, start, end, first, types)?;
    let body = function(name, &reads, &writes, types, &statements);
    let kernel = Kernel {
        source: format!("{PRELUDE}\n{body}"),
        body,
        param_types: reads
            .iter()
            .chain(&writes)
            .map(|&v| types[v].dtype)
            .collect(),
        name: name.to_string(),
        reads,
        writes,
        elements: TensorType::new(DType::F32, shape.clone()).num_elements(),
        block_per_element: false,
        gemm: None,
    };
    Ok((kernel, end))
}

/// The statements computing nodes `start..end` into registers `v<id>`.
fn region_body(
    p: &Program,
    start: usize,
    end: usize,
    first: &[quabla_abi::qir::ValueId],
    types: &[TensorType],
) -> Result<String, String> {
    let mut body = String::new();
    for (node, id) in p.nodes[start..end].iter().zip(&first[start..end]) {
        let args: Vec<String> = node
            .operands
            .iter()
            .map(|o| format!("v{}", o.index()))
            .collect();
        let ty = types[node.operands[0].index()].dtype;
        let out = node.results[0].dtype;
        let e = expression(&node.op, &args, ty, out)?;
        body.push_str(&format!("    {} v{} = {e};\n", c_type(out), id.index()));
    }
    Ok(body)
}

fn function(
    name: &str,
    reads: &[usize],
    writes: &[usize],
    types: &[TensorType],
    body: &str,
) -> String {
    let mut params: Vec<String> = reads
        .iter()
        .map(|&v| format!("const {}* __restrict__ in{v}", c_type(types[v].dtype)))
        .collect();
    params.extend(
        writes
            .iter()
            .map(|&v| format!("{}* __restrict__ out{v}", c_type(types[v].dtype))),
    );
    params.push("unsigned long long n".into());
    let loads: String = reads
        .iter()
        .map(|&v| format!("    {} v{v} = in{v}[i];\n", c_type(types[v].dtype)))
        .collect();
    let stores: String = writes
        .iter()
        .map(|&v| format!("    out{v}[i] = v{v};\n"))
        .collect();
    format!(
        "extern \"C\" __global__ void {name}({}) {{\n  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n       i += (unsigned long long)gridDim.x * blockDim.x) {{\n{loads}{body}{stores}  }}\n}}\n",
        params.join(", ")
    )
}

/// Every program of `p`'s tree (itself, then its regions, depth first), with a name for
/// its kernels. Iterative: nesting is bounded by validation, but no recursion is needed.
pub fn programs(p: &Program) -> Vec<(String, &Program)> {
    let mut out = Vec::new();
    let mut stack = vec![("k".to_string(), p)];
    while let Some((name, q)) = stack.pop() {
        for (i, node) in q.nodes.iter().enumerate() {
            for (r, region) in node.op.regions().into_iter().enumerate().rev() {
                stack.push((format!("{name}_n{i}r{r}"), region));
            }
        }
        out.push((name, q));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chain over one shape is one kernel that reads the values from before it and writes
    /// only what is used after it; a reduction ends the chain, and a new shape starts another.
    #[test]
    fn runs_of_one_shape_fuse_and_write_only_escaping_values() {
        let p = Program::parse(
            "program(%0: f32[8], %1: f32[8]) {
  %2 = mul(%0, %1) : f32[8]
  %3 = exp(%2) : f32[8]
  %4 = compare[dir=gt](%3, %1) : bool[8]
  %5 = select(%4, %3, %0) : f32[8]
  %6 = reduce[kind=sum, axes=[0]](%5) : f32[]
  %7 = neg(%6) : f32[]
  return %5, %7
}
",
        )
        .unwrap();
        // The fused run, the reduction's own kernel, then the next run.
        let ks = crate::plan::kernels(&p, "t").unwrap();
        assert_eq!(ks.len(), 3);
        assert_eq!(
            (ks[0].reads.clone(), ks[0].writes.clone()),
            (vec![0, 1], vec![5])
        );
        assert_eq!(ks[0].elements, 8);
        assert_eq!(
            (ks[2].reads.clone(), ks[2].writes.clone()),
            (vec![6], vec![7])
        );
        assert_eq!(ks[2].elements, 1);
        assert!(ks[0].source.contains("extern \"C\" __global__ void t_0("));
        assert!(ks[0].source.contains("float v3 = expf(v2);"));
        assert!(!ks[0].source.contains("out3["), "an intermediate is stored");
    }

    /// Regions are walked without recursion, each program named by its path.
    #[test]
    fn programs_of_a_tree() {
        let p = Program::parse(
            "program(%0: i32[], %1: f32[]) {
  %2, %3 = while(%0, %1) : i32[], f32[] {
    cond(%0: i32[], %1: f32[]) {
      %2 = constant[value=[3]]() : i32[]
      %3 = compare[dir=lt](%0, %2) : bool[]
      return %3
    }
    body(%0: i32[], %1: f32[]) {
      %2 = constant[value=[1]]() : i32[]
      %3 = add(%0, %2) : i32[]
      %4 = sin(%1) : f32[]
      return %3, %4
    }
    }
  return %2, %3
}
",
        )
        .unwrap();
        let names: Vec<String> = programs(&p).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, vec!["k", "k_n0r0", "k_n0r1"]);
        let body = programs(&p)[2].1;
        let ks = crate::plan::kernels(body, "b").unwrap();
        assert_eq!(ks.len(), 1, "add and sin share the scalar shape");
        assert_eq!(ks[0].writes, vec![3, 4]);
    }
}
