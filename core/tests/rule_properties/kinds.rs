//! One generator per op kind of the op-spec table, chosen by an exhaustive `match`: a kind
//! added to the table does not compile here until it has a generator, so every primitive
//! gets its property tests by being added.

use super::draw::*;
use super::{indexing, linalg, regions};
use quabla::qir::{BinaryOp, CompareDir, CumulativeKind, DotDims, Op, OpKind, ReduceKind, UnaryOp};
use quabla::{DType, HostArray, TensorType};

/// Draws one case of `kind` for float dtype `dt` (`None` when the draw was refused by the
/// shape rules; the caller draws again). `k` is the draw's number: generators whose
/// structural variants must all be covered (scan's) cycle through them with it.
pub fn draw(kind: OpKind, k: usize, rng: &mut Rng, dt: DType) -> Option<Case> {
    match kind {
        OpKind::Constant => constant(rng, dt),
        OpKind::Unary(u) => unary(u, rng, dt),
        OpKind::Binary(b) => binary(b, rng, dt),
        OpKind::Compare => {
            let dir = rng.pick(CompareDir::ALL);
            let s = rng.dims(0, 3, 1, 3);
            single_case(
                format!("compare {}", dir.name()),
                Op::Compare(dir),
                vec![real(&s, -2.0, 2.0), real(&s, -2.0, 2.0)],
                dt,
                vec![],
            )
        }
        OpKind::Select => {
            let s = rng.dims(0, 3, 1, 3);
            single_case(
                "select",
                Op::Select,
                vec![
                    Arg::Bool { shape: s.clone() },
                    real(&s, -2.0, 2.0),
                    real(&s, -2.0, 2.0),
                ],
                dt,
                vec![],
            )
        }
        OpKind::Convert => {
            let s = rng.dims(0, 3, 1, 3);
            let to = rng.pick(&[DType::F32, DType::F64, DType::I32]);
            let c = single_case(
                format!("convert to {to}"),
                Op::Convert,
                vec![real(&s, -3.0, 3.0)],
                dt,
                vec![TensorType::new(to, s)],
            )?;
            Some(c.tol_dtype(if to == DType::F32 { to } else { dt }))
        }
        OpKind::Bitcast => {
            let s = rng.dims(0, 3, 1, 3);
            let to = rng.pick(&[DType::I32, DType::U32]);
            single_case(
                format!("bitcast to {to}"),
                Op::Bitcast,
                vec![real(&s, -3.0, 3.0)],
                DType::F32,
                vec![TensorType::new(to, s)],
            )
        }
        OpKind::Iota => {
            let s = rng.dims(1, 3, 1, 3);
            let dim = rng.size(0, s.len() - 1);
            let ty = TensorType::new(dt, s.clone());
            let mut b = Builder::new(vec![ty.clone()]);
            let i = b.push(Op::Iota { dim }, &[], vec![ty])?;
            let y = b.push(
                Op::Binary(BinaryOp::Mul),
                &[i[0], quabla::qir::ValueId(0)],
                vec![],
            )?;
            Some(Case::new(
                format!("iota dim {dim}"),
                dt,
                program_fn(b.finish(y)),
                vec![real(&s, -2.0, 2.0)],
            ))
        }
        OpKind::BroadcastInDim => broadcast_in_dim(rng, dt),
        OpKind::Reshape => reshape(rng, dt),
        OpKind::Transpose => {
            let s = rng.dims(1, 4, 1, 3);
            let perm = rng.perm(s.len());
            single_case(
                format!("transpose {perm:?}"),
                Op::Transpose { perm },
                vec![real(&s, -2.0, 2.0)],
                dt,
                vec![],
            )
        }
        OpKind::Slice => {
            let s = rng.dims(1, 3, 1, 5);
            let start: Vec<usize> = s.iter().map(|&n| rng.size(0, n - 1)).collect();
            let limit: Vec<usize> = s
                .iter()
                .zip(&start)
                .map(|(&n, &a)| rng.size(a + 1, n))
                .collect();
            let strides: Vec<usize> = s.iter().map(|_| rng.size(1, 3)).collect();
            single_case(
                format!("slice {start:?}..{limit:?} by {strides:?}"),
                Op::Slice {
                    start,
                    limit,
                    strides,
                },
                vec![real(&s, -2.0, 2.0)],
                dt,
                vec![],
            )
        }
        OpKind::Pad => {
            let s = rng.dims(1, 3, 1, 4);
            let low: Vec<i64> = s.iter().map(|_| rng.int(-1, 2)).collect();
            let high: Vec<i64> = s.iter().map(|_| rng.int(-1, 2)).collect();
            let interior: Vec<usize> = s.iter().map(|_| rng.size(0, 2)).collect();
            let name = format!("pad low {low:?} high {high:?} interior {interior:?}");
            single_case(
                name,
                Op::Pad {
                    low,
                    high,
                    interior,
                },
                vec![real(&s, -2.0, 2.0), real(&[], -2.0, 2.0)],
                dt,
                vec![],
            )
        }
        OpKind::Concatenate => {
            let rank = rng.size(1, 3);
            let dim = rng.size(0, rank - 1);
            let base = rng.shape(rank, 1, 3);
            let args: Vec<Arg> = (0..rng.size(1, 3))
                .map(|_| {
                    let mut s = base.clone();
                    s[dim] = rng.size(1, 3);
                    real(&s, -2.0, 2.0)
                })
                .collect();
            single_case(
                format!("concatenate {} along {dim}", args.len()),
                Op::Concatenate { dim },
                args,
                dt,
                vec![],
            )
        }
        OpKind::Reverse => {
            let s = rng.dims(1, 3, 1, 3);
            let dims = rng.subset(s.len());
            single_case(
                format!("reverse {dims:?}"),
                Op::Reverse { dims },
                vec![real(&s, -2.0, 2.0)],
                dt,
                vec![],
            )
        }
        OpKind::Reduce => reduce(rng, dt),
        OpKind::Cumulative => {
            let s = rng.dims(1, 3, 1, 4);
            let kind = rng.pick(CumulativeKind::ALL);
            let axis = rng.size(0, s.len() - 1);
            let reverse = rng.coin();
            let arg = match kind {
                CumulativeKind::Max | CumulativeKind::Min => real_gap(&s, -2.0, 2.0, Gap::Distinct),
                CumulativeKind::Prod => real_gap(&s, -1.5, 1.5, Gap::FromZero),
                CumulativeKind::Sum => real(&s, -2.0, 2.0),
            };
            single_case(
                format!("cumulative {} axis {axis} reverse {reverse}", kind.name()),
                Op::Cumulative {
                    kind,
                    axis,
                    reverse,
                },
                vec![arg],
                dt,
                vec![],
            )
        }
        OpKind::Sort => {
            // Distinct keys: away from ties the permutation is locally constant, so the
            // derivative is the permutation's and central differences see it.
            let s = rng.dims(1, 3, 1, 4);
            let axis = rng.size(0, s.len() - 1);
            let operands = rng.size(1, 3);
            let num_keys = rng.size(1, operands);
            let descending = rng.coin();
            let args = (0..operands)
                .map(|k| match k {
                    0 => real_gap(&s, -2.0, 2.0, Gap::Distinct),
                    _ => real(&s, -2.0, 2.0),
                })
                .collect();
            single_case(
                format!("sort axis {axis} of {operands} by {num_keys} descending {descending}"),
                Op::Sort {
                    axis,
                    num_keys,
                    descending,
                },
                args,
                dt,
                vec![],
            )
        }
        OpKind::DotGeneral => dot_general(rng, dt),
        OpKind::Gather => indexing::gather(rng, dt),
        OpKind::ScatterAdd => indexing::scatter_add(rng, dt),
        OpKind::DynamicSlice => indexing::dynamic_slice(rng, dt),
        OpKind::DynamicUpdateSlice => indexing::dynamic_update_slice(rng, dt),
        OpKind::Cond => regions::cond(rng, dt),
        OpKind::While => regions::while_loop(rng, dt),
        OpKind::HostCallback => regions::host_callback(rng, dt),
        OpKind::BoundedWhile => regions::bounded_while(rng, dt),
        OpKind::Linalg(l) => linalg::draw(l, rng, dt),
        OpKind::StopGradient => regions::stop_gradient(rng, dt),
        OpKind::CustomJvp => regions::custom_jvp(rng, dt),
        // `custom_vjp_linear` is what forward mode makes of a `custom_vjp_call` (its
        // tangent map, transposed by running `bwd`): the same case exercises it through
        // the JVP, and its transpose through `<jvp, u> = <t, vjp>`.
        OpKind::CustomVjp | OpKind::CustomVjpLinear => regions::custom_vjp(rng, dt),
        OpKind::Checkpoint => regions::checkpoint(rng, dt),
        OpKind::Scan => regions::scan(k, rng, dt),
        OpKind::LinearSolve => regions::linear_solve(rng, dt),
        OpKind::NamedAxis => regions::named_axis(rng, dt),
    }
}

