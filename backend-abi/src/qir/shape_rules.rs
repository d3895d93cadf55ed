//! The shape and dtype rule of every QIR op, in one place.
//!
//! Backends rely on these: a program that passed validation has consistent types, so kernels
//! never re-check them.

use super::ops::*;
use crate::{DType, TensorType};

type Rule = Result<Vec<TensorType>, String>;

fn one(dtype: DType, shape: Vec<usize>) -> Rule {
    Ok(vec![TensorType::new(dtype, shape)])
}

fn expect_arity(op: &Op, operands: &[&TensorType], n: usize) -> Result<(), String> {
    if operands.len() != n {
        return Err(format!(
            "{} takes {n} operand(s), got {}",
            op.name(),
            operands.len()
        ));
    }
    Ok(())
}

fn expect_dtype(what: &str, t: &TensorType, ok: bool, allowed: &str) -> Result<(), String> {
    if !ok {
        return Err(format!(
            "{what} does not accept {}; it accepts {allowed}",
            t.dtype
        ));
    }
    Ok(())
}

fn check_perm(perm: &[usize], rank: usize, what: &str) -> Result<(), String> {
    let mut seen = vec![false; rank];
    if perm.len() != rank {
        return Err(format!("{what} has {} entries for rank {rank}", perm.len()));
    }
    for &p in perm {
        if p >= rank || seen[p] {
            return Err(format!("{what} {perm:?} is not a permutation of 0..{rank}"));
        }
        seen[p] = true;
    }
    Ok(())
}

fn check_dims_unique(dims: &[usize], rank: usize, what: &str) -> Result<(), String> {
    let mut seen = vec![false; rank];
    for &d in dims {
        if d >= rank {
            return Err(format!(
                "{what} {dims:?}: dim {d} out of range for rank {rank}"
            ));
        }
        if seen[d] {
            return Err(format!("{what} {dims:?} repeats dim {d}"));
        }
        seen[d] = true;
    }
    Ok(())
}

fn expect_scalar_i32(what: &str, t: &TensorType) -> Result<(), String> {
    if t.dtype != DType::I32 || t.rank() != 0 {
        return Err(format!("{what} must be an i32[] scalar, got {t}"));
    }
    Ok(())
}

fn unary_rule(u: UnaryOp, x: &TensorType) -> Rule {
    use UnaryOp::*;
    let d = x.dtype;
    match u {
        Neg | Abs | Sign => {
            expect_dtype(u.name(), x, d.is_numeric(), "f32, f64, i32, u32")?;
            one(d, x.shape.clone())
        }
        Not => {
            expect_dtype(u.name(), x, !d.is_float(), "bool, i32, u32")?;
            one(d, x.shape.clone())
        }
        IsFinite => {
            expect_dtype(u.name(), x, d.is_float(), "f32, f64")?;
            one(DType::Bool, x.shape.clone())
        }
        _ => {
            expect_dtype(u.name(), x, d.is_float(), "f32, f64")?;
            one(d, x.shape.clone())
        }
    }
}

fn binary_rule(b: BinaryOp, x: &TensorType, y: &TensorType) -> Rule {
    use BinaryOp::*;
    if x != y {
        return Err(format!(
            "{} needs operands of one type, got {x} and {y} (broadcast or convert first)",
            b.name()
        ));
    }
    let d = x.dtype;
    match b {
        Add | Sub | Mul | Div | Rem | Pow | Max | Min => {
            expect_dtype(b.name(), x, d.is_numeric(), "f32, f64, i32, u32")?
        }
        Atan2 => expect_dtype(b.name(), x, d.is_float(), "f32, f64")?,
        And | Or | Xor => expect_dtype(b.name(), x, !d.is_float(), "bool, i32, u32")?,
        ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => {
            expect_dtype(b.name(), x, d.is_int(), "i32, u32")?
        }
    }
    one(d, x.shape.clone())
}

fn slice_rule(x: &TensorType, start: &[usize], limit: &[usize], strides: &[usize]) -> Rule {
    let r = x.rank();
    if start.len() != r || limit.len() != r || strides.len() != r {
        return Err(format!(
            "slice needs start, limit and strides of length {r}"
        ));
    }
    let mut shape = Vec::with_capacity(r);
    for i in 0..r {
        if strides[i] == 0 {
            return Err("slice strides must be >= 1".into());
        }
        if start[i] > limit[i] || limit[i] > x.shape[i] {
            return Err(format!(
                "slice dim {i}: need 0 <= start {} <= limit {} <= size {}",
                start[i], limit[i], x.shape[i]
            ));
        }
        shape.push((limit[i] - start[i]).div_ceil(strides[i]));
    }
    one(x.dtype, shape)
}

