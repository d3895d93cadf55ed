//! `dot_general` as a plain kernel.

use super::reduce::BLOCK_FOLD_MIN;
use super::{block_fold, coordinates, flat, Gemm, Node, Spread};
use crate::elementwise::c_type;
use crate::fusion::Kernel;
use quabla_abi::qir::DotDims;
use quabla_abi::{DType, TensorType};

/// The most outputs a dot gives a block each: beyond, one thread per output already fills
/// the GPU.
const BLOCK_DOT_OUTPUTS: usize = 1 << 16;

/// `dot_general` as one thread per output element, summing over the contracted axes in
/// row-major order (f32 in f64; integers wrapping); with few outputs (at most
/// `BLOCK_DOT_OUTPUTS`) and long sums (`BLOCK_FOLD_MIN` terms or more), as a parameter
/// gradient's contraction over a batch is, one block per output summing in a fixed tree. A
/// plain, deterministic kernel.
pub(super) fn dot_general(n: &Node, d: &DotDims) -> Kernel {
    let (l, r) = (&n.ty(0).shape, &n.ty(1).shape);
    let (lc, rc, kshape) = index_expressions(d, l, r);
    let mut kernel = dot_kernel(n, &lc, &rc, &kshape);
    kernel.gemm = Gemm::of(d, l, r, n.out.dtype, n.read(0).0, n.read(1).0);
    kernel
}

/// The most multiply-adds a `dot_general` computes where it heads a fused run
/// (`in_run`): products this small are latency, not arithmetic (a solver's MLP field on
/// one state: 512 to 4,096), and one launch with their elementwise readers beats cuBLAS's
/// launch plus the run's.
pub const IN_RUN_MAX_TERMS: usize = 1 << 16;

/// The longest sum one thread of a run's head product makes alone (in a run, each output
/// is one thread's: no block folds it).
const IN_RUN_MAX_SUM: usize = 256;

/// Statements computing `dot_general` element `i` of its result into register
/// `v<result>` (one thread's sum in row-major order of the contracted axes), for the
/// head of a fused run (`fusion.rs`); `None` where the product is too large
/// (`IN_RUN_MAX_TERMS`) or its sums too long for one thread (`IN_RUN_MAX_SUM`). Where
/// `dot_kernel` would fold a sum in a block, the run's thread sums it in order: other bits
/// than that kernel's, as cuBLAS's are. `lhs`, `rhs`: the operands' value ids, read by
/// index from `in<id>`.
pub fn in_run(
    d: &DotDims,
    (lhs, l): (usize, &TensorType),
    (rhs, r): (usize, &TensorType),
    result: usize,
    out: &TensorType,
) -> Option<String> {
    let (lc, rc, kshape) = index_expressions(d, &l.shape, &r.shape);
    let count: usize = kshape.iter().product();
    if count > IN_RUN_MAX_SUM || count.saturating_mul(out.num_elements()) > IN_RUN_MAX_TERMS {
        return None;
    }
    let (acc_ty, step) = accumulation(out.dtype);
    let t = c_type(out.dtype);
    let term = term(&kshape, &lc, &rc, (lhs, &l.shape), (rhs, &r.shape), t, step);
    // A block of its own: the coordinates' names stay local.
    Some(format!(
        "    {t} v{result};\n    {{\n{coords}    {acc_ty} acc = 0;\n    for (unsigned long long j = 0; j < {count}ull; ++j) {{\n{term}    }}\n    v{result} = ({t})acc;\n    }}\n",
        coords = coordinates(&out.shape, "i", "c"),
    ))
}

