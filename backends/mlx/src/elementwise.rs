//! QIR's elementwise ops as MLX ops. Where MLX's own function differs from QIR's definition
//! (integer division by zero, C's `fmod`, NaN and signed zeros in `max`, shift counts of 32 or
//! more, saturating conversions), the exact QIR result is composed from MLX ops that are
//! exact, so no element is approximated or left to C++'s undefined behaviour.

use crate::shim::{Binary, Libm, MlxArray, Unary};
use quabla_abi::abi::AbiError;
use quabla_abi::qir::{BinaryOp, CompareDir, Op, UnaryOp};
use quabla_abi::{DType, TensorType};

type R = Result<MlxArray, AbiError>;

/// Whether `op` is elementwise: one result, each element a function of the operands'
/// elements at the same index (the ops a compiled group may hold, `fusion.rs`).
pub fn is_elementwise(op: &Op) -> bool {
    matches!(
        op,
        Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::Select | Op::Convert
    )
}

/// An elementwise node's value from its operands `x` (of types `ty`) and its result type:
/// one definition shared by the graph builder (`exec.rs`) and compiled groups' traces.
pub fn apply(op: &Op, x: &[&MlxArray], ty: &[&TensorType], out: &TensorType) -> R {
    let at = |k: usize| {
        x.get(k)
            .copied()
            .zip(ty.get(k).copied())
            .ok_or_else(|| AbiError::internal(format!("`{}` lacks operand {k}", op.name())))
    };
    match op {
        Op::Unary(u) => {
            let (a, t) = at(0)?;
            unary(*u, a, t.dtype)
        }
        Op::Binary(b) => {
            let (a, t) = at(0)?;
            binary(*b, a, at(1)?.0, t.dtype)
        }
        Op::Compare(dir) => compare(*dir, at(0)?.0, at(1)?.0),
        Op::Select => at(0)?.0.select(at(1)?.0, at(2)?.0),
        Op::Convert => {
            let (a, t) = at(0)?;
            convert(a, t.dtype, out.dtype)
        }
        other => Err(AbiError::internal(format!(
            "`{}` is not elementwise",
            other.name()
        ))),
    }
}

/// A 0-d array of `dtype` holding `v` (converted as Rust's `as` would).
pub fn scalar(dtype: DType, v: f64) -> R {
    let bytes = match dtype {
        DType::Bool => vec![(v != 0.0) as u8],
        DType::I32 => (v as i64 as i32).to_le_bytes().to_vec(),
        DType::U32 => (v as i64 as u32).to_le_bytes().to_vec(),
        DType::F32 => (v as f32).to_le_bytes().to_vec(),
        DType::F64 => v.to_le_bytes().to_vec(),
    };
    MlxArray::from_bytes(dtype, &[], &bytes)
}

fn is_float(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F64)
}

/// True where `x` has its sign bit set (`-0` included; NaN false), for floats.
fn sign_bit(x: &MlxArray, dtype: DType) -> R {
    let zero = scalar(dtype, 0.0)?;
    let one = scalar(dtype, 1.0)?;
    // 1 / -0 is -inf: the one exact way to see a zero's sign without integer views of f64.
    let negative_zero = x.binary(Binary::Eq, &zero)?.binary(
        Binary::LogicalAnd,
        &one.binary(Binary::Divide, x)?.binary(Binary::Lt, &zero)?,
    )?;
    x.binary(Binary::Lt, &zero)?
        .binary(Binary::LogicalOr, &negative_zero)
}