fn pad_rule(x: &TensorType, v: &TensorType, low: &[i64], high: &[i64], interior: &[usize]) -> Rule {
    let r = x.rank();
    if v.dtype != x.dtype || v.rank() != 0 {
        return Err(format!("pad value must be a {}[] scalar, got {v}", x.dtype));
    }
    if low.len() != r || high.len() != r || interior.len() != r {
        return Err(format!("pad needs low, high and interior of length {r}"));
    }
    let mut shape = Vec::with_capacity(r);
    for i in 0..r {
        // Checked, in i128 so that the edges (i64) and extents (usize) mix without casts
        // that wrap: a hostile attribute is an error here, never an overflow.
        let n = x.shape[i] as i128;
        let core = if n == 0 {
            0
        } else {
            (n - 1)
                .checked_mul(interior[i] as i128)
                .and_then(|g| g.checked_add(n))
                .ok_or_else(|| format!("pad dim {i}: the padded size overflows"))?
        };
        let size = (low[i] as i128)
            .checked_add(core)
            .and_then(|s| s.checked_add(high[i] as i128))
            .ok_or_else(|| format!("pad dim {i}: the padded size overflows"))?;
        if size < 0 {
            return Err(format!("pad dim {i} would have negative size {size}"));
        }
        let size = usize::try_from(size)
            .map_err(|_| format!("pad dim {i}: size {size} does not fit in an extent"))?;
        shape.push(size);
    }
    one(x.dtype, shape)
}

fn dot_rule(d: &DotDims, l: &TensorType, r: &TensorType) -> Rule {
    if l.dtype != r.dtype {
        return Err(format!("dot_general operands differ in dtype: {l} and {r}"));
    }
    expect_dtype("dot_general", l, l.dtype.is_numeric(), "f32, f64, i32, u32")?;
    if d.lhs_batch.len() != d.rhs_batch.len() || d.lhs_contract.len() != d.rhs_contract.len() {
        return Err("dot_general batch and contracting dim lists must pair up".into());
    }
    let lhs_used: Vec<usize> = d.lhs_batch.iter().chain(&d.lhs_contract).copied().collect();
    let rhs_used: Vec<usize> = d.rhs_batch.iter().chain(&d.rhs_contract).copied().collect();
    check_dims_unique(&lhs_used, l.rank(), "dot_general lhs dims")?;
    check_dims_unique(&rhs_used, r.rank(), "dot_general rhs dims")?;
    for (a, b) in d
        .lhs_batch
        .iter()
        .zip(&d.rhs_batch)
        .chain(d.lhs_contract.iter().zip(&d.rhs_contract))
    {
        if l.shape[*a] != r.shape[*b] {
            return Err(format!(
                "dot_general pairs lhs dim {a} (size {}) with rhs dim {b} (size {})",
                l.shape[*a], r.shape[*b]
            ));
        }
    }
    let mut shape: Vec<usize> = d.lhs_batch.iter().map(|&i| l.shape[i]).collect();
    shape.extend(
        (0..l.rank())
            .filter(|i| !lhs_used.contains(i))
            .map(|i| l.shape[i]),
    );
    shape.extend(
        (0..r.rank())
            .filter(|i| !rhs_used.contains(i))
            .map(|i| r.shape[i]),
    );
    one(l.dtype, shape)
}

