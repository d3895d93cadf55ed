//! `sort` as a bottom-up merge sort of each line's permutation, one dispatch per pass.
//!
//! The permutation (`u32` indices along the axis, line after line) starts as the identity;
//! pass `w` merges runs of `w` into runs of `2w`, each element finding its place by a binary
//! search in the partner run (an element of the left run counts the right run's strictly
//! smaller keys, one of the right run the left run's smaller or equal ones, which keeps the
//! sort stable). Every thread writes one element, so the result does not depend on
//! scheduling. A last kernel per operand gathers it through the permutation.

use super::{bindings, per_item, per_item_groups, KernelSource};
use quabla_abi::{DType, TensorType};

/// The geometry of a sort: `lines` lines of `n` elements, `inner` apart along the axis.
pub struct Lines {
    pub n: usize,
    pub inner: usize,
    pub lines: usize,
}

impl Lines {
    pub fn new(t: &TensorType, axis: usize) -> Lines {
        let n = t.shape[axis];
        let inner: usize = t.shape[axis + 1..].iter().product();
        Lines {
            n,
            inner,
            lines: t.num_elements() / n.max(1),
        }
    }

    /// The merge passes' run widths: 1, 2, 4, ... below `n`.
    pub fn widths(&self) -> Vec<usize> {
        std::iter::successors(Some(1usize), |w| w.checked_mul(2))
            .take_while(|w| *w < self.n)
            .collect()
    }

    /// WGSL: the flat position of element `k` of line `line` (both `u32` expressions).
    /// (Empty arrays run no kernel, but their sources must still compile: no `/ 0u`.)
    fn position(&self, line: &str, k: &str) -> String {
        let (n, inner) = (self.n, self.inner.max(1));
        format!(
            "(({line}) / {inner}u) * {}u + ({k}) * {inner}u + ({line}) % {inner}u",
            n * inner
        )
    }
}

/// `q_order(a, b)`: -1, 0 or 1 as the elements at flat positions `a` and `b` order by the
/// keys `in0..` (numpy's float order: NaN last, `-0 == +0`), reversed when `descending`.
fn order_fn(keys: &[DType], descending: bool) -> String {
    let (less, more) = if descending { (1, -1) } else { (-1, 1) };
    let mut body = String::new();
    for (m, d) in keys.iter().enumerate() {
        let (x, y) = (format!("in{m}[a]"), format!("in{m}[b]"));
        body.push_str(&match d {
            // Compared as integer keys made from the bits: a device that flushes subnormals
            // in float comparisons (Chromium's WebGPU does) would tie 1e-40 with 0.
            DType::F32 | DType::F64 => format!(
                "  {{ let x = q_sort_key({x}); let y = q_sort_key({y});\n    \
                 if (x < y) {{ return {less}; }}\n    if (x > y) {{ return {more}; }} }}\n"
            ),
            DType::I32 | DType::U32 | DType::Bool => format!(
                "  {{ let x = {x}; let y = {y};\n    if (x < y) {{ return {less}; }}\n    \
                 if (x > y) {{ return {more}; }} }}\n"
            ),
        });
    }
    format!("{SORT_KEY}fn q_order(a: u32, b: u32) -> i32 {{\n{body}  return 0;\n}}\n")
}

/// An f32 as a `u32` in numpy's sort order: negatives below one key shared by both zeros,
/// positives above it, every NaN last and tied; ordered by bits, never by float compares.
const SORT_KEY: &str = "fn q_sort_key(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  let m = b & 0x7fffffffu;
  if (m > 0x7f800000u) { return 0xffffffffu; }
  if (m == 0u) { return 0x80000000u; }
  if ((b & 0x80000000u) != 0u) { return ~b; }
  return b | 0x80000000u;
}
";

/// The identity permutation, into `out`.
pub fn identity(geometry: &Lines, out: usize) -> KernelSource {
    let total = geometry.lines * geometry.n;
    let body = format!("  out0[i] = i % {}u;\n", geometry.n.max(1));
    KernelSource {
        wgsl: per_item(&bindings(&[], &[DType::U32]), total, &body),
        reads: vec![],
        writes: vec![out],
        groups: per_item_groups(total),
    }
}

/// One merge pass of width `w`: `keys` (values with their dtypes), permutation `perm` in,
/// the merged permutation into `out`.
pub fn merge_pass(
    geometry: &Lines,
    keys: &[(usize, DType)],
    descending: bool,
    perm: usize,
    w: usize,
    out: usize,
) -> KernelSource {
    let (n, total) = (geometry.n, geometry.lines * geometry.n);
    let p = keys.len();
    let key_types: Vec<DType> = keys.iter().map(|k| k.1).collect();
    let mut reads_types = key_types.clone();
    reads_types.push(DType::U32);
    let at = |k: &str| geometry.position("line", &format!("in{p}[row + {k}]"));
    let body = format!(
        "  let line = i / {n}u;\n  let k = i % {n}u;\n  let row = line * {n}u;\n  \
         let me = {me};\n  let run = k / {w}u;\n  let start = (run / 2u) * {w2}u;\n  \
         let mid = min(start + {w}u, {n}u);\n  let end = min(start + {w2}u, {n}u);\n  \
         var dest = k;\n  if (run % 2u == 0u) {{\n    var lo = mid;\n    var hi = end;\n    \
         while (lo < hi) {{\n      let m = (lo + hi) / 2u;\n      \
         if (q_order({at_m}, me) < 0) {{ lo = m + 1u; }} else {{ hi = m; }}\n    }}\n    \
         dest = k + (lo - mid);\n  }} else {{\n    var lo = start;\n    var hi = mid;\n    \
         while (lo < hi) {{\n      let m = (lo + hi) / 2u;\n      \
         if (q_order({at_m}, me) <= 0) {{ lo = m + 1u; }} else {{ hi = m; }}\n    }}\n    \
         dest = start + (k - mid) + (lo - start);\n  }}\n  out0[row + dest] = in{p}[row + k];\n",
        me = at("k"),
        at_m = at("m"),
        w2 = 2 * w,
    );
    let decls = format!(
        "{}{}",
        bindings(&reads_types, &[DType::U32]),
        order_fn(&key_types, descending)
    );
    let mut reads: Vec<usize> = keys.iter().map(|k| k.0).collect();
    reads.push(perm);
    KernelSource {
        wgsl: per_item(&decls, total, &body),
        reads,
        writes: vec![out],
        groups: per_item_groups(total),
    }
}

/// `operand` (of dtype `d`) permuted along the axis by `perm`, into `out`.
pub fn gather(geometry: &Lines, operand: usize, d: DType, perm: usize, out: usize) -> KernelSource {
    let (n, total) = (geometry.n.max(1), geometry.lines * geometry.n);
    let body = format!(
        "  let line = i / {n}u;\n  let k = i % {n}u;\n  out0[{to}] = in0[{from}];\n",
        to = geometry.position("line", "k"),
        from = geometry.position("line", &format!("in1[line * {n}u + k]")),
    );
    KernelSource {
        wgsl: per_item(&bindings(&[d, DType::U32], &[d]), total, &body),
        reads: vec![operand, perm],
        writes: vec![out],
        groups: per_item_groups(total),
    }
}