/// Each operand's index expressions in the output coordinates `c<k>` (batch axes, then
/// the lhs's free axes, then the rhs's) and the contracted ones `r<j>`, and the contracted
/// axes' sizes.
fn index_expressions(
    d: &DotDims,
    l: &[usize],
    r: &[usize],
) -> (Vec<String>, Vec<String>, Vec<usize>) {
    let free = |rank: usize, batch: &[usize], contract: &[usize]| -> Vec<usize> {
        (0..rank)
            .filter(|a| !batch.contains(a) && !contract.contains(a))
            .collect()
    };
    let (lf, rf) = (
        free(l.len(), &d.lhs_batch, &d.lhs_contract),
        free(r.len(), &d.rhs_batch, &d.rhs_contract),
    );
    let mut lc = vec![String::new(); l.len()];
    let mut rc = vec![String::new(); r.len()];
    let mut axis = 0;
    for (&a, &b) in d.lhs_batch.iter().zip(&d.rhs_batch) {
        lc[a] = format!("c{axis}");
        rc[b] = format!("c{axis}");
        axis += 1;
    }
    for &a in &lf {
        lc[a] = format!("c{axis}");
        axis += 1;
    }
    for &b in &rf {
        rc[b] = format!("c{axis}");
        axis += 1;
    }
    let kshape: Vec<usize> = d.lhs_contract.iter().map(|&a| l[a]).collect();
    for (j, (&a, &b)) in d.lhs_contract.iter().zip(&d.rhs_contract).enumerate() {
        lc[a] = format!("r{j}");
        rc[b] = format!("r{j}");
    }
    (lc, rc, kshape)
}

/// The accumulator's C type and the step adding one product (f32 in f64; integers
/// wrapping).
pub(crate) fn accumulation(dtype: DType) -> (&'static str, &'static str) {
    match dtype {
        DType::I32 => ("unsigned int", "acc += (unsigned int)a * (unsigned int)b;"),
        DType::U32 => ("unsigned int", "acc += a * b;"),
        _ => ("double", "acc += (double)a * (double)b;"),
    }
}

/// One term of the sum: the contracted coordinates of `j`, both operands, the product.
fn term(
    kshape: &[usize],
    lc: &[String],
    rc: &[String],
    (lv, l): (usize, &[usize]),
    (rv, r): (usize, &[usize]),
    t: &str,
    step: &str,
) -> String {
    format!(
        "{rcoords}    {t} a = in{lv}[{li}];\n    {t} b = in{rv}[{ri}];\n    {step}\n",
        rcoords = coordinates(kshape, "j", "r"),
        li = flat(lc, l),
        ri = flat(rc, r),
    )
}

/// The kernel itself, from each operand's index expressions (`c<k>` output and `r<j>`
/// contracted coordinates): one thread, or one block, per output element.
fn dot_kernel(n: &Node, lc: &[String], rc: &[String], kshape: &[usize]) -> Kernel {
    let (result, out) = (n.result, n.out);
    let x = [n.read(0), n.read(1)];
    let (l, r) = (&n.ty(0).shape, &n.ty(1).shape);
    let count: usize = kshape.iter().product();
    let (acc_ty, step) = accumulation(out.dtype);
    let t = c_type(out.dtype);
    let coords = coordinates(&out.shape, "i", "c");
    let term = term(kshape, lc, rc, (x[0].0, l), (x[1].0, r), t, step);
    if count >= BLOCK_FOLD_MIN && out.num_elements() <= BLOCK_DOT_OUTPUTS {
        let fold = block_fold(acc_ty, "acc = acc + x;", result, t);
        let body = format!(
            "{coords}    {acc_ty} acc = 0; unsigned char has = 1;\n    for (unsigned long long j = threadIdx.x; j < {count}ull; j += blockDim.x) {{\n{term}    }}\n{fold}"
        );
        return n.spread_kernel(&x, out.num_elements(), &body, Spread::Block { acc_ty });
    }
    let body = format!(
        "{coords}    {acc_ty} acc = 0;\n    for (unsigned long long j = 0; j < {count}ull; ++j) {{\n{term}    }}\n    out{result}[i] = ({t})acc;\n"
    );
    n.kernel(&x, out.num_elements(), &body)
}
