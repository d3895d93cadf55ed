//! Compiling a QIR program into steps: fused elementwise kernels, one kernel per other node,
//! aliases for reshapes, constants uploaded once, and regions compiled once as nested plans.

use crate::buffer::GpuBuffer;
use crate::context::Gpu;
use crate::kernels::{dot, elementwise, indexing, movement, reduce, sort, KernelSource};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::{Op, Program};
use quabla_abi::{DType, TensorType};
use std::sync::Arc;

pub enum Step {
    Constant {
        value: usize,
        buffer: Arc<GpuBuffer>,
    },
    Kernel {
        pipeline: Arc<wgpu::ComputePipeline>,
        reads: Vec<usize>,
        writes: Vec<usize>,
        groups: (u32, u32, u32),
    },
    Alias {
        from: usize,
        to: usize,
    },
    Cond {
        operands: Vec<usize>,
        branches: Vec<Plan>,
        results: Vec<usize>,
    },
    While {
        carry: Vec<usize>,
        cond: Box<Plan>,
        body: Box<Plan>,
        results: Vec<usize>,
    },
}

pub struct Plan {
    pub types: Vec<TensorType>,
    pub num_inputs: usize,
    pub steps: Vec<Step>,
    pub outputs: Vec<usize>,
    /// Values no later step reads, to release after each step (their memory returns to the
    /// driver while the program still runs).
    pub release_after: Vec<Vec<usize>>,
}

