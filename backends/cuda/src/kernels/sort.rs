//! A stable sort per line: a rank sort for short lines, a merge sort for long ones.

use super::{coordinates, flat, kernel, Node};
use crate::fusion::Kernel;
use crate::plan::Step;
use quabla_abi::{DType, TensorType};

/// The longest line sorted by ranks in one launch: each element counts the elements of its
/// line that go before it, so the work is the line's length squared. Longer lines are
/// merge-sorted ([`merge_sort`]).
pub const RANK_MAX_LINE: usize = 256;

/// The runs a merge sort's first pass sorts by ranks (each element counting within its run),
/// so its merge passes start from runs of this length.
pub const FIRST_RUN: usize = 64;

/// The C condition that element `m` (at flat index `mt`) goes before this thread's element
/// (at `at`) in the order of the first `num_keys` operands of `x` (numpy's: NaN after
/// everything, `-0` tying `+0`; reversed where `descending`), `ties` deciding equal keys.
fn goes_before(x: &[(usize, DType)], num_keys: usize, descending: bool, ties: &str) -> String {
    let mut before = format!("({ties})");
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
    before
}

/// What a sort's kernels share: the line's geometry, the operands' dtypes and the
/// statements finding an element's line.
struct Lines<'a> {
    shape: &'a [usize],
    axis: usize,
    len: usize,
    stride: usize,
    num_keys: usize,
    descending: bool,
}