fn gather_rule(g: &GatherDims, x: &TensorType, idx: &TensorType) -> Rule {
    if idx.dtype != DType::I32 || idx.rank() == 0 {
        return Err(format!(
            "gather indices must be i32 with rank >= 1, got {idx}"
        ));
    }
    let nvec = idx.shape[idx.rank() - 1];
    if g.start_index_map.len() != nvec {
        return Err(format!(
            "gather start_index_map has {} entries but the index vector has {nvec}",
            g.start_index_map.len()
        ));
    }
    check_dims_unique(&g.start_index_map, x.rank(), "gather start_index_map")?;
    check_dims_unique(
        &g.collapsed_slice_dims,
        x.rank(),
        "gather collapsed_slice_dims",
    )?;
    if g.slice_sizes.len() != x.rank() {
        return Err(format!("gather slice_sizes needs {} entries", x.rank()));
    }
    for (i, &s) in g.slice_sizes.iter().enumerate() {
        if s > x.shape[i] {
            return Err(format!(
                "gather slice size {s} exceeds operand dim {i} of size {}",
                x.shape[i]
            ));
        }
    }
    for &c in &g.collapsed_slice_dims {
        if g.slice_sizes[c] != 1 {
            return Err(format!(
                "gather collapses dim {c}, whose slice size must be 1"
            ));
        }
    }
    let offset_sizes: Vec<usize> = (0..x.rank())
        .filter(|i| !g.collapsed_slice_dims.contains(i))
        .map(|i| g.slice_sizes[i])
        .collect();
    if offset_sizes.len() != g.offset_dims.len() {
        return Err(format!(
            "gather offset_dims has {} entries but {} slice dims are not collapsed",
            g.offset_dims.len(),
            offset_sizes.len()
        ));
    }
    let batch: Vec<usize> = idx.shape[..idx.rank() - 1].to_vec();
    let rank = batch.len() + offset_sizes.len();
    check_dims_unique(&g.offset_dims, rank, "gather offset_dims")?;
    if g.offset_dims.windows(2).any(|w| w[0] > w[1]) {
        return Err("gather offset_dims must be sorted".into());
    }
    let (mut bi, mut oi) = (0, 0);
    let shape = (0..rank)
        .map(|d| {
            if g.offset_dims.contains(&d) {
                oi += 1;
                offset_sizes[oi - 1]
            } else {
                bi += 1;
                batch[bi - 1]
            }
        })
        .collect();
    one(x.dtype, shape)
}

fn scatter_rule(s: &ScatterDims, x: &TensorType, idx: &TensorType, upd: &TensorType) -> Rule {
    if idx.dtype != DType::I32 || idx.rank() == 0 {
        return Err(format!(
            "scatter_add indices must be i32 with rank >= 1, got {idx}"
        ));
    }
    if upd.dtype != x.dtype {
        return Err(format!(
            "scatter_add updates {upd} must have the operand dtype {}",
            x.dtype
        ));
    }
    expect_dtype("scatter_add", x, x.dtype.is_numeric(), "f32, f64, i32, u32")?;
    let nvec = idx.shape[idx.rank() - 1];
    if s.scatter_dims_to_operand_dims.len() != nvec {
        return Err(format!(
            "scatter_add scatter_dims_to_operand_dims has {} entries but the index vector has {nvec}",
            s.scatter_dims_to_operand_dims.len()
        ));
    }
    check_dims_unique(
        &s.scatter_dims_to_operand_dims,
        x.rank(),
        "scatter_dims_to_operand_dims",
    )?;
    check_dims_unique(&s.inserted_window_dims, x.rank(), "inserted_window_dims")?;
    check_dims_unique(&s.update_window_dims, upd.rank(), "update_window_dims")?;
    if s.update_window_dims.len() + s.inserted_window_dims.len() != x.rank() {
        return Err(
            "scatter_add window dims plus inserted dims must equal the operand rank".into(),
        );
    }
    let scatter_dims: Vec<usize> = (0..upd.rank())
        .filter(|d| !s.update_window_dims.contains(d))
        .collect();
    let batch = &idx.shape[..idx.rank() - 1];
    if scatter_dims.len() != batch.len()
        || scatter_dims
            .iter()
            .zip(batch)
            .any(|(&d, &b)| upd.shape[d] != b)
    {
        return Err(format!(
            "scatter_add updates {upd} do not match the index batch shape {batch:?}"
        ));
    }
    let window_operand_dims: Vec<usize> = (0..x.rank())
        .filter(|d| !s.inserted_window_dims.contains(d))
        .collect();
    for (w, od) in s.update_window_dims.iter().zip(&window_operand_dims) {
        if upd.shape[*w] > x.shape[*od] {
            return Err(format!(
                "scatter_add window dim {w} is larger than operand dim {od}"
            ));
        }
    }
    Ok(vec![x.clone()])
}

