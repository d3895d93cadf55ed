//! dtype promotion, following JAX: `bool < {u32, i32} < f32 < f64`, with Rust scalars weakly
//! typed (a float scalar takes a float array's dtype, so f32 arrays stay f32).
//!
//! | a \ b | bool | i32 | u32 | f32 | f64 |
//! |-------|------|-----|-----|-----|-----|
//! | bool  | bool | i32 | u32 | f32 | f64 |
//! | i32   | i32  | i32 | i32 | f32 | f64 |
//! | u32   | u32  | i32 | u32 | f32 | f64 |
//! | f32   | f32  | f32 | f32 | f32 | f64 |
//! | f64   | f64  | f64 | f64 | f64 | f64 |
//!
//! `i32 + u32` is `i32`: JAX promotes to int64 and, without 64-bit types, narrows to int32.

use quabla_abi::DType;

/// The common dtype of two strongly typed operands.
///
/// ```
/// use quabla::{promote_types, DType};
/// assert_eq!(promote_types(DType::I32, DType::F32), DType::F32);
/// assert_eq!(promote_types(DType::Bool, DType::U32), DType::U32);
/// ```
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    match (a, b) {
        (F64, _) | (_, F64) => F64,
        (F32, _) | (_, F32) => F32,
        (I32, _) | (_, I32) => I32,
        (U32, _) | (_, U32) => U32,
        _ => Bool,
    }
}

/// The kind of a weakly typed Rust scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Float(f64),
    Int(i64),
    Bool(bool),
}

impl Scalar {
    /// The dtype this scalar takes next to an array of dtype `other`: it adopts the array's
    /// dtype unless it is of a higher kind (a float next to ints becomes f32, the default
    /// float; an int next to bools becomes i32).
    ///
    /// ```no_run
    /// # use quabla::{DType, Scalar};
    /// assert_eq!(Scalar::Float(0.5).weak_dtype(DType::F64), DType::F64);
    /// assert_eq!(Scalar::Float(0.5).weak_dtype(DType::I32), DType::F32);
    /// assert_eq!(Scalar::Int(2).weak_dtype(DType::U32), DType::U32);
    /// ```
    pub fn weak_dtype(self, other: DType) -> DType {
        match (self, other) {
            (Scalar::Float(_), d) if d.is_float() => d,
            (Scalar::Float(_), _) => DType::F32,
            (Scalar::Int(_), DType::Bool) => DType::I32,
            (Scalar::Int(_), d) => d,
            (Scalar::Bool(_), d) => d,
        }
    }

    /// The dtype of the scalar on its own (JAX's defaults without x64: f32, i32).
    ///
    /// ```no_run
    /// # use quabla::{DType, Scalar};
    /// assert_eq!(Scalar::Float(0.5).default_dtype(), DType::F32);
    /// ```
    pub fn default_dtype(self) -> DType {
        match self {
            Scalar::Float(_) => DType::F32,
            Scalar::Int(_) => DType::I32,
            Scalar::Bool(_) => DType::Bool,
        }
    }
}

macro_rules! scalar_from {
    ($($t:ty => $v:ident as $c:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(x: $t) -> Scalar { Scalar::$v(x as $c) }
        }
    )*};
}
scalar_from!(f64 => Float as f64, f32 => Float as f64, i32 => Int as i64, i64 => Int as i64, u32 => Int as i64, usize => Int as i64);

impl From<bool> for Scalar {
    fn from(x: bool) -> Scalar {
        Scalar::Bool(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_is_symmetric_and_matches_the_table() {
        for a in DType::ALL {
            for b in DType::ALL {
                assert_eq!(promote_types(a, b), promote_types(b, a));
            }
        }
        assert_eq!(promote_types(DType::I32, DType::U32), DType::I32);
        assert_eq!(promote_types(DType::F32, DType::F64), DType::F64);
    }

    #[test]
    fn weak_scalars_keep_the_array_dtype() {
        assert_eq!(Scalar::Float(2.0).weak_dtype(DType::F32), DType::F32);
        assert_eq!(Scalar::Float(2.0).weak_dtype(DType::I32), DType::F32);
        assert_eq!(Scalar::Int(2).weak_dtype(DType::U32), DType::U32);
        assert_eq!(Scalar::Int(2).weak_dtype(DType::Bool), DType::I32);
    }
}
