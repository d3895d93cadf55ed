//! `dot_general` as a plain kernel.

use super::{coordinates, flat, Node};
use crate::elementwise::c_type;
use crate::fusion::Kernel;
use quabla_abi::qir::DotDims;
use quabla_abi::DType;

/// `dot_general` as one thread per output element, summing over the contracted axes in
/// row-major order (f32 in f64; integers wrapping). A plain, deterministic kernel: the
/// fallback for integer dots and the reference a cuBLAS path will be checked against.
pub(super) fn dot_general(n: &Node, d: &DotDims) -> Kernel {
    let (result, out) = (n.result, n.out);
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
    let count: usize = kshape.iter().product();
    let (acc_ty, step) = match out.dtype {
        DType::I32 => ("unsigned int", "acc += (unsigned int)a * (unsigned int)b;"),
        DType::U32 => ("unsigned int", "acc += a * b;"),
        _ => ("double", "acc += (double)a * (double)b;"),
    };
    let t = c_type(out.dtype);
    let body = format!(
        "{coords}    {acc_ty} acc = 0;\n    for (unsigned long long j = 0; j < {count}ull; ++j) {{\n{rcoords}    {t} a = in{lv}[{li}];\n    {t} b = in{rv}[{ri}];\n    {step}\n    }}\n    out{result}[i] = ({t})acc;\n",
        coords = coordinates(&out.shape, "i", "c"),
        rcoords = coordinates(&kshape, "j", "r"),
        lv = x[0].0,
        rv = x[1].0,
        li = flat(&lc, l),
        ri = flat(&rc, r),
    );
    n.kernel(&x, out.num_elements(), &body)
}