fn constant(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(0, 2, 1, 3);
    let n: usize = s.iter().product();
    let vals: Vec<f64> = (0..n).map(|_| rng.uniform(-2.0, 2.0)).collect();
    let host = match dt {
        DType::F32 => HostArray::from_slice(
            s.clone(),
            &vals.iter().map(|&v| v as f32).collect::<Vec<_>>(),
        ),
        _ => HostArray::from_slice(s.clone(), &vals),
    }
    .ok()?;
    let ty = TensorType::new(dt, s.clone());
    let mut b = Builder::new(vec![ty.clone()]);
    let c = b.push(Op::Constant(host), &[], vec![ty])?;
    let y = b.push(
        Op::Binary(BinaryOp::Mul),
        &[c[0], quabla::qir::ValueId(0)],
        vec![],
    )?;
    Some(Case::new(
        "constant",
        dt,
        program_fn(b.finish(y)),
        vec![real(&s, -2.0, 2.0)],
    ))
}

/// Each unary op over a domain where it is smooth (or, for the piecewise ones, away from
/// its jumps).
fn unary(u: UnaryOp, rng: &mut Rng, dt: DType) -> Option<Case> {
    use UnaryOp::*;
    let s = rng.dims(0, 3, 1, 3);
    let arg = match u {
        Neg | Exp | Exp2 | Expm1 | Sin | Cos | Atan | Sinh | Cosh | Tanh | Asinh | Erf | Erfc
        | Logistic | IsFinite => real(&s, -2.0, 2.0),
        Abs | Sign | Cbrt => real_gap(&s, -2.0, 2.0, Gap::FromZero),
        Floor | Ceil => real_gap(&s, -3.0, 3.0, Gap::FromIntegers),
        Round => real_gap(&s, -3.0, 3.0, Gap::FromHalves),
        Log | Sqrt | Rsqrt => real(&s, 0.3, 3.0),
        Log1p => real(&s, -0.7, 2.0),
        Tan => real(&s, -1.2, 1.2),
        Asin | Acos | Atanh | ErfInv => real(&s, -0.8, 0.8),
        Acosh => real(&s, 1.2, 3.0),
        Not => Arg::Bool { shape: s.clone() },
    };
    single_case(u.name(), Op::Unary(u), vec![arg], dt, vec![])
}

