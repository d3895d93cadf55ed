//! Elementwise ops: numpy broadcasting, JAX dtype promotion with weak Rust scalars, and the
//! arithmetic operators (which return `Result<Array>`, so `(&a + &b)?` reads naturally).

use super::creation::filled;
use super::{apply1, constant_like};
use crate::array::Array;
use crate::error::Result;
use crate::promotion::{promote_types, Scalar};
use quabla_abi::qir::{BinaryOp, CompareDir, Op, UnaryOp};
use quabla_abi::{DType, TensorType};

/// The right-hand side of a binary op: an array or a weakly typed scalar.
pub enum Operand<'a> {
    Array(&'a Array),
    Scalar(Scalar),
}

impl<'a> From<&'a Array> for Operand<'a> {
    fn from(a: &'a Array) -> Self {
        Operand::Array(a)
    }
}

macro_rules! operand_from_scalar {
    ($($t:ty),*) => {$(
        impl From<$t> for Operand<'_> {
            fn from(x: $t) -> Self { Operand::Scalar(Scalar::from(x)) }
        }
    )*};
}
operand_from_scalar!(f64, f32, i32, i64, u32, bool);

/// The numpy broadcast of two shapes.
pub(crate) fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let x = if i < n - a.len() {
            1
        } else {
            a[i - (n - a.len())]
        };
        let y = if i < n - b.len() {
            1
        } else {
            b[i - (n - b.len())]
        };
        out[i] = match (x, y) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => {
                return Err(crate::Error::shape(format!(
                    "shapes {a:?} and {b:?} do not broadcast (dimension {i}: {x} vs {y})"
                )))
            }
        };
    }
    Ok(out)
}

