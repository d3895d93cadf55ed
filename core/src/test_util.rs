//! `check_grads`, as JAX's `jax.test_util.check_grads`: JVPs against central finite
//! differences in random directions, and VJPs against JVPs through
//! `<jvp(t), u> = <t, vjp(u)>`, recursively up to the given order; and `rosenbrock`, the
//! test function the tests, benchmarks and examples share.

use crate::ad::{jvp, vjp};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::Axes;
use quabla_abi::DType;

/// Tolerances of a check: `|a - b| <= atol + rtol * |b|` elementwise, with finite-difference
/// step `eps`.
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    pub eps: f64,
    pub rtol: f64,
    pub atol: f64,
}

impl Tolerance {
    /// Defaults per dtype: f64 steps of 1e-6 and 1e-5 agreement; f32 steps of 1e-2 and 2e-3
    /// agreement (central differences in f32 are noisy below that).
    ///
    /// ```no_run
    /// # use quabla::{test_util::{check_grads, Tolerance}, Array, DType};
    /// let x = Array::from_slice(&[0.3f32, -1.2], &[2])?;
    /// check_grads(&|a: &[Array]| Ok(vec![a[0].tanh()?]), &[x], 1, Some(Tolerance::for_dtype(DType::F32)))?;
    /// # Ok::<(), quabla::Error>(())
    /// ```
    pub fn for_dtype(d: DType) -> Tolerance {
        match d {
            DType::F64 => Tolerance {
                eps: 1e-6,
                rtol: 1e-5,
                atol: 1e-5,
            },
            _ => Tolerance {
                eps: 1e-2,
                rtol: 2e-3,
                atol: 2e-3,
            },
        }
    }
}

fn host(a: &Array) -> Result<Vec<f64>> {
    a.astype(DType::F64)?.to_vec::<f64>()
}

/// Deterministic directions in [-1, 1).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
    fn like(&mut self, a: &Array) -> Result<Array> {
        let v: Vec<f64> = (0..a.size())
            .map(|_| {
                if a.dtype().is_float() {
                    self.next()
                } else {
                    0.0
                }
            })
            .collect();
        Array::from_slice_on(a.device(), &v, a.shape())?.astype(a.dtype())
    }
}

/// Elementwise agreement. Both lists must have the same length, and NaN matches nothing: a
/// derivative that is NaN where its reference is NaN too has not been checked.
fn close(what: &str, got: &[f64], want: &[f64], tol: Tolerance) -> Result<()> {
    if got.len() != want.len() {
        return Err(Error::Value(format!(
            "{what}: {} values, expected {}",
            got.len(),
            want.len()
        )));
    }
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.is_nan() || w.is_nan() {
            return Err(Error::Value(format!(
                "{what}: element {i} is {g:e}, expected {w:e}: a NaN cannot be checked; pick a \
                 point where the function and its derivatives are finite"
            )));
        }
        let ok = (g - w).abs() <= tol.atol + tol.rtol * w.abs() || g == w;
        if !ok {
            return Err(Error::Value(format!(
                "{what}: element {i} is {g:e}, expected {w:e} (tolerance {tol:?})"
            )));
        }
    }
    Ok(())
}

fn shifted(args: &[Array], dirs: &[Array], scale: f64) -> Result<Vec<Array>> {
    args.iter()
        .zip(dirs)
        .map(|(a, d)| {
            if a.dtype().is_float() {
                a + &(d * scale)?
            } else {
                Ok(a.clone())
            }
        })
        .collect()
}

/// `sum <a_i, b_i>` over the float arrays; the lists must pair up one to one.
fn dot_all(a: &[Array], b: &[Array]) -> Result<f64> {
    if a.len() != b.len() {
        return Err(Error::Value(format!(
            "{} arrays paired with {}: a transformation returned the wrong number of values",
            a.len(),
            b.len()
        )));
    }
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        if x.dtype().is_float() {
            let (hx, hy) = (host(x)?, host(y)?);
            if hx.len() != hy.len() {
                return Err(Error::Shape(format!(
                    "an array of {} elements paired with one of {}",
                    hx.len(),
                    hy.len()
                )));
            }
            s += hx.iter().zip(hy).map(|(p, q)| p * q).sum::<f64>();
        }
    }
    Ok(s)
}

