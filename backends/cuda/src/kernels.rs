//! CUDA C for the ops that are not elementwise: one kernel per node, a grid-stride loop over
//! its output elements (or, for cumulative ops, over its lines), shapes baked in as
//! constants. Movement ops are index maps; reductions fold each output's elements in one
//! fixed order (deterministic run to run; f32 sums and products accumulate in f64); dynamic
//! slices clamp their starts as QIR says.

use crate::elementwise::c_type;
use crate::fusion::Kernel;
use quabla_abi::qir::{CumulativeKind, DotDims, GatherDims, Node, Op, ReduceKind, ScatterDims};
use quabla_abi::{DType, TensorType};

/// Statements that split the flat index `i` into coordinates `c0..` of `shape`.
fn coordinates(shape: &[usize], var: &str, prefix: &str) -> String {
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
fn flat(coords: &[String], shape: &[usize]) -> String {
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
fn distinct(reads: &[(usize, DType)]) -> Vec<(usize, DType)> {
    let mut out: Vec<(usize, DType)> = Vec::new();
    for r in reads {
        if !out.iter().any(|o| o.0 == r.0) {
            out.push(*r);
        }
    }
    out
}

fn kernel(
    name: &str,
    reads: &[(usize, DType)],
    write: (usize, DType),
    elements: usize,
    body: &str,
) -> Kernel {
    let reads = &distinct(reads);
    let mut params: Vec<String> = reads
        .iter()
        .map(|(v, t)| format!("const {}* __restrict__ in{v}", c_type(*t)))
        .collect();
    params.push(format!("{}* __restrict__ out{}", c_type(write.1), write.0));
    params.push("unsigned long long n".into());
    let function = format!(
        "extern \"C\" __global__ void {name}({}) {{\n  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n       i += (unsigned long long)gridDim.x * blockDim.x) {{\n{body}  }}\n}}\n",
        params.join(", ")
    );
    Kernel {
        source: format!("{}\n{function}", crate::elementwise::PRELUDE),
        body: function,
        param_types: reads.iter().map(|r| r.1).chain([write.1]).collect(),
        reads: reads.iter().map(|r| r.0).collect(),
        writes: vec![write.0],
        elements,
        name: name.to_string(),
    }
}

/// The kernel of a node that is neither elementwise nor a region, a constant or a reshape
/// (which the plan handles); `Ok(None)` for ops this compiler does not cover yet.
pub fn node_kernel(
    name: &str,
    node: &Node,
    operands: &[usize],
    types: &[TensorType],
    result: usize,
) -> Result<Option<Kernel>, String> {
    let out = &node.results[0];
    let oc: Vec<String> = (0..out.shape.len()).map(|k| format!("c{k}")).collect();
    let coords = coordinates(&out.shape, "i", "c");
    let ty = |k: usize| &types[operands[k]];
    let read = |k: usize| (operands[k], ty(k).dtype);
    let n = out.num_elements();
    let elementwise_map = |reads: Vec<(usize, DType)>, value: String| {
        let body = format!("{coords}    out{result}[i] = {value};\n");
        Some(kernel(name, &reads, (result, out.dtype), n, &body))
    };
    Ok(match &node.op {
        Op::Iota { dim } => elementwise_map(vec![], format!("({})c{dim}", c_type(out.dtype))),
        Op::BroadcastInDim { dims } => {
            let src = &ty(0).shape;
            let ic: Vec<String> = dims
                .iter()
                .enumerate()
                .map(|(j, &d)| {
                    if src[j] == 1 {
                        "0".into()
                    } else {
                        oc[d].clone()
                    }
                })
                .collect();
            elementwise_map(
                vec![read(0)],
                format!("in{}[{}]", operands[0], flat(&ic, src)),
            )
        }
        Op::Transpose { perm } => {
            let src = &ty(0).shape;
            let mut ic = vec![String::new(); src.len()];
            for (i, &p) in perm.iter().enumerate() {
                ic[p] = oc[i].clone();
            }
            elementwise_map(
                vec![read(0)],
                format!("in{}[{}]", operands[0], flat(&ic, src)),
            )
        }
        Op::Slice { start, strides, .. } => {
            let ic: Vec<String> = (0..oc.len())
                .map(|k| format!("{}ll + c{k} * {}ll", start[k], strides[k]))
                .collect();
            let src = &ty(0).shape;
            elementwise_map(
                vec![read(0)],
                format!("in{}[{}]", operands[0], flat(&ic, src)),
            )
        }
        Op::Reverse { dims } => {
            let src = &ty(0).shape;
            let ic: Vec<String> = (0..oc.len())
                .map(|k| {
                    if dims.contains(&k) {
                        format!("{}ll - 1 - c{k}", src[k])
                    } else {
                        oc[k].clone()
                    }
                })
                .collect();
            elementwise_map(
                vec![read(0)],
                format!("in{}[{}]", operands[0], flat(&ic, src)),
            )
        }
        Op::Pad { low, interior, .. } => {
            let src = &ty(0).shape;
            let mut inside = Vec::new();
            let mut ic = Vec::new();
            for k in 0..src.len() {
                let step = interior[k] as i64 + 1;
                let p = format!("(c{k} - ({}ll))", low[k]);
                inside.push(format!(
                    "{p} >= 0 && {p} % {step}ll == 0 && {p} / {step}ll < {}ll",
                    src[k]
                ));
                ic.push(format!("{p} / {step}ll"));
            }
            let cond = if inside.is_empty() {
                "1".to_string()
            } else {
                inside.join(" && ")
            };
            elementwise_map(
                vec![read(0), read(1)],
                format!(
                    "({cond}) ? in{}[{}] : in{}[0]",
                    operands[0],
                    flat(&ic, src),
                    operands[1]
                ),
            )
        }
        Op::Concatenate { dim } => {
            let mut value = String::new();
            let mut offset = 0usize;
            let reads: Vec<(usize, DType)> = (0..operands.len()).map(read).collect();
            for (j, &v) in operands.iter().enumerate() {
                let src = &types[v].shape;
                let mut ic = oc.clone();
                ic[*dim] = format!("(c{dim} - {offset}ll)");
                let pick = format!("in{v}[{}]", flat(&ic, src));
                offset += src[*dim];
                value = if j + 1 == operands.len() {
                    format!("{value}{pick}")
                } else {
                    format!("{value}c{dim} < {offset}ll ? {pick} : ")
                };
            }
            elementwise_map(reads, value)
        }
        Op::DynamicSlice { sizes } => {
            let src = &ty(0).shape;
            let ic: Vec<String> = (0..src.len())
                .map(|k| {
                    let hi = src[k] - sizes[k];
                    format!(
                        "c{k} + (long long)min(max(in{s}[0], 0), {hi})",
                        s = operands[k + 1]
                    )
                })
                .collect();
            let reads = (0..operands.len()).map(read).collect();
            elementwise_map(reads, format!("in{}[{}]", operands[0], flat(&ic, src)))
        }
        Op::DynamicUpdateSlice => {
            let (src, upd) = (&ty(0).shape, &ty(1).shape);
            let mut prelude = String::new();
            let mut inside = Vec::new();
            let mut uc = Vec::new();
            for k in 0..src.len() {
                let hi = src[k] - upd[k];
                prelude.push_str(&format!(
                    "    long long s{k} = (long long)min(max(in{s}[0], 0), {hi});\n",
                    s = operands[k + 2]
                ));
                inside.push(format!("c{k} >= s{k} && c{k} < s{k} + {}ll", upd[k]));
                uc.push(format!("c{k} - s{k}"));
            }
            let cond = if inside.is_empty() {
                "1".to_string()
            } else {
                inside.join(" && ")
            };
            let body = format!(
                "{coords}{prelude}    out{result}[i] = ({cond}) ? in{u}[{}] : in{o}[i];\n",
                flat(&uc, upd),
                u = operands[1],
                o = operands[0]
            );
            let reads: Vec<(usize, DType)> = (0..operands.len()).map(read).collect();
            Some(kernel(name, &reads, (result, out.dtype), n, &body))
        }
        Op::Reduce { kind, axes } => Some(reduce(
            name,
            *kind,
            axes,
            read(0),
            &ty(0).shape,
            result,
            out,
        )),
        Op::Cumulative {
            kind,
            axis,
            reverse,
        } => Some(cumulative(
            name,
            *kind,
            *axis,
            *reverse,
            read(0),
            out,
            result,
        )),
        Op::DotGeneral(d) => Some(dot_general(
            name,
            d,
            [read(0), read(1)],
            [&ty(0).shape, &ty(1).shape],
            result,
            out,
        )),
        Op::ScatterAdd(d) => Some(scatter_add(
            name,
            d,
            [read(0), read(1), read(2)],
            [&ty(0).shape, &ty(1).shape, &ty(2).shape],
            result,
            out,
        )),
        Op::Sort {
            axis,
            num_keys,
            descending,
        } => {
            let x: Vec<(usize, DType)> = (0..operands.len()).map(read).collect();
            Some(sort(name, &x, *axis, *num_keys, *descending, out, result))
        }
        Op::Gather(d) => Some(gather(
            name,
            d,
            [read(0), read(1)],
            [&ty(0).shape, &ty(1).shape],
            result,
            out,
        )),
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
        | Op::StopGradient
        | Op::CustomJvp { .. }
        | Op::CustomVjp { .. }
        | Op::CustomVjpLinear { .. }
        | Op::Checkpoint { .. }
        | Op::Scan { .. }
        | Op::LinearSolve { .. }
        | Op::Linalg(_) => None,
    })
}

/// The accumulator's C type and the fold of `x` into `acc` for a reduction kind.
fn fold(kind: ReduceKind, dtype: DType) -> (&'static str, String) {
    let acc_ty = match (kind, dtype) {
        // f32 sums and products in f64: one rounding at the end.
        (ReduceKind::Sum | ReduceKind::Prod, DType::F32) => "double",
        _ => c_type(dtype),
    };
    let step = match (kind, dtype) {
        (ReduceKind::Sum, DType::I32) => "acc = (int)((unsigned int)acc + (unsigned int)x);",
        (ReduceKind::Prod, DType::I32) => "acc = (int)((unsigned int)acc * (unsigned int)x);",
        (ReduceKind::Sum, _) => "acc = acc + x;",
        (ReduceKind::Prod, _) => "acc = acc * x;",
        (ReduceKind::Max, DType::F32) => "acc = qmax_float(acc, x);",
        (ReduceKind::Max, DType::F64) => "acc = qmax_double(acc, x);",
        (ReduceKind::Min, DType::F32) => "acc = qmin_float(acc, x);",
        (ReduceKind::Min, DType::F64) => "acc = qmin_double(acc, x);",
        (ReduceKind::Max, _) => "acc = x > acc ? x : acc;",
        (ReduceKind::Min, _) => "acc = x < acc ? x : acc;",
        (ReduceKind::And, _) => "acc = acc & x;",
        (ReduceKind::Or, _) => "acc = acc | x;",
    };
    (acc_ty, step.to_string())
}

/// What reducing nothing gives.
fn identity(kind: ReduceKind, dtype: DType) -> &'static str {
    let float = matches!(dtype, DType::F32 | DType::F64);
    match (kind, dtype) {
        (ReduceKind::Sum | ReduceKind::Or, _) => "0",
        (ReduceKind::Prod | ReduceKind::And, _) => "1",
        // NVRTC has no math.h (no INFINITY): the infinity from its bits.
        (ReduceKind::Max, _) if float => "(-__int_as_float(0x7f800000))",
        (ReduceKind::Min, _) if float => "__int_as_float(0x7f800000)",
        (ReduceKind::Max, DType::I32) => "(-2147483647 - 1)",
        (ReduceKind::Min, DType::I32) => "2147483647",
        (ReduceKind::Max, _) => "0",
        (ReduceKind::Min, DType::U32) => "4294967295u",
        (ReduceKind::Min, _) => "1",
    }
}

/// Each output element folds its elements in row-major order of the reduced axes, starting
/// from the first (so signed zeros and NaNs are folded, not an identity's).
fn reduce(
    name: &str,
    kind: ReduceKind,
    axes: &[usize],
    x: (usize, DType),
    src: &[usize],
    result: usize,
    out: &TensorType,
) -> Kernel {
    let kept: Vec<usize> = (0..src.len()).filter(|a| !axes.contains(a)).collect();
    let reduced: Vec<usize> = axes.to_vec();
    let rshape: Vec<usize> = reduced.iter().map(|&a| src[a]).collect();
    let count: usize = rshape.iter().product();
    let coords = coordinates(&out.shape, "i", "c");
    let (acc_ty, step) = fold(kind, x.1);
    let mut ic = vec![String::new(); src.len()];
    for (j, &a) in kept.iter().enumerate() {
        ic[a] = format!("c{j}");
    }
    for (j, &a) in reduced.iter().enumerate() {
        ic[a] = format!("r{j}");
    }
    let index = flat(&ic, src);
    let body = if count == 0 {
        format!(
            "    out{result}[i] = ({})({});\n",
            c_type(out.dtype),
            identity(kind, x.1)
        )
    } else {
        let rcoords = coordinates(&rshape, "j", "r");
        format!(
            "{coords}    {acc_ty} acc = 0;\n    for (unsigned long long j = 0; j < {count}ull; ++j) {{\n{rcoords}    {acc_ty} x = ({acc_ty})in{v}[{index}];\n    if (j == 0) {{ acc = x; continue; }}\n    {step}\n    }}\n    out{result}[i] = ({})acc;\n",
            c_type(out.dtype),
            v = x.0
        )
    };
    kernel(name, &[x], (result, out.dtype), out.num_elements(), &body)
}

/// One thread per line along `axis`, folding in order (backwards when `reverse`), each
/// element written as the fold so far, in the element type (as the CPU's scan).
fn cumulative(
    name: &str,
    kind: CumulativeKind,
    axis: usize,
    reverse: bool,
    x: (usize, DType),
    out: &TensorType,
    result: usize,
) -> Kernel {
    let shape = &out.shape;
    let len = shape[axis];
    let mut line_shape = shape.clone();
    line_shape[axis] = 1;
    let lines: usize = line_shape.iter().product();
    let coords = coordinates(&line_shape, "i", "c");
    let stride: usize = shape[axis + 1..].iter().product();
    let mut base = vec![String::new(); shape.len()];
    for (k, b) in base.iter_mut().enumerate() {
        *b = if k == axis {
            "0".into()
        } else {
            format!("c{k}")
        };
    }
    let start = flat(&base, shape);
    let reduce_kind = match kind {
        CumulativeKind::Sum => ReduceKind::Sum,
        CumulativeKind::Prod => ReduceKind::Prod,
        CumulativeKind::Max => ReduceKind::Max,
        CumulativeKind::Min => ReduceKind::Min,
    };
    let (_, step) = fold(reduce_kind, x.1);
    let t = c_type(x.1);
    let position = if reverse {
        format!("({len}ll - 1 - k)")
    } else {
        "k".into()
    };
    let body = if len == 0 {
        String::new()
    } else {
        format!(
            "{coords}    long long base = {start};\n    {t} acc = 0;\n    for (long long k = 0; k < {len}ll; ++k) {{\n    long long at = base + {position} * {stride}ll;\n    {t} x = in{v}[at];\n    if (k == 0) {{ acc = x; }} else {{ {step} }}\n    out{result}[at] = acc;\n    }}\n",
            v = x.0
        )
    };
    kernel(name, &[x], (result, out.dtype), lines, &body)
}

/// `dot_general` as one thread per output element, summing over the contracted axes in
/// row-major order (f32 in f64; integers wrapping). A plain, deterministic kernel: the
/// fallback for integer dots and the reference a cuBLAS path will be checked against.
fn dot_general(
    name: &str,
    d: &DotDims,
    x: [(usize, DType); 2],
    shapes: [&[usize]; 2],
    result: usize,
    out: &TensorType,
) -> Kernel {
    let [l, r] = shapes;
    let free = |rank: usize, batch: &[usize], contract: &[usize]| -> Vec<usize> {
        (0..rank)
            .filter(|a| !batch.contains(a) && !contract.contains(a))
            .collect()
    };
    let (lf, rf) = (
        free(l.len(), &d.lhs_batch, &d.lhs_contract),
        free(r.len(), &d.rhs_batch, &d.rhs_contract),
    );
    // Output axes: batch, then lhs free, then rhs free.
    let mut lc = vec![String::new(); l.len()];
    let mut rc = vec![String::new(); r.len()];
    let mut axis = 0;
    for (&a, &b) in d.lhs_batch.iter().zip(&d.rhs_batch) {
        lc[a] = format!("c{axis}");
        rc[b] = format!("c{axis}");
        axis += 1;
    }
    for &a in &lf {
        lc[a] = format!("c{axis}");
        axis += 1;
    }
    for &b in &rf {
        rc[b] = format!("c{axis}");
        axis += 1;
    }
    let kshape: Vec<usize> = d.lhs_contract.iter().map(|&a| l[a]).collect();
    for (j, (&a, &b)) in d.lhs_contract.iter().zip(&d.rhs_contract).enumerate() {
        lc[a] = format!("r{j}");
        rc[b] = format!("r{j}");
    }
    let count: usize = kshape.iter().product();
    let (acc_ty, step) = match out.dtype {
        DType::I32 => ("unsigned int", "acc += (unsigned int)a * (unsigned int)b;"),
        DType::U32 => ("unsigned int", "acc += a * b;"),
        _ => ("double", "acc += (double)a * (double)b;"),
    };
    let t = c_type(out.dtype);
    let body = format!(
        "{coords}    {acc_ty} acc = 0;\n    for (unsigned long long j = 0; j < {count}ull; ++j) {{\n{rcoords}    {t} a = in{lv}[{li}];\n    {t} b = in{rv}[{ri}];\n    {step}\n    }}\n    out{result}[i] = ({t})acc;\n",
        coords = coordinates(&out.shape, "i", "c"),
        rcoords = coordinates(&kshape, "j", "r"),
        lv = x[0].0,
        rv = x[1].0,
        li = flat(&lc, l),
        ri = flat(&rc, r),
    );
    kernel(name, &x, (result, out.dtype), out.num_elements(), &body)
}

/// XLA's gather: each output element's batch coordinates pick an index vector (the indices'
/// last axis), whose starts are clamped so the slice fits; its offset coordinates walk the
/// slice.
fn gather(
    name: &str,
    d: &GatherDims,
    x: [(usize, DType); 2],
    shapes: [&[usize]; 2],
    result: usize,
    out: &TensorType,
) -> Kernel {
    let [src, idx] = shapes;
    let batch_axes: Vec<usize> = (0..out.shape.len())
        .filter(|a| !d.offset_dims.contains(a))
        .collect();
    // The operand axes the offset coordinates walk: those not collapsed, in order.
    let walked: Vec<usize> = (0..src.len())
        .filter(|a| !d.collapsed_slice_dims.contains(a))
        .collect();
    let mut prelude = String::new();
    let mut ic: Vec<String> = (0..src.len()).map(|_| "0".to_string()).collect();
    for (k, &a) in d.start_index_map.iter().enumerate() {
        let mut at: Vec<String> = batch_axes.iter().map(|b| format!("c{b}")).collect();
        at.push(format!("{k}"));
        let hi = src[a] - d.slice_sizes[a];
        prelude.push_str(&format!(
            "    long long s{k} = (long long)min(max(in{iv}[{}], 0), {hi});\n",
            flat(&at, idx),
            iv = x[1].0
        ));
        ic[a] = format!("s{k}");
    }
    for (j, &a) in walked.iter().enumerate() {
        let o = d.offset_dims[j];
        ic[a] = format!("{} + c{o}", ic[a]);
    }
    let body = format!(
        "{coords}{prelude}    out{result}[i] = in{sv}[{}];\n",
        flat(&ic, src),
        coords = coordinates(&out.shape, "i", "c"),
        sv = x[0].0
    );
    kernel(name, &x, (result, out.dtype), out.num_elements(), &body)
}

/// XLA's scatter-add, deterministically: one thread per operand element adds, in update
/// order, every window that covers it and lies wholly inside the operand (a window that
/// does not is dropped), so no two threads write one element and no atomics are needed.
fn scatter_add(
    name: &str,
    d: &ScatterDims,
    x: [(usize, DType); 3],
    shapes: [&[usize]; 3],
    result: usize,
    out: &TensorType,
) -> Kernel {
    let [src, idx, upd] = shapes;
    let scatter_axes: Vec<usize> = (0..upd.len())
        .filter(|a| !d.update_window_dims.contains(a))
        .collect();
    let batch: Vec<usize> = scatter_axes.iter().map(|&a| upd[a]).collect();
    let windows: usize = batch.iter().product();
    let window_axes: Vec<usize> = (0..src.len())
        .filter(|a| !d.inserted_window_dims.contains(a))
        .collect();
    let mut size = vec![1usize; src.len()];
    for (j, &a) in window_axes.iter().enumerate() {
        size[a] = upd[d.update_window_dims[j]];
    }
    let mut loop_body = coordinates(&batch, "w", "b");
    let mut start: Vec<String> = (0..src.len()).map(|_| "0".to_string()).collect();
    let mut checks = Vec::new();
    for (k, &a) in d.scatter_dims_to_operand_dims.iter().enumerate() {
        let mut at: Vec<String> = (0..batch.len()).map(|j| format!("b{j}")).collect();
        at.push(format!("{k}"));
        loop_body.push_str(&format!(
            "    long long s{k} = (long long)in{iv}[{}];\n",
            flat(&at, idx),
            iv = x[1].0
        ));
        checks.push(format!("s{k} >= 0 && s{k} <= {}ll", src[a] - size[a]));
        start[a] = format!("s{k}");
    }
    for (a, st) in start.iter().enumerate() {
        checks.push(format!("c{a} >= {st} && c{a} < {st} + {}ll", size[a]));
    }
    let mut uc = vec![String::new(); upd.len()];
    for (j, &a) in scatter_axes.iter().enumerate() {
        uc[a] = format!("b{j}");
    }
    for (j, &a) in window_axes.iter().enumerate() {
        uc[d.update_window_dims[j]] = format!("c{a} - {}", start[a]);
    }
    let (t, add) = match out.dtype {
        DType::I32 => ("int", "acc = (int)((unsigned int)acc + (unsigned int)u);"),
        DType::Bool => ("unsigned char", "acc = acc | u;"),
        dt => (c_type(dt), "acc = acc + u;"),
    };
    let cond = if checks.is_empty() {
        "1".to_string()
    } else {
        checks.join(" && ")
    };
    let body = format!(
        "{coords}    {t} acc = in{ov}[i];\n    for (unsigned long long w = 0; w < {windows}ull; ++w) {{\n{loop_body}    if ({cond}) {{ {t} u = in{uv}[{}]; {add} }}\n    }}\n    out{result}[i] = acc;\n",
        flat(&uc, upd),
        coords = coordinates(&out.shape, "i", "c"),
        ov = x[0].0,
        uv = x[2].0,
    );
    kernel(name, &x, (result, out.dtype), out.num_elements(), &body)
}

/// A stable sort of every line along `axis`, one thread per line: the operands are copied
/// to the results, then an insertion sort moves every result's elements together, ordered
/// lexicographically by the first `num_keys` in numpy's order (NaN after everything, `-0`
/// tying `+0`). Plain and exact; a parallel merge sort is what a GPU run will want.
fn sort(
    name: &str,
    x: &[(usize, DType)],
    axis: usize,
    num_keys: usize,
    descending: bool,
    out: &TensorType,
    first_result: usize,
) -> Kernel {
    let shape = &out.shape;
    let len = shape[axis];
    let mut line_shape = shape.clone();
    line_shape[axis] = 1;
    let lines: usize = line_shape.iter().product();
    let stride: usize = shape[axis + 1..].iter().product();
    let mut base = vec![String::new(); shape.len()];
    for (k, b) in base.iter_mut().enumerate() {
        *b = if k == axis {
            "0".into()
        } else {
            format!("c{k}")
        };
    }
    let outs: Vec<usize> = (0..x.len()).map(|k| first_result + k).collect();
    let mut copy = String::new();
    let mut swap = String::new();
    for (k, (v, t)) in x.iter().enumerate() {
        let o = outs[k];
        copy.push_str(&format!("      out{o}[at] = in{v}[at];\n"));
        swap.push_str(&format!(
            "        {{ {ct} tmp = out{o}[p]; out{o}[p] = out{o}[q]; out{o}[q] = tmp; }}\n",
            ct = c_type(*t)
        ));
    }
    // `q` (the element moving left) before `p` (its left neighbour): the first unequal key
    // decides, so equal keys never move past each other.
    let mut less = String::from("0");
    for k in (0..num_keys).rev() {
        let o = outs[k];
        let (a, b) = if descending {
            (format!("out{o}[p]"), format!("out{o}[q]"))
        } else {
            (format!("out{o}[q]"), format!("out{o}[p]"))
        };
        let (lt, eq) = if matches!(x[k].1, DType::F32 | DType::F64) {
            (
                format!("(!({a} != {a}) && (({b} != {b}) || {a} < {b}))"),
                format!("(({a} != {a}) ? ({b} != {b}) : ({a} == {b}))"),
            )
        } else {
            (format!("({a} < {b})"), format!("({a} == {b})"))
        };
        less = format!("({lt} || ({eq} && {less}))");
    }
    let body = if len == 0 {
        String::new()
    } else {
        format!(
            "{coords}    long long base = {start};\n    for (long long k = 0; k < {len}ll; ++k) {{\n      long long at = base + k * {stride}ll;\n{copy}    }}\n    for (long long j = 1; j < {len}ll; ++j) {{\n      for (long long m = j; m > 0; --m) {{\n        long long p = base + (m - 1) * {stride}ll, q = base + m * {stride}ll;\n        if (!{less}) break;\n{swap}      }}\n    }}\n",
            coords = coordinates(&line_shape, "i", "c"),
            start = flat(&base, shape),
        )
    };
    let reads = distinct(x);
    let mut params: Vec<String> = reads
        .iter()
        .map(|(v, t)| format!("const {}* __restrict__ in{v}", c_type(*t)))
        .collect();
    params.extend(
        x.iter()
            .zip(&outs)
            .map(|((_, t), o)| format!("{}* __restrict__ out{o}", c_type(*t))),
    );
    params.push("unsigned long long n".into());
    let function = format!(
        "extern \"C\" __global__ void {name}({}) {{\n  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;\n       i += (unsigned long long)gridDim.x * blockDim.x) {{\n{body}  }}\n}}\n",
        params.join(", ")
    );
    Kernel {
        source: format!("{}\n{function}", crate::elementwise::PRELUDE),
        body: function,
        param_types: reads
            .iter()
            .map(|r| r.1)
            .chain(x.iter().map(|r| r.1))
            .collect(),
        reads: reads.iter().map(|r| r.0).collect(),
        writes: outs,
        elements: lines,
        name: name.to_string(),
    }
}