impl Array {
    /// Converts to `dtype` (no-op when it already is). See the CPU backend docs for the rules
    /// (float to int truncates and saturates, NaN becomes 0).
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// let x = Array::from_slice(&[1.7f32, -2.5, f32::NAN], &[3])?;
    /// assert_eq!(x.astype(DType::I32)?.to_vec::<i32>()?, [1, -2, 0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn astype(&self, dtype: DType) -> Result<Array> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        apply1(
            Op::Convert,
            &[self],
            vec![TensorType::new(dtype, self.shape().to_vec())],
        )
    }

    /// Reinterprets the bits as another 32-bit dtype.
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// let one = Array::from_slice(&[1.0f32], &[1])?;
    /// assert_eq!(one.bitcast(DType::U32)?.to_vec::<u32>()?, [0x3f80_0000]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn bitcast(&self, dtype: DType) -> Result<Array> {
        apply1(
            Op::Bitcast,
            &[self],
            vec![TensorType::new(dtype, self.shape().to_vec())],
        )
    }

    /// Broadcasts to `shape` following numpy's rules.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let row = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// assert_eq!(row.broadcast_to(&[2, 3])?.shape(), &[2, 3]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Array> {
        if self.shape() == shape {
            return Ok(self.clone());
        }
        let target = broadcast_shapes(self.shape(), shape)?;
        if target != shape {
            return Err(crate::Error::shape(format!(
                "cannot broadcast {:?} to {shape:?}",
                self.shape()
            )));
        }
        let offset = shape.len() - self.ndim();
        self.broadcast_in_dim(shape, &(offset..shape.len()).collect::<Vec<_>>())
    }

    /// Operand dim `i` becomes result dim `dims[i]` (size-1 dims may stretch).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// // A column: operand dim 0 becomes result dim 0 of a 3x4 array.
    /// let col = Array::from_slice(&[1.0f32, 2.0, 3.0], &[3])?;
    /// assert_eq!(col.broadcast_in_dim(&[3, 4], &[0])?.shape(), &[3, 4]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn broadcast_in_dim(&self, shape: &[usize], dims: &[usize]) -> Result<Array> {
        apply1(
            Op::BroadcastInDim {
                dims: dims.to_vec(),
            },
            &[self],
            vec![TensorType::new(self.dtype(), shape.to_vec())],
        )
    }

    /// Both operands at one dtype and one broadcast shape.
    fn promote_with(&self, other: Operand) -> Result<(Array, Array)> {
        let (a, b) = match other {
            Operand::Array(b) => {
                let d = promote_types(self.dtype(), b.dtype());
                (self.astype(d)?, b.astype(d)?)
            }
            Operand::Scalar(s) => {
                let d = s.weak_dtype(self.dtype());
                (self.astype(d)?, constant_like(self, filled(d, &[], s))?)
            }
        };
        let shape = broadcast_shapes(a.shape(), b.shape())?;
        Ok((a.broadcast_to(&shape)?, b.broadcast_to(&shape)?))
    }

    pub(crate) fn binary<'a>(&self, op: BinaryOp, other: impl Into<Operand<'a>>) -> Result<Array> {
        let (a, b) = self.promote_with(other.into())?;
        apply1(Op::Binary(op), &[&a, &b], vec![])
    }

    fn compare<'a>(&self, dir: CompareDir, other: impl Into<Operand<'a>>) -> Result<Array> {
        let (a, b) = self.promote_with(other.into())?;
        apply1(Op::Compare(dir), &[&a, &b], vec![])
    }

    /// Elementwise `self` where `pred` is true, else `other` (broadcast and promoted).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[-1.0f32, 2.0], &[2]).unwrap();
    /// let relu = x.gt(0.0).unwrap().select(&x, 0.0).unwrap();
    /// ```
    pub fn select<'a>(&self, on_true: &Array, on_false: impl Into<Operand<'a>>) -> Result<Array> {
        if self.dtype() != DType::Bool {
            return Err(crate::Error::dtype(format!(
                "select needs a bool predicate, got {}",
                self.dtype()
            )));
        }
        let (t, f) = on_true.promote_with(on_false.into())?;
        let shape = broadcast_shapes(self.shape(), t.shape())?;
        let (p, t, f) = (
            self.broadcast_to(&shape)?,
            t.broadcast_to(&shape)?,
            f.broadcast_to(&shape)?,
        );
        apply1(Op::Select, &[&p, &t, &f], vec![])
    }

    fn unary(&self, op: UnaryOp) -> Result<Array> {
        apply1(Op::Unary(op), &[self], vec![])
    }

    /// Unary float functions promote integer and bool inputs to f32, as jnp does.
    fn float_unary(&self, op: UnaryOp) -> Result<Array> {
        let x = if self.dtype().is_float() {
            self.clone()
        } else {
            self.astype(DType::F32)?
        };
        x.unary(op)
    }

    /// The elementwise primitive `op` with the rules of its named method (`sin`, `is_finite`,
    /// ...): float-only functions promote integer and bool input to f32, `is_finite` of an
    /// integer is `true`. For front ends that dispatch by name through the op-spec table
    /// (`OpKind::from_name`).
    ///
    /// ```no_run
    /// # use quabla::{qir::{OpKind, UnaryOp}, Array};
    /// let x = Array::from_slice(&[0.5f32], &[1])?;
    /// let Some(OpKind::Unary(op)) = OpKind::from_name("tanh") else { unreachable!() };
    /// assert_eq!(x.unary_op(op)?.to_vec::<f32>()?, x.tanh()?.to_vec::<f32>()?);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn unary_op(&self, op: UnaryOp) -> Result<Array> {
        match op {
            UnaryOp::IsFinite => self.is_finite(),
            quabla_abi::float_only_unary!() => self.float_unary(op),
            UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Not => self.unary(op),
        }
    }

    /// `x != x`-free NaN/inf test (`false` for integers).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, f32::INFINITY, f32::NAN], &[3])?;
    /// assert_eq!(x.is_finite()?.to_vec::<bool>()?, [true, false, false]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn is_finite(&self) -> Result<Array> {
        if !self.dtype().is_float() {
            return crate::ops::creation::full_like(self, true);
        }
        self.unary(UnaryOp::IsFinite)
    }

    /// Logical not for bool, bitwise not for integers.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let m = Array::from_slice(&[true, false], &[2])?;
    /// assert_eq!(m.logical_not()?.to_vec::<bool>()?, [false, true]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn logical_not(&self) -> Result<Array> {
        self.unary(UnaryOp::Not)
    }

    /// `-x` (wrapping for integers).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[1.0f32, -2.0], &[2])?;
    /// assert_eq!(x.neg()?.to_vec::<f32>()?, [-1.0, 2.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn neg(&self) -> Result<Array> {
        self.unary(UnaryOp::Neg)
    }

    /// `|x|`. Its derivative at 0 (and -0) is +1, as JAX's.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[-1.5f32, 2.0], &[2])?;
    /// assert_eq!(x.abs()?.to_vec::<f32>()?, [1.5, 2.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn abs(&self) -> Result<Array> {
        self.unary(UnaryOp::Abs)
    }

    /// -1, 0 or 1; keeps the sign of zero (`sign(-0) = -0`) and NaN, as JAX does.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[-3.0f32, 0.0, 2.0], &[3])?;
    /// assert_eq!(x.sign()?.to_vec::<f32>()?, [-1.0, 0.0, 1.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn sign(&self) -> Result<Array> {
        self.unary(UnaryOp::Sign)
    }
}