fn region_rule(op: &Op, operands: &[&TensorType], regions_out: &[Vec<TensorType>]) -> Rule {
    if regions_out.len() != op.regions().len() {
        return Err(format!(
            "{} has {} regions but {} region signatures were given (validate the regions first)",
            op.name(),
            op.regions().len(),
            regions_out.len()
        ));
    }
    match op {
        Op::Cond { branches } => {
            if branches.is_empty() {
                return Err("cond needs at least one branch".into());
            }
            let (index, args) = operands
                .split_first()
                .ok_or("cond needs an index operand")?;
            expect_scalar_i32("cond index", index)?;
            for (i, b) in branches.iter().enumerate() {
                let ins: Vec<&TensorType> = b.inputs.iter().collect();
                if ins != args {
                    return Err(format!(
                        "cond branch {i} takes {} but is given {}",
                        fmt_types(&ins),
                        fmt_types(args)
                    ));
                }
                if regions_out[i] != regions_out[0] {
                    return Err(format!(
                        "cond branch {i} returns {} but branch 0 returns {}",
                        fmt_types(&regions_out[i].iter().collect::<Vec<_>>()),
                        fmt_types(&regions_out[0].iter().collect::<Vec<_>>())
                    ));
                }
            }
            Ok(regions_out[0].clone())
        }
        Op::While { cond, body } | Op::BoundedWhile { cond, body, .. } => {
            let carry: Vec<TensorType> = operands.iter().map(|t| (*t).clone()).collect();
            if cond.inputs != carry || body.inputs != carry {
                return Err(format!(
                    "while cond and body must take the carry {}",
                    fmt_types(operands)
                ));
            }
            if regions_out[0] != vec![TensorType::scalar(DType::Bool)] {
                return Err("while cond must return one bool[]".into());
            }
            if regions_out[1] != carry {
                return Err(format!(
                    "while body must return the carry {}",
                    fmt_types(operands)
                ));
            }
            Ok(carry)
        }
        _ => Err("not a region op".into()),
    }
}

fn scan_rule(
    op: &Op,
    operands: &[&TensorType],
    length: usize,
    nc: usize,
    ncar: usize,
    regions_out: &[Vec<TensorType>],
) -> Rule {
    let body = op.regions()[0];
    let out = regions_out
        .first()
        .ok_or("scan is missing its body signature")?;
    if operands.len() < nc + ncar {
        return Err(format!(
            "scan needs {} consts and {} carries, got {} operands",
            nc,
            ncar,
            operands.len()
        ));
    }
    let mut want: Vec<TensorType> = operands[..nc + ncar].iter().map(|t| (*t).clone()).collect();
    for x in &operands[nc + ncar..] {
        if x.rank() == 0 || x.shape[0] != length {
            return Err(format!(
                "scan over length {length}: each xs must have a leading axis of {length}, got {x}"
            ));
        }
        want.push(TensorType::new(x.dtype, x.shape[1..].to_vec()));
    }
    if body.inputs != want {
        return Err("scan body must take (consts, carry, x slices) of the operand types".into());
    }
    if out.len() < ncar || out[..ncar] != want[nc..nc + ncar] {
        return Err("scan body must return the carry (same types) first".into());
    }
    let mut results = out[..ncar].to_vec();
    for y in &out[ncar..] {
        let mut shape = vec![length];
        shape.extend_from_slice(&y.shape);
        results.push(TensorType::new(y.dtype, shape));
    }
    Ok(results)
}

fn floats(ts: &[TensorType]) -> Vec<TensorType> {
    ts.iter().filter(|t| t.dtype.is_float()).cloned().collect()
}

