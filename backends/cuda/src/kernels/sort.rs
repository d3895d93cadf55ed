//! A stable sort per line.

use super::{coordinates, flat, kernel, Node};
use crate::elementwise::c_type;
use crate::fusion::Kernel;
use quabla_abi::DType;

/// A stable sort of every line along `axis`, one thread per line: the operands are copied
/// to the results, then an insertion sort moves every result's elements together, ordered
/// lexicographically by the first `num_keys` in numpy's order (NaN after everything, `-0`
/// tying `+0`). Plain and exact; a parallel merge sort is what a GPU run will want.
pub(super) fn sort(n: &Node, axis: usize, num_keys: usize, descending: bool) -> Kernel {
    let (name, out, first_result) = (n.name, n.out, n.result);
    let x = &n.reads();
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
    let writes: Vec<(usize, DType)> = outs.iter().copied().zip(x.iter().map(|r| r.1)).collect();
    kernel(name, x, &writes, lines, &body)
}