macro_rules! float_unary_methods {
    ($($name:ident => $op:ident: $doc:literal),* $(,)?) => {
        impl Array {
            $(
                #[doc = $doc]
                #[doc = ""]
                #[doc = "```no_run"]
                #[doc = "let x = quabla::Array::from_slice(&[0.25f32, 0.5], &[2])?;"]
                #[doc = concat!("let y = x.", stringify!($name), "()?;")]
                #[doc = "# Ok::<(), quabla::Error>(())"]
                #[doc = "```"]
                pub fn $name(&self) -> Result<Array> {
                    self.float_unary(UnaryOp::$op)
                }
            )*
        }
    };
}
float_unary_methods!(
    floor => Floor: "Rounds toward -inf.",
    ceil => Ceil: "Rounds toward +inf.",
    round => Round: "Rounds half to even (`round(2.5) = 2`, `round(-0.4) = -0`).",
    exp => Exp: "e^x.",
    exp2 => Exp2: "2^x.",
    expm1 => Expm1: "e^x - 1, accurate near 0.",
    log => Log: "Natural log (NaN below 0, -inf at 0).",
    log1p => Log1p: "log(1 + x), accurate near 0.",
    sqrt => Sqrt: "Square root, correctly rounded (`sqrt(-0) = -0`).",
    rsqrt => Rsqrt: "1 / sqrt(x).",
    cbrt => Cbrt: "Cube root.",
    sin => Sin: "Sine.",
    cos => Cos: "Cosine.",
    tan => Tan: "Tangent.",
    asin => Asin: "Arcsine.",
    acos => Acos: "Arccosine.",
    atan => Atan: "Arctangent.",
    sinh => Sinh: "Hyperbolic sine.",
    cosh => Cosh: "Hyperbolic cosine (finite at 710 although exp(710) overflows).",
    tanh => Tanh: "Hyperbolic tangent.",
    asinh => Asinh: "Inverse hyperbolic sine.",
    acosh => Acosh: "Inverse hyperbolic cosine.",
    atanh => Atanh: "Inverse hyperbolic tangent.",
    erf => Erf: "Error function.",
    erfc => Erfc: "Complementary error function.",
    erf_inv => ErfInv: "Inverse error function on [-1, 1] (`±1` give `±inf`, NaN outside), by XLA's polynomials: on the CPU backend the bits of JAX's `lax.erf_inv`.",
    logistic => Logistic: "The logistic sigmoid 1 / (1 + e^-x).",
);