/// Result types of the dense linear algebra ops (matrices in the last two axes).
fn linalg_rule(op: &LinalgOp, operands: &[&TensorType]) -> Rule {
    let name = op.name();
    let want = if matches!(op, LinalgOp::TriangularSolve { .. }) {
        2
    } else {
        1
    };
    if operands.len() != want {
        return Err(format!(
            "{name} takes {want} operand(s), got {}",
            operands.len()
        ));
    }
    let a = operands[0];
    if !a.dtype.is_float() || a.shape.len() < 2 {
        return Err(format!("{name} needs a float matrix (rank >= 2), got {a}"));
    }
    let r = a.shape.len();
    let (m, n) = (a.shape[r - 2], a.shape[r - 1]);
    let batch = &a.shape[..r - 2];
    let ty = |dims: &[usize], dtype: DType| {
        let mut s = batch.to_vec();
        s.extend_from_slice(dims);
        TensorType::new(dtype, s)
    };
    let square = || {
        if m != n {
            Err(format!("{name} needs square matrices, got {a}"))
        } else {
            Ok(())
        }
    };
    let k = m.min(n);
    let f = a.dtype;
    match op {
        LinalgOp::Cholesky => {
            square()?;
            Ok(vec![a.clone()])
        }
        LinalgOp::Lu => {
            square()?;
            Ok(vec![a.clone(), ty(&[n], DType::I32), ty(&[n], DType::I32)])
        }
        LinalgOp::Eigh => {
            square()?;
            Ok(vec![ty(&[n], f), a.clone()])
        }
        LinalgOp::Qr { full_matrices } => Ok(if *full_matrices {
            vec![ty(&[m, m], f), ty(&[m, n], f)]
        } else {
            vec![ty(&[m, k], f), ty(&[k, n], f)]
        }),
        LinalgOp::Svd {
            full_matrices,
            compute_uv,
        } => Ok(match (compute_uv, full_matrices) {
            (false, _) => vec![ty(&[k], f)],
            (true, true) => vec![ty(&[m, m], f), ty(&[k], f), ty(&[n, n], f)],
            (true, false) => vec![ty(&[m, k], f), ty(&[k], f), ty(&[k, n], f)],
        }),
        LinalgOp::TriangularSolve { left_side, .. } => {
            square()?;
            let b = operands[1];
            let rb = b.shape.len();
            if b.dtype != f || rb != r || b.shape[..rb - 2] != *batch {
                return Err(format!(
                    "triangular_solve: b {b} must have a's dtype and batch dimensions ({a})"
                ));
            }
            let solved = if *left_side {
                b.shape[rb - 2]
            } else {
                b.shape[rb - 1]
            };
            if solved != n {
                return Err(format!(
                    "triangular_solve: a {a} does not match b {b} on the {} side",
                    if *left_side { "left" } else { "right" }
                ));
            }
            Ok(vec![b.clone()])
        }
    }
}

