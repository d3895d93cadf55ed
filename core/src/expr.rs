//! Array maths without a `?` on every step: [`Expr`] carries either an array or the first
//! error of the computation that made it, and its operators and methods pass an error on
//! untouched, so a whole formula needs one `?`, at [`Expr::get`].
//!
//! The array operators themselves return `Result<Array>` (`(&a + &b)?`), and Rust's orphan
//! rule forbids operators between two `Result`s or a `Result` and a number, so a chain of
//! them needs a `?` per step. `Expr` is the crate's own type, so every combination is
//! allowed: an `Expr` with an `Expr`, `&Array`, `Array`, `Result<Array>` or Rust number on
//! its right, and with an array, `f64` or `i32` on its left (as the array operators take
//! numbers). The error is the one the first failing step returned, unchanged; nothing runs
//! after it.
//!
//! A function with several results (an ODE field of a tuple state) returns them all with
//! one `get` of the tuple, array or `Vec` of formulas: [`ExprTree`].

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::{Axes, Operand};
use crate::promotion::Scalar;
use quabla_abi::qir::UnaryOp;

/// An array, or the error of the step that should have made it (see the module docs).
///
/// ```no_run
/// # use quabla::{Array, Expr};
/// let a = Array::from_slice(&[1.0f64, 2.0], &[2])?;
/// let b = Array::from_slice(&[0.5f64, 0.25], &[2])?;
/// // 2a + b / 4 - exp(b), one `?` for the whole formula.
/// let y = (2.0 * a.ex() + b.ex() / 4.0 - b.ex().exp()).get()?;
/// assert_eq!(y.shape(), &[2]);
/// # Ok::<(), quabla::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "an Expr holds its result (or error) until `get` takes it"]
pub struct Expr(Result<Array>);

impl Expr {
    /// The array, or the first error the formula met.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let a = Array::from_slice(&[1.0f64, 4.0], &[2])?;
    /// let y = (a.ex().sqrt() * 2.0).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn get(self) -> Result<Array> {
        self.0
    }

    /// Applies a fallible array function (any method of [`Array`]) unless an error came
    /// first: `e.then(|x| x.sum(Axes::All, false))`.
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let a = Array::from_slice(&[1.0f64, 4.0], &[2])?;
    /// let total = (a.ex() * 2.0).then(|x| x.sum(Axes::All, false)).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn then(self, f: impl FnOnce(&Array) -> Result<Array>) -> Expr {
        Expr(self.0.and_then(|a| f(&a)))
    }

    /// Combines two expressions by a fallible function of both arrays; the left error wins.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let a = Array::from_slice(&[1.0f64, 4.0], &[2])?;
    /// let b = Array::from_slice(&[3.0f64, 2.0], &[2])?;
    /// let hyp = (a.ex() * 1.0).zip(&b, |x, y| x.atan2(y)).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn zip(
        self,
        other: impl Into<Expr>,
        f: impl FnOnce(&Array, &Array) -> Result<Array>,
    ) -> Expr {
        let other = other.into();
        Expr(self.0.and_then(|a| other.0.and_then(|b| f(&a, &b))))
    }

    /// The elementwise primitive `op`, with its method's promotion rules.
    ///
    /// ```no_run
    /// # use quabla::{qir::UnaryOp, Array};
    /// let a = Array::from_slice(&[0.5f64], &[1])?;
    /// let y = a.ex().unary(UnaryOp::Log1p).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn unary(self, op: UnaryOp) -> Expr {
        self.then(|a| a.unary_op(op))
    }

    /// Matrix product with another expression or array.
    ///
    /// ```no_run
    /// # use quabla::{Array, DType};
    /// let a = Array::eye(2, DType::F64)?;
    /// let v = Array::from_slice(&[1.0f64, 2.0], &[2])?;
    /// let y = (a.ex().matmul(&v) + 1.0).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn matmul(self, rhs: impl Into<Expr>) -> Expr {
        self.zip(rhs, Array::matmul)
    }

    /// The transpose of a matrix (axes reversed).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let m = Array::from_slice(&[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?;
    /// let gram = m.ex().matmul(m.t()).get()?; // m mᵀ, 2x2
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn t(self) -> Expr {
        self.then(Array::t)
    }

    /// The sum over `axes`.
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f64, 2.0, 3.0], &[3])?;
    /// let ss = (x.ex() * &x).sum(Axes::All, false).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn sum(self, axes: Axes, keepdims: bool) -> Expr {
        self.then(|a| a.sum(axes, keepdims))
    }

    /// The mean over `axes`.
    ///
    /// ```no_run
    /// # use quabla::{Array, Axes};
    /// let x = Array::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let row_means = (x.ex() * 1.0).mean(Axes::Some(&[1]), false).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn mean(self, axes: Axes, keepdims: bool) -> Expr {
        self.then(|a| a.mean(axes, keepdims))
    }

    /// `self ^ other`, elementwise.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[2.0f64, 3.0], &[2])?;
    /// let cubes = x.ex().pow(&Array::scalar(3.0f64)?).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn pow(self, other: impl Into<Expr>) -> Expr {
        self.zip(other, |a, b| a.pow(b))
    }

    /// Elementwise maximum (NaN propagates).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[-1.0f64, 3.0], &[2])?;
    /// let relu = x.ex().maximum(x.zeros_like()?).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn maximum(self, other: impl Into<Expr>) -> Expr {
        self.zip(other, |a, b| a.maximum(b))
    }

    /// Elementwise minimum (NaN propagates).
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[-1.0f64, 3.0], &[2])?;
    /// let capped = x.ex().minimum(x.ones_like()?).get()?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn minimum(self, other: impl Into<Expr>) -> Expr {
        self.zip(other, |a, b| a.minimum(b))
    }
}