/// Checks the JVP of `f` at `args` against central finite differences in one random
/// direction over every float argument (so every operand is differentiated at once), with
/// the direction drawn from `seed`. Non-float outputs are skipped.
///
/// ```no_run
/// # use quabla::{test_util::{check_jvp, Tolerance}, Array, DType};
/// let x = Array::from_slice(&[0.3f64, -1.2], &[2]).unwrap();
/// let f = |a: &[Array]| Ok(vec![a[0].tanh()?]);
/// check_jvp(&f, &[x], Tolerance::for_dtype(DType::F64), 7).unwrap();
/// ```
pub fn check_jvp(
    f: &dyn Fn(&[Array]) -> Result<Vec<Array>>,
    args: &[Array],
    tol: Tolerance,
    seed: u64,
) -> Result<()> {
    let (_, dirs) = directions(args, seed)?;
    jvp_against_differences(f, args, &dirs, tol).map(|_| ())
}

/// A random direction over every float argument, and the generator to draw more from.
fn directions(args: &[Array], seed: u64) -> Result<(Lcg, Vec<Array>)> {
    let mut rng = Lcg(seed);
    let dirs = args.iter().map(|a| rng.like(a)).collect::<Result<_>>()?;
    Ok((rng, dirs))
}

fn jvp_against_differences(
    f: &dyn Fn(&[Array]) -> Result<Vec<Array>>,
    args: &[Array],
    dirs: &[Array],
    tol: Tolerance,
) -> Result<(Vec<Array>, Vec<Array>)> {
    let (y, ty) = jvp(f, args, dirs)?;
    let plus = f(&shifted(args, dirs, tol.eps)?)?;
    let minus = f(&shifted(args, dirs, -tol.eps)?)?;
    for (k, (t, (p, m))) in ty.iter().zip(plus.iter().zip(&minus)).enumerate() {
        if !t.dtype().is_float() {
            continue;
        }
        let fd: Vec<f64> = host(p)?
            .iter()
            .zip(host(m)?)
            .map(|(a, b)| (a - b) / (2.0 * tol.eps))
            .collect();
        close(
            &format!("jvp of output {k} vs finite differences"),
            &host(t)?,
            &fd,
            tol,
        )?;
    }
    Ok((y, ty))
}

/// Checks the VJP of `f` at `args` against its JVP through `<jvp(t), u> = <t, vjp(u)>`,
/// with random `t` over every float argument and random `u` over every output, drawn from
/// `seed`: a transpose rule that drops or misplaces any operand's cotangent fails it.
///
/// ```no_run
/// # use quabla::{test_util::{check_vjp, Tolerance}, Array, DType};
/// let x = Array::from_slice(&[0.3f64, -1.2], &[2]).unwrap();
/// let f = |a: &[Array]| Ok(vec![a[0].tanh()?]);
/// check_vjp(&f, &[x], Tolerance::for_dtype(DType::F64), 7).unwrap();
/// ```
pub fn check_vjp(
    f: &dyn Fn(&[Array]) -> Result<Vec<Array>>,
    args: &[Array],
    tol: Tolerance,
    seed: u64,
) -> Result<()> {
    let (mut rng, dirs) = directions(args, seed)?;
    let (y, ty) = jvp(f, args, &dirs)?;
    vjp_against_jvp(f, args, &dirs, &y, &ty, &mut rng, tol).map(|_| ())
}

fn vjp_against_jvp(
    f: &dyn Fn(&[Array]) -> Result<Vec<Array>>,
    args: &[Array],
    dirs: &[Array],
    y: &[Array],
    ty: &[Array],
    rng: &mut Lcg,
    tol: Tolerance,
) -> Result<Vec<Array>> {
    let (_, pb) = vjp(f, args)?;
    let cts: Vec<Array> = y.iter().map(|o| rng.like(o)).collect::<Result<_>>()?;
    let vj = pb.call(&cts)?;
    let lhs = dot_all(ty, &cts)?;
    let rhs = dot_all(dirs, &vj)?;
    close(
        "<jvp(t), u> vs <t, vjp(u)>",
        &[rhs],
        &[lhs],
        Tolerance {
            atol: tol.atol,
            rtol: tol.rtol.max(1e-9),
            eps: tol.eps,
        },
    )?;
    Ok(cts)
}

