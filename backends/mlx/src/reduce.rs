//! Reductions, cumulative folds and `dot_general` as MLX ops. Float `max`/`min` follow
//! QIR's `fmax`/`fmin` (NaN wins, `-0 < +0`), which MLX's comparisons alone do not.

use crate::elementwise::scalar;
use crate::shim::{Binary, Fold, MlxArray, Unary};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::{CumulativeKind, DotDims, ReduceKind};
use quabla_abi::{DType, TensorType};

type R = Result<MlxArray, AbiError>;

fn is_float(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F64)
}

/// The fold's identity: what reducing nothing gives.
fn identity(kind: ReduceKind, dtype: DType) -> f64 {
    let float = is_float(dtype);
    match (kind, dtype) {
        (ReduceKind::Sum | ReduceKind::Or, _) => 0.0,
        (ReduceKind::Prod | ReduceKind::And, _) => 1.0,
        (ReduceKind::Max, _) if float => f64::NEG_INFINITY,
        (ReduceKind::Min, _) if float => f64::INFINITY,
        (ReduceKind::Max, DType::I32) => i32::MIN as f64,
        (ReduceKind::Min, DType::I32) => i32::MAX as f64,
        (ReduceKind::Max, _) => 0.0,
        (ReduceKind::Min, DType::U32) => u32::MAX as f64,
        (ReduceKind::Min, _) => 1.0,
    }
}

/// True where `x` is a zero of the given sign.
fn signed_zero(x: &MlxArray, dtype: DType, negative: bool) -> R {
    let zero = scalar(dtype, 0.0)?;
    let inverse = scalar(dtype, 1.0)?.binary(Binary::Divide, x)?;
    let side = if negative { Binary::Lt } else { Binary::Gt };
    x.binary(Binary::Eq, &zero)?
        .binary(Binary::LogicalAnd, &inverse.binary(side, &zero)?)
}

pub fn reduce(
    x: &MlxArray,
    kind: ReduceKind,
    axes: &[usize],
    x_ty: &TensorType,
    out: &TensorType,
) -> R {
    let dtype = x_ty.dtype;
    if axes.iter().any(|&a| x_ty.shape[a] == 0) {
        return scalar(dtype, identity(kind, dtype))?.broadcast_to(&out.shape);
    }
    if axes.is_empty() {
        return x.view(dtype);
    }
    let fold = match kind {
        ReduceKind::Sum => Fold::Sum,
        ReduceKind::Prod => Fold::Prod,
        ReduceKind::Max => Fold::Max,
        ReduceKind::Min => Fold::Min,
        ReduceKind::And => Fold::All,
        ReduceKind::Or => Fold::Any,
    };
    let r = x.reduce(fold, axes)?.astype(dtype)?;
    if !is_float(dtype) || !matches!(kind, ReduceKind::Max | ReduceKind::Min) {
        return Ok(r);
    }
    ieee_extremum(x, r, dtype, kind == ReduceKind::Max, |mask| {
        mask.reduce(Fold::Any, axes)
    })
}

/// QIR's float max/min fold from MLX's (`r`), which picks by comparison alone: a zero result
/// takes the sign the IEEE order gives (+0 for max if any +0 was folded in, -0 for min if
/// any -0 was), and a NaN folded in makes the result NaN. `folded` gives, per result
/// element, whether any element it folds has a mask set.
fn ieee_extremum(
    x: &MlxArray,
    r: MlxArray,
    dtype: DType,
    max: bool,
    folded: impl Fn(MlxArray) -> R,
) -> R {
    let seen = folded(signed_zero(x, dtype, !max)?)?;
    let (with, without) = if max { (0.0, -0.0) } else { (-0.0, 0.0) };
    let zero_pick = seen.select(&scalar(dtype, with)?, &scalar(dtype, without)?)?;
    let r = r
        .binary(Binary::Eq, &scalar(dtype, 0.0)?)?
        .select(&zero_pick, &r)?;
    let nan = folded(x.unary(Unary::IsNan)?)?;
    nan.select(&scalar(dtype, f64::NAN)?, &r)
}

pub fn cumulative(
    x: &MlxArray,
    kind: CumulativeKind,
    axis: usize,
    reverse: bool,
    ty: &TensorType,
) -> R {
    let dtype = ty.dtype;
    if ty.shape[axis] == 0 {
        return x.view(dtype);
    }
    let fold = match kind {
        CumulativeKind::Sum => Fold::Sum,
        CumulativeKind::Prod => Fold::Prod,
        CumulativeKind::Max => Fold::Max,
        CumulativeKind::Min => Fold::Min,
    };
    let r = x.cumulative(fold, axis, reverse)?.astype(dtype)?;
    if !is_float(dtype) || !matches!(kind, CumulativeKind::Max | CumulativeKind::Min) {
        return Ok(r);
    }
    // Whether any element so far (in the scan's direction) has the mask set.
    ieee_extremum(x, r, dtype, kind == CumulativeKind::Max, |mask| {
        mask.astype(DType::I32)?
            .cumulative(Fold::Max, axis, reverse)?
            .binary(Binary::Ne, &scalar(DType::I32, 0.0)?)
    })
}

fn product(dims: &[usize], axes: &[usize]) -> usize {
    axes.iter().map(|&a| dims[a]).product()
}

/// `dot_general` as one batched matrix product: each side transposed to (batch, free,
/// contracted) / (batch, contracted, free) and flattened to three axes. Integers multiply
/// and sum in MLX's wrapping arithmetic (MLX's matmul takes floats only).
pub fn dot_general(
    lhs: &MlxArray,
    rhs: &MlxArray,
    l: &TensorType,
    r: &TensorType,
    d: &DotDims,
    out: &TensorType,
) -> R {
    let free = |rank: usize, batch: &[usize], contract: &[usize]| -> Vec<usize> {
        (0..rank)
            .filter(|a| !batch.contains(a) && !contract.contains(a))
            .collect()
    };
    let lf = free(l.shape.len(), &d.lhs_batch, &d.lhs_contract);
    let rf = free(r.shape.len(), &d.rhs_batch, &d.rhs_contract);
    let (b, m, k, n) = (
        product(&l.shape, &d.lhs_batch),
        product(&l.shape, &lf),
        product(&l.shape, &d.lhs_contract),
        product(&r.shape, &rf),
    );
    if b * m * n == 0 || k == 0 {
        return scalar(out.dtype, 0.0)?.broadcast_to(&out.shape);
    }
    let lp: Vec<usize> = d
        .lhs_batch
        .iter()
        .chain(&lf)
        .chain(&d.lhs_contract)
        .copied()
        .collect();
    let a = lhs.transpose(&lp)?.reshape(&[b, m, k])?;
    let c = if is_float(out.dtype) {
        let rp: Vec<usize> = d
            .rhs_batch
            .iter()
            .chain(&d.rhs_contract)
            .chain(&rf)
            .copied()
            .collect();
        let bb = rhs.transpose(&rp)?.reshape(&[b, k, n])?;
        a.matmul(&bb)?
    } else {
        let rp: Vec<usize> = d
            .rhs_batch
            .iter()
            .chain(&rf)
            .chain(&d.rhs_contract)
            .copied()
            .collect();
        let bb = rhs.transpose(&rp)?.reshape(&[b, 1, n, k])?;
        a.reshape(&[b, m, 1, k])?
            .binary(Binary::Mul, &bb)?
            .reduce(Fold::Sum, &[3])?
            .astype(out.dtype)?
    };
    c.reshape(&out.shape)
}
