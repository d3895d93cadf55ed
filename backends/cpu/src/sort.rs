//! `sort`: every operand permuted along one axis by one stable sort of its lines, ordered
//! lexicographically by the key operands.
//!
//! Floats order as numpy's: NaN after `+inf` (all NaNs tie), `-0` ties `+0`. The sort
//! computes, once, the input element each output element comes from and then gathers every
//! operand through it, so payload operands cost one pass each.

use crate::pool::CollectPooled;
use crate::tensor::{map_storage, Storage, Tensor};
use rayon::prelude::*;
use std::cmp::Ordering;

/// Lines sorted in parallel once the array has this many elements.
const PAR_MIN: usize = 1 << 14;

/// numpy's float order: NaN last (all NaNs equal), `-0 == +0`.
fn float_order<T: PartialOrd + Copy>(x: T, y: T) -> Ordering {
    // A NaN is the only value unequal to itself.
    #[allow(clippy::eq_op)]
    match (x != x, y != y) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// How two flat positions of one key operand compare.
fn key_order(s: &Storage) -> Box<dyn Fn(usize, usize) -> Ordering + Sync + '_> {
    match s {
        Storage::Bool(v) => Box::new(move |a, b| v[a].cmp(&v[b])),
        Storage::I32(v) => Box::new(move |a, b| v[a].cmp(&v[b])),
        Storage::U32(v) => Box::new(move |a, b| v[a].cmp(&v[b])),
        Storage::F32(v) => Box::new(move |a, b| float_order(v[a], v[b])),
        Storage::F64(v) => Box::new(move |a, b| float_order(v[a], v[b])),
    }
}

/// For every output element, the flat input position it is taken from.
fn source_positions(
    keys: &[&Storage],
    shape: &[usize],
    axis: usize,
    descending: bool,
) -> Vec<usize> {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let total: usize = shape.iter().product();
    let orders: Vec<_> = keys.iter().map(|k| key_order(k)).collect();
    let compare = |a: usize, b: usize| {
        for order in &orders {
            match order(a, b) {
                Ordering::Equal => continue,
                o if descending => return o.reverse(),
                o => return o,
            }
        }
        Ordering::Equal
    };
    let mut src = vec![0usize; total];
    if n == 0 {
        return src;
    }
    // One slab per index of the leading axes; its `inner` interleaved lines sort one by one
    // (a stable merge sort: equal keys keep their order).
    let sort_slab = |(o, slab): (usize, &mut [usize])| {
        let mut line: Vec<usize> = Vec::with_capacity(n);
        for i in 0..inner {
            let base = o * n * inner + i;
            line.clear();
            line.extend((0..n).map(|k| base + k * inner));
            line.sort_by(|&a, &b| compare(a, b));
            for (k, &from) in line.iter().enumerate() {
                slab[k * inner + i] = from;
            }
        }
    };
    if total >= PAR_MIN {
        src.par_chunks_mut(n * inner)
            .enumerate()
            .for_each(sort_slab);
    } else {
        src.chunks_mut(n * inner).enumerate().for_each(sort_slab);
    }
    src
}

/// The sorted operands, in operand order.
pub fn sort(operands: &[&Tensor], axis: usize, num_keys: usize, descending: bool) -> Vec<Storage> {
    let keys: Vec<&Storage> = operands[..num_keys].iter().map(|t| &*t.data).collect();
    let src = source_positions(&keys, operands[0].shape(), axis, descending);
    operands
        .iter()
        .map(|t| map_storage!(&*t.data, v => src.iter().map(|&i| v[i]).collect_pooled()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Insertion sort of one line's positions: stable by construction, the reference.
    fn reference(keys: &[&[f64]], line: &[usize], descending: bool) -> Vec<usize> {
        let cmp = |a: usize, b: usize| {
            for k in keys {
                let o = float_order(k[a], k[b]);
                if o != Ordering::Equal {
                    return if descending { o.reverse() } else { o };
                }
            }
            Ordering::Equal
        };
        let mut out: Vec<usize> = Vec::new();
        for &p in line {
            let at = out
                .iter()
                .position(|&q| cmp(p, q) == Ordering::Less)
                .unwrap_or(out.len());
            out.insert(at, p);
        }
        out
    }

    #[test]
    fn matches_an_insertion_sort_on_every_line_of_a_middle_axis() {
        // Few distinct values (ties), NaN, signed zeros and infinities.
        let pool = [
            1.0,
            -0.0,
            0.0,
            f64::NAN,
            -2.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let shape = [3usize, 7, 4];
        let total = 84;
        let k1: Vec<f64> = (0..total).map(|i| pool[(i * 5 + i / 3) % 7]).collect();
        let k2: Vec<f64> = (0..total).map(|i| ((i * 13) % 5) as f64).collect();
        let s1 = Storage::F64(k1.clone());
        let s2 = Storage::F64(k2.clone());
        for descending in [false, true] {
            for keys in [vec![&s1], vec![&s1, &s2]] {
                let src = source_positions(&keys, &shape, 1, descending);
                let ref_keys: Vec<&[f64]> = if keys.len() == 1 {
                    vec![&k1]
                } else {
                    vec![&k1, &k2]
                };
                for o in 0..3 {
                    for i in 0..4 {
                        let line: Vec<usize> = (0..7).map(|k| o * 28 + k * 4 + i).collect();
                        let got: Vec<usize> = line.iter().map(|&p| src[p]).collect();
                        assert_eq!(got, reference(&ref_keys, &line, descending));
                    }
                }
            }
        }
    }

    #[test]
    fn the_parallel_split_sorts_as_the_serial_one() {
        let n = PAR_MIN + 3;
        let k: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 101 - 50).collect();
        let s = Storage::I32(k.clone());
        let src = source_positions(&[&s], &[n], 0, false);
        let sorted: Vec<i32> = src.iter().map(|&p| k[p]).collect();
        let mut expect = k.clone();
        expect.sort();
        assert_eq!(sorted, expect);
        // Stable: equal keys keep ascending positions.
        assert!(src.windows(2).all(|w| k[w[0]] != k[w[1]] || w[0] < w[1]));
    }
}