/// Checks the VJP of `f` at `args` against central finite differences, for functions whose
/// forward mode is refused (a `custom_vjp`): `<vjp(u), t>` against `<u, (f(x + εt) - f(x - εt))
/// / 2ε>` for random `t` over every float argument and random `u` over every output.
///
/// ```no_run
/// # use quabla::{test_util::{check_vjp_by_differences, Tolerance}, Array, DType};
/// let x = Array::from_slice(&[0.3f64, -1.2], &[2]).unwrap();
/// let f = |a: &[Array]| Ok(vec![a[0].tanh()?]);
/// check_vjp_by_differences(&f, &[x], Tolerance::for_dtype(DType::F64), 7).unwrap();
/// ```
pub fn check_vjp_by_differences(
    f: &dyn Fn(&[Array]) -> Result<Vec<Array>>,
    args: &[Array],
    tol: Tolerance,
    seed: u64,
) -> Result<()> {
    let (mut rng, dirs) = directions(args, seed)?;
    let plus = f(&shifted(args, &dirs, tol.eps)?)?;
    let minus = f(&shifted(args, &dirs, -tol.eps)?)?;
    let differences: Vec<Array> = plus
        .iter()
        .zip(&minus)
        .map(|(p, m)| &(p - m)? / (2.0 * tol.eps))
        .collect::<Result<_>>()?;
    let (y, pb) = vjp(f, args)?;
    let cts: Vec<Array> = y.iter().map(|o| rng.like(o)).collect::<Result<_>>()?;
    let vj = pb.call(&cts)?;
    close(
        "<vjp(u), t> vs finite differences",
        &[dot_all(&dirs, &vj)?],
        &[dot_all(&differences, &cts)?],
        tol,
    )
}

/// Checks the derivatives of `f` at `args` up to `order` (1 to 3): [`check_jvp`] and
/// [`check_vjp`] at each order. The tolerance defaults to [`Tolerance::for_dtype`] of the
/// first argument.
///
/// ```no_run
/// # use quabla::{test_util::check_grads, Array};
/// let x = Array::from_slice(&[0.3f64, -1.2], &[2]).unwrap();
/// check_grads(&|a: &[Array]| Ok(vec![a[0].tanh()?]), &[x], 2, None).unwrap();
/// ```
pub fn check_grads(
    f: &dyn Fn(&[Array]) -> Result<Vec<Array>>,
    args: &[Array],
    order: usize,
    tol: Option<Tolerance>,
) -> Result<()> {
    let tol = tol.unwrap_or_else(|| {
        Tolerance::for_dtype(args.first().map(|a| a.dtype()).unwrap_or(DType::F64))
    });
    let (mut rng, dirs) = directions(args, 0x5eed ^ (order as u64))?;
    let (y, ty) = jvp_against_differences(f, args, &dirs, tol)?;
    let cts = vjp_against_jvp(f, args, &dirs, &y, &ty, &mut rng, tol)?;
    if order > 1 {
        let d2 = dirs.clone();
        let jvp_fn = move |a: &[Array]| -> Result<Vec<Array>> { Ok(jvp(f, a, &d2)?.1) };
        check_grads(&jvp_fn, args, order - 1, Some(tol))?;
        let c2 = cts.clone();
        let vjp_fn = move |a: &[Array]| -> Result<Vec<Array>> {
            let (_, pb) = vjp(f, a)?;
            let g = pb.call(&c2)?;
            Ok(g.into_iter()
                .zip(a)
                .filter(|(_, x)| x.dtype().is_float())
                .map(|(g, _)| g)
                .collect())
        };
        check_grads(&vjp_fn, args, order - 1, Some(tol))?;
    }
    Ok(())
}

/// The n-dimensional Rosenbrock function `sum 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2` of a
/// vector (minimum 0 at all ones), as a one-output function for the transformations.
///
/// ```no_run
/// # use quabla::{test_util::rosenbrock, Array};
/// let x = Array::from_slice(&[1.0f64, 1.0, 1.0], &[3]).unwrap();
/// assert_eq!(rosenbrock(&[x]).unwrap()[0].item::<f64>().unwrap(), 0.0);
/// ```
pub fn rosenbrock(a: &[Array]) -> Result<Vec<Array>> {
    let x = &a[0];
    let n = x.shape()[0];
    let head = x.slice(&[0], &[n - 1], &[1])?;
    let tail = x.slice(&[1], &[n], &[1])?;
    let t1 = (&tail - &(&head * &head)?)?;
    let t2 = (head.neg()? + 1.0)?;
    Ok(vec![
        ((&(&t1 * &t1)? * 100.0)? + &(&t2 * &t2)?)?.sum(Axes::All, false)?
    ])
}

