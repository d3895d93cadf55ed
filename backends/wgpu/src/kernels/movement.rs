//! Data movement as index maps: each output element reads one input element (or a fill
//! value), so results are exact copies.

use super::{bindings, linear, per_item, per_item_groups, unravel, KernelSource};
use crate::wgsl;
use quabla_abi::{row_major_strides, DType, TensorType};

/// A kernel writing `out[i] = in0[src]`, `src` computed from the output's multi-index
/// `o0, o1, ...` (and optional extra reads `in1...` for `prelude`).
fn index_map(
    reads: Vec<usize>,
    read_types: &[DType],
    out: usize,
    ot: &TensorType,
    prelude: &str,
    value: &str,
) -> KernelSource {
    let n = ot.num_elements();
    let body = format!(
        "{}{prelude}  out0[i] = {value};\n",
        unravel(&ot.shape, "i", "o")
    );
    KernelSource {
        wgsl: per_item(&bindings(read_types, &[ot.dtype]), n, &body),
        reads,
        writes: vec![out],
        groups: per_item_groups(n),
    }
}

/// `out[i] = x[sum of terms]`: a pure copy whose source offset is linear in `o0, o1, ...`.
fn copy_from(
    x: usize,
    xt: &TensorType,
    terms: &[(String, usize)],
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let src = format!("in0[{}]", linear(terms));
    index_map(vec![x], &[xt.dtype], out, ot, "", &src)
}

pub fn broadcast_in_dim(
    x: usize,
    xt: &TensorType,
    dims: &[usize],
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let s = row_major_strides(&xt.shape);
    let terms: Vec<(String, usize)> = dims
        .iter()
        .enumerate()
        .filter(|(k, _)| xt.shape[*k] != 1)
        .map(|(k, &d)| (format!("o{d}"), s[k]))
        .collect();
    copy_from(x, xt, &terms, out, ot)
}

pub fn transpose(
    x: usize,
    xt: &TensorType,
    perm: &[usize],
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let s = row_major_strides(&xt.shape);
    let terms: Vec<(String, usize)> = perm
        .iter()
        .enumerate()
        .map(|(d, &p)| (format!("o{d}"), s[p]))
        .collect();
    copy_from(x, xt, &terms, out, ot)
}

pub fn slice(
    x: usize,
    xt: &TensorType,
    start: &[usize],
    steps: &[usize],
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let s = row_major_strides(&xt.shape);
    let terms: Vec<(String, usize)> = (0..xt.rank())
        .map(|d| (format!("{}u + o{d} * {}u", start[d], steps[d]), s[d]))
        .collect();
    copy_from(x, xt, &terms, out, ot)
}

pub fn reverse(x: usize, xt: &TensorType, dims: &[usize], out: usize) -> KernelSource {
    let s = row_major_strides(&xt.shape);
    let terms: Vec<(String, usize)> = (0..xt.rank())
        .map(|d| {
            if dims.contains(&d) {
                (format!("{}u - o{d}", xt.shape[d].max(1) - 1), s[d])
            } else {
                (format!("o{d}"), s[d])
            }
        })
        .collect();
    copy_from(x, xt, &terms, out, xt)
}

/// `pad(x, value)`: output positions that fall between or outside the operand's elements
/// take the scalar `value`.
#[allow(clippy::too_many_arguments)]
pub fn pad(
    x: usize,
    xt: &TensorType,
    value: usize,
    low: &[i64],
    interior: &[usize],
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let s = row_major_strides(&xt.shape);
    let mut pre = String::from("  var inside = true;\n  var src = 0i;\n");
    for d in 0..xt.rank() {
        let step = interior[d] as i64 + 1;
        pre.push_str(&format!(
            "  let j{d} = i32(o{d}) - ({}i);\n  if (j{d} < 0i || j{d} % {step}i != 0i || j{d} / {step}i >= {}i) {{ inside = false; }}\n  src = src + (j{d} / {step}i) * {}i;\n",
            low[d], xt.shape[d], s[d]
        ));
    }
    index_map(
        vec![x, value],
        &[xt.dtype, xt.dtype],
        out,
        ot,
        &pre,
        "select(in1[0], in0[max(src, 0i)], inside)",
    )
}

/// Counts along `dim`.
pub fn iota(dim: usize, out: usize, ot: &TensorType) -> KernelSource {
    let conv = wgsl::convert(DType::U32, ot.dtype, &format!("o{dim}"));
    index_map(vec![], &[], out, ot, "", &conv)
}

/// One kernel per operand of a concatenation, each writing its block of the output.
pub fn concatenate_part(
    x: usize,
    xt: &TensorType,
    dim: usize,
    offset: usize,
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let n = xt.num_elements();
    let so = row_major_strides(&ot.shape);
    let terms: Vec<(String, usize)> = (0..xt.rank())
        .map(|d| {
            if d == dim {
                (format!("x{d} + {offset}u"), so[d])
            } else {
                (format!("x{d}"), so[d])
            }
        })
        .collect();
    let body = format!(
        "{}  out0[{}] = in0[i];\n",
        unravel(&xt.shape, "i", "x"),
        linear(&terms)
    );
    KernelSource {
        wgsl: per_item(&bindings(&[xt.dtype], &[ot.dtype]), n, &body),
        reads: vec![x],
        writes: vec![out],
        groups: per_item_groups(n),
    }
}
