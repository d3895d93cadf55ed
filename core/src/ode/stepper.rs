//! One step of each method: the explicit Runge-Kutta pairs and the Rosenbrock method.

use super::tableau::{tsit5_dense, Dense, Tableau, DOPRI5_DENSE};
use super::Field;
use crate::ad::jacfwd;
use crate::ad::jvp;
use crate::array::Array;
use crate::error::Result;
use crate::linalg::vector::{flatten, unflatten};
use crate::linalg::{lu, lu_solve};

/// A step's result: the new state, `f` there, the error estimate (`None` for fixed-step
/// methods) and the dense output's coefficients `[p1, p2, p3, p4]` (see [`Dense`]).
pub(crate) struct Step {
    pub y: Vec<Array>,
    pub f: Vec<Array>,
    pub err: Option<Vec<Array>>,
    pub poly: [Vec<Array>; 4],
}

type Leaves = Vec<Array>;

/// `Σ c_i v_i` over one leaf, in the order given.
fn lin_leaf(terms: &[(f64, &Array)]) -> Result<Array> {
    let mut acc = (terms[0].1 * terms[0].0)?;
    for (c, v) in &terms[1..] {
        acc = (&acc + &(*v * *c)?)?;
    }
    Ok(acc)
}

/// [`lin_leaf`] on every leaf.
fn lin(terms: &[(f64, &[Array])]) -> Result<Leaves> {
    (0..terms[0].1.len())
        .map(|i| {
            let leaf: Vec<(f64, &Array)> = terms.iter().map(|(c, v)| (*c, &v[i])).collect();
            lin_leaf(&leaf)
        })
        .collect()
}

/// Cubic Hermite coefficients of one leaf from `Δ = y1 - y0` and the end slopes scaled by
/// `h`.
fn hermite(delta: &Array, hf0: &Array, hf1: &Array) -> Result<[Array; 4]> {
    Ok([
        hf0.clone(),
        lin_leaf(&[(3.0, delta), (-2.0, hf0), (-1.0, hf1)])?,
        lin_leaf(&[(-2.0, delta), (1.0, hf0), (1.0, hf1)])?,
        delta.zeros_like()?,
    ])
}

fn scaled(v: &[Array], h: &Array) -> Result<Leaves> {
    v.iter().map(|x| x * h).collect()
}

/// `y + Σ w_j k_j` leaf by leaf, skipping zero weights (`w` already scaled by `h`). One
/// leaf's whole sum is traced before the next leaf's, so the loop IR sees one run of
/// element loops over each leaf's index space and fuses it into a single pass (a
/// stage-major order interleaves the leaves and leaves one pass per term).
fn combine(y: &[Array], ks: &[Vec<Array>], w: &[Array], coef: &[f64]) -> Result<Vec<Array>> {
    y.iter()
        .enumerate()
        .map(|(leaf, y)| {
            let mut acc = y.clone();
            for (j, &cj) in coef.iter().enumerate() {
                if cj != 0.0 {
                    acc = (&acc + &(&ks[j][leaf] * &w[j])?)?;
                }
            }
            Ok(acc)
        })
        .collect()
}

/// One leaf's dense-output coefficients `[p1, p2, p3, p4]` from `Δ = y1 - y0`, the stages
/// scaled by `h` and the end slope scaled by `h`.
fn dense_output(dense: Dense, delta: &Array, hk: &[Array], hf1: &Array) -> Result<[Array; 4]> {
    match dense {
        Dense::Hermite => hermite(delta, &hk[0], hf1),
        Dense::Dopri5 => {
            // Hairer's form y0 + θ(Δ + (1-θ)(A + θ(B + (1-θ)C))), expanded in θ.
            let a = lin_leaf(&[(1.0, &hk[0]), (-1.0, delta)])?;
            let b = lin_leaf(&[(1.0, delta), (-1.0, hf1), (-1.0, &a)])?;
            let terms: Vec<(f64, &Array)> = DOPRI5_DENSE
                .iter()
                .zip(hk)
                .filter(|(d, _)| **d != 0.0)
                .map(|(d, k)| (*d, k))
                .collect();
            let c = lin_leaf(&terms)?;
            Ok([
                hk[0].clone(),
                lin_leaf(&[(1.0, &b), (1.0, &c), (-1.0, &a)])?,
                lin_leaf(&[(-1.0, &b), (-2.0, &c)])?,
                c,
            ])
        }
        Dense::Tsit5 => {
            let w = tsit5_dense();
            let coef = |q: usize| -> Result<Array> {
                let terms: Vec<(f64, &Array)> = (0..hk.len())
                    .filter(|&i| w[i][q] != 0.0)
                    .map(|i| (w[i][q], &hk[i]))
                    .collect();
                lin_leaf(&terms)
            };
            Ok([coef(0)?, coef(1)?, coef(2)?, coef(3)?])
        }
    }
}