macro_rules! binary_methods {
    ($($name:ident => $op:ident: $doc:literal),* $(,)?) => {
        impl Array {
            $(
                #[doc = $doc]
                #[doc = ""]
                #[doc = "```no_run"]
                #[doc = "let a = quabla::Array::from_slice(&[6i32, 12], &[2])?;"]
                #[doc = "let b = quabla::Array::from_slice(&[1i32, 3], &[2])?;"]
                #[doc = concat!("let c = a.", stringify!($name), "(&b)?;")]
                #[doc = concat!("let d = a.", stringify!($name), "(2)?; // a Rust number on the right")]
                #[doc = "# Ok::<(), quabla::Error>(())"]
                #[doc = "```"]
                pub fn $name<'a>(&self, other: impl Into<Operand<'a>>) -> Result<Array> {
                    self.binary(BinaryOp::$op, other)
                }
            )*
        }
    };
}
binary_methods!(
    add => Add: "`self + other` with broadcasting and promotion.",
    sub => Sub: "`self - other`.",
    mul => Mul: "`self * other`.",
    div_promoted => Div: "`self / other` in the promoted dtype (integer division truncates; `x / 0` is -1 for integers).",
    rem => Rem: "Remainder with the sign of the dividend (C `fmod`).",
    pow => Pow: "`self ^ other`.",
    maximum => Max: "Elementwise maximum; NaN propagates.",
    minimum => Min: "Elementwise minimum; NaN propagates.",
    bitwise_and => And: "Logical/bitwise and.",
    bitwise_or => Or: "Logical/bitwise or.",
    bitwise_xor => Xor: "Logical/bitwise xor.",
    shift_left => ShiftLeft: "Integer shift left (amounts >= 32 give 0).",
    shift_right_logical => ShiftRightLogical: "Integer logical shift right.",
    shift_right_arithmetic => ShiftRightArithmetic: "Integer arithmetic shift right.",
);

impl Array {
    /// True division: integer and bool operands are promoted to f32 first, as jnp's `/`.
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// let n = Array::from_slice(&[1i32, 3], &[2])?;
    /// let q = n.div(2)?; // f32, as jnp's `/`
    /// assert_eq!((q.dtype(), q.to_vec::<f32>()?), (DType::F32, vec![0.5, 1.5]));
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn div<'a>(&self, other: impl Into<Operand<'a>>) -> Result<Array> {
        let other = other.into();
        let int_only = !self.dtype().is_float()
            && match &other {
                Operand::Array(b) => !b.dtype().is_float(),
                Operand::Scalar(s) => !matches!(s, Scalar::Float(_)),
            };
        if int_only {
            return self.astype(DType::F32)?.binary(BinaryOp::Div, other);
        }
        self.binary(BinaryOp::Div, other)
    }

    /// Four-quadrant arctangent of `self / other`.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let y = Array::from_slice(&[1.0f64], &[1])?;
    /// let x = Array::from_slice(&[-1.0f64], &[1])?;
    /// let angle = y.atan2(&x)?; // 3π/4
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn atan2<'a>(&self, other: impl Into<Operand<'a>>) -> Result<Array> {
        let x = if self.dtype().is_float() {
            self.clone()
        } else {
            self.astype(DType::F32)?
        };
        x.binary(BinaryOp::Atan2, other)
    }
}

macro_rules! compare_methods {
    ($($name:ident => $dir:ident),* $(,)?) => {
        impl Array {
            $(
                #[doc = concat!("Elementwise `", stringify!($name), "` comparison, giving a bool array (IEEE: NaN compares unequal).")]
                #[doc = ""]
                #[doc = "```no_run"]
                #[doc = "let x = quabla::Array::from_slice(&[0.5f32, 2.0], &[2])?;"]
                #[doc = concat!("let mask = x.", stringify!($name), "(1.0)?;")]
                #[doc = "# Ok::<(), quabla::Error>(())"]
                #[doc = "```"]
                pub fn $name<'a>(&self, other: impl Into<Operand<'a>>) -> Result<Array> {
                    self.compare(CompareDir::$dir, other)
                }
            )*
        }
    };
}
compare_methods!(eq => Eq, ne => Ne, lt => Lt, le => Le, gt => Gt, ge => Ge);

