//! Dynamic slices, gather and scatter-add. Indices are read on the device, so none of these
//! needs a readback. Scatter-add is atomic-free and deterministic: each output element sums
//! its contributions itself, in the order of the index batch.

use super::{bindings, linear, per_item, per_item_groups, unravel, KernelSource};
use quabla_abi::qir::{GatherDims, ScatterDims};
use quabla_abi::{row_major_strides, DType, TensorType};

/// Lines `let st{d} = ...;` with the clamped start of each dim read from `in{first + d}`.
fn clamped_starts(dims: &[usize], sizes: &[usize], first: usize) -> String {
    let mut s = String::new();
    for (d, (n, z)) in dims.iter().zip(sizes).enumerate() {
        s.push_str(&format!(
            "  let st{d} = u32(clamp(in{}[0], 0i, {}i));\n",
            first + d,
            n - z
        ));
    }
    s
}

pub fn dynamic_slice(
    x: usize,
    xt: &TensorType,
    starts: &[usize],
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let n = ot.num_elements();
    let s = row_major_strides(&xt.shape);
    let terms: Vec<(String, usize)> = (0..xt.rank())
        .map(|d| (format!("st{d} + o{d}"), s[d]))
        .collect();
    let body = format!(
        "{}{}  out0[i] = in0[{}];\n",
        unravel(&ot.shape, "i", "o"),
        clamped_starts(&xt.shape, &ot.shape, 1),
        linear(&terms)
    );
    let mut reads = vec![x];
    reads.extend_from_slice(starts);
    let mut rt = vec![xt.dtype];
    rt.extend(std::iter::repeat_n(DType::I32, starts.len()));
    KernelSource {
        wgsl: per_item(&bindings(&rt, &[ot.dtype]), n, &body),
        reads,
        writes: vec![out],
        groups: per_item_groups(n),
    }
}

pub fn dynamic_update_slice(
    x: usize,
    xt: &TensorType,
    update: usize,
    ut: &TensorType,
    starts: &[usize],
    out: usize,
) -> KernelSource {
    let n = xt.num_elements();
    let us = row_major_strides(&ut.shape);
    let mut body = unravel(&xt.shape, "i", "o");
    body.push_str(&clamped_starts(&xt.shape, &ut.shape, 2));
    body.push_str("  var inside = true;\n");
    for d in 0..xt.rank() {
        body.push_str(&format!(
            "  if (o{d} < st{d} || o{d} >= st{d} + {}u) {{ inside = false; }}\n",
            ut.shape[d]
        ));
    }
    let terms: Vec<(String, usize)> = (0..xt.rank())
        .map(|d| (format!("o{d} - st{d}"), us[d]))
        .collect();
    body.push_str(&format!(
        "  if (inside) {{ out0[i] = in1[{}]; }} else {{ out0[i] = in0[i]; }}\n",
        linear(&terms)
    ));
    let mut reads = vec![x, update];
    reads.extend_from_slice(starts);
    let mut rt = vec![xt.dtype, ut.dtype];
    rt.extend(std::iter::repeat_n(DType::I32, starts.len()));
    KernelSource {
        wgsl: per_item(&bindings(&rt, &[xt.dtype]), n, &body),
        reads,
        writes: vec![out],
        groups: per_item_groups(n),
    }
}