/// Robertson's stiff chemical kinetics as an `odeint` vector field over a 3-vector:
/// `y1' = -0.04 y1 + 1e4 y2 y3`, `y3' = 3e7 y2²`, `y2' = -(y1' + y3')`. Shared by the ODE
/// tests and the solver benchmarks.
///
/// ```no_run
/// # use quabla::{ode::{odeint, Method, OdeOptions}, test_util::robertson, Array};
/// let y0 = Array::from_slice(&[1.0f64, 0.0, 0.0], &[3]).unwrap();
/// let t = Array::from_slice(&[0.0f64, 40.0], &[2]).unwrap();
/// let opts = OdeOptions { method: Method::Rosenbrock23, ..Default::default() };
/// let sol = odeint(&robertson, &[y0], &t, &[], &opts).unwrap();
/// ```
pub fn robertson(y: &[Array], _t: &Array, _args: &[Array]) -> Result<Vec<Array>> {
    let p = |i: usize| y[0].slice(&[i], &[i + 1], &[1]);
    let (y1, y2, y3) = (p(0)?, p(1)?, p(2)?);
    let a = (&(&y1 * -0.04)? + &(&(&y2 * &y3)? * 1e4)?)?;
    let c = (&(&y2 * &y2)? * 3e7)?;
    let b = (&a.neg()? - &c)?;
    Ok(vec![Array::concatenate(&[&a, &b, &c], 0)?])
}

/// The CPU plugin linked into the crate's unit tests (they do not look for plugin files).
#[cfg(test)]
pub(crate) fn linked_cpu() -> std::sync::Arc<crate::runtime::Device> {
    static REGISTER: std::sync::Once = std::sync::Once::new();
    REGISTER.call_once(|| crate::runtime::register_static("cpu", quabla_cpu::backend_module));
    crate::runtime::device("cpu").unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::Device;
    use std::sync::Arc;

    fn cpu() -> Arc<Device> {
        linked_cpu()
    }

    fn f64s(v: &[f64]) -> Array {
        Array::from_slice_on(&cpu(), v, &[v.len()]).unwrap()
    }

    const TOL: Tolerance = Tolerance {
        eps: 1e-6,
        rtol: 1e-6,
        atol: 0.0,
    };

    #[test]
    fn close_fails_on_length_mismatch_nan_and_distance() {
        assert!(close("x", &[1.0, 2.0], &[1.0, 2.0], TOL).is_ok());
        let e = close("x", &[1.0], &[1.0, 2.0], TOL)
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 values, expected 2"), "{e}");
        let e = close("x", &[f64::NAN], &[f64::NAN], TOL)
            .unwrap_err()
            .to_string();
        assert!(e.contains("NaN cannot be checked"), "{e}");
        assert!(close("x", &[1.0], &[f64::NAN], TOL).is_err());
        assert!(close("x", &[1.0], &[1.1], TOL).is_err());
        assert!(close("x", &[f64::INFINITY], &[f64::INFINITY], TOL).is_ok());
    }

    #[test]
    fn dot_all_fails_when_lists_or_sizes_do_not_pair_up() {
        let a = f64s(&[1.0, 2.0]);
        let b = f64s(&[3.0, 4.0, 5.0]);
        assert_eq!(
            dot_all(std::slice::from_ref(&a), std::slice::from_ref(&a)).unwrap(),
            5.0
        );
        assert!(dot_all(&[a.clone(), a.clone()], std::slice::from_ref(&a)).is_err());
        assert!(dot_all(&[a], &[b]).is_err());
    }

    /// A function whose custom JVP rule is off by a factor fails the check.
    #[test]
    fn check_grads_fails_on_a_wrong_derivative() {
        let x = f64s(&[0.3, -1.2]);
        let good = |a: &[Array]| Ok(vec![a[0].sin()?]);
        check_grads(&good, std::slice::from_ref(&x), 2, None).unwrap();
        // `stop_gradient` hides half of `x * x`: the JVP and VJP see only `x * sg(x)`.
        let wrong = |a: &[Array]| Ok(vec![(&a[0] * &a[0].stop_gradient()?)?]);
        let e = check_grads(&wrong, std::slice::from_ref(&x), 1, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("finite differences"), "{e}");
        let tol = Tolerance::for_dtype(DType::F64);
        check_vjp_by_differences(&good, std::slice::from_ref(&x), tol, 3).unwrap();
        let e = check_vjp_by_differences(&wrong, &[x], tol, 3)
            .unwrap_err()
            .to_string();
        assert!(e.contains("<vjp(u), t> vs finite differences"), "{e}");
    }
}