pub fn unary(op: UnaryOp, x: &MlxArray, dtype: DType) -> R {
    use UnaryOp::*;
    let f = |u| x.unary(u);
    match op {
        Neg => f(Unary::Neg),
        Abs if dtype == DType::U32 => x.astype(DType::U32),
        Abs => f(Unary::Abs),
        Sign => sign(x, dtype),
        Floor => f(Unary::Floor),
        Ceil => f(Unary::Ceil),
        Round => f(Unary::RoundEven),
        // MLX's own exp, sin, cos, erf and sigmoid are float32 polynomials even in float64;
        // it has no exp2, erfc, cbrt or float64 erfinv.
        Exp => x.libm(Libm::Exp),
        Exp2 => x.libm(Libm::Exp2),
        Expm1 => f(Unary::Expm1),
        Log => f(Unary::Log),
        Log1p => f(Unary::Log1p),
        Sqrt => f(Unary::Sqrt),
        Rsqrt => f(Unary::Rsqrt),
        Cbrt => x.libm(Libm::Cbrt),
        Sin => x.libm(Libm::Sin),
        Cos => x.libm(Libm::Cos),
        Tan => f(Unary::Tan),
        Asin => f(Unary::Asin),
        Acos => f(Unary::Acos),
        Atan => f(Unary::Atan),
        Sinh => f(Unary::Sinh),
        Cosh => f(Unary::Cosh),
        Tanh => f(Unary::Tanh),
        Asinh => f(Unary::Asinh),
        Acosh => f(Unary::Acosh),
        Atanh => f(Unary::Atanh),
        Erf => x.libm(Libm::Erf),
        Erfc => x.libm(Libm::Erfc),
        ErfInv => x.libm(Libm::ErfInv),
        Logistic => x.libm(Libm::Logistic),
        IsFinite => f(Unary::IsFinite),
        Not if dtype == DType::Bool => f(Unary::LogicalNot),
        Not => f(Unary::BitwiseNot),
    }
}

/// QIR's sign: -1, 0 or 1, keeping NaN and the sign of zero (floats); 0 or 1 for u32.
fn sign(x: &MlxArray, dtype: DType) -> R {
    let zero = scalar(dtype, 0.0)?;
    match dtype {
        DType::U32 => x.binary(Binary::Ne, &zero)?.astype(DType::U32),
        DType::F32 | DType::F64 => {
            let keep = x
                .binary(Binary::Eq, &zero)?
                .binary(Binary::LogicalOr, &x.unary(Unary::IsNan)?)?;
            keep.select(x, &x.unary(Unary::Sign)?)
        }
        DType::I32 | DType::Bool => x.unary(Unary::Sign),
    }
}

pub fn binary(op: BinaryOp, x: &MlxArray, y: &MlxArray, dtype: DType) -> R {
    use BinaryOp::*;
    let f = |b| x.binary(b, y);
    let float = is_float(dtype);
    match op {
        Add => f(Binary::Add),
        Sub => f(Binary::Sub),
        Mul => f(Binary::Mul),
        Div if float => f(Binary::Divide),
        Div => int_div(x, y, dtype),
        Rem if float => float_rem(x, y, dtype),
        Rem => int_rem(x, y, dtype),
        Pow if float => f(Binary::Power),
        Pow => int_pow(x, y, dtype),
        Max if float => float_extremum(x, y, Binary::Maximum, dtype),
        Min if float => float_extremum(x, y, Binary::Minimum, dtype),
        Max => f(Binary::Maximum),
        Min => f(Binary::Minimum),
        Atan2 => f(Binary::Atan2),
        And if dtype == DType::Bool => f(Binary::LogicalAnd),
        Or if dtype == DType::Bool => f(Binary::LogicalOr),
        Xor if dtype == DType::Bool => f(Binary::Ne),
        And => f(Binary::BitwiseAnd),
        Or => f(Binary::BitwiseOr),
        Xor => f(Binary::BitwiseXor),
        ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => shift(op, x, y, dtype),
    }
}

pub fn compare(dir: CompareDir, x: &MlxArray, y: &MlxArray) -> R {
    let b = match dir {
        CompareDir::Eq => Binary::Eq,
        CompareDir::Ne => Binary::Ne,
        CompareDir::Lt => Binary::Lt,
        CompareDir::Le => Binary::Le,
        CompareDir::Gt => Binary::Gt,
        CompareDir::Ge => Binary::Ge,
    };
    x.binary(b, y)
}

/// The divisor with 0 (and, for i32, -1) replaced by 1, so that MLX's C++ division never
/// traps (x86 faults on `/ 0` and on `i32::MIN / -1`); the callers patch those elements.
fn safe_divisor(y: &MlxArray, dtype: DType) -> Result<(MlxArray, MlxArray, MlxArray), AbiError> {
    let zero = y.binary(Binary::Eq, &scalar(dtype, 0.0)?)?;
    let minus_one = if dtype == DType::I32 {
        y.binary(Binary::Eq, &scalar(dtype, -1.0)?)?
    } else {
        scalar(DType::Bool, 0.0)?
    };
    let patch = zero.binary(Binary::LogicalOr, &minus_one)?;
    let safe = patch.select(&scalar(dtype, 1.0)?, y)?;
    Ok((safe, zero, minus_one))
}