/// Region signatures of the core-level ops (see their docs in `ops.rs`).
fn custom_rule(
    op: &Op,
    operands: &[&TensorType],
    declared: &[TensorType],
    regions_out: &[Vec<TensorType>],
) -> Rule {
    if regions_out.len() != op.regions().len() {
        return Err(format!("{} is missing region signatures", op.name()));
    }
    let args: Vec<TensorType> = operands.iter().map(|t| (*t).clone()).collect();
    let regions = op.regions();
    let check = |what: &str, got: &[TensorType], want: &[TensorType]| -> Result<(), String> {
        if got != want {
            let show = |ts: &[TensorType]| {
                ts.iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(format!(
                "{}: {what} is ({}) but must be ({})",
                op.name(),
                show(got),
                show(want)
            ));
        }
        Ok(())
    };
    match op {
        Op::Checkpoint { .. } => {
            check("the call's inputs", &regions[0].inputs, &args)?;
            Ok(regions_out[0].clone())
        }
        Op::LinearSolve { num_consts, .. } => {
            if *num_consts > args.len() {
                return Err(format!(
                    "linear_solve: num_consts {num_consts} exceeds the {} operands",
                    args.len()
                ));
            }
            let vector = &args[*num_consts..];
            if vector.iter().any(|t| !t.dtype.is_float()) {
                return Err("linear_solve: the right-hand side must be floating point".into());
            }
            check("matvec's inputs", &regions[0].inputs, &args)?;
            check("matvec's outputs", &regions_out[0], vector)?;
            // `info` is an i32 scalar, with a batch axis in front under vmap.
            let solved = &regions_out[1];
            let info_ok = solved.len() == vector.len() + 1
                && solved.last().is_some_and(|t| t.dtype == DType::I32);
            if !info_ok || solved[..vector.len()] != *vector {
                return Err(format!(
                    "linear_solve: solve must return arrays shaped like b, then an i32 info, got ({})",
                    solved.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
                ));
            }
            for (i, name) in [(1, "solve"), (2, "transpose_solve")] {
                check(&format!("{name}'s inputs"), &regions[i].inputs, &args)?;
                check(&format!("{name}'s outputs"), &regions_out[i], solved)?;
            }
            Ok(solved.clone())
        }
        Op::CustomJvp { .. } => {
            check("the call's inputs", &regions[0].inputs, &args)?;
            let outs = &regions_out[0];
            check(
                "the rule's inputs",
                &regions[1].inputs,
                &[args.clone(), floats(&args)].concat(),
            )?;
            check(
                "the rule's outputs",
                &regions_out[1],
                &[outs.clone(), floats(outs)].concat(),
            )?;
            Ok(outs.clone())
        }
        Op::CustomVjp { .. } => {
            check("the call's inputs", &regions[0].inputs, &args)?;
            check("fwd's inputs", &regions[1].inputs, &args)?;
            let outs = &regions_out[0];
            let fwd = &regions_out[1];
            if fwd.len() < outs.len() || &fwd[..outs.len()] != outs.as_slice() {
                return Err(format!(
                    "{}: fwd must return the call's outputs, then residuals",
                    op.name()
                ));
            }
            let residuals = &fwd[outs.len()..];
            check(
                "bwd's inputs",
                &regions[2].inputs,
                &[residuals.to_vec(), floats(outs)].concat(),
            )?;
            check("bwd's outputs", &regions_out[2], &floats(&args))?;
            Ok(outs.clone())
        }
        Op::CustomVjpLinear { .. } => {
            let bwd_in = &regions[0].inputs;
            if bwd_in.len() < declared.len() {
                return Err(
                    "custom_vjp_linear: bwd takes residuals, then one cotangent per result".into(),
                );
            }
            let r = bwd_in.len() - declared.len();
            check(
                "bwd's inputs",
                bwd_in,
                &[args[..r.min(args.len())].to_vec(), declared.to_vec()].concat(),
            )?;
            check(
                "the tangent operands",
                &args[r.min(args.len())..],
                &regions_out[0],
            )?;
            Ok(declared.to_vec())
        }
        _ => Err("not a custom op".into()),
    }
}

fn fmt_types(ts: &[&TensorType]) -> String {
    let s: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
    format!("({})", s.join(", "))
}

/// Result types of `op` applied to operands of the given types.
///
/// `declared` are the result types written on the node; ops whose result type is not implied
/// by their operands (`constant`, `convert`, `bitcast`, `iota`, `reshape`) take it from there.
/// `regions_out` holds each region's output types (for `cond`/`while`).
///
/// ```
/// use quabla_abi::qir::{infer_result_types, Op, BinaryOp};
/// use quabla_abi::{DType, TensorType};
/// let t = TensorType::new(DType::F32, vec![2]);
/// let r = infer_result_types(&Op::Binary(BinaryOp::Add), &[&t, &t], &[], &[]).unwrap();
/// assert_eq!(r, vec![t]);
/// ```
pub fn infer_result_types(
    op: &Op,
    operands: &[&TensorType],
    declared: &[TensorType],
    regions_out: &[Vec<TensorType>],
) -> Result<Vec<TensorType>, String> {
    let declared_one = || -> Result<&TensorType, String> {
        match declared {
            [t] => Ok(t),
            _ => Err(format!(
                "{} needs exactly one declared result type",
                op.name()
            )),
        }
    };
    match op {
        Op::Constant(a) => {
            expect_arity(op, operands, 0)?;
            Ok(vec![a.ty.clone()])
        }
        Op::Unary(u) => {
            expect_arity(op, operands, 1)?;
            unary_rule(*u, operands[0])
        }
        Op::Binary(b) => {
            expect_arity(op, operands, 2)?;
            binary_rule(*b, operands[0], operands[1])
        }
        Op::Compare(_) => {
            expect_arity(op, operands, 2)?;
            if operands[0] != operands[1] {
                return Err(format!(
                    "compare needs operands of one type, got {} and {}",
                    operands[0], operands[1]
                ));
            }
            one(DType::Bool, operands[0].shape.clone())
        }
        Op::Select => {
            expect_arity(op, operands, 3)?;
            let (p, t, f) = (operands[0], operands[1], operands[2]);
            if p.dtype != DType::Bool || p.shape != t.shape || t != f {
                return Err(format!(
                    "select needs (bool[s], T[s], T[s]), got ({p}, {t}, {f})"
                ));
            }
            Ok(vec![t.clone()])
        }
        Op::Convert => {
            expect_arity(op, operands, 1)?;
            let t = declared_one()?;
            if t.shape != operands[0].shape {
                return Err(format!("convert keeps the shape: {} vs {t}", operands[0]));
            }
            Ok(vec![t.clone()])
        }
        Op::Bitcast => {
            expect_arity(op, operands, 1)?;
            let t = declared_one()?;
            let x = operands[0];
            let ok32 = |d: DType| matches!(d, DType::F32 | DType::I32 | DType::U32);
            if t.shape != x.shape || !ok32(t.dtype) || !ok32(x.dtype) {
                return Err(format!(
                    "bitcast converts among f32, i32, u32 of one shape: {x} to {t}"
                ));
            }
            Ok(vec![t.clone()])
        }
        Op::Iota { dim } => {
            expect_arity(op, operands, 0)?;
            let t = declared_one()?;
            if *dim >= t.rank() || t.dtype == DType::Bool {
                return Err(format!("iota dim {dim} must index the numeric result {t}"));
            }
            Ok(vec![t.clone()])
        }
        Op::BroadcastInDim { dims } => {
            expect_arity(op, operands, 1)?;
            let t = declared_one()?;
            let x = operands[0];
            if dims.len() != x.rank() || t.dtype != x.dtype {
                return Err(format!(
                    "broadcast_in_dim of {x} needs {} dims and keeps the dtype",
                    x.rank()
                ));
            }
            check_dims_unique(dims, t.rank(), "broadcast_in_dim dims")?;
            if dims.windows(2).any(|w| w[0] > w[1]) {
                return Err("broadcast_in_dim dims must be increasing".into());
            }
            for (i, &d) in dims.iter().enumerate() {
                if x.shape[i] != 1 && x.shape[i] != t.shape[d] {
                    return Err(format!(
                        "broadcast_in_dim: operand dim {i} (size {}) cannot become size {}",
                        x.shape[i], t.shape[d]
                    ));
                }
            }
            Ok(vec![t.clone()])
        }
        Op::Reshape => {
            expect_arity(op, operands, 1)?;
            let t = declared_one()?;
            if t.dtype != operands[0].dtype || t.num_elements() != operands[0].num_elements() {
                return Err(format!("cannot reshape {} to {t}", operands[0]));
            }
            Ok(vec![t.clone()])
        }
        Op::Transpose { perm } => {
            expect_arity(op, operands, 1)?;
            let x = operands[0];
            check_perm(perm, x.rank(), "transpose perm")?;
            one(x.dtype, perm.iter().map(|&p| x.shape[p]).collect())
        }
        Op::Slice {
            start,
            limit,
            strides,
        } => {
            expect_arity(op, operands, 1)?;
            slice_rule(operands[0], start, limit, strides)
        }
        Op::Pad {
            low,
            high,
            interior,
        } => {
            expect_arity(op, operands, 2)?;
            pad_rule(operands[0], operands[1], low, high, interior)
        }
        Op::Concatenate { dim } => {
            let first = operands
                .first()
                .ok_or("concatenate needs at least one operand")?;
            if *dim >= first.rank() {
                return Err(format!("concatenate dim {dim} out of range for {first}"));
            }
            let mut shape = first.shape.clone();
            shape[*dim] = 0;
            for t in operands {
                let same_other = t.rank() == first.rank()
                    && (0..t.rank()).all(|i| i == *dim || t.shape[i] == first.shape[i]);
                if t.dtype != first.dtype || !same_other {
                    return Err(format!(
                        "concatenate along {dim}: {t} does not fit with {first}"
                    ));
                }
                // Extents of empty arrays are unbounded by the size check, so add checked.
                shape[*dim] = shape[*dim]
                    .checked_add(t.shape[*dim])
                    .ok_or_else(|| format!("concatenate along {dim}: the extents overflow"))?;
            }
            one(first.dtype, shape)
        }
        Op::Reverse { dims } => {
            expect_arity(op, operands, 1)?;
            check_dims_unique(dims, operands[0].rank(), "reverse dims")?;
            Ok(vec![operands[0].clone()])
        }
        Op::Reduce { kind, axes } => {
            expect_arity(op, operands, 1)?;
            let x = operands[0];
            check_dims_unique(axes, x.rank(), "reduce axes")?;
            let logical = matches!(kind, ReduceKind::And | ReduceKind::Or);
            if logical != (x.dtype == DType::Bool) {
                let allowed = if logical {
                    "bool"
                } else {
                    "f32, f64, i32, u32"
                };
                return Err(format!(
                    "reduce {} does not accept {}; it accepts {allowed}",
                    kind.name(),
                    x.dtype
                ));
            }
            one(
                x.dtype,
                (0..x.rank())
                    .filter(|i| !axes.contains(i))
                    .map(|i| x.shape[i])
                    .collect(),
            )
        }
        Op::Cumulative { axis, .. } => {
            expect_arity(op, operands, 1)?;
            let x = operands[0];
            expect_dtype("cumulative", x, x.dtype.is_numeric(), "f32, f64, i32, u32")?;
            if *axis >= x.rank() {
                return Err(format!("cumulative axis {axis} out of range for {x}"));
            }
            Ok(vec![x.clone()])
        }
        Op::Sort { axis, num_keys, .. } => {
            let first = operands.first().ok_or("sort needs at least one operand")?;
            if *axis >= first.rank() {
                return Err(format!("sort axis {axis} out of range for {first}"));
            }
            if *num_keys == 0 || *num_keys > operands.len() {
                return Err(format!(
                    "sort num_keys must be in 1..={} (the operand count), got {num_keys}",
                    operands.len()
                ));
            }
            if let Some(t) = operands.iter().find(|t| t.shape != first.shape) {
                return Err(format!(
                    "sort operands must share one shape: {t} vs {first}"
                ));
            }
            Ok(operands.iter().map(|t| (*t).clone()).collect())
        }
        Op::DotGeneral(d) => {
            expect_arity(op, operands, 2)?;
            dot_rule(d, operands[0], operands[1])
        }
        Op::Gather(g) => {
            expect_arity(op, operands, 2)?;
            gather_rule(g, operands[0], operands[1])
        }
        Op::ScatterAdd(s) => {
            expect_arity(op, operands, 3)?;
            scatter_rule(s, operands[0], operands[1], operands[2])
        }
        Op::DynamicSlice { sizes } => {
            let x = operands.first().ok_or("dynamic_slice needs an operand")?;
            expect_arity(op, operands, 1 + x.rank())?;
            for s in &operands[1..] {
                expect_scalar_i32("dynamic_slice start", s)?;
            }
            if sizes.len() != x.rank() || sizes.iter().zip(&x.shape).any(|(s, d)| s > d) {
                return Err(format!("dynamic_slice sizes {sizes:?} must fit in {x}"));
            }
            one(x.dtype, sizes.clone())
        }
        Op::DynamicUpdateSlice => {
            let x = operands
                .first()
                .ok_or("dynamic_update_slice needs an operand")?;
            expect_arity(op, operands, 2 + x.rank())?;
            let u = operands[1];
            if u.dtype != x.dtype
                || u.rank() != x.rank()
                || u.shape.iter().zip(&x.shape).any(|(a, b)| a > b)
            {
                return Err(format!("dynamic_update_slice update {u} must fit in {x}"));
            }
            for s in &operands[2..] {
                expect_scalar_i32("dynamic_update_slice start", s)?;
            }
            Ok(vec![(*x).clone()])
        }
        Op::Cond { .. } | Op::While { .. } => region_rule(op, operands, regions_out),
        // Any operands; the results are what the node declares (the host function is
        // checked against them when it returns).
        Op::HostCallback { .. } => Ok(declared.to_vec()),
        Op::BoundedWhile { checkpoints, .. } => {
            if *checkpoints == 0 {
                return Err("bounded_while checkpoints must be at least 1".into());
            }
            region_rule(op, operands, regions_out)
        }
        Op::Scan {
            length,
            num_consts,
            num_carry,
            unroll,
            ..
        } => {
            if *unroll == 0 {
                return Err("scan unroll must be at least 1".into());
            }
            scan_rule(op, operands, *length, *num_consts, *num_carry, regions_out)
        }
        Op::Linalg(l) => linalg_rule(l, operands),
        Op::StopGradient => {
            expect_arity(op, operands, 1)?;
            Ok(vec![operands[0].clone()])
        }
        Op::NamedAxis { kind, .. } => named_axis_rule(*kind, operands),
        Op::CustomJvp { .. }
        | Op::CustomVjp { .. }
        | Op::CustomVjpLinear { .. }
        | Op::Checkpoint { .. }
        | Op::LinearSolve { .. } => custom_rule(op, operands, declared, regions_out),
    }
}

/// `named_axis`: a reduction across the axis keeps its operand's type; `index` has no
/// operand and is an i32 scalar.
fn named_axis_rule(
    kind: NamedAxisKind,
    operands: &[&TensorType],
) -> Result<Vec<TensorType>, String> {
    match kind {
        NamedAxisKind::Index => {
            if !operands.is_empty() {
                return Err(format!(
                    "named_axis index takes no operands, got {}",
                    operands.len()
                ));
            }
            Ok(vec![TensorType::new(DType::I32, vec![])])
        }
        NamedAxisKind::Sum | NamedAxisKind::Max | NamedAxisKind::Min => {
            if operands.len() != 1 {
                return Err(format!(
                    "named_axis {} takes one operand, got {}",
                    kind.name(),
                    operands.len()
                ));
            }
            if operands[0].dtype == DType::Bool {
                return Err(format!(
                    "named_axis {} needs a numeric operand, got bool",
                    kind.name()
                ));
            }
            Ok(vec![operands[0].clone()])
        }
    }
}