impl<'a> Lines<'a> {
    fn of(out: &'a TensorType, axis: usize, num_keys: usize, descending: bool) -> Lines<'a> {
        let shape = &out.shape;
        Lines {
            shape,
            axis,
            len: shape[axis],
            stride: shape[axis + 1..].iter().product(),
            num_keys,
            descending,
        }
    }

    /// Statements defining `base` (the flat index of this thread's line's first element)
    /// and `at` (its element's), from the grid-stride index `i`.
    fn locate(&self) -> String {
        let mut base = vec![String::new(); self.shape.len()];
        for (k, b) in base.iter_mut().enumerate() {
            *b = if k == self.axis {
                "0".into()
            } else {
                format!("c{k}")
            };
        }
        format!(
            "{}    long long base = {};\n    long long p = c{};\n    long long at = base + p * {}ll;\n",
            coordinates(self.shape, "i", "c"),
            flat(&base, self.shape),
            self.axis,
            self.stride
        )
    }

    /// The kernel sorting each run of `run` elements of every line by ranks: each element
    /// counts the elements of its run that go before it (equal keys by position) and is
    /// written at that rank. The ranks of a run are a permutation of it, so no two threads
    /// write one element.
    fn ranks(
        &self,
        name: &str,
        x: &[(usize, DType)],
        outs: &[(usize, DType)],
        run: usize,
    ) -> Kernel {
        let before = goes_before(x, self.num_keys, self.descending, "m < p");
        let to = format!(
            "    long long from = p / {run}ll * {run}ll;\n    long long end = from + {run}ll < {len}ll ? from + {run}ll : {len}ll;\n    long long rank = from;\n    for (long long m = from; m < end; ++m) {{\n      long long mt = base + m * {stride}ll;\n      rank += {before} ? 1 : 0;\n    }}\n    long long to = base + rank * {stride}ll;\n",
            len = self.len,
            stride = self.stride,
        );
        self.kernel(name, x, outs, &to)
    }

    /// The kernel merging each pair of sorted runs of `run` elements into one: an element
    /// lands at its place in its own run plus the count of the other run's elements that go
    /// before it, found by binary search (from the left run, those strictly before it; from
    /// the right run, those before it or equal, so equal keys keep their order).
    fn merge(
        &self,
        name: &str,
        x: &[(usize, DType)],
        outs: &[(usize, DType)],
        run: usize,
    ) -> Kernel {
        let strictly = goes_before(x, self.num_keys, self.descending, "0");
        let or_equal = goes_before(x, self.num_keys, self.descending, "1");
        let to = format!(
            "    long long r = p / {run}ll, s = r * {run}ll;\n    bool left = (r & 1) == 0;\n    long long lo = left ? s + {run}ll : s - {run}ll;\n    if (lo > {len}ll) lo = {len}ll;\n    long long hi = left ? (s + 2 * {run}ll < {len}ll ? s + 2 * {run}ll : {len}ll) : s;\n    long long first = lo;\n    while (lo < hi) {{\n      long long m = lo + (hi - lo) / 2;\n      long long mt = base + m * {stride}ll;\n      bool before = left ? {strictly} : {or_equal};\n      if (before) lo = m + 1; else hi = m;\n    }}\n    long long to = base + ((left ? s : s - {run}ll) + (p - s) + (lo - first)) * {stride}ll;\n",
            len = self.len,
            stride = self.stride,
        );
        self.kernel(name, x, outs, &to)
    }

    /// The kernel over every element of the operands `x` that finds its line, computes
    /// `to` (its destination's flat index) with the statements `placement`, and writes each
    /// operand's element there, into `outs`.
    fn kernel(
        &self,
        name: &str,
        x: &[(usize, DType)],
        outs: &[(usize, DType)],
        placement: &str,
    ) -> Kernel {
        let moves: String = x
            .iter()
            .zip(outs)
            .map(|((v, _), (o, _))| format!("    out{o}[to] = in{v}[at];\n"))
            .collect();
        let body = format!("{}{placement}{moves}", self.locate());
        kernel(name, x, outs, self.shape.iter().product(), &body)
    }
}

/// A stable sort of every line along `axis` of the operands, ordered lexicographically by
/// the first `num_keys` of them (see [`goes_before`]), as one rank kernel (lines of up to
/// [`RANK_MAX_LINE`] elements).
pub(super) fn sort(n: &Node, axis: usize, num_keys: usize, descending: bool) -> Kernel {
    let x = &n.reads();
    let outs: Vec<(usize, DType)> = x
        .iter()
        .enumerate()
        .map(|(k, r)| (n.result + k, r.1))
        .collect();
    let lines = Lines::of(n.out, axis, num_keys, descending);
    lines.ranks(n.name, x, &outs, lines.len.max(1))
}

/// The steps of a stable sort of lines longer than [`RANK_MAX_LINE`]: runs of
/// [`FIRST_RUN`] elements sorted by ranks, then merge passes doubling the sorted runs until
/// one covers the line, each pass one kernel over every element (the work is the line's
/// length times its logarithm squared, not its length squared). Each pass's results are new
/// values numbered from `first_new` (their types returned), the last pass's the node's.
pub(super) fn merge_sort(
    n: &Node,
    axis: usize,
    num_keys: usize,
    descending: bool,
    first_new: usize,
) -> (Vec<Step>, Vec<TensorType>) {
    let lines = Lines::of(n.out, axis, num_keys, descending);
    let results: Vec<(usize, DType)> = (0..n.operands.len())
        .map(|k| (n.result + k, n.ty(k).dtype))
        .collect();
    // The rank pass (`None`), then a merge of each pair of sorted runs of each length.
    let mut passes: Vec<Option<usize>> = vec![None];
    let mut run = FIRST_RUN;
    while run < lines.len {
        passes.push(Some(run));
        run *= 2;
    }
    let (mut steps, mut new_types) = (Vec::new(), Vec::new());
    let mut current = n.reads();
    for (k, pass) in passes.iter().enumerate() {
        let outs: Vec<(usize, DType)> = if k + 1 == passes.len() {
            results.clone()
        } else {
            (0..n.operands.len())
                .map(|j| {
                    new_types.push(n.ty(j).clone());
                    (first_new + new_types.len() - 1, n.ty(j).dtype)
                })
                .collect()
        };
        let name = format!("{}_s{k}", n.name);
        steps.push(Step::Kernel(match pass {
            None => lines.ranks(&name, &current, &outs, FIRST_RUN),
            Some(run) => lines.merge(&name, &current, &outs, *run),
        }));
        current = outs;
    }
    (steps, new_types)
}

#[cfg(test)]
mod tests {
    use crate::emulate::testing::{at_block_sizes, elements, storage as bytes};
    use crate::emulate::{Emulated, Storage};
    use crate::plan::plan_with;
    use quabla_abi::qir::Program;
    use std::cmp::Ordering;
    use std::sync::Arc;

    /// numpy's order of two floats: NaN after everything, `-0` tying `+0`.
    fn float_order(x: f64, y: f64) -> Ordering {
        match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        }
    }

    fn i32s(s: &Storage) -> Vec<i32> {
        elements(s, i32::from_le_bytes)
    }

    /// Runs `text` (whose last output is the sorted `i32` payload) on `inputs` with 1 and 4
    /// threads per block, which must agree, after checking it plans as `kernels` kernels.
    fn sorted_payload(text: &str, inputs: &[Arc<Storage>], kernels: usize) -> Vec<i32> {
        let p = Program::parse(text).unwrap();
        let plan = plan_with(&p, "t", 0).unwrap();
        assert_eq!(plan.kernels().len(), kernels, "{:#?}", plan.steps);
        i32s(at_block_sizes(plan, inputs, &[1, 4]).last().unwrap())
    }

