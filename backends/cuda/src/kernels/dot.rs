//! `dot_general` as a plain kernel.

use super::reduce::BLOCK_FOLD_MIN;
use super::{block_fold, coordinates, flat, Gemm, Node, Spread};
use crate::elementwise::c_type;
use crate::fusion::Kernel;
use quabla_abi::qir::DotDims;
use quabla_abi::DType;

/// `dot_general` as one thread per output element, summing over the contracted axes in
/// row-major order (f32 in f64; integers wrapping); with few outputs (at most
/// `BLOCK_DOT_OUTPUTS`) and long sums (`BLOCK_FOLD_MIN` terms or more), as a parameter
/// gradient's contraction over a batch is, one block per output summing in a fixed tree. A
/// plain, deterministic kernel.
/// The most outputs a dot gives a block each: beyond, one thread per output already fills
/// the GPU.
const BLOCK_DOT_OUTPUTS: usize = 1 << 16;

pub(super) fn dot_general(n: &Node, d: &DotDims) -> Kernel {
    let out = n.out;
    let x = [n.read(0), n.read(1)];
    let shapes: [&[usize]; 2] = [&n.ty(0).shape, &n.ty(1).shape];
    let [l, r] = shapes;
    let free = |rank: usize, batch: &[usize], contract: &[usize]| -> Vec<usize> {
        (0..rank)
            .filter(|a| !batch.contains(a) && !contract.contains(a))
            .collect()
    };
    let (lf, rf) = (
        free(l.len(), &d.lhs_batch, &d.lhs_contract),
        free(r.len(), &d.rhs_batch, &d.rhs_contract),
    );
    // Output axes: batch, then lhs free, then rhs free.
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
    let mut kernel = dot_kernel(n, &lc, &rc, &kshape);
    kernel.gemm = Gemm::of(d, l, r, out.dtype, x[0].0, x[1].0);
    kernel
}

/// The kernel itself, from each operand's index expressions (`c<k>` output and `r<j>`
/// contracted coordinates): one thread, or one block, per output element.
fn dot_kernel(n: &Node, lc: &[String], rc: &[String], kshape: &[usize]) -> Kernel {
    let (result, out) = (n.result, n.out);
    let x = [n.read(0), n.read(1)];
    let (l, r) = (&n.ty(0).shape, &n.ty(1).shape);
    let count: usize = kshape.iter().product();
    let (acc_ty, step) = match out.dtype {
        DType::I32 => ("unsigned int", "acc += (unsigned int)a * (unsigned int)b;"),
        DType::U32 => ("unsigned int", "acc += a * b;"),
        _ => ("double", "acc += (double)a * (double)b;"),
    };
    let t = c_type(out.dtype);
    let coords = coordinates(&out.shape, "i", "c");
    // One term of the sum: the contracted coordinates of `j`, both operands, the product.
    let term = format!(
        "{rcoords}    {t} a = in{lv}[{li}];\n    {t} b = in{rv}[{ri}];\n    {step}\n",
        rcoords = coordinates(kshape, "j", "r"),
        lv = x[0].0,
        rv = x[1].0,
        li = flat(lc, l),
        ri = flat(rc, r),
    );
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