macro_rules! operator {
    ($trait:ident, $method:ident, $call:ident) => {
        impl<'a, R: Into<Operand<'a>>> std::ops::$trait<R> for &Array {
            type Output = Result<Array>;
            fn $method(self, rhs: R) -> Result<Array> {
                self.$call(rhs)
            }
        }
        impl<'a, R: Into<Operand<'a>>> std::ops::$trait<R> for Array {
            type Output = Result<Array>;
            fn $method(self, rhs: R) -> Result<Array> {
                (&self).$call(rhs)
            }
        }
    };
}
operator!(Add, add, add);
operator!(Sub, sub, sub);
operator!(Mul, mul, mul);
operator!(Div, div, div);
operator!(Rem, rem, rem);

/// `x op y` for an owned right-hand array (`a + b`, `&a * b`), and a weakly typed Rust
/// scalar on the left (`2.0 * &x`, `1 - x`): the same promotion as with the scalar on the
/// right, so `2.0 * f32_array` stays f32. Only `f64` and `i32` go on the left: with more,
/// a bare literal (`2.0 * &x`) would match several impls and need a type annotation.
macro_rules! owned_and_scalar_lhs_operators {
    ($(($trait:ident, $method:ident, $call:ident)),*) => {$(
        impl std::ops::$trait<Array> for &Array {
            type Output = Result<Array>;
            fn $method(self, rhs: Array) -> Result<Array> {
                self.$call(&rhs)
            }
        }
        impl std::ops::$trait<Array> for Array {
            type Output = Result<Array>;
            fn $method(self, rhs: Array) -> Result<Array> {
                self.$call(&rhs)
            }
        }
        owned_and_scalar_lhs_operators!(@scalars $trait, $method, $call, f64, i32);
    )*};
    (@scalars $trait:ident, $method:ident, $call:ident, $($t:ty),*) => {$(
        impl std::ops::$trait<&Array> for $t {
            type Output = Result<Array>;
            fn $method(self, rhs: &Array) -> Result<Array> {
                scalar_lhs(Scalar::from(self), rhs)?.$call(rhs)
            }
        }
        impl std::ops::$trait<Array> for $t {
            type Output = Result<Array>;
            fn $method(self, rhs: Array) -> Result<Array> {
                scalar_lhs(Scalar::from(self), &rhs)?.$call(&rhs)
            }
        }
    )*};
}
owned_and_scalar_lhs_operators!(
    (Add, add, add),
    (Sub, sub, sub),
    (Mul, mul, mul),
    (Div, div, div),
    (Rem, rem, rem)
);

/// A scalar on the left of `x`, at the dtype it would take on the right (a 0-d array that
/// broadcasts).
fn scalar_lhs(s: Scalar, x: &Array) -> Result<Array> {
    constant_like(x, filled(s.weak_dtype(x.dtype()), &[], s))
}

impl std::ops::Neg for &Array {
    type Output = Result<Array>;
    fn neg(self) -> Result<Array> {
        Array::neg(self)
    }
}

impl std::ops::Neg for Array {
    type Output = Result<Array>;
    fn neg(self) -> Result<Array> {
        Array::neg(&self)
    }
}

// ---- AD rules -------------------------------------------------------------------------

use crate::ad::rules::{no_rule, JvpArgs, Primal, TransposeArgs};

/// `c / y` elementwise.
fn rdiv(c: f64, y: &Array) -> Result<Array> {
    y.full_like(c)? / y
}

/// `1 - a`.
fn one_minus(a: &Array) -> Result<Array> {
    a.neg()? + 1.0
}

