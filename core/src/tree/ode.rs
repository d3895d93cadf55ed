//! [`odeint`] with a state and parameters of any [`Tree`].

use super::Tree;
use crate::array::Array;
use crate::error::Result;
use crate::ode::{OdeOptions, OdeStats};

/// Integrates `dy/dt = func(y, t, args)` as [`crate::ode::odeint`] does, with `y` and
/// `args` trees: returns `y` at every time in `t` (each leaf with a leading time axis) and
/// the step counts. `func` returns the derivative in `y`'s structure.
///
/// ```no_run
/// # use quabla::{tree, ode::OdeOptions, Array};
/// // A harmonic oscillator: position and velocity in a tuple, the frequency as the args.
/// let y0 = (Array::from_slice(&[1.0f64], &[])?, Array::from_slice(&[0.0f64], &[])?);
/// let w = Array::from_slice(&[2.0f64], &[])?;
/// let t = Array::linspace(0.0, 1.0, 5, quabla::DType::F64)?;
/// let field = |(x, v): &(Array, Array), _t: &Array, w: &Array| Ok((v.clone(), (&(w * w)? * x)?.neg()?));
/// let ((xs, vs), stats) = tree::odeint(field, &y0, &t, &w, &OdeOptions::default())?;
/// # Ok::<(), quabla::Error>(())
/// ```
pub fn odeint<Y: Tree, A: Tree>(
    func: impl Fn(&Y, &Array, &A) -> Result<Y>,
    y0: &Y,
    t: &Array,
    args: &A,
    opts: &OdeOptions,
) -> Result<(Y, OdeStats)> {
    let field = |y: &[Array], t: &Array, a: &[Array]| -> Result<Vec<Array>> {
        Ok(func(
            &y0.with_leaves(y.to_vec())?,
            t,
            &args.with_leaves(a.to_vec())?,
        )?
        .leaves())
    };
    let sol = crate::ode::odeint(&field, &y0.leaves(), t, &args.leaves(), opts)?;
    Ok((y0.with_leaves(sol.ys)?, sol.stats))
}
