//! A list of arrays (a flattened pytree) as one vector: the inner products and updates the
//! iterative solvers need.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::Axes;

/// `Σ_leaves sum(a * b)`, a scalar in the leaves' dtype.
pub(crate) fn vdot(a: &[Array], b: &[Array]) -> Result<Array> {
    let mut total: Option<Array> = None;
    for (x, y) in a.iter().zip(b) {
        let s = (x * y)?.sum(Axes::All, false)?;
        total = Some(match total {
            Some(t) => (&t + &s)?,
            None => s,
        });
    }
    total.ok_or_else(|| Error::Value("an empty vector has no inner product".into()))
}

/// `a + alpha * b`, leaf by leaf (`alpha` a scalar).
pub(crate) fn axpy(a: &[Array], alpha: &Array, b: &[Array]) -> Result<Vec<Array>> {
    a.iter().zip(b).map(|(x, y)| x + &(alpha * y)?).collect()
}

/// `a - b`, leaf by leaf.
pub(crate) fn sub(a: &[Array], b: &[Array]) -> Result<Vec<Array>> {
    a.iter().zip(b).map(|(x, y)| x - y).collect()
}

/// The leaves concatenated into one 1-D vector (they must share a dtype).
pub(crate) fn flatten(v: &[Array]) -> Result<Array> {
    let dtype = v[0].dtype();
    if let Some(bad) = v.iter().find(|x| x.dtype() != dtype) {
        return Err(Error::DType(format!(
            "this solver needs every part of the vector in one dtype; found {dtype} and {}",
            bad.dtype()
        )));
    }
    let flat: Vec<Array> = v.iter().map(|x| x.reshape(&[-1])).collect::<Result<_>>()?;
    let refs: Vec<&Array> = flat.iter().collect();
    Array::concatenate(&refs, 0)
}

/// Splits a 1-D vector back into arrays shaped like `like`.
pub(crate) fn unflatten(flat: &Array, like: &[Array]) -> Result<Vec<Array>> {
    let mut start = 0;
    like.iter()
        .map(|l| {
            let end = start + l.size();
            let shape: Vec<isize> = l.shape().iter().map(|&d| d as isize).collect();
            let part = flat.slice(&[start], &[end], &[1])?.reshape(&shape)?;
            start = end;
            Ok(part)
        })
        .collect()
}
