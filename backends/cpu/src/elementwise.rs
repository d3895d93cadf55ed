//! Elementwise kernels over slices (one tile at a time when fused).
//!
//! IEEE semantics throughout: NaN propagates through max/min (IEEE 754-2019 `maximum`, so
//! max(-0, +0) = +0 and min(-0, +0) = -0); integer arithmetic wraps; integer `x / 0` is -1
//! (all bits set for u32) and `x % 0` is `x`; `i32::MIN / -1` wraps to `i32::MIN`. f32
//! transcendental functions are evaluated in f64 and rounded once, so they are within 1 ulp.

use crate::pool::CollectPooled;
use crate::tensor::Storage;
use quabla_abi::qir::{BinaryOp, CompareDir, UnaryOp};
use quabla_abi::DType;

/// A borrowed run of elements of one dtype.
#[derive(Clone, Copy)]
pub enum View<'a> {
    Bool(&'a [bool]),
    I32(&'a [i32]),
    U32(&'a [u32]),
    F32(&'a [f32]),
    F64(&'a [f64]),
}

impl<'a> View<'a> {
    pub fn of(s: &'a Storage, start: usize, end: usize) -> View<'a> {
        match s {
            Storage::Bool(v) => View::Bool(&v[start..end]),
            Storage::I32(v) => View::I32(&v[start..end]),
            Storage::U32(v) => View::U32(&v[start..end]),
            Storage::F32(v) => View::F32(&v[start..end]),
            Storage::F64(v) => View::F64(&v[start..end]),
        }
    }

    pub fn all(s: &'a Storage) -> View<'a> {
        View::of(s, 0, s.len())
    }
}

/// Float math shared by f32 and f64. Functions without an exact native form go through f64.
pub trait Real: crate::pool::Pooled + PartialOrd + std::ops::Neg<Output = Self> {
    fn to_f64(self) -> f64;
    fn from_f64(x: f64) -> Self;
    fn is_nan(self) -> bool;
    fn abs(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round_even(self) -> Self;
    fn sqrt(self) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn rem(self, o: Self) -> Self;
    fn is_sign_negative(self) -> bool;
    fn zero() -> Self;
    fn one() -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            fn round_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn div(self, o: Self) -> Self {
                self / o
            }
            fn rem(self, o: Self) -> Self {
                self % o
            }
            fn is_sign_negative(self) -> bool {
                <$t>::is_sign_negative(self)
            }
            fn zero() -> Self {
                0.0
            }
            fn one() -> Self {
                1.0
            }
        }
    };
}
real!(f32);
real!(f64);

/// IEEE 754-2019 maximum: NaN wins, and +0 > -0.
pub fn fmax<T: Real>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        return T::from_f64(f64::NAN);
    }
    if a > b {
        a
    } else if b > a || a.is_sign_negative() {
        b
    } else {
        a
    }
}

/// IEEE 754-2019 minimum: NaN wins, and -0 < +0.
pub fn fmin<T: Real>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        return T::from_f64(f64::NAN);
    }
    if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// A scalar function with the C calling convention: the interpreter maps it over slices and
/// the compiled tier calls the very same function, so both give the same bits.
pub type F64Fn = extern "C" fn(f64) -> f64;
/// A two-operand [`F64Fn`].
pub type F64BinaryFn = extern "C" fn(f64, f64) -> f64;

/// Wraps a Rust `f64 -> f64` function (or closure without captures) as an [`F64Fn`].
macro_rules! c_fn {
    ($f:expr) => {{
        extern "C" fn c(x: f64) -> f64 {
            ($f)(x)
        }
        c as F64Fn
    }};
}

/// The f64 function a float unary op without an exact native form is evaluated with: the
/// f64 kernel of `vmath` where there is one, else libm. f32 operands are widened, and the
/// result rounded once, so f32 is within 1 ulp; except `erf_inv`, whose f32 kernel
/// (`vmath::map`, `vmath::scalar`) is XLA's f32 algorithm and always comes first.
pub fn via_f64(op: UnaryOp) -> Option<F64Fn> {
    use UnaryOp::*;
    Some(match op {
        Exp | Exp2 | Expm1 | Tanh | Logistic | Sinh | Cosh | Log | Log1p | Sin | Cos | Tan
        | ErfInv => return crate::vmath::scalar_f64(op),
        Rsqrt => c_fn!(|v: f64| 1.0 / v.sqrt()),
        Cbrt => c_fn!(f64::cbrt),
        Asin => c_fn!(f64::asin),
        Acos => c_fn!(f64::acos),
        Atan => c_fn!(f64::atan),
        Asinh => c_fn!(libm::asinh),
        // libm's acosh answers log of a cancelled difference, not NaN, on (-2^26, -2].
        Acosh => c_fn!(|v: f64| if v < 1.0 { f64::NAN } else { libm::acosh(v) }),
        Atanh => c_fn!(libm::atanh),
        Erf => c_fn!(libm::erf),
        Erfc => c_fn!(libm::erfc),
        Neg | Abs | Sign | Floor | Ceil | Round | Sqrt | IsFinite | Not => return None,
    })
}

/// The f64 function of a float binary op without an exact native form (as [`via_f64`]); f32
/// operands use `vmath`'s kernels ([`crate::vmath::scalar_binary`]) instead.
pub fn binary_via_f64(op: BinaryOp) -> Option<F64BinaryFn> {
    extern "C" fn pow(x: f64, y: f64) -> f64 {
        x.powf(y)
    }
    extern "C" fn atan2(y: f64, x: f64) -> f64 {
        y.atan2(x)
    }
    use BinaryOp::*;
    match op {
        Pow => Some(pow),
        Atan2 => Some(atan2),
        Add | Sub | Mul | Div | Rem | Max | Min | And | Or | Xor | ShiftLeft
        | ShiftRightLogical | ShiftRightArithmetic => None,
    }
}

/// sign keeps the sign of zero (sign(-0) = -0) and NaN, as JAX does.
pub fn sign<T: Real>(v: T) -> T {
    if v.is_nan() || v.to_f64() == 0.0 {
        v
    } else if v.is_sign_negative() {
        -T::one()
    } else {
        T::one()
    }
}

fn float_unary<T: Real>(op: UnaryOp, x: &[T]) -> Result<Vec<T>, ()> {
    use UnaryOp::*;
    if let Some(f) = via_f64(op) {
        return Ok(x
            .iter()
            .map(|v| T::from_f64(f(v.to_f64())))
            .collect_pooled());
    }
    Ok(match op {
        Neg => x.iter().map(|v| -*v).collect_pooled(),
        Abs => x.iter().map(|v| v.abs()).collect_pooled(),
        Sign => x.iter().map(|v| sign(*v)).collect_pooled(),
        Floor => x.iter().map(|v| v.floor()).collect_pooled(),
        Ceil => x.iter().map(|v| v.ceil()).collect_pooled(),
        Round => x.iter().map(|v| v.round_even()).collect_pooled(),
        Sqrt => x.iter().map(|v| v.sqrt()).collect_pooled(),
        Rsqrt | Exp | Exp2 | Expm1 | Log | Log1p | Cbrt | Sin | Cos | Tan | Asin | Acos | Atan
        | Sinh | Cosh | Tanh | Asinh | Acosh | Atanh | Erf | Erfc | ErfInv | Logistic => {
            unreachable!("{op:?} is evaluated through via_f64")
        }
        IsFinite | Not => return Err(()),
    })
}

use quabla_abi::float_only_unary;

fn int_unary_i32(op: UnaryOp, x: &[i32]) -> Vec<i32> {
    match op {
        UnaryOp::Neg => x.iter().map(|v| v.wrapping_neg()).collect_pooled(),
        UnaryOp::Abs => x.iter().map(|v| v.wrapping_abs()).collect_pooled(),
        UnaryOp::Sign => x.iter().map(|v| v.signum()).collect_pooled(),
        UnaryOp::Not => x.iter().map(|v| !v).collect_pooled(),
        float_only_unary!() => unreachable!("validation admits {op:?} on floats only"),
    }
}

fn int_unary_u32(op: UnaryOp, x: &[u32]) -> Vec<u32> {
    match op {
        UnaryOp::Neg => x.iter().map(|v| v.wrapping_neg()).collect_pooled(),
        UnaryOp::Abs => x.iter().copied().collect_pooled(),
        UnaryOp::Sign => x.iter().map(|v| (*v != 0) as u32).collect_pooled(),
        UnaryOp::Not => x.iter().map(|v| !v).collect_pooled(),
        float_only_unary!() => unreachable!("validation admits {op:?} on floats only"),
    }
}

fn bool_unary(op: UnaryOp, x: &[bool]) -> Vec<bool> {
    match op {
        UnaryOp::Not => x.iter().map(|a| !a).collect_pooled(),
        UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | float_only_unary!() => {
            unreachable!("validation admits only `not` on bool, not {op:?}")
        }
    }
}

/// Applies a unary op. Dtypes have been checked by validation.
pub fn unary(op: UnaryOp, x: View) -> Storage {
    match x {
        View::F32(v) if op == UnaryOp::IsFinite => {
            Storage::Bool(v.iter().map(|a| a.is_finite()).collect_pooled())
        }
        View::F64(v) if op == UnaryOp::IsFinite => {
            Storage::Bool(v.iter().map(|a| a.is_finite()).collect_pooled())
        }
        View::F32(v) => Storage::F32(
            crate::vmath::map(op, v).unwrap_or_else(|| float_unary(op, v).unwrap_or_default()),
        ),
        View::F64(v) => Storage::F64(
            crate::vmath::map_f64(op, v).unwrap_or_else(|| float_unary(op, v).unwrap_or_default()),
        ),
        View::I32(v) => Storage::I32(int_unary_i32(op, v)),
        View::U32(v) => Storage::U32(int_unary_u32(op, v)),
        View::Bool(v) => Storage::Bool(bool_unary(op, v)),
    }
}

fn float_binary<T: Real>(op: BinaryOp, a: &[T], b: &[T]) -> Vec<T> {
    use BinaryOp::*;
    let z = a.iter().zip(b);
    if let Some(f) = binary_via_f64(op) {
        return z
            .map(|(x, y)| T::from_f64(f(x.to_f64(), y.to_f64())))
            .collect_pooled();
    }
    match op {
        Add => z.map(|(x, y)| x.add(*y)).collect_pooled(),
        Sub => z.map(|(x, y)| x.sub(*y)).collect_pooled(),
        Mul => z.map(|(x, y)| x.mul(*y)).collect_pooled(),
        Div => z.map(|(x, y)| x.div(*y)).collect_pooled(),
        Rem => z.map(|(x, y)| x.rem(*y)).collect_pooled(),
        Max => z.map(|(x, y)| fmax(*x, *y)).collect_pooled(),
        Min => z.map(|(x, y)| fmin(*x, *y)).collect_pooled(),
        Pow | Atan2 => unreachable!("{op:?} is evaluated through binary_via_f64"),
        And | Or | Xor | ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => {
            unreachable!("validation admits no bitwise op on floats, not {op:?}")
        }
    }
}

/// Integer ops shared by i32 and u32, with the XLA conventions for division by zero.
pub trait Int: crate::pool::Pooled + Ord {
    const ALL_ONES: Self;
    fn wadd(self, o: Self) -> Self;
    fn wsub(self, o: Self) -> Self;
    fn wmul(self, o: Self) -> Self;
    fn wdiv(self, o: Self) -> Option<Self>;
    fn wrem(self, o: Self) -> Option<Self>;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn shl(self, s: u32) -> Self;
    fn shr_logical(self, s: u32) -> Self;
    fn shr_arith(self, s: u32) -> Self;
    fn as_shift(self) -> u64;
    fn pow(self, e: Self) -> Self;
}

macro_rules! int_impl {
    ($t:ty, $u:ty, $s:ty) => {
        impl Int for $t {
            const ALL_ONES: Self = !0;
            fn wadd(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn wsub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn wmul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn wdiv(self, o: Self) -> Option<Self> {
                if o == 0 {
                    None
                } else {
                    Some(self.wrapping_div(o))
                }
            }
            fn wrem(self, o: Self) -> Option<Self> {
                if o == 0 {
                    None
                } else {
                    Some(self.wrapping_rem(o))
                }
            }
            fn and(self, o: Self) -> Self {
                self & o
            }
            fn or(self, o: Self) -> Self {
                self | o
            }
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
            fn shl(self, s: u32) -> Self {
                if s >= 32 {
                    0
                } else {
                    ((self as $u) << s) as $t
                }
            }
            fn shr_logical(self, s: u32) -> Self {
                if s >= 32 {
                    0
                } else {
                    ((self as $u) >> s) as $t
                }
            }
            fn shr_arith(self, s: u32) -> Self {
                ((self as $s) >> s.min(31)) as $t
            }
            fn as_shift(self) -> u64 {
                self as $u as u64
            }
            fn pow(self, e: Self) -> Self {
                // Negative exponents (i32): 1 for base 1, +-1 for base -1, else 0 (as XLA).
                #[allow(unused_comparisons)]
                if e < 0 {
                    let base = self as i64;
                    return match base {
                        1 => 1 as $t,
                        -1 => {
                            if (e as i64) % 2 == 0 {
                                1 as $t
                            } else {
                                self
                            }
                        }
                        _ => 0 as $t,
                    };
                }
                let (mut acc, mut b, mut e) = (1 as $t, self, e as u64);
                while e > 0 {
                    if e & 1 == 1 {
                        acc = acc.wrapping_mul(b);
                    }
                    b = b.wrapping_mul(b);
                    e >>= 1;
                }
                acc
            }
        }
    };
}
int_impl!(i32, u32, i32);
int_impl!(u32, u32, i32);

/// `x / y` with XLA's convention for a zero divisor (all bits set).
pub fn int_div<T: Int>(x: T, y: T) -> T {
    x.wdiv(y).unwrap_or(T::ALL_ONES)
}

/// `x % y` with XLA's convention for a zero divisor (`x`).
pub fn int_rem<T: Int>(x: T, y: T) -> T {
    x.wrem(y).unwrap_or(x)
}

/// Shifts by `y` read as unsigned; 32 or more shifts every bit out.
pub fn int_shift_left<T: Int>(x: T, y: T) -> T {
    x.shl(y.as_shift().min(64) as u32)
}

pub fn int_shift_right_logical<T: Int>(x: T, y: T) -> T {
    x.shr_logical(y.as_shift().min(64) as u32)
}

/// Fills with the sign bit; 32 or more leaves only sign bits.
pub fn int_shift_right_arithmetic<T: Int>(x: T, y: T) -> T {
    x.shr_arith(y.as_shift().min(64) as u32)
}

fn int_binary<T: Int>(op: BinaryOp, a: &[T], b: &[T]) -> Vec<T> {
    use BinaryOp::*;
    // One loop per op with the function inlined: through a function pointer each element
    // was a call, and the loop never vectorised (threefry's hash, all adds, xors, ors and
    // shifts, ran at about 1 ns an element per op).
    fn zip<T: Int>(a: &[T], b: &[T], f: impl Fn(T, T) -> T) -> Vec<T> {
        let n = a.len().min(b.len());
        let mut out = crate::pool::take(n);
        pulp::Arch::new().dispatch(IntZip {
            a,
            b,
            out: &mut out.spare_capacity_mut()[..n],
            f,
        });
        // SAFETY: the loop wrote each of the first `n` elements.
        unsafe { out.set_len(n) };
        out
    }
    match op {
        Add => zip(a, b, T::wadd),
        Sub => zip(a, b, T::wsub),
        Mul => zip(a, b, T::wmul),
        Div => zip(a, b, int_div),
        Rem => zip(a, b, int_rem),
        Pow => zip(a, b, T::pow),
        Max => zip(a, b, |x, y| x.max(y)),
        Min => zip(a, b, |x, y| x.min(y)),
        And => zip(a, b, T::and),
        Or => zip(a, b, T::or),
        Xor => zip(a, b, T::xor),
        ShiftLeft => zip(a, b, int_shift_left),
        ShiftRightLogical => zip(a, b, int_shift_right_logical),
        ShiftRightArithmetic => zip(a, b, int_shift_right_arithmetic),
        Atan2 => unreachable!("validation admits atan2 on floats only"),
    }
}

/// An integer op's element loop as a pulp operation: compiled for the best instruction set
/// the machine has (AVX2's per-lane shifts, which SSE2 lacks, so the baseline build shifted
/// one lane at a time) and picked at run time.
struct IntZip<'a, T, F> {
    a: &'a [T],
    b: &'a [T],
    out: &'a mut [std::mem::MaybeUninit<T>],
    f: F,
}

impl<T: Int, F: Fn(T, T) -> T> pulp::WithSimd for IntZip<'_, T, F> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let n = self.a.len().min(self.b.len()).min(self.out.len());
        let (a, b, out) = (&self.a[..n], &self.b[..n], &mut self.out[..n]);
        for i in 0..n {
            out[i].write((self.f)(a[i], b[i]));
        }
    }
}