/// An explicit Runge-Kutta step of size `h` from `(t, y)` with `f0 = f(t, y)`.
pub(crate) fn explicit(
    tab: &Tableau,
    field: Field,
    y: &[Array],
    f0: &[Array],
    t: &Array,
    h: &Array,
) -> Result<Step> {
    let stages = tab.c.len();
    let mut ks: Vec<Vec<Array>> = vec![f0.to_vec()];
    for i in 1..stages {
        if tab.fsal && i == stages - 1 {
            break;
        }
        let w: Vec<Array> = tab.a[i].iter().map(|a| h * *a).collect::<Result<_>>()?;
        let yi = combine(y, &ks, &w, tab.a[i])?;
        ks.push(field(&yi, &(t + &(h * tab.c[i])?)?)?);
    }
    let wb: Vec<Array> = tab.b.iter().map(|b| h * *b).collect::<Result<_>>()?;
    let y_new = combine(y, &ks, &wb, &tab.b[..ks.len()])?;
    let t_new = (t + h)?;
    let f_new = field(&y_new, &t_new)?;
    if tab.fsal {
        ks.push(f_new.clone());
    }
    // Everything from here is elementwise per leaf: one leaf's dense output and error are
    // traced before the next leaf's, so the loop IR fuses each leaf's work into one pass.
    // The error weights are made where the first leaf's error needs them: reverse mode adds
    // `h`'s cotangents in trace order, and this order gives a one-leaf state the gradient
    // bits of the whole-list formulation (stages, then dense output, then error).
    let mut we: Option<Vec<Array>> = None;
    let mut poly: [Leaves; 4] = Default::default();
    let mut err = Vec::with_capacity(y.len());
    for (leaf, (yn, y0)) in y_new.iter().zip(y).enumerate() {
        let delta = (yn - y0)?;
        let hk: Leaves = ks.iter().map(|k| &k[leaf] * h).collect::<Result<_>>()?;
        let hf1 = (&f_new[leaf] * h)?;
        let p = dense_output(tab.dense, &delta, &hk, &hf1)?;
        for (q, pq) in p.into_iter().enumerate() {
            poly[q].push(pq);
        }
        if !tab.e.is_empty() {
            let zeros = [y0.zeros_like()?];
            let we = match &mut we {
                Some(w) => w,
                None => we.insert(tab.e.iter().map(|e| h * *e).collect::<Result<_>>()?),
            };
            let k_leaf: Vec<Vec<Array>> = ks.iter().map(|k| vec![k[leaf].clone()]).collect();
            err.extend(combine(&zeros, &k_leaf, we, tab.e)?);
        }
    }
    let err = (!tab.e.is_empty()).then_some(err);
    Ok(Step {
        y: y_new,
        f: f_new,
        err,
        poly,
    })
}

/// Shampine & Reichelt's ROS2 (MATLAB's ode23s): L-stable, order 2 with an order-3 error
/// estimate. The Jacobian is formed densely by forward mode (one batched JVP per state
/// element), `W = I - h·d·J` is LU-factored once per step and the three stages reuse the
/// factors: O(n³) per step, meant for the small and medium stiff systems this method serves.
pub(crate) fn rosenbrock23(
    field: Field,
    y: &[Array],
    f0: &[Array],
    t: &Array,
    h: &Array,
) -> Result<Step> {
    let d = 1.0 / (2.0 + std::f64::consts::SQRT_2);
    let e32 = 6.0 + std::f64::consts::SQRT_2;
    let hd = (h * d)?;
    let flat_field = |v: &[Array]| -> Result<Vec<Array>> {
        Ok(vec![flatten(&field(&unflatten(&v[0], y)?, t)?)?])
    };
    let jac = jacfwd(flat_field, &[0])(&[flatten(y)?])?.remove(0);
    let eye = crate::ops::linalg::eye_mask(&jac)?.astype(jac.dtype())?;
    let w = (&eye - &(&jac * &hd)?)?;
    let (factors, _, perm) = lu(&w)?;
    let solve = |rhs: Vec<Array>| -> Result<Vec<Array>> {
        unflatten(&lu_solve(&factors, &perm, &flatten(&rhs)?)?, y)
    };
    // ∂f/∂t, for non-autonomous fields.
    let ft = jvp(
        |a: &[Array]| field(y, &a[0]),
        std::slice::from_ref(t),
        &[t.ones_like()?],
    )?
    .1;
    let hdft: Vec<Array> = ft.iter().map(|v| v * &hd).collect::<Result<_>>()?;
    let add = |a: &[Array], b: &[Array]| -> Result<Vec<Array>> {
        a.iter().zip(b).map(|(x, y)| x + y).collect()
    };
    let sub = |a: &[Array], b: &[Array]| -> Result<Vec<Array>> {
        a.iter().zip(b).map(|(x, y)| x - y).collect()
    };
    let scale =
        |a: &[Array], s: &Array| -> Result<Vec<Array>> { a.iter().map(|x| x * s).collect() };
    let k1 = solve(add(f0, &hdft)?)?;
    let half = (h * 0.5)?;
    let f1 = field(&add(y, &scale(&k1, &half)?)?, &(t + &half)?)?;
    let k2 = add(&solve(sub(&f1, &k1)?)?, &k1)?;
    let y_new = add(y, &scale(&k2, h)?)?;
    let f2 = field(&y_new, &(t + h)?)?;
    let e = scale(&sub(&k2, &f1)?, &h.full_like(e32)?)?;
    let two = scale(&sub(&k1, f0)?, &h.full_like(2.0)?)?;
    let k3 = solve(add(&sub(&sub(&f2, &e)?, &two)?, &hdft)?)?;
    let comb = add(&sub(&k1, &scale(&k2, &h.full_like(2.0)?)?)?, &k3)?;
    let err = scale(&comb, &(h / 6.0)?)?;
    // The method's own interpolant y0 + h(θ(1-θ)k1 + θ(θ-2d)k2)/(1-2d).
    let (hk1, hk2) = (scaled(&k1, h)?, scaled(&k2, h)?);
    let r = 1.0 / (1.0 - 2.0 * d);
    let zeros: Leaves = y.iter().map(Array::zeros_like).collect::<Result<_>>()?;
    let poly = [
        lin(&[(r, &hk1), (-2.0 * d * r, &hk2)])?,
        lin(&[(r, &hk2), (-r, &hk1)])?,
        zeros.clone(),
        zeros,
    ];
    Ok(Step {
        y: y_new,
        f: f2,
        err: Some(err),
        poly,
    })
}