    /// Keys with ties, NaN, both zeros and infinities.
    fn awkward(k: usize) -> f64 {
        match k % 9 {
            0 => f64::NAN,
            1 => -0.0,
            2 => 0.0,
            3 => 1.5,
            4 => -2.0,
            5 => 1.5,
            6 => f64::INFINITY,
            7 => ((k * 37 % 101) as f64) / 7.0,
            _ => -0.0,
        }
    }

    /// Lines of 1,000 (a rank pass over runs of 64, then merges of runs of 64 to 512):
    /// the payload in the order of a stable sort of each line written out in Rust.
    #[test]
    fn long_lines_merge_sort_stably_in_numpy_order() {
        let (rows, len) = (3usize, 1000usize);
        let keys: Vec<f64> = (0..rows * len).map(awkward).collect();
        let payload: Vec<i32> = (0..(rows * len) as i32).collect();
        for descending in [false, true] {
            let text = format!(
                "program(%0: f64[{rows},{len}], %1: i32[{rows},{len}]) {{
  %2, %3 = sort[axis=1, num_keys=1, descending={descending}](%0, %1) : f64[{rows},{len}], i32[{rows},{len}]
  return %2, %3
}}"
            );
            let got = sorted_payload(
                &text,
                &[
                    bytes(&keys, f64::to_le_bytes),
                    bytes(&payload, i32::to_le_bytes),
                ],
                5,
            );
            for r in 0..rows {
                let mut line: Vec<usize> = (r * len..(r + 1) * len).collect();
                line.sort_by(|&a, &b| {
                    let o = float_order(keys[a], keys[b]);
                    if descending {
                        o.reverse()
                    } else {
                        o
                    }
                });
                let want: Vec<i32> = line.iter().map(|&k| payload[k]).collect();
                assert_eq!(
                    &got[r * len..(r + 1) * len],
                    &want[..],
                    "line {r}, descending {descending}"
                );
            }
        }
    }

    /// Two keys (an `i32` with few values, then an `f32`) along axis 0 of a `[700, 3]`
    /// array, so lines are strided: the second key breaks the first's ties, and equal pairs
    /// keep their order.
    #[test]
    fn a_second_key_breaks_ties_along_a_strided_axis() {
        let (len, cols) = (700usize, 3usize);
        let first: Vec<i32> = (0..len * cols).map(|k| (k * 7 % 5) as i32 - 2).collect();
        let second: Vec<f32> = (0..len * cols).map(|k| awkward(k / 2) as f32).collect();
        let payload: Vec<i32> = (0..(len * cols) as i32).collect();
        let text = format!(
            "program(%0: i32[{len},{cols}], %1: f32[{len},{cols}], %2: i32[{len},{cols}]) {{
  %3, %4, %5 = sort[axis=0, num_keys=2, descending=false](%0, %1, %2) : i32[{len},{cols}], f32[{len},{cols}], i32[{len},{cols}]
  return %3, %4, %5
}}"
        );
        // Runs of 64, merged at 64, 128, 256 and 512.
        let got = sorted_payload(
            &text,
            &[
                bytes(&first, i32::to_le_bytes),
                bytes(&second, f32::to_le_bytes),
                bytes(&payload, i32::to_le_bytes),
            ],
            5,
        );
        for c in 0..cols {
            let mut line: Vec<usize> = (0..len).map(|r| r * cols + c).collect();
            line.sort_by(|&a, &b| {
                first[a]
                    .cmp(&first[b])
                    .then(float_order(second[a] as f64, second[b] as f64))
            });
            let want: Vec<i32> = line.iter().map(|&k| payload[k]).collect();
            let have: Vec<i32> = (0..len).map(|r| got[r * cols + c]).collect();
            assert_eq!(have, want, "column {c}");
        }
    }

    /// A line one past the rank sort's bound: a rank pass and three merges, the last
    /// merging a run of 256 with a run of 1.
    #[test]
    fn a_line_just_past_the_rank_bound_merges_a_lone_element() {
        let len = super::RANK_MAX_LINE + 1;
        let keys: Vec<f64> = (0..len).map(|k| ((k * 61 % 257) as f64).sin()).collect();
        let payload: Vec<i32> = (0..len as i32).collect();
        let text = format!(
            "program(%0: f64[{len}], %1: i32[{len}]) {{
  %2, %3 = sort[axis=0, num_keys=1, descending=false](%0, %1) : f64[{len}], i32[{len}]
  return %2, %3
}}"
        );
        let got = sorted_payload(
            &text,
            &[
                bytes(&keys, f64::to_le_bytes),
                bytes(&payload, i32::to_le_bytes),
            ],
            4,
        );
        let mut want: Vec<usize> = (0..len).collect();
        want.sort_by(|&a, &b| float_order(keys[a], keys[b]));
        assert_eq!(got, want.iter().map(|&k| k as i32).collect::<Vec<_>>());
    }

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
