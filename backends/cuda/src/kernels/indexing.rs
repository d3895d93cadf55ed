//! Gather and scatter-add with XLA's index rules.

use super::{coordinates, flat, Node};
use crate::elementwise::c_type;
use crate::fusion::Kernel;
use quabla_abi::qir::{GatherDims, ScatterDims};
use quabla_abi::DType;

/// XLA's gather: each output element's batch coordinates pick an index vector (the indices'
/// last axis), whose starts are clamped so the slice fits; its offset coordinates walk the
/// slice.
pub(super) fn gather(n: &Node, d: &GatherDims) -> Kernel {
    let (result, out) = (n.result, n.out);
    let x = [n.read(0), n.read(1)];
    let shapes: [&[usize]; 2] = [&n.ty(0).shape, &n.ty(1).shape];
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
    n.kernel(&x, out.num_elements(), &body)
}

/// The C type a scatter-add of `dtype` sums in, and the statement adding `u` to `acc` (i32
/// wrapping, as QIR's `add`).
pub(super) fn accumulation(dtype: DType) -> (&'static str, &'static str) {
    match dtype {
        DType::I32 => ("int", "acc = (int)((unsigned int)acc + (unsigned int)u);"),
        DType::Bool => ("unsigned char", "acc = acc | u;"),
        dt => (c_type(dt), "acc = acc + u;"),
    }
}

/// XLA's scatter-add, deterministically: one thread per operand element adds, in update
/// order, every window that covers it and lies wholly inside the operand (a window that
/// does not is dropped), so no two threads write one element and no atomics are needed.
/// Many windows of one element along each indexed axis take `scatter_keyed.rs` instead.
pub(super) fn scatter_add(n: &Node, d: &ScatterDims) -> Kernel {
    let (result, out) = (n.result, n.out);
    let x = [n.read(0), n.read(1), n.read(2)];
    let shapes: [&[usize]; 3] = [&n.ty(0).shape, &n.ty(1).shape, &n.ty(2).shape];
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
    let (t, add) = accumulation(out.dtype);
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
    n.kernel(&x, out.num_elements(), &body)
}