/// `x % y` truncated toward zero, from MLX's floored remainder by a safe divisor.
fn truncated_rem(x: &MlxArray, safe: &MlxArray, dtype: DType) -> R {
    let r = x.binary(Binary::Remainder, safe)?;
    if dtype == DType::U32 {
        return Ok(r);
    }
    let zero = scalar(dtype, 0.0)?;
    let differs = r
        .binary(Binary::Lt, &zero)?
        .binary(Binary::Ne, &x.binary(Binary::Lt, &zero)?)?;
    let fix = r
        .binary(Binary::Ne, &zero)?
        .binary(Binary::LogicalAnd, &differs)?;
    fix.select(&r.binary(Binary::Sub, safe)?, &r)
}

/// Integer `x / y` toward zero; `x / 0` has every bit set, `i32::MIN / -1` wraps.
fn int_div(x: &MlxArray, y: &MlxArray, dtype: DType) -> R {
    let (safe, zero, minus_one) = safe_divisor(y, dtype)?;
    let floored = x.binary(Binary::FloorDivide, &safe)?;
    let q = if dtype == DType::U32 {
        floored
    } else {
        // Floored and truncated quotients differ by one when the division is inexact and
        // the operands' signs differ.
        let z = scalar(dtype, 0.0)?;
        let inexact = x.binary(Binary::Remainder, &safe)?.binary(Binary::Ne, &z)?;
        let signs = x
            .binary(Binary::Lt, &z)?
            .binary(Binary::Ne, &safe.binary(Binary::Lt, &z)?)?;
        let up = inexact.binary(Binary::LogicalAnd, &signs)?;
        up.select(
            &floored.binary(Binary::Add, &scalar(dtype, 1.0)?)?,
            &floored,
        )?
    };
    let q = minus_one.select(&x.unary(Unary::Neg)?, &q)?;
    let all_ones = scalar(dtype, 0.0)?.unary(Unary::BitwiseNot)?;
    zero.select(&all_ones, &q)
}

/// Integer `x % y` with the dividend's sign; `x % 0` is `x`.
fn int_rem(x: &MlxArray, y: &MlxArray, dtype: DType) -> R {
    let (safe, zero, _) = safe_divisor(y, dtype)?;
    let r = truncated_rem(x, &safe, dtype)?;
    zero.select(x, &r)
}

/// C's `fmod`: exact, with the dividend's sign. MLX's remainder is floored (the divisor's
/// sign), but on magnitudes the two agree, and negation is exact.
fn float_rem(x: &MlxArray, y: &MlxArray, dtype: DType) -> R {
    let m = x
        .unary(Unary::Abs)?
        .binary(Binary::Remainder, &y.unary(Unary::Abs)?)?;
    sign_bit(x, dtype)?.select(&m.unary(Unary::Neg)?, &m)
}

/// IEEE maximum/minimum as QIR's: NaN if either operand is, and `-0 < +0`. MLX's own
/// picks by `>` alone, so equal zeros are settled by a sum (`-0 + +0 = +0` for max; for min
/// the negated sum of the negations).
fn float_extremum(x: &MlxArray, y: &MlxArray, op: Binary, dtype: DType) -> R {
    let m = x.binary(op, y)?;
    let both_zero = x.binary(Binary::Eq, y)?.binary(
        Binary::LogicalAnd,
        &x.binary(Binary::Eq, &scalar(dtype, 0.0)?)?,
    )?;
    let zero_pick = match op {
        Binary::Maximum => x.binary(Binary::Add, y)?,
        _ => x
            .unary(Unary::Neg)?
            .binary(Binary::Add, &y.unary(Unary::Neg)?)?
            .unary(Unary::Neg)?,
    };
    let m = both_zero.select(&zero_pick, &m)?;
    let m = y.unary(Unary::IsNan)?.select(y, &m)?;
    x.unary(Unary::IsNan)?.select(x, &m)
}