fn bool_binary(op: BinaryOp, a: &[bool], b: &[bool]) -> Vec<bool> {
    use BinaryOp::*;
    let f: fn(bool, bool) -> bool = match op {
        And => |p, q| p && q,
        Or => |p, q| p || q,
        Xor => |p, q| p ^ q,
        Add | Sub | Mul | Div | Rem | Pow | Max | Min | Atan2 | ShiftLeft | ShiftRightLogical
        | ShiftRightArithmetic => unreachable!("validation admits only and/or/xor on bool"),
    };
    a.iter().zip(b).map(|(p, q)| f(*p, *q)).collect_pooled()
}

/// Applies a binary op to two views of one dtype and length.
pub fn binary(op: BinaryOp, a: View, b: View) -> Storage {
    match (a, b) {
        (View::F32(x), View::F32(y)) => Storage::F32(
            crate::vmath::map_binary(op, x, y).unwrap_or_else(|| float_binary(op, x, y)),
        ),
        (View::F64(x), View::F64(y)) => Storage::F64(float_binary(op, x, y)),
        (View::I32(x), View::I32(y)) => Storage::I32(int_binary(op, x, y)),
        (View::U32(x), View::U32(y)) => Storage::U32(int_binary(op, x, y)),
        (View::Bool(x), View::Bool(y)) => Storage::Bool(bool_binary(op, x, y)),
        _ => unreachable!("validation guarantees matching dtypes"),
    }
}

