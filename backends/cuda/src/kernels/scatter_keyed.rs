//! Scatter-add by sorted keys, for many windows (an embedding's or a `gather`'s gradient,
//! `x.at[i].add`, a batch of patches): each window is split into its entries, one per
//! offset along the indexed operand axes (one entry where the window is one element along
//! each of them), and an entry's key is the indexed coordinates it adds into. The keys are
//! sorted stably (`sort.rs`'s merge sort, ties in entry order, which is update order since
//! one window adds at most once into an element), and each operand element adds the run of
//! entries with its key, found by binary search. The sums run in update order, as
//! `indexing::scatter_add`'s, so the bits are the same; the work is the entries' count
//! times its logarithm squared plus what is added, where scanning every window from every
//! element is their product.

use super::{coordinates, flat, sort, Node};
use crate::fusion::Kernel;
use crate::plan::Step;
use quabla_abi::qir::ScatterDims;
use quabla_abi::{DType, TensorType};

/// The key of a window that lies outside the operand (dropped): above every real key.
const DROPPED: &str = "2147483647";

/// The geometry both kernels share.
struct Windows<'a> {
    d: &'a ScatterDims,
    src: &'a [usize],
    idx: &'a [usize],
    upd: &'a [usize],
    /// The updates' axes that index windows, and their extents (the windows' batch).
    scatter_axes: Vec<usize>,
    batch: Vec<usize>,
    /// Each operand axis's window extent.
    size: Vec<usize>,
    /// The window's extent along each indexed axis (in `scatter_dims_to_operand_dims`'
    /// order): an entry's offset runs over them.
    reach: Vec<usize>,
}

impl<'a> Windows<'a> {
    fn of(d: &'a ScatterDims, src: &'a [usize], idx: &'a [usize], upd: &'a [usize]) -> Self {
        let scatter_axes: Vec<usize> = (0..upd.len())
            .filter(|a| !d.update_window_dims.contains(a))
            .collect();
        let batch = scatter_axes.iter().map(|&a| upd[a]).collect();
        let window_axes = (0..src.len()).filter(|a| !d.inserted_window_dims.contains(a));
        let mut size = vec![1usize; src.len()];
        for (j, a) in window_axes.enumerate() {
            size[a] = upd[d.update_window_dims[j]];
        }
        let reach = d
            .scatter_dims_to_operand_dims
            .iter()
            .map(|&a| size[a])
            .collect();
        Windows {
            d,
            src,
            idx,
            upd,
            scatter_axes,
            batch,
            size,
            reach,
        }
    }

    /// How many windows there are.
    fn count(&self) -> usize {
        self.batch.iter().product()
    }

    /// How many entries each window has (one per offset along the indexed axes).
    fn span(&self) -> usize {
        self.reach.iter().product()
    }

    /// Whether the keyed form applies: the keys (the indexed axes' elements) fit an `i32`
    /// below [`DROPPED`], and so do the entries' numbers.
    fn keyed(&self) -> bool {
        let indexed = &self.d.scatter_dims_to_operand_dims;
        let keys = indexed
            .iter()
            .try_fold(1u64, |k, &a| k.checked_mul(self.src[a] as u64));
        let entries = (self.count() as u64).checked_mul(self.span() as u64);
        keys.is_some_and(|k| k < i32::MAX as u64) && entries.is_some_and(|e| e < i32::MAX as u64)
    }

    /// Statements that split the entry number `e` into its window `w` and its offsets
    /// `o0..` along the indexed axes.
    fn entry(&self, e: &str) -> String {
        format!(
            "    unsigned long long w = {e} / {span}ull;\n{offsets}",
            span = self.span(),
            offsets = coordinates(&self.reach, &format!("{e} % {}ull", self.span()), "o")
        )
    }

    /// The key of the indexed coordinates `coord(k)` (for the k-th indexed axis): their
    /// flat index over the indexed axes.
    fn key(&self, coord: impl Fn(usize) -> String) -> String {
        let indexed = &self.d.scatter_dims_to_operand_dims;
        let mut stride = 1u64;
        let mut terms = Vec::new();
        for (k, &a) in indexed.iter().enumerate().rev() {
            terms.push(format!("({}) * {stride}ll", coord(k)));
            stride *= self.src[a] as u64;
        }
        if terms.is_empty() {
            "0ll".into()
        } else {
            terms.join(" + ")
        }
    }
}

