//! Reductions and cumulative folds in fixed orders, deterministic run to run: each output
//! of a short reduction and each line of a cumulative op folded by one thread, each output
//! of a long reduction by a block (strided shares, then a fixed tree: `block_fold`).

use super::{block_fold, coordinates, flat, Node, Spread};
use crate::elementwise::c_type;
use crate::fusion::Kernel;
use quabla_abi::qir::{CumulativeKind, ReduceKind};
use quabla_abi::DType;

/// The accumulator's C type and the fold of `x` into `acc` for a reduction kind.
pub(crate) fn fold(kind: ReduceKind, dtype: DType) -> (&'static str, String) {
    let acc_ty = match (kind, dtype) {
        // f32 sums and products in f64: one rounding at the end.
        (ReduceKind::Sum | ReduceKind::Prod, DType::F32) => "double",
        _ => c_type(dtype),
    };
    let step = match (kind, dtype) {
        (ReduceKind::Sum, DType::I32) => "acc = (int)((unsigned int)acc + (unsigned int)x);",
        (ReduceKind::Prod, DType::I32) => "acc = (int)((unsigned int)acc * (unsigned int)x);",
        (ReduceKind::Sum, _) => "acc = acc + x;",
        (ReduceKind::Prod, _) => "acc = acc * x;",
        (ReduceKind::Max, DType::F32) => "acc = qmax_float(acc, x);",
        (ReduceKind::Max, DType::F64) => "acc = qmax_double(acc, x);",
        (ReduceKind::Min, DType::F32) => "acc = qmin_float(acc, x);",
        (ReduceKind::Min, DType::F64) => "acc = qmin_double(acc, x);",
        (ReduceKind::Max, _) => "acc = x > acc ? x : acc;",
        (ReduceKind::Min, _) => "acc = x < acc ? x : acc;",
        (ReduceKind::And, _) => "acc = acc & x;",
        (ReduceKind::Or, _) => "acc = acc | x;",
    };
    (acc_ty, step.to_string())
}

/// What reducing nothing gives.
fn identity(kind: ReduceKind, dtype: DType) -> &'static str {
    let float = matches!(dtype, DType::F32 | DType::F64);
    match (kind, dtype) {
        (ReduceKind::Sum | ReduceKind::Or, _) => "0",
        (ReduceKind::Prod | ReduceKind::And, _) => "1",
        // NVRTC has no math.h (no INFINITY): the infinity from its bits.
        (ReduceKind::Max, _) if float => "(-__int_as_float(0x7f800000))",
        (ReduceKind::Min, _) if float => "__int_as_float(0x7f800000)",
        (ReduceKind::Max, DType::I32) => "(-2147483647 - 1)",
        (ReduceKind::Min, DType::I32) => "2147483647",
        (ReduceKind::Max, _) => "0",
        (ReduceKind::Min, DType::U32) => "4294967295u",
        (ReduceKind::Min, _) => "1",
    }
}

/// From this many elements per output on, a block of threads folds each output (a thread
/// folds a strided share, then the block folds the shares in a fixed tree): below it, one
/// thread per output. The conformance suite's small reductions, held to 0 ulp against the
/// sequential order, stay below; its 5,000-element sums go through the block fold.
pub(super) const BLOCK_FOLD_MIN: usize = 64;

/// Each output element folds its elements in row-major order of the reduced axes, starting
/// from the first (so signed zeros and NaNs are folded, not an identity's); from
/// `BLOCK_FOLD_MIN` elements on, a block folds each output, its threads' shares starting
/// from their own first elements likewise.
///
/// With a `prologue` (the elementwise run that computes the operand, read by nothing else),
/// each element is computed where it is read instead of loaded: one kernel, not two.
pub(crate) fn reduce(
    n: &Node,
    kind: ReduceKind,
    axes: &[usize],
    prologue: Option<&crate::fusion::Prologue>,
) -> Kernel {
    let (x, src, result, out) = (n.read(0), &n.ty(0).shape, n.result, n.out);
    let element = |index: &str| match prologue {
        Some(p) => p.call(index),
        None => format!("in{}[{index}]", x.0),
    };
    let reads: Vec<(usize, quabla_abi::DType)> = match prologue {
        Some(p) => p.reads.clone(),
        None => vec![x],
    };
    let with_prologue = |mut k: Kernel| {
        if let Some(p) = prologue {
            k.body = format!("{}{}", p.function, k.body);
            k.source = format!("{}\n{}", crate::elementwise::PRELUDE, k.body);
            k.fused = p.fused;
        }
        k
    };
    let kept: Vec<usize> = (0..src.len()).filter(|a| !axes.contains(a)).collect();
    let reduced: Vec<usize> = axes.to_vec();
    let rshape: Vec<usize> = reduced.iter().map(|&a| src[a]).collect();
    let count: usize = rshape.iter().product();
    let coords = coordinates(&out.shape, "i", "c");
    let (acc_ty, step) = fold(kind, x.1);
    let mut ic = vec![String::new(); src.len()];
    for (j, &a) in kept.iter().enumerate() {
        ic[a] = format!("c{j}");
    }
    for (j, &a) in reduced.iter().enumerate() {
        ic[a] = format!("r{j}");
    }
    let index = flat(&ic, src);
    let body = if count == 0 {
        format!(
            "    out{result}[i] = ({})({});\n",
            c_type(out.dtype),
            identity(kind, x.1)
        )
    } else if count >= BLOCK_FOLD_MIN {
        let rcoords = coordinates(&rshape, "j", "r");
        let fold = block_fold(acc_ty, &step, result, c_type(out.dtype));
        let body = format!(
            "{coords}    {acc_ty} acc = 0; unsigned char has = 0;\n    for (unsigned long long j = threadIdx.x; j < {count}ull; j += blockDim.x) {{\n{rcoords}    {acc_ty} x = ({acc_ty}){};\n    if (!has) {{ acc = x; has = 1; continue; }}\n    {step}\n    }}\n{fold}",
            element(&index)
        );
        return with_prologue(n.spread_kernel(
            &reads,
            out.num_elements(),
            &body,
            Spread::Block { acc_ty },
        ));
    } else {
        let rcoords = coordinates(&rshape, "j", "r");
        format!(
            "{coords}    {acc_ty} acc = 0;\n    for (unsigned long long j = 0; j < {count}ull; ++j) {{\n{rcoords}    {acc_ty} x = ({acc_ty}){};\n    if (j == 0) {{ acc = x; continue; }}\n    {step}\n    }}\n    out{result}[i] = ({})acc;\n",
            element(&index),
            c_type(out.dtype),
        )
    };
    with_prologue(n.kernel(&reads, out.num_elements(), &body))
}