impl Plan {
    pub fn new(gpu: &Arc<Gpu>, p: &Program) -> Result<Plan, AbiError> {
        let mut types = p.value_types();
        let first = p.first_result_ids();
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); types.len()];
        for (k, node) in p.nodes.iter().enumerate() {
            for o in &node.operands {
                users[o.index()].push(k);
            }
        }
        let outputs: Vec<usize> = p.outputs.iter().map(|o| o.index()).collect();
        let mut steps = Vec::new();
        // Which node range each step covers, to compute releases.
        let mut step_last_node = Vec::new();
        // Values of the plan's own (a sort's permutations) and the step that last reads each.
        let mut scratch_release: Vec<(usize, usize)> = Vec::new();
        let mut k = 0;
        while k < p.nodes.len() {
            let node = &p.nodes[k];
            let id = first[k].index();
            if node.op.is_elementwise() {
                let end = fusion_end(p, k, &first, &users, &outputs, gpu.max_bindings);
                let nodes: Vec<_> = p.nodes[k..end].iter().collect();
                let ids: Vec<usize> = (k..end).map(|j| first[j].index()).collect();
                let ops: Vec<Vec<usize>> = nodes
                    .iter()
                    .map(|n| n.operands.iter().map(|o| o.index()).collect())
                    .collect();
                let writes: Vec<usize> = ids
                    .iter()
                    .copied()
                    .filter(|v| escapes(*v, end, &users, &outputs))
                    .collect();
                steps.push(kernel(
                    gpu,
                    elementwise::fused(&nodes, &ids, &ops, &types, &writes),
                )?);
                step_last_node.push(end - 1);
                k = end;
                continue;
            }
            let a: Vec<usize> = node.operands.iter().map(|o| o.index()).collect();
            if let Op::Sort {
                axis,
                num_keys,
                descending,
            } = &node.op
            {
                let sorted = SortNode {
                    operands: &a,
                    axis: *axis,
                    num_keys: *num_keys,
                    descending: *descending,
                    first_result: id,
                };
                for (s, release) in plan_sort(gpu, &sorted, &mut types)? {
                    steps.push(s);
                    step_last_node.push(k);
                    if let Some(v) = release {
                        scratch_release.push((steps.len() - 1, v));
                    }
                }
                k += 1;
                continue;
            }
            if let Op::HostCallback { .. } = node.op {
                // Declined in `implements`; a host call may have no result to plan.
                return Err(AbiError::unimplemented(
                    "the wgpu backend does not call into the host; run programs with host \
                     callbacks on the CPU backend",
                ));
            }
            let t = |v: usize| &types[v];
            let ot = &node.results[0];
            let mut push = |s: Step| {
                steps.push(s);
                step_last_node.push(k);
            };
            match &node.op {
                Op::Constant(h) => push(Step::Constant {
                    value: id,
                    buffer: Arc::new(GpuBuffer::upload(gpu, &h.view())),
                }),
                Op::Reshape => push(Step::Alias { from: a[0], to: id }),
                Op::Iota { dim } => push(kernel(gpu, movement::iota(*dim, id, ot))?),
                Op::BroadcastInDim { dims } => push(kernel(
                    gpu,
                    movement::broadcast_in_dim(a[0], t(a[0]), dims, id, ot),
                )?),
                Op::Transpose { perm } => push(kernel(
                    gpu,
                    movement::transpose(a[0], t(a[0]), perm, id, ot),
                )?),
                Op::Slice { start, strides, .. } => push(kernel(
                    gpu,
                    movement::slice(a[0], t(a[0]), start, strides, id, ot),
                )?),
                Op::Reverse { dims } => {
                    push(kernel(gpu, movement::reverse(a[0], t(a[0]), dims, id))?)
                }
                Op::Pad { low, interior, .. } => push(kernel(
                    gpu,
                    movement::pad(a[0], t(a[0]), a[1], low, interior, id, ot),
                )?),
                Op::Concatenate { dim } => {
                    let mut offset = 0;
                    for &x in &a {
                        let src = movement::concatenate_part(x, t(x), *dim, offset, id, ot);
                        offset += t(x).shape[*dim];
                        push(kernel(gpu, src)?);
                    }
                }
                Op::Reduce { kind, axes } => push(kernel(
                    gpu,
                    reduce::reduce(a[0], t(a[0]), *kind, axes, id, ot),
                )?),
                Op::Cumulative {
                    kind,
                    axis,
                    reverse,
                } => push(kernel(
                    gpu,
                    reduce::cumulative(a[0], t(a[0]), *kind, *axis, *reverse, id),
                )?),
                Op::DotGeneral(d) => push(kernel(
                    gpu,
                    dot::dot_general(a[0], t(a[0]), a[1], t(a[1]), d, id, ot),
                )?),
                Op::Gather(g) => push(kernel(
                    gpu,
                    indexing::gather(a[0], t(a[0]), a[1], t(a[1]), g, id, ot),
                )?),
                Op::ScatterAdd(s) => push(kernel(
                    gpu,
                    indexing::scatter_add(a[0], t(a[0]), a[1], t(a[1]), a[2], t(a[2]), s, id),
                )?),
                Op::DynamicSlice { .. } => push(kernel(
                    gpu,
                    indexing::dynamic_slice(a[0], t(a[0]), &a[1..], id, ot),
                )?),
                Op::DynamicUpdateSlice => push(kernel(
                    gpu,
                    indexing::dynamic_update_slice(a[0], t(a[0]), a[1], t(a[1]), &a[2..], id),
                )?),
                Op::Cond { branches } => {
                    let branches = branches
                        .iter()
                        .map(|b| Plan::new(gpu, b))
                        .collect::<Result<Vec<_>, _>>()?;
                    push(Step::Cond {
                        operands: a,
                        branches,
                        results: (id..id + node.results.len()).collect(),
                    })
                }
                Op::While { cond, body } => push(Step::While {
                    carry: a,
                    cond: Box::new(Plan::new(gpu, cond)?),
                    body: Box::new(Plan::new(gpu, body)?),
                    results: (id..id + node.results.len()).collect(),
                }),
                // Fused above: an elementwise node never reaches this match.
                Op::Unary(_)
                | Op::Binary(_)
                | Op::Compare(_)
                | Op::Select
                | Op::Convert
                | Op::Bitcast => unreachable!("elementwise nodes are planned as fused runs"),
                Op::Sort { .. } => unreachable!("sort nodes are planned above"),
                // Declined in `implements` (the kit refuses them before compile); kept as an
                // error, not a panic, for a plan built outside the kit.
                Op::Linalg(_)
                | Op::HostCallback { .. }
                | Op::StopGradient
                | Op::CustomJvp { .. }
                | Op::CustomVjp { .. }
                | Op::CustomVjpLinear { .. }
                | Op::Checkpoint { .. }
                | Op::NamedAxis { .. }
                | Op::Scan { .. }
                | Op::BoundedWhile { .. }
                | Op::LinearSolve { .. } => {
                    return Err(AbiError::unimplemented(format!(
                        "the wgpu backend has no kernel for `{}`; run this program on the CPU \
                         backend",
                        node.op.name()
                    )))
                }
            }
            k += 1;
        }
        let mut release_after = releases(&types, p, &outputs, &step_last_node);
        for (s, v) in scratch_release {
            release_after[s].push(v);
        }
        Ok(Plan {
            types,
            num_inputs: p.inputs.len(),
            steps,
            outputs,
            release_after,
        })
    }
}

/// A `sort` node's operands and where its results go.
struct SortNode<'a> {
    operands: &'a [usize],
    axis: usize,
    num_keys: usize,
    descending: bool,
    first_result: usize,
}