macro_rules! expr_unary_methods {
    ($($name:ident),* $(,)?) => {
        impl Expr {
            $(
                #[doc = concat!("[`Array::", stringify!($name), "`], unless an error came first.")]
                #[doc = ""]
                #[doc = "```no_run"]
                #[doc = "let x = quabla::Array::from_slice(&[0.25f32, 0.5], &[2])?;"]
                #[doc = concat!("let y = (x.ex().", stringify!($name), "() * 2.0).get()?;")]
                #[doc = "# Ok::<(), quabla::Error>(())"]
                #[doc = "```"]
                pub fn $name(self) -> Expr {
                    self.then(Array::$name)
                }
            )*
        }
    };
}
expr_unary_methods!(
    abs, sign, floor, ceil, round, exp, exp2, expm1, log, log1p, sqrt, rsqrt, cbrt, sin, cos, tan,
    asin, acos, atan, sinh, cosh, tanh, asinh, acosh, atanh, erf, erfc, logistic,
);

impl Array {
    /// This array as an [`Expr`], to write a formula with one `?` at the end.
    ///
    /// ```no_run
    /// # use quabla::Array;
    /// let x = Array::from_slice(&[3.0f32], &[1])?;
    /// assert_eq!((x.ex() * x.ex() - 1.0).get()?.to_vec::<f32>()?, vec![8.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn ex(&self) -> Expr {
        Expr(Ok(self.clone()))
    }
}

impl From<Array> for Expr {
    fn from(a: Array) -> Expr {
        Expr(Ok(a))
    }
}

impl From<&Array> for Expr {
    fn from(a: &Array) -> Expr {
        a.ex()
    }
}

impl From<Result<Array>> for Expr {
    fn from(r: Result<Array>) -> Expr {
        Expr(r)
    }
}

impl From<Expr> for Result<Array> {
    fn from(e: Expr) -> Result<Array> {
        e.0
    }
}

impl From<Error> for Expr {
    fn from(e: Error) -> Expr {
        Expr(Err(e))
    }
}

/// A tree of expressions resolved at once: a tuple, `[T; N]` or `Vec` of [`Expr`]s (nested,
/// with plain [`Array`]s or `Result<Array>`s among them) becomes the same tree of arrays by
/// one `get`, so a function returning several formulas, such as an ODE's field, needs no
/// `?` per result.
///
/// ```no_run
/// use quabla::{Array, ExprTree, Result};
/// // The predator-prey field, `(x', z')`, one `get` for both formulas.
/// fn field((x, z): &(Array, Array)) -> Result<(Array, Array)> {
///     (x * (1.5 - z.ex()), z * (x.ex() - 3.0)).get()
/// }
/// let (x, z) = (Array::scalar(10.0f64)?, Array::scalar(1.0f64)?);
/// let (dx, dz) = field(&(x, z))?;
/// assert_eq!((dx.item::<f64>()?, dz.item::<f64>()?), (5.0, 7.0));
/// # Ok::<(), quabla::Error>(())
/// ```
pub trait ExprTree {
    /// The same tree with an [`Array`] for each expression.
    type Arrays;

    /// The arrays, or the first error met in the tree's order (left to right, depth first).
    ///
    /// ```no_run
    /// use quabla::{Array, ExprTree};
    /// let x = Array::from_slice(&[1.0f64, 2.0], &[2])?;
    /// let [double, square] = [x.ex() * 2.0, x.ex() * &x].get()?;
    /// assert_eq!(square.to_vec::<f64>()?, vec![1.0, 4.0]);
    /// # Ok::<(), quabla::Error>(())
    /// ```
    fn get(self) -> Result<Self::Arrays>;
}

impl ExprTree for Expr {
    type Arrays = Array;
    fn get(self) -> Result<Array> {
        self.0
    }
}