fn cmp<T: PartialOrd>(dir: CompareDir, a: &[T], b: &[T]) -> Vec<bool> {
    let z = a.iter().zip(b);
    match dir {
        CompareDir::Eq => z.map(|(x, y)| x == y).collect_pooled(),
        CompareDir::Ne => z.map(|(x, y)| x != y).collect_pooled(),
        CompareDir::Lt => z.map(|(x, y)| x < y).collect_pooled(),
        CompareDir::Le => z.map(|(x, y)| x <= y).collect_pooled(),
        CompareDir::Gt => z.map(|(x, y)| x > y).collect_pooled(),
        CompareDir::Ge => z.map(|(x, y)| x >= y).collect_pooled(),
    }
}

pub fn compare(dir: CompareDir, a: View, b: View) -> Storage {
    Storage::Bool(match (a, b) {
        (View::F32(x), View::F32(y)) => cmp(dir, x, y),
        (View::F64(x), View::F64(y)) => cmp(dir, x, y),
        (View::I32(x), View::I32(y)) => cmp(dir, x, y),
        (View::U32(x), View::U32(y)) => cmp(dir, x, y),
        (View::Bool(x), View::Bool(y)) => cmp(dir, x, y),
        _ => unreachable!("validation guarantees matching dtypes"),
    })
}