/// The steps of a `sort` (identity permutation, merge passes, one gather per operand), each
/// with the scratch permutation it reads for the last time; the permutations are new values
/// appended to `types`.
fn plan_sort(
    gpu: &Gpu,
    node: &SortNode,
    types: &mut Vec<TensorType>,
) -> Result<Vec<(Step, Option<usize>)>, AbiError> {
    let shape_ty = types[node.operands[0]].clone();
    let geometry = sort::Lines::new(&shape_ty, node.axis);
    let keys: Vec<(usize, DType)> = node.operands[..node.num_keys]
        .iter()
        .map(|&v| (v, types[v].dtype))
        .collect();
    if keys.len() as u32 + 2 > gpu.max_bindings {
        return Err(AbiError::unimplemented(format!(
            "the wgpu backend sorts by at most {} keys on this device (it binds {} storage \
             buffers a kernel); got {}",
            gpu.max_bindings.saturating_sub(2),
            gpu.max_bindings,
            keys.len()
        )));
    }
    let scratch = |types: &mut Vec<TensorType>| {
        types.push(TensorType::new(
            DType::U32,
            vec![geometry.lines * geometry.n],
        ));
        types.len() - 1
    };
    let mut perm = scratch(types);
    let mut out = vec![(kernel(gpu, sort::identity(&geometry, perm))?, None)];
    for w in geometry.widths() {
        let next = scratch(types);
        let src = sort::merge_pass(&geometry, &keys, node.descending, perm, w, next);
        out.push((kernel(gpu, src)?, Some(perm)));
        perm = next;
    }
    for (m, &v) in node.operands.iter().enumerate() {
        let src = sort::gather(&geometry, v, types[v].dtype, perm, node.first_result + m);
        out.push((kernel(gpu, src)?, None));
    }
    if let Some(last) = out.last_mut() {
        last.1 = Some(perm);
    }
    Ok(out)
}

fn kernel(gpu: &Gpu, src: KernelSource) -> Result<Step, AbiError> {
    Ok(Step::Kernel {
        pipeline: gpu.pipeline(&src.wgsl)?,
        reads: src.reads,
        writes: src.writes,
        groups: src.groups,
    })
}

/// True when value `v` (made by a node before `end`) is read after `end` or returned.
fn escapes(v: usize, end: usize, users: &[Vec<usize>], outputs: &[usize]) -> bool {
    outputs.contains(&v) || users[v].iter().any(|&u| u >= end)
}

/// The end (exclusive) of the fused group starting at node `start`: following elementwise
/// nodes of the same shape, as long as the kernel's bindings stay within the device limit.
fn fusion_end(
    p: &Program,
    start: usize,
    first: &[quabla_abi::qir::ValueId],
    users: &[Vec<usize>],
    outputs: &[usize],
    max_bindings: u32,
) -> usize {
    let shape = &p.nodes[start].results[0].shape;
    let mut end = start + 1;
    while end < p.nodes.len() {
        let n = &p.nodes[end];
        if !n.op.is_elementwise() || &n.results[0].shape != shape {
            break;
        }
        let ids: Vec<usize> = (start..=end).map(|j| first[j].index()).collect();
        let mut reads: Vec<usize> = Vec::new();
        for j in start..=end {
            for o in &p.nodes[j].operands {
                if !ids.contains(&o.index()) && !reads.contains(&o.index()) {
                    reads.push(o.index());
                }
            }
        }
        let writes = ids
            .iter()
            .filter(|v| escapes(**v, end + 1, users, outputs))
            .count();
        if (reads.len() + writes) as u32 > max_bindings {
            break;
        }
        end += 1;
    }
    end
}

/// For each step, the values it reads for the last time (outputs are kept).
fn releases(
    types: &[TensorType],
    p: &Program,
    outputs: &[usize],
    step_last_node: &[usize],
) -> Vec<Vec<usize>> {
    let mut last_node: Vec<Option<usize>> = vec![None; types.len()];
    for (k, node) in p.nodes.iter().enumerate() {
        for o in &node.operands {
            last_node[o.index()] = Some(k);
        }
    }
    let mut out = vec![Vec::new(); step_last_node.len()];
    for (v, ln) in last_node.iter().enumerate() {
        let Some(ln) = *ln else { continue };
        if outputs.contains(&v) {
            continue;
        }
        // The last of the steps that cover node `ln` (a concatenation has several).
        if let Some(cover) = step_last_node.iter().position(|&e| e >= ln) {
            let e = step_last_node[cover];
            if let Some(s) = step_last_node.iter().rposition(|&x| x == e) {
                out[s].push(v);
            }
        }
    }
    out
}