/// The steps of a scatter-add of `n` (operand, indices, updates) by sorted keys, or `None`
/// where its windows are at most `sort::RANK_MAX_LINE` (too few to be worth a sort) or its
/// keys or entries do not fit an `i32`. New values are numbered from `first_new` (their
/// types returned).
pub(super) fn steps(
    n: &Node,
    d: &ScatterDims,
    first_new: usize,
) -> Option<(Vec<Step>, Vec<TensorType>)> {
    let w = Windows::of(d, &n.ty(0).shape, &n.ty(1).shape, &n.ty(2).shape);
    if !w.keyed() || w.count() <= sort::RANK_MAX_LINE {
        return None;
    }
    let entries = w.count() * w.span();
    let keys_ty = TensorType::new(DType::I32, vec![entries]);
    // Keys and entry numbers, then both sorted by key.
    let (key, order, sorted_key, sorted_order) =
        (first_new, first_new + 1, first_new + 2, first_new + 3);
    let mut new_types = vec![keys_ty.clone(); 4];
    let mut steps = vec![Step::Kernel(key_kernel(n, &w, key, order))];
    let mut all_types: Vec<TensorType> = n.types.to_vec();
    all_types.resize(first_new, keys_ty.clone());
    all_types.extend(new_types.iter().cloned());
    let sort_name = format!("{}_k", n.name);
    let by_key = Node {
        name: &sort_name,
        operands: &[key, order],
        types: &all_types,
        result: sorted_key,
        out: &keys_ty,
    };
    let (sorting, added) = sort::merge_sort(&by_key, 0, 1, false, first_new + 4);
    steps.extend(sorting);
    new_types.extend(added);
    steps.push(Step::Kernel(sum_kernel(n, &w, sorted_key, sorted_order)));
    Some((steps, new_types))
}

/// One thread per entry: the key of the element it adds into (or [`DROPPED`] where its
/// window does not lie wholly inside the operand) and its number.
fn key_kernel(n: &Node, w: &Windows, key: usize, order: usize) -> Kernel {
    let iv = n.read(1).0;
    let mut body = w.entry("i");
    body.push_str(&coordinates(&w.batch, "w", "b"));
    let mut inside = Vec::new();
    for (k, &a) in w.d.scatter_dims_to_operand_dims.iter().enumerate() {
        let mut at: Vec<String> = (0..w.batch.len()).map(|j| format!("b{j}")).collect();
        at.push(format!("{k}"));
        body.push_str(&format!(
            "    long long s{k} = (long long)in{iv}[{}];\n",
            flat(&at, w.idx)
        ));
        inside.push(format!("s{k} >= 0 && s{k} <= {}ll", w.src[a] - w.size[a]));
    }
    let inside = if inside.is_empty() {
        "1".to_string()
    } else {
        inside.join(" && ")
    };
    body.push_str(&format!(
        "    out{key}[i] = ({inside}) ? (int)({}) : {DROPPED};\n    out{order}[i] = (int)i;\n",
        w.key(|k| format!("s{k} + o{k}"))
    ));
    super::kernel(
        &format!("{}_w", n.name),
        &[n.read(1)],
        &[(key, DType::I32), (order, DType::I32)],
        w.count() * w.span(),
        &body,
    )
}

/// One thread per operand element: the element plus, in update order, each entry with its
/// key (a binary search for the run of them in the sorted keys), where the element lies in
/// the windows' extent along the other axes (from 0, as nothing indexes them).
fn sum_kernel(n: &Node, w: &Windows, sorted_key: usize, sorted_order: usize) -> Kernel {
    let (ov, uv) = (n.read(0).0, n.read(2).0);
    let entries = w.count() * w.span();
    let indexed = &w.d.scatter_dims_to_operand_dims;
    let reach: Vec<String> = (0..w.src.len())
        .filter(|a| !indexed.contains(a) && w.size[*a] < w.src[*a])
        .map(|a| format!("c{a} < {}ll", w.size[a]))
        .collect();
    let reach = if reach.is_empty() {
        "1".to_string()
    } else {
        reach.join(" && ")
    };
    // The update's coordinates: the entry's window, and the element's offset in the window
    // (its own coordinate along an unindexed axis, the entry's offset along an indexed one).
    let mut uc = vec![String::new(); w.upd.len()];
    for (j, &a) in w.scatter_axes.iter().enumerate() {
        uc[a] = format!("b{j}");
    }
    let window_axes = (0..w.src.len()).filter(|a| !w.d.inserted_window_dims.contains(a));
    for (j, a) in window_axes.enumerate() {
        uc[w.d.update_window_dims[j]] = match indexed.iter().position(|&x| x == a) {
            Some(k) => format!("o{k}"),
            None => format!("c{a}"),
        };
    }
    let (t, add) = super::indexing::accumulation(n.out.dtype);
    let body = format!(
        "{coords}    {t} acc = in{ov}[i];\n    if ({reach}) {{\n      long long key = {key};\n      long long lo = 0, hi = {entries}ll;\n      while (lo < hi) {{ long long m = lo + (hi - lo) / 2; if ((long long)in{sorted_key}[m] < key) lo = m + 1; else hi = m; }}\n      for (long long j = lo; j < {entries}ll && (long long)in{sorted_key}[j] == key; ++j) {{\n        unsigned long long e = (unsigned long long)in{sorted_order}[j];\n{entry}{batch}        {t} u = in{uv}[{at}]; {add}\n      }}\n    }}\n    out{result}[i] = acc;\n",
        coords = coordinates(&n.out.shape, "i", "c"),
        key = w.key(|k| format!("c{}", indexed[k])),
        entry = w.entry("e"),
        batch = coordinates(&w.batch, "w", "b"),
        at = flat(&uc, w.upd),
        result = n.result,
    );
    super::kernel(
        n.name,
        &[
            n.read(0),
            n.read(2),
            (sorted_key, DType::I32),
            (sorted_order, DType::I32),
        ],
        &[(n.result, n.out.dtype)],
        n.out.num_elements(),
        &body,
    )
}

#[cfg(test)]
mod tests;
