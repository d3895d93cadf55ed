//! WGSL generation, one file per op family. Every kernel is specialised to its shapes (they
//! are constants in the source), so the pipeline cache keys on the source text.

pub mod dot;
pub mod elementwise;
pub mod indexing;
pub mod movement;
pub mod reduce;
pub mod sort;

use crate::context::WORKGROUP;
use crate::wgsl;
use quabla_abi::DType;

/// A kernel ready to compile: its source, the values it reads and writes (bound in that
/// order) and its dispatch size.
pub struct KernelSource {
    pub wgsl: String,
    pub reads: Vec<usize>,
    pub writes: Vec<usize>,
    pub groups: (u32, u32, u32),
}

/// Binding declarations: `in{k}` read-only, then `out{k}` read-write.
pub fn bindings(reads: &[DType], writes: &[DType]) -> String {
    let mut s = String::new();
    for (k, d) in reads.iter().enumerate() {
        s.push_str(&format!(
            "@group(0) @binding({k}) var<storage, read> in{k}: array<{}>;\n",
            wgsl::store(*d)
        ));
    }
    for (k, d) in writes.iter().enumerate() {
        s.push_str(&format!(
            "@group(0) @binding({}) var<storage, read_write> out{k}: array<{}>;\n",
            reads.len() + k,
            wgsl::store(*d)
        ));
    }
    s
}

/// A one-thread-per-item kernel over `n` items: `body` sees the item as `i: u32`.
pub fn per_item(decls: &str, n: usize, body: &str) -> String {
    let code = format!(
        "{decls}
@compute @workgroup_size({WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WORKGROUP}u;
  if (i >= {n}u) {{ return; }}
{body}
}}
"
    );
    format!("{}\n{code}", wgsl::helpers_for(&code))
}

/// Dispatch size of a [`per_item`] kernel.
pub fn per_item_groups(n: usize) -> (u32, u32, u32) {
    let (x, y) = crate::context::Gpu::groups(n, WORKGROUP);
    (x, y, 1)
}

/// Lines `let {p}{d}: u32 = ...;` splitting the row-major linear index `lin` over `shape`.
pub fn unravel(shape: &[usize], lin: &str, p: &str) -> String {
    let strides = quabla_abi::row_major_strides(shape);
    let mut s = String::new();
    for (d, (&n, &st)) in shape.iter().zip(&strides).enumerate() {
        s.push_str(&format!(
            "  let {p}{d}: u32 = ({lin} / {}u) % {}u;\n",
            st.max(1),
            n.max(1)
        ));
    }
    s
}

/// `a0 * s0 + a1 * s1 + ...` for `(index expression, stride)` pairs (`0u` when empty).
pub fn linear(terms: &[(String, usize)]) -> String {
    let parts: Vec<String> = terms
        .iter()
        .filter(|(_, s)| *s != 0)
        .map(|(e, s)| format!("({e}) * {s}u"))
        .collect();
    if parts.is_empty() {
        "0u".into()
    } else {
        parts.join(" + ")
    }
}
