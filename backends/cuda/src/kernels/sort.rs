//! A stable sort per line.

use super::{coordinates, flat, kernel, Node};
use crate::fusion::Kernel;
use quabla_abi::DType;

/// A stable sort of every line along `axis`, one thread per element: each element counts
/// the elements of its line that go before it (ordered lexicographically by the first
/// `num_keys` operands in numpy's order, NaN after everything, `-0` tying `+0`, equal keys
/// by position) and writes every operand's element at that rank. The ranks of a line are a
/// permutation, so no two threads write one element; the work is the line's length squared,
/// spread over all its elements (an insertion sort per line, as before, was as much work on
/// one thread). A merge sort is what long lines will want.
pub(super) fn sort(n: &Node, axis: usize, num_keys: usize, descending: bool) -> Kernel {
    let (name, out, first_result) = (n.name, n.out, n.result);
    let x = &n.reads();
    let shape = &out.shape;
    let len = shape[axis];
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
    let mut moves = String::new();
    for (k, (v, _)) in x.iter().enumerate() {
        moves.push_str(&format!("    out{}[to] = in{v}[at];\n", outs[k]));
    }
    // Whether element `m` of the line goes before this thread's element `at`: the first
    // unequal key decides, and equal keys keep their order.
    let mut before = format!("(m < c{axis})");
    for k in (0..num_keys).rev() {
        let v = x[k].0;
        let (other, mine) = (format!("in{v}[mt]"), format!("in{v}[at]"));
        let (a, b) = if descending {
            (mine, other)
        } else {
            (other, mine)
        };
        let (lt, eq) = if matches!(x[k].1, DType::F32 | DType::F64) {
            (
                format!("(!({a} != {a}) && (({b} != {b}) || {a} < {b}))"),
                format!("(({a} != {a}) ? ({b} != {b}) : ({a} == {b}))"),
            )
        } else {
            (format!("({a} < {b})"), format!("({a} == {b})"))
        };
        before = format!("({lt} || ({eq} && {before}))");
    }
    let body = format!(
        "{coords}    long long base = {start};\n    long long at = base + c{axis} * {stride}ll;\n    long long rank = 0;\n    for (long long m = 0; m < {len}ll; ++m) {{\n      long long mt = base + m * {stride}ll;\n      rank += {before} ? 1 : 0;\n    }}\n    long long to = base + rank * {stride}ll;\n{moves}",
        coords = coordinates(shape, "i", "c"),
        start = flat(&base, shape),
    );
    let writes: Vec<(usize, DType)> = outs.iter().copied().zip(x.iter().map(|r| r.1)).collect();
    kernel(name, x, &writes, out.num_elements(), &body)
}

#[cfg(test)]
mod tests {
    use crate::emulate::{Emulated, Storage};
    use quabla_abi::qir::Program;
    use std::sync::Arc;

    /// Sorts `f64[6, 7]` keys (ties, NaN, -0 and +0 among them) with an `i32` payload
    /// along axis 0 on the host emulation, against a stable sort of each column written out
    /// in Rust: NaN last ascending and first descending, `-0` tying `+0`, ties in order.
    #[test]
    fn ranks_give_a_stable_sort_with_numpy_order() {
        let (rows, cols) = (6usize, 7usize);
        let keys: Vec<f64> = (0..rows * cols)
            .map(|k| match k % 9 {
                0 => f64::NAN,
                1 => -0.0,
                2 => 0.0,
                3 => 1.5,
                4 => -2.0,
                5 => 1.5,
                6 => f64::INFINITY,
                7 => (k as f64) / 7.0,
                _ => -0.0,
            })
            .collect();
        let payload: Vec<i32> = (0..(rows * cols) as i32).collect();
        for descending in [false, true] {
            let p = Program::parse(&format!(
                "program(%0: f64[{rows},{cols}], %1: i32[{rows},{cols}]) {{
  %2, %3 = sort[axis=0, num_keys=1, descending={descending}](%0, %1) : f64[{rows},{cols}], i32[{rows},{cols}]
  return %2, %3
}}"
            ))
            .unwrap();
            let bytes = |b: Vec<u8>| Arc::new(Storage::from_bytes(&b));
            let out = Emulated::new(&p)
                .unwrap()
                .run(vec![
                    bytes(keys.iter().flat_map(|v| v.to_le_bytes()).collect()),
                    bytes(payload.iter().flat_map(|v| v.to_le_bytes()).collect()),
                ])
                .unwrap();
            let got: Vec<i32> = out[1]
                .bytes()
                .chunks(4)
                .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            for c in 0..cols {
                let mut column: Vec<usize> = (0..rows).map(|r| r * cols + c).collect();
                // NaN above everything; -0 == +0; `sort_by` is stable.
                let rank = |v: f64| if v.is_nan() { f64::INFINITY } else { v };
                column.sort_by(|&a, &b| {
                    let (x, y) = (keys[a], keys[b]);
                    let order = match (x.is_nan(), y.is_nan()) {
                        (true, true) => std::cmp::Ordering::Equal,
                        (true, false) => std::cmp::Ordering::Greater,
                        (false, true) => std::cmp::Ordering::Less,
                        _ => rank(x).partial_cmp(&rank(y)).unwrap(),
                    };
                    if descending {
                        order.reverse()
                    } else {
                        order
                    }
                });
                let want: Vec<i32> = column.iter().map(|&k| payload[k]).collect();
                let have: Vec<i32> = (0..rows).map(|r| got[r * cols + c]).collect();
                assert_eq!(have, want, "column {c}, descending {descending}");
            }
        }
    }
}