pub fn gather(
    x: usize,
    xt: &TensorType,
    idx: usize,
    it: &TensorType,
    g: &GatherDims,
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let n = ot.num_elements();
    let nvec = it.shape.last().copied().unwrap_or(0);
    let batch_shape = &it.shape[..it.rank().saturating_sub(1)];
    let bs = row_major_strides(batch_shape);
    let xs = row_major_strides(&xt.shape);
    let window_dims: Vec<usize> = (0..xt.rank())
        .filter(|d| !g.collapsed_slice_dims.contains(d))
        .collect();
    let mut body = unravel(&ot.shape, "i", "o");
    let (mut bterms, mut bi, mut offsets) = (Vec::new(), 0, Vec::new());
    for d in 0..ot.rank() {
        if g.offset_dims.contains(&d) {
            offsets.push(d);
        } else {
            bterms.push((format!("o{d}"), bs[bi]));
            bi += 1;
        }
    }
    body.push_str(&format!("  let b = {};\n", linear(&bterms)));
    let mut full: Vec<String> = vec!["0u".into(); xt.rank()];
    for (k, &od) in g.start_index_map.iter().enumerate() {
        full[od] = format!(
            "u32(clamp(in1[b * {nvec}u + {k}u], 0i, {}i))",
            xt.shape[od] - g.slice_sizes[od]
        );
    }
    for (w, &od) in window_dims.iter().enumerate() {
        full[od] = format!("{} + o{}", full[od], offsets[w]);
    }
    let terms: Vec<(String, usize)> = full.into_iter().zip(xs).collect();
    body.push_str(&format!("  out0[i] = in0[{}];\n", linear(&terms)));
    KernelSource {
        wgsl: per_item(&bindings(&[xt.dtype, DType::I32], &[ot.dtype]), n, &body),
        reads: vec![x, idx],
        writes: vec![out],
        groups: per_item_groups(n),
    }
}

#[allow(clippy::too_many_arguments)]
pub fn scatter_add(
    x: usize,
    xt: &TensorType,
    idx: usize,
    it: &TensorType,
    upd: usize,
    ut: &TensorType,
    sd: &ScatterDims,
    out: usize,
) -> KernelSource {
    let n = xt.num_elements();
    let nvec = it.shape.last().copied().unwrap_or(0);
    let batch_shape = &it.shape[..it.rank().saturating_sub(1)];
    let nbatch: usize = batch_shape.iter().product();
    let bs = row_major_strides(batch_shape);
    let us = row_major_strides(&ut.shape);
    let window_operand_dims: Vec<usize> = (0..xt.rank())
        .filter(|d| !sd.inserted_window_dims.contains(d))
        .collect();
    let mut window = vec![1usize; xt.rank()];
    for (w, &od) in sd.update_window_dims.iter().zip(&window_operand_dims) {
        window[od] = ut.shape[*w];
    }
    let mut body = unravel(&xt.shape, "i", "o");
    body.push_str("  var acc = in0[i];\n");
    body.push_str(&format!(
        "  for (var b = 0u; b < {nbatch}u; b = b + 1u) {{\n"
    ));
    for (d, (&w, &dim)) in window.iter().zip(&xt.shape).enumerate() {
        let start = sd
            .scatter_dims_to_operand_dims
            .iter()
            .position(|&od| od == d)
            .map(|k| format!("in1[b * {nvec}u + {k}u]"))
            .unwrap_or_else(|| "0i".into());
        // The window must lie wholly inside the operand, and cover this element.
        body.push_str(&format!(
            "    let f{d} = {start};\n    if (f{d} < 0i || f{d} + {w}i > {dim}i || i32(o{d}) < f{d} || i32(o{d}) >= f{d} + {w}i) {{ continue; }}\n"
        ));
    }
    let (mut uterms, mut bi, mut wi) = (Vec::new(), 0, 0);
    for (d, &st) in us.iter().enumerate() {
        if sd.update_window_dims.contains(&d) {
            let od = window_operand_dims[wi];
            uterms.push((format!("o{od} - u32(f{od})"), st));
            wi += 1;
        } else {
            let (bn, bst) = (batch_shape[bi], bs[bi]);
            uterms.push((format!("(b / {bst}u) % {bn}u"), st));
            bi += 1;
        }
    }
    body.push_str(&format!(
        "    acc = acc + in2[{}];\n  }}\n  out0[i] = acc;\n",
        linear(&uterms)
    ));
    KernelSource {
        wgsl: per_item(
            &bindings(&[xt.dtype, DType::I32, ut.dtype], &[xt.dtype]),
            n,
            &body,
        ),
        reads: vec![x, idx, upd],
        writes: vec![out],
        groups: per_item_groups(n),
    }
}
