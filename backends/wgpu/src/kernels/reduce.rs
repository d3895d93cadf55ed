//! Reductions (one workgroup per output element: each thread folds a strided share, then a
//! tree over workgroup memory, always in the same order, so results are deterministic) and
//! cumulative scans (one thread per line, sequential along it, as the CPU backend).

use super::{bindings, linear, per_item, per_item_groups, unravel, KernelSource};
use crate::context::{Gpu, WORKGROUP};
use crate::wgsl;
use quabla_abi::qir::{CumulativeKind, ReduceKind};
use quabla_abi::{row_major_strides, DType, TensorType};

/// `(init, combine)` over storage-typed values `a`, `b`.
fn monoid(kind: ReduceKind, d: DType) -> (&'static str, &'static str) {
    use ReduceKind::*;
    match (kind, d) {
        (Sum, DType::F32) => ("0.0", "a + b"),
        (Sum, DType::I32) => ("0i", "a + b"),
        (Sum, _) => ("0u", "a + b"),
        (Prod, DType::F32) => ("1.0", "a * b"),
        (Prod, DType::I32) => ("1i", "a * b"),
        (Prod, _) => ("1u", "a * b"),
        (Max, DType::F32) => ("-q_bits_inf()", "q_max(a, b)"),
        (Max, DType::I32) => ("(-2147483647i - 1i)", "max(a, b)"),
        (Max, _) => ("0u", "max(a, b)"),
        (Min, DType::F32) => ("q_bits_inf()", "q_min(a, b)"),
        (Min, DType::I32) => ("2147483647i", "min(a, b)"),
        (Min, _) => ("0xffffffffu", "min(a, b)"),
        (And, _) => ("1u", "a & b"),
        (Or, _) => ("0u", "a | b"),
    }
}

pub fn reduce(
    x: usize,
    xt: &TensorType,
    kind: ReduceKind,
    axes: &[usize],
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let d = xt.dtype;
    let ty = wgsl::store(d);
    let (init, combine) = monoid(kind, d);
    let xs = row_major_strides(&xt.shape);
    let kept: Vec<usize> = (0..xt.rank()).filter(|a| !axes.contains(a)).collect();
    let reduced: Vec<usize> = axes.to_vec();
    let red_shape: Vec<usize> = reduced.iter().map(|&a| xt.shape[a]).collect();
    let r: usize = red_shape.iter().product();
    let n = ot.num_elements();
    let base = linear(
        &kept
            .iter()
            .enumerate()
            .map(|(k, &a)| (format!("o{k}"), xs[a]))
            .collect::<Vec<_>>(),
    );
    let offset = linear(
        &reduced
            .iter()
            .enumerate()
            .map(|(k, &a)| (format!("r{k}"), xs[a]))
            .collect::<Vec<_>>(),
    );
    let mut tree = String::new();
    let mut s = WORKGROUP / 2;
    while s >= 1 {
        tree.push_str(&format!(
            "  if (t < {s}u) {{ sh[t] = combine(sh[t], sh[t + {s}u]); }}\n  workgroupBarrier();\n"
        ));
        s /= 2;
    }
    let code = format!(
        "{decls}
var<workgroup> sh: array<{ty}, {WORKGROUP}>;
fn combine(a: {ty}, b: {ty}) -> {ty} {{ return {combine}; }}
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) t: u32) {{
  let i = wid.x + wid.y * nwg.x;
  if (i >= {n}u) {{ return; }}
{unravel_o}  let base = {base};
  var acc: {ty} = {init};
  for (var j = t; j < {r}u; j = j + {WORKGROUP}u) {{
{unravel_r}    acc = combine(acc, in0[base + {offset}]);
  }}
  sh[t] = acc;
  workgroupBarrier();
{tree}  if (t == 0u) {{ out0[i] = sh[0]; }}
}}
",
        decls = bindings(&[d], &[ot.dtype]),
        unravel_o = unravel(&ot.shape, "i", "o"),
        unravel_r = unravel(&red_shape, "j", "r").replace("  let", "    let"),
    );
    let (gx, gy) = Gpu::groups(n, 1);
    KernelSource {
        wgsl: format!("{}\n{code}", wgsl::helpers_for(&code)),
        reads: vec![x],
        writes: vec![out],
        groups: (gx, gy, 1),
    }
}

pub fn cumulative(
    x: usize,
    xt: &TensorType,
    kind: CumulativeKind,
    axis: usize,
    reverse: bool,
    out: usize,
) -> KernelSource {
    let d = xt.dtype;
    let rk = match kind {
        CumulativeKind::Sum => ReduceKind::Sum,
        CumulativeKind::Prod => ReduceKind::Prod,
        CumulativeKind::Max => ReduceKind::Max,
        CumulativeKind::Min => ReduceKind::Min,
    };
    let (_, combine) = monoid(rk, d);
    let n = xt.shape[axis];
    let inner: usize = xt.shape[axis + 1..].iter().product();
    let lines = xt.num_elements() / n.max(1);
    let pos = |k: &str| {
        format!(
            "(i / {inner}u) * {}u + ({k}) * {inner}u + i % {inner}u",
            n * inner
        )
    };
    let (first, step) = if reverse {
        (
            format!("{}u", n.saturating_sub(1)),
            format!("{}u - k", n.saturating_sub(1)),
        )
    } else {
        ("0u".to_string(), "k".to_string())
    };
    let body = format!(
        "  var acc = in0[{p0}];\n  out0[{p0}] = acc;\n  for (var k = 1u; k < {n}u; k = k + 1u) {{\n    let p = {pk};\n    let b = in0[p];\n    let a = acc;\n    acc = {combine};\n    out0[p] = acc;\n  }}\n",
        p0 = pos(&first),
        pk = pos(&step),
    );
    KernelSource {
        wgsl: per_item(&bindings(&[d], &[d]), lines, &body),
        reads: vec![x],
        writes: vec![out],
        groups: per_item_groups(lines),
    }
}