pub fn select(p: View, t: View, f: View) -> Storage {
    let View::Bool(p) = p else {
        unreachable!("select predicate is bool")
    };
    fn pick<T: crate::pool::Pooled>(p: &[bool], t: &[T], f: &[T]) -> Vec<T> {
        p.iter()
            .zip(t.iter().zip(f))
            .map(|(c, (a, b))| if *c { *a } else { *b })
            .collect_pooled()
    }
    match (t, f) {
        (View::Bool(a), View::Bool(b)) => Storage::Bool(pick(p, a, b)),
        (View::I32(a), View::I32(b)) => Storage::I32(pick(p, a, b)),
        (View::U32(a), View::U32(b)) => Storage::U32(pick(p, a, b)),
        (View::F32(a), View::F32(b)) => Storage::F32(pick(p, a, b)),
        (View::F64(a), View::F64(b)) => Storage::F64(pick(p, a, b)),
        _ => unreachable!("validation guarantees matching dtypes"),
    }
}

/// Value conversion. Float to integer truncates toward zero and saturates; NaN becomes 0;
/// integer to integer wraps (two's complement); anything to bool is `x != 0` (NaN is true).
pub fn convert(x: View, to: DType) -> Storage {
    enum Wide<'a> {
        F(Box<dyn Iterator<Item = f64> + 'a>),
        I(Box<dyn Iterator<Item = i64> + 'a>),
    }
    let wide = match x {
        View::Bool(v) => Wide::I(Box::new(v.iter().map(|b| *b as i64))),
        View::I32(v) => Wide::I(Box::new(v.iter().map(|a| *a as i64))),
        View::U32(v) => Wide::I(Box::new(v.iter().map(|a| *a as i64))),
        View::F32(v) => Wide::F(Box::new(v.iter().map(|a| *a as f64))),
        View::F64(v) => Wide::F(Box::new(v.iter().copied())),
    };
    match (wide, to) {
        (Wide::F(it), DType::F32) => Storage::F32(it.map(|a| a as f32).collect_pooled()),
        (Wide::F(it), DType::F64) => Storage::F64(it.collect_pooled()),
        (Wide::F(it), DType::I32) => Storage::I32(it.map(|a| a as i32).collect_pooled()),
        (Wide::F(it), DType::U32) => Storage::U32(it.map(|a| a as u32).collect_pooled()),
        (Wide::F(it), DType::Bool) => Storage::Bool(it.map(|a| a != 0.0).collect_pooled()),
        (Wide::I(it), DType::F32) => Storage::F32(it.map(|a| a as f32).collect_pooled()),
        (Wide::I(it), DType::F64) => Storage::F64(it.map(|a| a as f64).collect_pooled()),
        (Wide::I(it), DType::I32) => Storage::I32(it.map(|a| a as i32).collect_pooled()),
        (Wide::I(it), DType::U32) => Storage::U32(it.map(|a| a as u32).collect_pooled()),
        (Wide::I(it), DType::Bool) => Storage::Bool(it.map(|a| a != 0).collect_pooled()),
    }
}

/// Reinterprets bits among f32, i32 and u32.
pub fn bitcast(x: View, to: DType) -> Storage {
    let bits: Vec<u32> = match x {
        View::F32(v) => v.iter().map(|a| a.to_bits()).collect_pooled(),
        View::I32(v) => v.iter().map(|a| *a as u32).collect_pooled(),
        View::U32(v) => v.iter().copied().collect_pooled(),
        _ => unreachable!("validation admits 32-bit dtypes only"),
    };
    match to {
        DType::F32 => Storage::F32(bits.into_iter().map(f32::from_bits).collect_pooled()),
        DType::I32 => Storage::I32(bits.into_iter().map(|b| b as i32).collect_pooled()),
        _ => Storage::U32(bits),
    }
}

#[cfg(test)]
mod tests {
    use super::via_f64;
    use quabla_abi::qir::UnaryOp;

    #[test]
    fn acosh_below_one_is_the_one_nan() {
        let f = via_f64(UnaryOp::Acosh).unwrap();
        for x in [0.5, -0.5, -3.0, -6620.0, -1e30, f64::NEG_INFINITY] {
            assert_eq!(f(x).to_bits(), f64::NAN.to_bits(), "acosh({x})");
        }
        assert_eq!(f(1.0).to_bits(), 0);
        assert_eq!(f(2.0), 2f64.acosh());
    }
}