fn unary_jvp(u: UnaryOp, x: &Array, y: &Array, t: &Array) -> Result<Option<Array>> {
    use UnaryOp::*;
    let two_over_sqrt_pi = std::f64::consts::FRAC_2_SQRT_PI;
    let coef = match u {
        Neg => return Ok(Some(t.neg()?)),
        // d|x| = +1 at 0 and -0 (x >= 0 holds for -0), -1 below; NaN gives -t.
        Abs => return Ok(Some(x.ge(0.0)?.select(t, &t.neg()?)?)),
        Sign | Floor | Ceil | Round | IsFinite | Not => return Ok(None),
        Log => return Ok(Some((t / x)?)),
        Log1p => return Ok(Some((t / &(x + 1.0)?)?)),
        Exp => y.clone(),
        Exp2 => (y * std::f64::consts::LN_2)?,
        Expm1 => (y + 1.0)?,
        Sqrt => rdiv(0.5, y)?,
        Rsqrt => ((y / x)? * -0.5)?,
        Cbrt => rdiv(1.0 / 3.0, &(y * y)?)?,
        Sin => x.cos()?,
        Cos => x.sin()?.neg()?,
        Tan => ((y * y)? + 1.0)?,
        Asin => one_minus(&(x * x)?)?.rsqrt()?,
        Acos => one_minus(&(x * x)?)?.rsqrt()?.neg()?,
        Atan => rdiv(1.0, &((x * x)? + 1.0)?)?,
        Sinh => x.cosh()?,
        Cosh => x.sinh()?,
        Tanh => one_minus(&(y * y)?)?,
        Asinh => ((x * x)? + 1.0)?.rsqrt()?,
        Acosh => ((x - 1.0)? * &(x + 1.0)?)?.rsqrt()?,
        Atanh => rdiv(1.0, &(one_minus(x)? * &(x + 1.0)?)?)?,
        Erf => ((x * x)?.neg()?.exp()? * two_over_sqrt_pi)?,
        Erfc => ((x * x)?.neg()?.exp()? * -two_over_sqrt_pi)?,
        // d erfinv(x) = sqrt(pi) / 2 exp(erfinv(x)^2), from the output as JAX's rule.
        ErfInv => ((y * y)?.exp()? * (1.0 / two_over_sqrt_pi))?,
        Logistic => (y * &one_minus(y)?)?,
    };
    Ok(Some((t * &coef)?))
}

/// 1 where `first` holds, 0.5 where `tie` holds, else 0: how max/min share a tangent.
fn share(first: &Array, tie: &Array, like: &Array) -> Result<Array> {
    let half = tie.select(&like.full_like(0.5)?, 0.0)?;
    first.select(&like.ones_like()?, &half)
}

fn sum_terms(terms: Vec<Option<Array>>) -> Result<Option<Array>> {
    let mut acc: Option<Array> = None;
    for t in terms.into_iter().flatten() {
        acc = Some(match acc {
            Some(a) => (&a + &t)?,
            None => t,
        });
    }
    Ok(acc)
}

fn times(t: &Option<Array>, coef: impl FnOnce() -> Result<Array>) -> Result<Option<Array>> {
    match t {
        Some(t) => Ok(Some((t * &coef()?)?)),
        None => Ok(None),
    }
}

fn binary_jvp(
    op: BinaryOp,
    a: &Array,
    b: &Array,
    y: &Array,
    ta: &Option<Array>,
    tb: &Option<Array>,
) -> Result<Option<Array>> {
    use BinaryOp::*;
    let neg = |t: &Option<Array>| t.as_ref().map(|t| t.neg()).transpose();
    let terms = match op {
        Add => vec![ta.clone(), tb.clone()],
        Sub => vec![ta.clone(), neg(tb)?],
        Mul => vec![times(ta, || Ok(b.clone()))?, times(tb, || Ok(a.clone()))?],
        Div => vec![
            ta.as_ref().map(|t| t / b).transpose()?,
            times(tb, || (y / b)?.neg())?,
        ],
        // rem(a, b) = a - b * trunc(a / b).
        Rem => vec![
            ta.clone(),
            times(tb, || {
                let q = (a / b)?;
                (q.sign()? * &q.abs()?.floor()?)?.neg()
            })?,
        ],
        Pow => vec![
            times(ta, || b * &a.pow(&(b - 1.0)?)?)?,
            // d/db a^b = log(a) a^b, taken as 0 at a = 0 (as JAX).
            times(tb, || a.eq(0.0)?.select(&a.ones_like()?, a)?.log()? * y)?,
        ],
        Max => vec![
            times(ta, || share(&a.gt(b)?, &a.eq(b)?, a))?,
            times(tb, || share(&b.gt(a)?, &a.eq(b)?, a))?,
        ],
        Min => vec![
            times(ta, || share(&a.lt(b)?, &a.eq(b)?, a))?,
            times(tb, || share(&b.lt(a)?, &a.eq(b)?, a))?,
        ],
        Atan2 => {
            let d = ((a * a)? + &(b * b)?)?;
            vec![times(ta, || b / &d)?, times(tb, || (a / &d)?.neg())?]
        }
        And | Or | Xor | ShiftLeft | ShiftRightLogical | ShiftRightArithmetic => vec![],
    };
    sum_terms(terms)
}