/// Integer power by squaring (wrapping), 32 rounds over the exponent's bits; a negative
/// exponent gives 1 for base 1, +-1 for base -1 and 0 otherwise (XLA's rule).
fn int_pow(x: &MlxArray, y: &MlxArray, dtype: DType) -> R {
    let one = scalar(dtype, 1.0)?;
    let zero = scalar(dtype, 0.0)?;
    let mut acc = x.binary(Binary::Mul, &zero)?.binary(Binary::Add, &one)?;
    let mut base = x.view(dtype)?;
    let bits = y.view(DType::U32)?;
    let (uone, uzero) = (scalar(DType::U32, 1.0)?, scalar(DType::U32, 0.0)?);
    let mut e = bits;
    for _ in 0..32 {
        let odd = e
            .binary(Binary::BitwiseAnd, &uone)?
            .binary(Binary::Ne, &uzero)?;
        acc = odd.select(&acc.binary(Binary::Mul, &base)?, &acc)?;
        base = base.binary(Binary::Mul, &base)?;
        e = e.binary(Binary::ShiftRight, &uone)?;
    }
    if dtype != DType::I32 {
        return Ok(acc);
    }
    let negative = y.binary(Binary::Lt, &zero)?;
    let minus_one = scalar(dtype, -1.0)?;
    let even = y
        .binary(Binary::BitwiseAnd, &one)?
        .binary(Binary::Eq, &zero)?;
    let for_minus_one = even.select(&one, &minus_one)?;
    let small = x.binary(Binary::Eq, &one)?.select(
        &one,
        &x.binary(Binary::Eq, &minus_one)?
            .select(&for_minus_one, &zero)?,
    )?;
    negative.select(&small, &acc)
}

/// Shifts with the count read as unsigned: 32 or more shifts every bit out (left, logical)
/// or leaves only sign bits (arithmetic).
fn shift(op: BinaryOp, x: &MlxArray, y: &MlxArray, dtype: DType) -> R {
    let count = y.view(DType::U32)?;
    let big = count.binary(Binary::Ge, &scalar(DType::U32, 32.0)?)?;
    let capped = big.select(&scalar(DType::U32, 31.0)?, &count)?;
    let (signed, unsigned) = (DType::I32, DType::U32);
    let out = match op {
        BinaryOp::ShiftLeft => {
            let r = x.view(unsigned)?.binary(Binary::ShiftLeft, &capped)?;
            big.select(&scalar(unsigned, 0.0)?, &r)?
        }
        BinaryOp::ShiftRightLogical => {
            let r = x.view(unsigned)?.binary(Binary::ShiftRight, &capped)?;
            big.select(&scalar(unsigned, 0.0)?, &r)?
        }
        _ => {
            let r = x
                .view(signed)?
                .binary(Binary::ShiftRight, &capped.view(signed)?)?;
            return if dtype == signed {
                Ok(r)
            } else {
                r.view(dtype)
            };
        }
    };
    if dtype == unsigned {
        Ok(out)
    } else {
        out.view(dtype)
    }
}

/// QIR's `convert`: float to integer truncates and saturates, NaN to 0; integers wrap;
/// anything to bool is `x != 0`.
pub fn convert(x: &MlxArray, from: DType, to: DType) -> R {
    if to == DType::Bool {
        return x.binary(Binary::Ne, &scalar(from, 0.0)?);
    }
    if !is_float(from) || is_float(to) {
        return x.astype(to);
    }
    let (lo, hi) = match to {
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        _ => (0.0, u32::MAX as f64),
    };
    // Values past the range saturate; the rest are inside it after truncation, so the
    // C++ cast MLX does is defined on every element it keeps.
    let below = x.binary(Binary::Le, &scalar(from, lo)?)?;
    let above = x.binary(Binary::Ge, &scalar(from, hi)?)?;
    let nan = x.unary(Unary::IsNan)?;
    let outside = below
        .binary(Binary::LogicalOr, &above)?
        .binary(Binary::LogicalOr, &nan)?;
    let inside = outside.select(&scalar(from, 0.0)?, x)?.astype(to)?;
    let r = below.select(&scalar(to, lo)?, &inside)?;
    above.select(&scalar(to, hi)?, &r)
}
