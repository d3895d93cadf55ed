//! The dense linear-algebra primitives by their defining identities (reconstruction,
//! orthogonality, triangularity, ordering) on batches in f64 and f32, their derivatives
//! against finite differences to second order, vmap and jit, and the numpy compositions
//! against closed forms. (Values against numpy itself are in the Python tests and the
//! conformance goldens.)

mod common;

use common::{cpu, values};
use quabla::linalg::{self, NormOrd, Svd, Triangular};
use quabla::test_util::check_grads;
use quabla::{jit, vmap, Array, Axes, DType, Result};

fn f64s(v: &[f64], shape: &[usize]) -> Array {
    Array::from_slice_on(&cpu(), v, shape).unwrap()
}

fn vals(a: &Array) -> Vec<f64> {
    a.astype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

fn random(shape: &[usize], seed: u64) -> Array {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = values(n, seed).iter().map(|&x| x as f64).collect();
    f64s(&v, shape)
}

/// Batches of symmetric positive definite matrices `MᵀM + n·I`.
fn spd(batch: usize, n: usize, seed: u64) -> Array {
    let m = random(&[batch, n, n], seed);
    let mtm = mt(&m).matmul(&m).unwrap();
    let eye: Vec<f64> = (0..batch * n * n)
        .map(|k| {
            if (k % (n * n)).is_multiple_of(n + 1) {
                n as f64
            } else {
                0.0
            }
        })
        .collect();
    (&mtm + &f64s(&eye, &[batch, n, n])).unwrap()
}

fn mt(x: &Array) -> Array {
    let r = x.ndim();
    let mut p: Vec<usize> = (0..r).collect();
    p.swap(r - 1, r - 2);
    x.transpose(&p).unwrap()
}

fn close(a: &Array, b: &Array, tol: f64, what: &str) {
    let (x, y) = (vals(a), vals(b));
    assert_eq!(a.shape(), b.shape(), "{what}: shapes");
    for (i, (p, q)) in x.iter().zip(&y).enumerate() {
        assert!(
            (p - q).abs() <= tol * (1.0 + q.abs()),
            "{what}[{i}]: {p} vs {q}"
        );
    }
}

fn eye(batch: usize, n: usize) -> Array {
    let v: Vec<f64> = (0..batch * n * n)
        .map(|k| {
            if (k % (n * n)).is_multiple_of(n + 1) {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    f64s(&v, &[batch, n, n])
}

#[test]
fn factorizations_satisfy_their_identities() {
    let a = spd(3, 4, 1);
    let l = linalg::cholesky(&a).unwrap();
    close(&l.matmul(&mt(&l)).unwrap(), &a, 1e-12, "L Lᵀ");
    let lv = vals(&l);
    assert!(
        (0..3 * 16).all(|k| (k % 16) % 4 <= (k % 16) / 4 || lv[k] == 0.0),
        "L is lower"
    );

    let g = random(&[2, 5, 5], 2);
    let (lu, piv, perm) = linalg::lu(&g).unwrap();
    let luv = vals(&lu);
    let (mut lm, mut um) = (vec![0.0; 50], vec![0.0; 50]);
    for b in 0..2 {
        for i in 0..5 {
            for j in 0..5 {
                let k = b * 25 + i * 5 + j;
                if j < i {
                    lm[k] = luv[k];
                } else {
                    um[k] = luv[k];
                    if i == j {
                        lm[k] = 1.0;
                    }
                }
            }
        }
    }
    let prod = f64s(&lm, &[2, 5, 5])
        .matmul(&f64s(&um, &[2, 5, 5]))
        .unwrap();
    let (gv, pv, pivv) = (
        vals(&g),
        perm.to_vec::<i32>().unwrap(),
        piv.to_vec::<i32>().unwrap(),
    );
    let permuted: Vec<f64> = (0..50)
        .map(|k| gv[(k / 25) * 25 + pv[k / 5] as usize * 5 + k % 5])
        .collect();
    close(&prod, &f64s(&permuted, &[2, 5, 5]), 1e-12, "L U = a[perm]");
    for b in 0..2 {
        let mut rows: Vec<i32> = (0..5).collect();
        for i in 0..5 {
            rows.swap(i, pivv[b * 5 + i] as usize);
        }
        assert_eq!(rows, pv[b * 5..b * 5 + 5].to_vec(), "pivots give perm");
    }

    let (w, v) = linalg::eigh(&a).unwrap();
    let av = a.matmul(&v).unwrap();
    let vw = (&v * &w.expand_dims(1).unwrap()).unwrap();
    close(&av, &vw, 1e-11, "A V = V diag(w)");
    close(&mt(&v).matmul(&v).unwrap(), &eye(3, 4), 1e-12, "VᵀV = I");
    let wv = vals(&w);
    assert!(
        wv.chunks(4).all(|c| c.windows(2).all(|p| p[0] <= p[1])),
        "ascending"
    );

    for (m, n) in [(5, 3), (3, 5), (4, 4)] {
        let x = random(&[2, m, n], 3);
        for full in [false, true] {
            let (q, r) = linalg::qr(&x, full).unwrap();
            close(&q.matmul(&r).unwrap(), &x, 1e-12, "Q R");
            let k = q.shape()[2];
            close(&mt(&q).matmul(&q).unwrap(), &eye(2, k), 1e-12, "QᵀQ");
            let rv = vals(&r);
            let rc = r.shape()[2];
            let rr = r.shape()[1];
            assert!(
                (0..2 * rr * rc)
                    .all(|i| (i % (rr * rc)) / rc <= (i % (rr * rc)) % rc || rv[i] == 0.0),
                "R upper"
            );
            let Svd { u, s, vt } = linalg::svd(&x, full).unwrap();
            let k = s.shape()[1];
            let (uc, vr) = (u.shape()[2], vt.shape()[1]);
            let us = u.slice(&[0, 0, 0], &[2, m, k], &[1, 1, 1]).unwrap();
            let vs = vt.slice(&[0, 0, 0], &[2, k, n], &[1, 1, 1]).unwrap();
            let rec = (&us * &s.expand_dims(1).unwrap())
                .unwrap()
                .matmul(&vs)
                .unwrap();
            close(&rec, &x, 1e-12, "U S Vt");
            close(&mt(&u).matmul(&u).unwrap(), &eye(2, uc), 1e-12, "UᵀU");
            close(&vt.matmul(&mt(&vt)).unwrap(), &eye(2, vr), 1e-12, "Vt Vtᵀ");
            let sv = vals(&s);
            assert!(sv
                .chunks(k)
                .all(|c| c.windows(2).all(|p| p[0] >= p[1]) && c.iter().all(|x| *x >= 0.0)));
            close(&linalg::singular_values(&x).unwrap(), &s, 1e-12, "s alone");
        }
    }
}

#[test]
fn triangular_solves_cover_every_flag() {
    let a = (&random(&[2, 4, 4], 5) + &(&eye(2, 4) * 3.0).unwrap()).unwrap();
    for left_side in [true, false] {
        for lower in [true, false] {
            for transpose_a in [true, false] {
                for unit_diagonal in [true, false] {
                    let how = Triangular {
                        left_side,
                        lower,
                        transpose_a,
                        unit_diagonal,
                    };
                    let b = random(if left_side { &[2, 4, 3] } else { &[2, 3, 4] }, 6);
                    let x = linalg::triangular_solve(&a, &b, how).unwrap();
                    // The matrix actually used: one triangle, maybe a unit diagonal.
                    let av = vals(&a);
                    let t: Vec<f64> = (0..32)
                        .map(|k| {
                            let (i, j) = ((k % 16) / 4, k % 4);
                            if i == j && unit_diagonal {
                                1.0
                            } else if (lower && j <= i) || (!lower && j >= i) {
                                av[k]
                            } else {
                                0.0
                            }
                        })
                        .collect();
                    let t = f64s(&t, &[2, 4, 4]);
                    let op = if transpose_a { mt(&t) } else { t };
                    let back = if left_side {
                        op.matmul(&x).unwrap()
                    } else {
                        x.matmul(&op).unwrap()
                    };
                    close(&back, &b, 1e-12, &format!("{how:?}"));
                }
            }
        }
    }
}

#[test]
fn compositions_match_closed_forms() {
    let a = f64s(&[3.0, 1.0, 1.0, 2.0], &[2, 2]);
    close(
        &linalg::solve(&a, &f64s(&[9.0, 8.0], &[2])).unwrap(),
        &f64s(&[2.0, 3.0], &[2]),
        1e-14,
        "solve",
    );
    close(&linalg::det(&a).unwrap(), &f64s(&[5.0], &[]), 1e-14, "det");
    let swapped = f64s(&[1.0, 2.0, 3.0, 1.0], &[2, 2]);
    close(
        &linalg::det(&swapped).unwrap(),
        &f64s(&[-5.0], &[]),
        1e-14,
        "det with a row swap",
    );
    let (sign, logabs) = linalg::slogdet(&swapped).unwrap();
    assert_eq!(sign.item::<f64>().unwrap(), -1.0);
    assert!((logabs.item::<f64>().unwrap() - 5f64.ln()).abs() < 1e-14);
    close(
        &linalg::inv(&a).unwrap(),
        &f64s(&[0.4, -0.2, -0.2, 0.6], &[2, 2]),
        1e-14,
        "inv",
    );
    let l = linalg::cholesky(&a).unwrap();
    close(
        &linalg::cho_solve(&l, true, &f64s(&[9.0, 8.0], &[2])).unwrap(),
        &f64s(&[2.0, 3.0], &[2]),
        1e-14,
        "cho_solve",
    );
    close(
        &linalg::matrix_power(&a, 3).unwrap(),
        &f64s(&[35.0, 20.0, 20.0, 15.0], &[2, 2]),
        1e-14,
        "a³",
    );
    close(
        &linalg::matrix_power(&a, -1).unwrap(),
        &linalg::inv(&a).unwrap(),
        1e-14,
        "a⁻¹",
    );
    close(
        &linalg::matrix_power(&a, 0).unwrap(),
        &eye(1, 2).reshape(&[2, 2]).unwrap(),
        0.0,
        "a⁰",
    );
    // Singular: det 0, solve gives non-finite values rather than an error.
    let sing = f64s(&[1.0, 2.0, 2.0, 4.0], &[2, 2]);
    assert_eq!(linalg::det(&sing).unwrap().item::<f64>().unwrap(), 0.0);
    assert!(
        vals(&linalg::solve(&sing, &f64s(&[1.0, 1.0], &[2])).unwrap())
            .iter()
            .any(|v| !v.is_finite())
    );
    // Not positive definite: NaN factor, or an error from the checked variant.
    let indefinite = f64s(&[1.0, 2.0, 2.0, 1.0], &[2, 2]);
    assert!(vals(&linalg::cholesky(&indefinite).unwrap())
        .iter()
        .all(|v| v.is_nan()));
    let e = linalg::cholesky_checked(&indefinite).unwrap_err();
    assert!(e.to_string().contains("positive definite"), "{e}");
    // Rank-deficient least squares: the minimum-norm solution equals pinv(a) b.
    let r = f64s(&[1.0, 1.0, 1.0, 1.0, 2.0, 2.0], &[3, 2]);
    let b = f64s(&[1.0, 2.0, 3.0], &[3]);
    let ls = linalg::lstsq(&r, &b, None).unwrap();
    assert_eq!(ls.rank.item::<i32>().unwrap(), 1);
    // x = (x1 = x2) with 4 x1 + ... : columns equal, so x1 = x2 = (1·1+1·2+2·3)/(2·(1+1+4)) = 0.75.
    close(&ls.x, &f64s(&[0.75, 0.75], &[2]), 1e-13, "min-norm lstsq");
    close(
        &linalg::pinv(&r, None).unwrap().matmul(&b).unwrap(),
        &ls.x,
        1e-13,
        "pinv b",
    );
    // Norms.
    let v = f64s(&[3.0, -4.0, 0.0], &[3]);
    let n = |o, ax: Option<&[isize]>, x: &Array| {
        linalg::norm(x, o, ax, false)
            .unwrap()
            .item::<f64>()
            .unwrap()
    };
    assert_eq!(n(NormOrd::Default, None, &v), 5.0);
    assert_eq!(n(NormOrd::P(1.0), None, &v), 7.0);
    assert_eq!(n(NormOrd::Inf, None, &v), 4.0);
    assert_eq!(n(NormOrd::NegInf, None, &v), 0.0);
    assert_eq!(n(NormOrd::P(0.0), None, &v), 2.0);
    assert!((n(NormOrd::P(3.0), None, &v) - 91f64.cbrt()).abs() < 1e-14);
    let m = f64s(&[1.0, -2.0, 3.0, 4.0], &[2, 2]);
    assert_eq!(n(NormOrd::P(1.0), None, &m), 6.0);
    assert_eq!(n(NormOrd::Inf, None, &m), 7.0);
    assert_eq!(n(NormOrd::P(-1.0), None, &m), 4.0);
    assert_eq!(n(NormOrd::NegInf, None, &m), 3.0);
    assert!((n(NormOrd::Fro, None, &m) - 30f64.sqrt()).abs() < 1e-14);
    // Singular values of [[1,-2],[3,4]]: sqrt of eigenvalues of [[10,10],[10,20]].
    let (s1, s2) = ((15.0 + 125f64.sqrt()).sqrt(), (15.0 - 125f64.sqrt()).sqrt());
    assert!((n(NormOrd::P(2.0), None, &m) - s1).abs() < 1e-13);
    assert!((n(NormOrd::P(-2.0), None, &m) - s2).abs() < 1e-13);
    assert!((n(NormOrd::Nuc, None, &m) - (s1 + s2)).abs() < 1e-13);
    let c = linalg::cond(&m, NormOrd::Default)
        .unwrap()
        .item::<f64>()
        .unwrap();
    assert!((c - s1 / s2).abs() < 1e-12);
    let rows = linalg::norm(&m, NormOrd::Default, Some(&[1]), false).unwrap();
    close(&rows, &f64s(&[5f64.sqrt(), 5.0], &[2]), 1e-14, "row norms");
}

type F = Box<dyn Fn(&[Array]) -> Result<Vec<Array>>>;

fn weights(n: usize, seed: u64) -> Array {
    random(&[n], seed)
}

/// Σ c ∘ x over a flattened output, with fixed pseudo-random weights.
fn dot_with(x: &Array, seed: u64) -> Result<Array> {
    let flat = x.reshape(&[-1])?;
    (&flat * &weights(flat.size(), seed))?.sum(Axes::All, false)
}

#[test]
fn derivatives_match_finite_differences_to_second_order() {
    let a = spd(1, 3, 9).reshape(&[3, 3]).unwrap();
    let g =
        (&random(&[3, 3], 10) + &(&eye(1, 3).reshape(&[3, 3]).unwrap() * 2.0).unwrap()).unwrap();
    let b = random(&[3, 2], 11);
    let tall = random(&[4, 3], 12);
    let wide = random(&[3, 4], 13);
    let cases: Vec<(&str, F, Vec<Array>)> = vec![
        (
            "cholesky",
            Box::new(|x: &[Array]| Ok(vec![dot_with(&linalg::cholesky(&x[0])?, 1)?])),
            vec![a.clone()],
        ),
        (
            "lu",
            Box::new(|x: &[Array]| Ok(vec![dot_with(&linalg::lu(&x[0])?.0, 2)?])),
            vec![g.clone()],
        ),
        (
            "det",
            Box::new(|x: &[Array]| Ok(vec![linalg::det(&x[0])?])),
            vec![g.clone()],
        ),
        (
            "slogdet",
            Box::new(|x: &[Array]| Ok(vec![linalg::slogdet(&x[0])?.1])),
            vec![g.clone()],
        ),
        (
            "inv",
            Box::new(|x: &[Array]| Ok(vec![dot_with(&linalg::inv(&x[0])?, 3)?])),
            vec![g.clone()],
        ),
        (
            "solve",
            Box::new(|x: &[Array]| Ok(vec![dot_with(&linalg::solve(&x[0], &x[1])?, 4)?])),
            vec![g.clone(), b.clone()],
        ),
        (
            "triangular_solve right transposed unit",
            Box::new(|x: &[Array]| {
                let how = Triangular {
                    left_side: false,
                    lower: false,
                    transpose_a: true,
                    unit_diagonal: true,
                };
                Ok(vec![dot_with(
                    &linalg::triangular_solve(&x[0], &x[1], how)?,
                    5,
                )?])
            }),
            vec![g.clone(), random(&[2, 3], 14)],
        ),
        (
            "eigh",
            Box::new(|x: &[Array]| {
                let (w, v) = linalg::eigh(&x[0])?;
                // Eigenvector signs are arbitrary: use v ∘ v.
                Ok(vec![(&dot_with(&w, 6)? + &dot_with(&(&v * &v)?, 7)?)?])
            }),
            vec![a.clone()],
        ),
        (
            "qr tall",
            Box::new(|x: &[Array]| {
                let (q, r) = linalg::qr(&x[0], false)?;
                Ok(vec![(&dot_with(&q, 8)? + &dot_with(&r, 9)?)?])
            }),
            vec![tall.clone()],
        ),
        (
            "qr square complete",
            Box::new(|x: &[Array]| {
                let (q, r) = linalg::qr(&x[0], true)?;
                Ok(vec![(&dot_with(&q, 8)? + &dot_with(&r, 9)?)?])
            }),
            vec![g.clone()],
        ),
        (
            "svd wide",
            Box::new(|x: &[Array]| {
                let Svd { u, s, vt } = linalg::svd(&x[0], false)?;
                Ok(vec![
                    (&(&dot_with(&s, 10)? + &dot_with(&(&u * &u)?, 11)?)?
                        + &dot_with(&(&vt * &vt)?, 12)?)?,
                ])
            }),
            vec![wide.clone()],
        ),
        (
            "svd tall",
            Box::new(|x: &[Array]| {
                let Svd { u, s, vt } = linalg::svd(&x[0], false)?;
                Ok(vec![
                    (&(&dot_with(&s, 10)? + &dot_with(&(&u * &u)?, 11)?)?
                        + &dot_with(&(&vt * &vt)?, 12)?)?,
                ])
            }),
            vec![tall.clone()],
        ),
        (
            "singular values",
            Box::new(|x: &[Array]| Ok(vec![dot_with(&linalg::singular_values(&x[0])?, 13)?])),
            vec![tall.clone()],
        ),
        (
            "pinv",
            Box::new(|x: &[Array]| Ok(vec![dot_with(&linalg::pinv(&x[0], None)?, 14)?])),
            vec![tall.clone()],
        ),
        (
            "lstsq",
            Box::new(|x: &[Array]| Ok(vec![dot_with(&linalg::lstsq(&x[0], &x[1], None)?.x, 15)?])),
            vec![tall.clone(), random(&[4], 15)],
        ),
        (
            "nuclear norm",
            Box::new(|x: &[Array]| Ok(vec![linalg::norm(&x[0], NormOrd::Nuc, None, false)?])),
            vec![tall.clone()],
        ),
        (
            "matrix_power -3",
            Box::new(|x: &[Array]| Ok(vec![dot_with(&linalg::matrix_power(&x[0], -3)?, 16)?])),
            vec![g.clone()],
        ),
        (
            "cho_solve",
            Box::new(|x: &[Array]| {
                Ok(vec![dot_with(
                    &linalg::cho_solve(&linalg::cholesky(&x[0])?, true, &x[1])?,
                    17,
                )?])
            }),
            vec![a.clone(), b.clone()],
        ),
    ];
    for (name, f, args) in cases {
        if let Err(e) = check_grads(&f, &args, 2, None) {
            panic!("{name}: {e}");
        }
    }
}

#[test]
fn vmap_and_jit_agree_with_per_matrix_calls() {
    let a = spd(3, 4, 20);
    let f = |x: &[Array]| -> Result<Vec<Array>> {
        let (w, _) = linalg::eigh(&x[0])?;
        // b[..., None]: numpy 2 reads a b of two axes as matrices, so the batched call
        // (jit) passes vectors as one-column matrices.
        let x1 = linalg::solve(&x[0], &x[1].expand_dims(-1)?)?;
        let rows: Vec<isize> = x1.shape()[..x1.ndim() - 1]
            .iter()
            .map(|&d| d as isize)
            .collect();
        Ok(vec![linalg::det(&x[0])?, w, x1.reshape(&rows)?])
    };
    let b = random(&[3, 4], 21);
    let batched =
        vmap(f, &[Some(0), Some(0)], &[Some(0), Some(0), Some(0)])(&[a.clone(), b.clone()])
            .unwrap();
    let jitted = jit(f).call(&[a.clone(), b.clone()]).unwrap();
    for k in 0..3 {
        let one = f(&[
            a.slice(&[k, 0, 0], &[k + 1, 4, 4], &[1, 1, 1])
                .unwrap()
                .reshape(&[4, 4])
                .unwrap(),
            b.slice(&[k, 0], &[k + 1, 4], &[1, 1])
                .unwrap()
                .reshape(&[4])
                .unwrap(),
        ])
        .unwrap();
        for (o, (bo, jo)) in one.iter().zip(batched.iter().zip(&jitted)) {
            let row = |x: &Array| {
                let mut start = vec![k];
                start.extend(vec![0; x.ndim() - 1]);
                let mut limit = x.shape().to_vec();
                limit[0] = k + 1;
                x.slice(&start, &limit, &vec![1; x.ndim()])
                    .unwrap()
                    .reshape(&o.shape().iter().map(|&d| d as isize).collect::<Vec<_>>())
                    .unwrap()
            };
            close(&row(bo), o, 1e-12, "vmap");
            close(&row(jo), o, 1e-12, "jit of the batched call");
        }
    }
    // vmap of triangular_solve with only the right-hand side batched.
    let l = linalg::cholesky(&spd(1, 3, 22).reshape(&[3, 3]).unwrap()).unwrap();
    let rhs = random(&[5, 3, 1], 23);
    let solve = |x: &[Array]| {
        Ok(vec![linalg::triangular_solve(
            &x[0],
            &x[1],
            Triangular::default(),
        )?])
    };
    let out = vmap(solve, &[None, Some(0)], &[Some(0)])(&[l.clone(), rhs.clone()]).unwrap();
    close(&l.matmul(&out[0]).unwrap(), &rhs, 1e-12, "batched rhs");
}

#[test]
fn float32_factorizations_and_bad_input() {
    let a = spd(2, 3, 30).astype(DType::F32).unwrap();
    let l = linalg::cholesky(&a).unwrap();
    assert_eq!(l.dtype(), DType::F32);
    close(&l.matmul(&mt(&l)).unwrap(), &a, 1e-5, "f32 L Lᵀ");
    let Svd { s, .. } = linalg::svd(&a, false).unwrap();
    assert_eq!(s.dtype(), DType::F32);
    let e = linalg::cholesky(&random(&[2, 3], 31)).unwrap_err();
    assert!(e.to_string().contains("square"), "{e}");
    let ints = Array::from_slice_on(&cpu(), &[1i32, 0, 0, 1], &[2, 2]).unwrap();
    let e = linalg::qr(&ints, false).unwrap_err();
    assert!(e.to_string().contains("float"), "{e}");
    let e = linalg::triangular_solve(
        &eye(1, 3).reshape(&[3, 3]).unwrap(),
        &random(&[4, 2], 32),
        Triangular::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("does not match"), "{e}");
}

#[test]
fn non_finite_input_gives_non_finite_output() {
    // As numpy/LAPACK: NaN or inf in the matrix propagates (no error, no hang).
    let bad = f64s(&[1.0, f64::NAN, 0.5, 2.0], &[2, 2]);
    let inf = f64s(&[f64::INFINITY, 1.0, 1.0, 2.0], &[2, 2]);
    for (name, m) in [("nan", &bad), ("inf", &inf)] {
        let all_bad = |a: &Array, what: &str| {
            assert!(
                vals(a).iter().any(|v| !v.is_finite()),
                "{name} {what}: {:?}",
                vals(a)
            );
        };
        all_bad(&linalg::det(m).unwrap(), "det");
        if name == "nan" {
            // (With an infinite pivot, LAPACK's arithmetic gives the finite limit [0, 0.5].)
            all_bad(
                &linalg::solve(m, &f64s(&[1.0, 1.0], &[2])).unwrap(),
                "solve",
            );
        }
        all_bad(&linalg::cholesky(m).unwrap(), "cholesky");
        all_bad(&linalg::eigh(m).unwrap().0, "eigh");
        all_bad(&linalg::singular_values(m).unwrap(), "svd");
        all_bad(&linalg::qr(m, false).unwrap().1, "qr");
    }
}

/// `solve` broadcasts as numpy 2 (and JAX) do: a vector `b` against every matrix of `a`, a
/// stack of matrices `b` with the batch axes broadcast; each result checked against the
/// solve of its own matrix and right-hand side.
#[test]
fn solve_broadcasts_batch_axes_as_numpy_2() {
    let a = spd(5, 3, 30);
    let per_matrix = |k: usize, rhs: &Array| -> Array {
        let ak = a
            .slice(&[k, 0, 0], &[k + 1, 3, 3], &[1, 1, 1])
            .unwrap()
            .reshape(&[3, 3])
            .unwrap();
        linalg::solve(&ak, rhs).unwrap()
    };
    // b[3, 2]: one matrix for every matrix of a.
    let b = random(&[3, 2], 31);
    let x = linalg::solve(&a, &b).unwrap();
    assert_eq!(x.shape(), &[5, 3, 2]);
    for k in 0..5 {
        let xk = x.slice(&[k, 0, 0], &[k + 1, 3, 2], &[1, 1, 1]).unwrap();
        close(
            &xk.reshape(&[3, 2]).unwrap(),
            &per_matrix(k, &b),
            1e-12,
            "b[3, 2]",
        );
    }
    // lu_solve from the factors of every matrix, the same right-hand side for each.
    let (f, _, perm) = linalg::lu(&a).unwrap();
    close(
        &linalg::lu_solve(&f, &perm, &b).unwrap(),
        &x,
        1e-12,
        "lu_solve b[3, 2]",
    );
    // b[3]: a vector.
    let v = random(&[3], 32);
    let x = linalg::solve(&a, &v).unwrap();
    assert_eq!(x.shape(), &[5, 3]);
    for k in 0..5 {
        let xk = x.slice(&[k, 0], &[k + 1, 3], &[1, 1]).unwrap();
        close(
            &xk.reshape(&[3]).unwrap(),
            &per_matrix(k, &v),
            1e-12,
            "b[3]",
        );
    }
    // b[2, 1, 3, 4]: batch axes (2, 1) and (5,) broadcast to (2, 5).
    let b = random(&[2, 1, 3, 4], 33);
    let x = linalg::solve(&a, &b).unwrap();
    assert_eq!(x.shape(), &[2, 5, 3, 4]);
    for (i, k) in [(0, 0), (1, 4), (1, 2)] {
        let bi = b
            .slice(&[i, 0, 0, 0], &[i + 1, 1, 3, 4], &[1, 1, 1, 1])
            .unwrap()
            .reshape(&[3, 4])
            .unwrap();
        let xik = x
            .slice(&[i, k, 0, 0], &[i + 1, k + 1, 3, 4], &[1, 1, 1, 1])
            .unwrap()
            .reshape(&[3, 4])
            .unwrap();
        close(&xik, &per_matrix(k, &bi), 1e-12, "b[2, 1, 3, 4]");
    }
    // b[5, 3] was a stack of vectors before numpy 2; now it is one 5x3 matrix, which does
    // not fit 3x3 matrices: a Value error that says how to write the old meaning.
    let err = linalg::solve(&a, &random(&[5, 3], 34)).unwrap_err();
    assert!(matches!(err, quabla::Error::Value(_)), "{err}");
    assert!(err.to_string().contains("b[..., None]"), "{err}");
    // Batch axes that do not broadcast.
    let err = linalg::solve(&a, &random(&[4, 3, 1], 35)).unwrap_err();
    assert!(err.to_string().contains("do not broadcast"), "{err}");
}
