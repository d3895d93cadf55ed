"""Goldens for the linalg primitives (cholesky, lu, triangular_solve, eigh, qr, svd) from
numpy.linalg in float64 (LU from a float64 partial-pivoting reference written here, since
numpy has no LU). Sign-ambiguous factors (eigenvectors, Q/R, singular vectors) are compared
through `abs`, which every valid factorization agrees on; complements that are not unique
(complete Q or full U/V of non-square matrices) are not compared."""
import numpy as np

from golden import case, tol_close, tol_exact
from qir import Program, ty

RNG = np.random.default_rng(20261130)
TOL = {"f32": tol_close(2e-4, 2e-5), "f64": tol_close(1e-10, 1e-12)}
NPT = {"f32": np.float32, "f64": np.float64}


def spd(batch, n):
    m = RNG.uniform(-1, 1, size=(batch, n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def lu_ref(a):
    """Doolittle with partial pivoting (largest magnitude, first on ties): (lu, pivots, perm)."""
    a = np.array(a, dtype=np.float64)
    n = a.shape[0]
    perm = np.arange(n)
    piv = np.zeros(n, dtype=np.int32)
    for k in range(n):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        piv[k] = p
        a[[k, p]] = a[[p, k]]
        perm[[k, p]] = perm[[p, k]]
        if a[k, k] != 0:
            a[k + 1:, k] /= a[k, k]
            a[k + 1:, k + 1:] -= np.outer(a[k + 1:, k], a[k, k + 1:])
    return a, piv, perm.astype(np.int32)


def with_abs(name, dt, in_shape, result_types, attrs, absolute):
    """A program applying `name`, then `abs` to the results marked in `absolute`."""
    p = Program(ty(dt, in_shape))
    outs = p.op(name, [p.arg(0)], result_types, attrs)
    if isinstance(outs, str):
        outs = [outs]
    final = []
    for o, t, a in zip(outs, result_types, absolute):
        final.append(p.op("abs", [o], t) if a else o)
    return p.ret(*final)


def cases():
    out = []
    for dt in ["f32", "f64"]:
        f = NPT[dt]
        a = spd(2, 4).astype(f)
        p = with_abs("cholesky", dt, [2, 4, 4], [ty(dt, [2, 4, 4])], None, [False])
        out.append(case(f"cholesky/{dt}_batch", p, [(dt, a)], [(dt, np.linalg.cholesky(a.astype(np.float64)))], TOL[dt]))
        bad = np.array([[1.0, 2.0], [2.0, 1.0]], dtype=f)
        p = with_abs("cholesky", dt, [2, 2], [ty(dt, [2, 2])], None, [False])
        out.append(case(f"cholesky/{dt}_not_positive_definite_is_nan", p, [(dt, bad)], [(dt, np.full((2, 2), np.nan))], tol_exact(),
                        note="JAX returns NaN for a matrix that is not positive definite"))

        g = RNG.uniform(-1, 1, size=(3, 5, 5))
        refs = [lu_ref(x) for x in g]
        p = Program(ty(dt, [3, 5, 5]))
        r = p.op("lu", [p.arg(0)], [ty(dt, [3, 5, 5]), ty("i32", [3, 5]), ty("i32", [3, 5])])
        p.ret(*r)
        out.append(case(f"lu/{dt}_batch", p, [(dt, g.astype(f))],
                        [(dt, np.stack([x[0] for x in refs])), ("i32", np.stack([x[1] for x in refs])),
                         ("i32", np.stack([x[2] for x in refs]))], [TOL[dt], tol_exact(), tol_exact()]))

        base = RNG.uniform(-1, 1, size=(2, 4, 4)) + 3 * np.eye(4)
        for left in [True, False]:
            for lower in [True, False]:
                for trans in [True, False]:
                    for unit in [True, False]:
                        if dt == "f32" and not (left and unit is False):
                            continue
                        b = RNG.uniform(-1, 1, size=(2, 4, 3) if left else (2, 3, 4))
                        tri = np.tril(base) if lower else np.triu(base)
                        if unit:
                            tri = tri - np.einsum("bii->bi", tri)[..., None] * np.eye(4) + np.eye(4)
                        opa = np.swapaxes(tri, -1, -2) if trans else tri
                        x = np.linalg.solve(opa, b) if left else np.swapaxes(
                            np.linalg.solve(np.swapaxes(opa, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)
                        attrs = [("left_side", str(left).lower()), ("lower", str(lower).lower()),
                                 ("transpose_a", str(trans).lower()), ("unit_diagonal", str(unit).lower())]
                        p = Program(ty(dt, [2, 4, 4]), ty(dt, list(b.shape)))
                        r = p.op("triangular_solve", [p.arg(0), p.arg(1)], ty(dt, list(b.shape)), attrs)
                        p.ret(r)
                        name = f"triangular_solve/{dt}_{'left' if left else 'right'}_{'lower' if lower else 'upper'}" \
                               f"{'_trans' if trans else ''}{'_unit' if unit else ''}"
                        out.append(case(name, p, [(dt, base.astype(f)), (dt, b.astype(f))], [(dt, x)], TOL[dt],
                                        note="the triangle not named is filled with other values and must be ignored"))

        s = spd(2, 5)
        w, v = np.linalg.eigh(s)
        p = with_abs("eigh", dt, [2, 5, 5], [ty(dt, [2, 5]), ty(dt, [2, 5, 5])], None, [False, True])
        out.append(case(f"eigh/{dt}_batch", p, [(dt, s.astype(f))], [(dt, w), (dt, np.abs(v))], TOL[dt],
                        note="eigenvectors compared up to sign"))

        for m, n, full in [(6, 4, False), (4, 6, False), (4, 6, True), (5, 5, True)]:
            x = RNG.uniform(-1, 1, size=(2, m, n))
            q, r = np.linalg.qr(x, mode="complete" if full else "reduced")
            k = min(m, n)
            qt = ty(dt, [2, m, m if full else k])
            rt = ty(dt, [2, m if full else k, n])
            p = with_abs("qr", dt, [2, m, n], [qt, rt], [("full_matrices", str(full).lower())], [True, True])
            out.append(case(f"qr/{dt}_{m}x{n}_{'complete' if full else 'reduced'}", p, [(dt, x.astype(f))],
                            [(dt, np.abs(q)), (dt, np.abs(r))], TOL[dt], note="Q and R compared up to sign"))

        for m, n, full in [(6, 4, False), (4, 6, False), (5, 5, True)]:
            x = RNG.uniform(-1, 1, size=(2, m, n))
            u, sv, vt = np.linalg.svd(x, full_matrices=full)
            k = min(m, n)
            types = [ty(dt, list(u.shape)), ty(dt, [2, k]), ty(dt, list(vt.shape))]
            attrs = [("full_matrices", str(full).lower()), ("compute_uv", "true")]
            p = with_abs("svd", dt, [2, m, n], types, attrs, [True, False, True])
            out.append(case(f"svd/{dt}_{m}x{n}_{'full' if full else 'reduced'}", p, [(dt, x.astype(f))],
                            [(dt, np.abs(u)), (dt, sv), (dt, np.abs(vt))], TOL[dt],
                            note="singular vectors compared up to sign"))
            p = with_abs("svd", dt, [2, m, n], [ty(dt, [2, k])], [("full_matrices", "false"), ("compute_uv", "false")], [False])
            out.append(case(f"svd/{dt}_{m}x{n}_values_only", p, [(dt, x.astype(f))], [(dt, sv)], TOL[dt]))
    return out


def build():
    return {"ops/linalg": cases()}