fn binary(b: BinaryOp, rng: &mut Rng, dt: DType) -> Option<Case> {
    use BinaryOp::*;
    let s = rng.dims(0, 3, 1, 3);
    let int = |dtype: DType, lo: i64, hi: i64| Arg::Int {
        dtype,
        shape: s.clone(),
        lo,
        hi,
    };
    let args = match b {
        Add | Sub | Mul => vec![real(&s, -2.0, 2.0), real(&s, -2.0, 2.0)],
        Atan2 => vec![real_gap(&s, -2.0, 2.0, Gap::FromZero), real(&s, -2.0, 2.0)],
        Div => vec![real(&s, -2.0, 2.0), real_gap(&s, -2.0, 2.0, Gap::FromZero)],
        // x between 1.2 y and 1.8 y: one whole y is taken off, so d/dy = -1.
        Rem => vec![
            real_gap(&s, -2.0, 2.0, Gap::FromZero),
            Arg::Scaled {
                of: 0,
                lo: 1.0 / 1.8,
                hi: 1.0 / 1.2,
            },
        ],
        Pow => vec![real(&s, 0.3, 2.0), real(&s, -2.0, 2.0)],
        Max | Min => vec![
            real(&s, -2.0, 2.0),
            Arg::Offset {
                of: 0,
                lo: 0.1,
                hi: 1.0,
            },
        ],
        And | Or | Xor => {
            if rng.coin() {
                vec![
                    Arg::Bool { shape: s.clone() },
                    Arg::Bool { shape: s.clone() },
                ]
            } else {
                vec![int(DType::I32, -100, 100), int(DType::I32, -100, 100)]
            }
        }
        ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => {
            let d = rng.pick(&[DType::I32, DType::U32]);
            vec![int(d, 0, 1000), int(d, 0, 35)]
        }
    };
    single_case(b.name(), Op::Binary(b), args, dt, vec![])
}