impl ExprTree for Array {
    type Arrays = Array;
    fn get(self) -> Result<Array> {
        Ok(self)
    }
}

impl ExprTree for Result<Array> {
    type Arrays = Array;
    fn get(self) -> Result<Array> {
        self
    }
}

impl<T: ExprTree> ExprTree for Vec<T> {
    type Arrays = Vec<T::Arrays>;
    fn get(self) -> Result<Self::Arrays> {
        self.into_iter().map(T::get).collect()
    }
}

impl<T: ExprTree, const N: usize> ExprTree for [T; N] {
    type Arrays = [T::Arrays; N];
    fn get(self) -> Result<Self::Arrays> {
        let arrays = self.into_iter().map(T::get).collect::<Result<Vec<_>>>()?;
        // `N` items in, `N` out: the conversion cannot fail, but a typed error beats a panic.
        arrays
            .try_into()
            .map_err(|_| Error::internal("an array of expressions changed length"))
    }
}

macro_rules! tuple_expr_tree {
    ($($name:ident . $i:tt),+) => {
        impl<$($name: ExprTree),+> ExprTree for ($($name,)+) {
            type Arrays = ($($name::Arrays,)+);
            fn get(self) -> Result<Self::Arrays> {
                Ok(($(self.$i.get()?,)+))
            }
        }
    };
}
for_each_tuple_arity!(tuple_expr_tree);

/// What an [`Expr`] operator takes on its right: another expression or anything that
/// makes one (arrays, results), or a weakly typed Rust number. One trait, so a bare literal
/// (`e * 2.0`) picks its type by the usual fallback instead of matching several impls.
pub trait ExprOperand {
    #[doc(hidden)]
    fn into_operand(self) -> Rhs;
}

#[doc(hidden)]
pub enum Rhs {
    Expr(Expr),
    Scalar(Scalar),
}

impl<T: Into<Expr>> ExprOperand for T {
    fn into_operand(self) -> Rhs {
        Rhs::Expr(self.into())
    }
}

macro_rules! scalar_operands {
    ($($t:ty),*) => {$(
        impl ExprOperand for $t {
            fn into_operand(self) -> Rhs {
                Rhs::Scalar(Scalar::from(self))
            }
        }
    )*};
}
scalar_operands!(f64, f32, i32, i64, u32, bool);

/// `Expr op rhs` for every [`ExprOperand`], and `array op Expr` for owned and borrowed
/// arrays on the left.
macro_rules! expr_operators {
    ($(($trait:ident, $method:ident)),* $(,)?) => {$(
        impl<R: ExprOperand> std::ops::$trait<R> for Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                match rhs.into_operand() {
                    Rhs::Expr(e) => self.zip(e, |a, b| std::ops::$trait::$method(a, b)),
                    Rhs::Scalar(s) => {
                        self.then(|a| std::ops::$trait::$method(a, Operand::Scalar(s)))
                    }
                }
            }
        }
        impl std::ops::$trait<Expr> for &Array {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                self.ex().zip(rhs, |a, b| std::ops::$trait::$method(a, b))
            }
        }
        impl std::ops::$trait<Expr> for Array {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                Expr::from(self).zip(rhs, |a, b| std::ops::$trait::$method(a, b))
            }
        }
    )*};
}
expr_operators!((Add, add), (Sub, sub), (Mul, mul), (Div, div), (Rem, rem));

/// A Rust number on the left of an expression: the same promotion as on the right (a weak
/// scalar), so `2.0 * f32_expr` stays f32.
macro_rules! scalar_lhs_operators {
    ($(($trait:ident, $method:ident)),* $(,)?) => {$(
        scalar_lhs_operators!(@one $trait, $method, f64);
        scalar_lhs_operators!(@one $trait, $method, i32);
    )*};
    (@one $trait:ident, $method:ident, $t:ty) => {
        impl std::ops::$trait<Expr> for $t {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                rhs.then(|a| std::ops::$trait::$method(self, a))
            }
        }
    };
}
scalar_lhs_operators!((Add, add), (Sub, sub), (Mul, mul), (Div, div), (Rem, rem));

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        self.then(Array::neg)
    }
}

#[cfg(test)]
mod tests {
    use super::Expr;

    #[test]
    fn the_left_error_wins() {
        // Arrays need a backend; the integration tests (`tests/expr.rs`) check formulas.
        let left = Expr::from(crate::Error::value("first"));
        let e = (left + Expr::from(crate::Error::value("second")))
            .get()
            .unwrap_err();
        assert!(e.to_string().contains("first"), "{e}");
        let e = (Expr::from(crate::Error::value("only")) * 2.0)
            .get()
            .unwrap_err();
        assert!(e.to_string().contains("only"), "{e}");
    }
}
