//! `dot_general` as a batched GEMM tiled through workgroup memory (16x16 tiles). Operand
//! layouts are folded into address functions, so no transposed copies are made; each
//! output element sums over k in order, so results are deterministic.

use super::{bindings, linear, KernelSource};
use crate::wgsl;
use quabla_abi::qir::DotDims;
use quabla_abi::{row_major_strides, TensorType};

const TILE: usize = 16;

/// An address function `fn {name}(b, m, k) -> u32` over groups of dims: each argument is
/// split over its dims' sizes (row-major) and weighted by the operand's strides.
fn address(name: &str, t: &TensorType, groups: [&[usize]; 3]) -> String {
    let s = row_major_strides(&t.shape);
    let mut body = String::new();
    let mut terms = Vec::new();
    for (g, (dims, arg)) in groups.iter().zip(["p", "q", "r"]).enumerate() {
        let sizes: Vec<usize> = dims.iter().map(|&d| t.shape[d]).collect();
        let sub = row_major_strides(&sizes);
        for (j, (&d, (&n, &st))) in dims.iter().zip(sizes.iter().zip(&sub)).enumerate() {
            body.push_str(&format!(
                "  let g{g}_{j} = ({arg} / {st}u) % {}u;\n",
                n.max(1)
            ));
            terms.push((format!("g{g}_{j}"), s[d]));
        }
    }
    format!(
        "fn {name}(p: u32, q: u32, r: u32) -> u32 {{\n{body}  return {};\n}}\n",
        linear(&terms)
    )
}

pub fn dot_general(
    lhs: usize,
    lt: &TensorType,
    rhs: usize,
    rt: &TensorType,
    dims: &DotDims,
    out: usize,
    ot: &TensorType,
) -> KernelSource {
    let lfree: Vec<usize> = (0..lt.rank())
        .filter(|d| !dims.lhs_batch.contains(d) && !dims.lhs_contract.contains(d))
        .collect();
    let rfree: Vec<usize> = (0..rt.rank())
        .filter(|d| !dims.rhs_batch.contains(d) && !dims.rhs_contract.contains(d))
        .collect();
    let size = |t: &TensorType, ds: &[usize]| ds.iter().map(|&d| t.shape[d]).product::<usize>();
    let (b, m, n, k) = (
        size(lt, &dims.lhs_batch),
        size(lt, &lfree),
        size(rt, &rfree),
        size(lt, &dims.lhs_contract),
    );
    let ty = wgsl::store(ot.dtype);
    let zero = wgsl::zero(ot.dtype);
    let code = format!(
        "{decls}
{a_at}
{b_at}
var<workgroup> ta: array<array<{ty}, {TILE}>, {TILE}>;
var<workgroup> tb: array<array<{ty}, {TILE}>, {TILE}>;
@compute @workgroup_size({TILE}, {TILE})
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
  let bi = wid.z;
  let row = wid.y * {TILE}u + lid.y;
  let col = wid.x * {TILE}u + lid.x;
  var acc: {ty} = {zero};
  for (var k0 = 0u; k0 < {k}u; k0 = k0 + {TILE}u) {{
    let ka = k0 + lid.x;
    var va: {ty} = {zero};
    if (row < {m}u && ka < {k}u) {{ va = in0[a_at(bi, row, ka)]; }}
    ta[lid.y][lid.x] = va;
    let kb = k0 + lid.y;
    var vb: {ty} = {zero};
    if (kb < {k}u && col < {n}u) {{ vb = in1[b_at(bi, kb, col)]; }}
    tb[lid.y][lid.x] = vb;
    workgroupBarrier();
    let kend = min({TILE}u, {k}u - k0);
    for (var kk = 0u; kk < kend; kk = kk + 1u) {{
      acc = acc + ta[lid.y][kk] * tb[kk][lid.x];
    }}
    workgroupBarrier();
  }}
  if (row < {m}u && col < {n}u) {{ out0[(bi * {m}u + row) * {n}u + col] = acc; }}
}}
",
        decls = bindings(&[lt.dtype, rt.dtype], &[ot.dtype]),
        a_at = address("a_at", lt, [&dims.lhs_batch, &lfree, &dims.lhs_contract]),
        b_at = address("b_at", rt, [&dims.rhs_batch, &dims.rhs_contract, &rfree]),
    );
    KernelSource {
        wgsl: code,
        reads: vec![lhs, rhs],
        writes: vec![out],
        groups: (
            n.div_ceil(TILE).max(1) as u32,
            m.div_ceil(TILE).max(1) as u32,
            b.max(1) as u32,
        ),
    }
}