fn broadcast_in_dim(rng: &mut Rng, dt: DType) -> Option<Case> {
    let rank = rng.size(0, 2);
    let out_rank = rank + rng.size(0, 2);
    let mut dims = rng.perm(out_rank)[..rank].to_vec();
    dims.sort_unstable();
    let mut out = rng.shape(out_rank, 1, 3);
    let operand: Vec<usize> = dims
        .iter()
        .map(|&d| if rng.coin() { 1 } else { out[d] })
        .collect();
    for (i, &d) in dims.iter().enumerate() {
        if operand[i] != 1 {
            out[d] = operand[i];
        }
    }
    single_case(
        format!("broadcast_in_dim {operand:?} -> {out:?} dims {dims:?}"),
        Op::BroadcastInDim { dims },
        vec![real(&operand, -2.0, 2.0)],
        dt,
        vec![TensorType::new(dt, out)],
    )
}

fn reshape(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(0, 3, 1, 4);
    let mut factors: Vec<usize> = Vec::new();
    for &d in &s {
        let mut n = d;
        for p in [2, 3] {
            while n % p == 0 {
                factors.push(p);
                n /= p;
            }
        }
        if n > 1 {
            factors.push(n);
        }
    }
    rng.shuffle(&mut factors);
    let mut out: Vec<usize> = vec![1; rng.size(0, 3)];
    if out.is_empty() && !factors.is_empty() {
        out.push(1);
    }
    for f in factors {
        let k = rng.size(0, out.len() - 1);
        out[k] *= f;
    }
    single_case(
        format!("reshape {s:?} -> {out:?}"),
        Op::Reshape,
        vec![real(&s, -2.0, 2.0)],
        dt,
        vec![TensorType::new(dt, out)],
    )
}

fn reduce(rng: &mut Rng, dt: DType) -> Option<Case> {
    let s = rng.dims(1, 3, 1, 3);
    let mut axes = rng.subset(s.len());
    rng.shuffle(&mut axes);
    let kind = rng.pick(ReduceKind::ALL);
    let arg = match kind {
        ReduceKind::Sum => real(&s, -2.0, 2.0),
        ReduceKind::Prod => real_gap(&s, -1.5, 1.5, Gap::FromZero),
        ReduceKind::Max | ReduceKind::Min => real_gap(&s, -2.0, 2.0, Gap::Distinct),
        ReduceKind::And | ReduceKind::Or => Arg::Bool { shape: s.clone() },
    };
    single_case(
        format!("reduce {} axes {axes:?}", kind.name()),
        Op::Reduce { kind, axes },
        vec![arg],
        dt,
        vec![],
    )
}

/// Batch, contracting and free dims in every placement: each side's dims are shuffled, so
/// contracting pairs come in unsorted order on either side.
fn dot_general(rng: &mut Rng, dt: DType) -> Option<Case> {
    let nb = rng.size(0, 2);
    let nc = rng.size(0, 2);
    let (lf, rf) = (rng.size(0, 2), rng.size(0, 2));
    let batch = rng.shape(nb, 1, 3);
    let contract = rng.shape(nc, 2, 3);
    let side = |rng: &mut Rng, free: usize| {
        // Logical dims: batch 0..nb, contract nb..nb+nc, free after; `place[l]` is where
        // logical dim `l` sits in the operand.
        let rank = nb + nc + free;
        let place = rng.perm(rank);
        let mut shape = vec![0; rank];
        let free_sizes = rng.shape(free, 1, 3);
        for l in 0..rank {
            shape[place[l]] = if l < nb {
                batch[l]
            } else if l < nb + nc {
                contract[l - nb]
            } else {
                free_sizes[l - nb - nc]
            };
        }
        (place, shape)
    };
    let (lp, ls) = side(rng, lf);
    let (rp, rs) = side(rng, rf);
    let mut order = rng.perm(nc);
    order.truncate(nc);
    let dims = DotDims {
        lhs_batch: (0..nb).map(|b| lp[b]).collect(),
        rhs_batch: (0..nb).map(|b| rp[b]).collect(),
        lhs_contract: order.iter().map(|&c| lp[nb + c]).collect(),
        rhs_contract: order.iter().map(|&c| rp[nb + c]).collect(),
    };
    let c = single_case(
        format!("dot_general {ls:?} x {rs:?} {dims:?}"),
        Op::DotGeneral(dims),
        vec![real(&ls, -2.0, 2.0), real(&rs, -2.0, 2.0)],
        dt,
        vec![],
    )?;
    Some(c.inexact())
}