pub(crate) fn jvp(a: &JvpArgs) -> Result<Vec<Option<Array>>> {
    let p = a.primals;
    let t = a.tangents;
    let out = match &a.node.op {
        Op::Unary(u) => match &t[0] {
            Some(tx) => unary_jvp(*u, &p[0], &a.outs[0], tx)?,
            None => None,
        },
        Op::Binary(b) => binary_jvp(*b, &p[0], &p[1], &a.outs[0], &t[0], &t[1])?,
        Op::Compare(_) | Op::Bitcast => None,
        Op::Select => {
            if t[1].is_none() && t[2].is_none() {
                None
            } else {
                let on_true = t[1].clone().map(Ok).unwrap_or_else(|| p[1].zeros_like())?;
                let on_false = t[2].clone().map(Ok).unwrap_or_else(|| p[2].zeros_like())?;
                Some(p[0].select(&on_true, &on_false)?)
            }
        }
        Op::Convert => match &t[0] {
            Some(tx) if a.outs[0].dtype().is_float() => Some(tx.astype(a.outs[0].dtype())?),
            _ => None,
        },
        op => return no_rule("jvp", op),
    };
    Ok(vec![out])
}

pub(crate) fn transpose(a: &TransposeArgs) -> Result<Vec<Option<Array>>> {
    let Some(ct) = &a.cts[0] else {
        return Ok(vec![None; a.operands.len()]);
    };
    let ops = a.operands;
    let name = a.node.op.name();
    Ok(match &a.node.op {
        Op::Unary(UnaryOp::Neg) => vec![Some(ct.neg()?)],
        Op::Binary(BinaryOp::Add) => vec![Some(ct.clone()), Some(ct.clone())],
        Op::Binary(BinaryOp::Sub) => vec![Some(ct.clone()), Some(ct.neg()?)],
        Op::Binary(BinaryOp::Mul) => match (&ops[0], &ops[1]) {
            (Primal::Linear(_), k) => vec![Some((ct * k.known(name)?)?), None],
            (k, Primal::Linear(_)) => vec![None, Some((k.known(name)? * ct)?)],
            _ => vec![None, None],
        },
        Op::Binary(BinaryOp::Div) => vec![Some((ct / ops[1].known(name)?)?), None],
        Op::Select => {
            let p = ops[0].known(name)?;
            vec![
                None,
                Some(p.select(ct, 0.0)?),
                Some(p.logical_not()?.select(ct, 0.0)?),
            ]
        }
        Op::Convert => vec![Some(ct.astype(ops[0].ty().dtype)?)],
        op => return no_rule("transpose", op),
    })
}

/// Elementwise ops batch by giving every operand the batch axis.
pub(crate) fn batch(a: &crate::batching::BatchArgs) -> Result<Vec<(Array, bool)>> {
    let args: Vec<Array> = (0..a.args.len())
        .map(|i| a.batched_arg(i))
        .collect::<Result<_>>()?;
    let refs: Vec<&Array> = args.iter().collect();
    let out = apply1(a.node.op.clone(), &refs, vec![a.result_type(0)])?;
    Ok(vec![(out, true)])
}