/// One thread per line along `axis`, folding in order (backwards when `reverse`), each
/// element written as the fold so far, in the element type (as the CPU's scan).
pub(super) fn cumulative(n: &Node, kind: CumulativeKind, axis: usize, reverse: bool) -> Kernel {
    let (x, out, result) = (n.read(0), n.out, n.result);
    let shape = &out.shape;
    let len = shape[axis];
    let mut line_shape = shape.clone();
    line_shape[axis] = 1;
    let lines: usize = line_shape.iter().product();
    let coords = coordinates(&line_shape, "i", "c");
    let stride: usize = shape[axis + 1..].iter().product();
    let mut base = vec![String::new(); shape.len()];
    for (k, b) in base.iter_mut().enumerate() {
        *b = if k == axis {
            "0".into()
        } else {
            format!("c{k}")
        };
    }
    let start = flat(&base, shape);
    let reduce_kind = match kind {
        CumulativeKind::Sum => ReduceKind::Sum,
        CumulativeKind::Prod => ReduceKind::Prod,
        CumulativeKind::Max => ReduceKind::Max,
        CumulativeKind::Min => ReduceKind::Min,
    };
    let (_, step) = fold(reduce_kind, x.1);
    let t = c_type(x.1);
    let position = if reverse {
        format!("({len}ll - 1 - k)")
    } else {
        "k".into()
    };
    let body = if len == 0 {
        String::new()
    } else {
        format!(
            "{coords}    long long base = {start};\n    {t} acc = 0;\n    for (long long k = 0; k < {len}ll; ++k) {{\n    long long at = base + {position} * {stride}ll;\n    {t} x = in{v}[at];\n    if (k == 0) {{ acc = x; }} else {{ {step} }}\n    out{result}[at] = acc;\n    }}\n",
            v = x.0
        )
    };
    n.kernel(&[x], lines, &body)
}

#[cfg(test)]
mod tests {
    use crate::emulate::{Emulated, Storage};
    use crate::plan::plan_with;
    use quabla_abi::qir::Program;
    use std::sync::Arc;

    /// Long f64 sums folded by a block of 1, 2, 4 and 8 host threads (and 3, cut to 2): each
    /// thread's strided share in order, then the tree halving the block, exactly as written
    /// out here for that block size. Magnitudes from 1e-8 to 1e8 make the order show.
    #[test]
    fn a_block_fold_sums_shares_then_a_halving_tree() {
        let (rows, len) = (3usize, 1000usize);
        let x: Vec<f64> = (0..rows * len)
            .map(|k| (k as f64 * 0.731).sin() * 10f64.powi((k % 17) as i32 - 8))
            .collect();
        let p = Program::parse(&format!(
            "program(%0: f64[{rows},{len}]) {{
  %1 = reduce[kind=sum, axes=[1]](%0) : f64[{rows}]
  return %1
}}"
        ))
        .unwrap();
        let plan = plan_with(&p, "t", 0).unwrap();
        assert!(plan.kernels()[0].block_per_element);
        let mut exe = Emulated::of_plan(plan).unwrap();
        let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut by_block = Vec::new();
        for (threads, block) in [(1u32, 1usize), (2, 2), (3, 2), (4, 4), (8, 8)] {
            exe.set_threads(threads);
            let out = exe
                .run(vec![Arc::new(Storage::from_bytes(&bytes))])
                .unwrap();
            let got: Vec<f64> = out[0]
                .bytes()
                .chunks(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
                .collect();
            for (r, g) in got.iter().enumerate() {
                let row = &x[r * len..(r + 1) * len];
                let mut part: Vec<f64> = (0..block)
                    .map(|t| row.iter().skip(t).step_by(block).fold(0.0, |a, v| a + v))
                    .collect();
                let mut s = block / 2;
                while s > 0 {
                    for t in 0..s {
                        part[t] += part[t + s];
                    }
                    s /= 2;
                }
                assert_eq!(g.to_bits(), part[0].to_bits(), "{threads} threads, row {r}");
            }
            by_block.push(got);
        }
        // The order shows: one thread's sums are not the block of eight's.
        assert_ne!(by_block[0], by_block[4]);
    }
}
