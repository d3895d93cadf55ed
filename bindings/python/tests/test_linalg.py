"""quabla.linalg / quabla.numpy.linalg against numpy.linalg (values, batched), scipy's
conventions by their defining identities, and gradients against goldens recorded from
jax.numpy.linalg (JAX 0.10.2)."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from conftest import assert_close, dec, golden

RNG = np.random.default_rng(11)
G = RNG.uniform(-1, 1, (3, 4, 4)) + 3 * np.eye(4)
M = RNG.uniform(-1, 1, (3, 4, 4))
SPD = M @ np.swapaxes(M, -1, -2) + 4 * np.eye(4)
TALL = RNG.uniform(-1, 1, (5, 3))
L = quabla.linalg


def test_values_match_numpy_on_batches():
    assert_close(L.det(G), np.linalg.det(G), rtol=1e-12)
    s, ld = L.slogdet(G)
    ns, nld = np.linalg.slogdet(G)
    assert_close(s, ns)
    assert_close(ld, nld, rtol=1e-12)
    assert_close(L.inv(G), np.linalg.inv(G), rtol=1e-11)
    b = RNG.uniform(-1, 1, (3, 4))
    assert_close(L.solve(G, b[..., None])[..., 0], np.linalg.solve(G, b[..., None])[..., 0],
                 rtol=1e-11)
    # numpy 2's broadcasting (issue 20 item 6): one vector, one matrix, broadcast batches.
    v, m = RNG.uniform(-1, 1, 4), RNG.uniform(-1, 1, (4, 2))
    assert_close(L.solve(G, v), np.linalg.solve(G, v), rtol=1e-11)
    assert_close(L.solve(G, m), np.linalg.solve(G, m), rtol=1e-11)
    stacked = RNG.uniform(-1, 1, (2, 1, 4, 3))
    assert_close(L.solve(G, stacked), np.linalg.solve(G, stacked), rtol=1e-11)
    with pytest.raises(ValueError, match=r"b\[\.\.\., None\]"):
        L.solve(G, b)
    assert_close(L.cholesky(SPD), np.linalg.cholesky(SPD), rtol=1e-12)
    w, v = L.eigh(SPD)
    nw, nv = np.linalg.eigh(SPD)
    assert_close(w, nw, rtol=1e-12)
    assert_close(np.abs(np.asarray(v)), np.abs(nv), rtol=1e-9, atol=1e-12)
    u, sv, vh = qnp.linalg.svd(TALL, full_matrices=False)
    assert_close(sv, np.linalg.svd(TALL, compute_uv=False), rtol=1e-12)
    assert_close(np.asarray(u) * np.asarray(sv) @ np.asarray(vh), TALL, rtol=1e-12, atol=1e-14)
    assert qnp.linalg.svd(TALL).U.shape == (5, 5)
    q, r = L.qr(TALL)
    assert_close(np.asarray(q) @ np.asarray(r), TALL, rtol=1e-12, atol=1e-14)
    assert L.qr(TALL, mode="complete").Q.shape == (5, 5)
    assert_close(L.pinv(TALL), np.linalg.pinv(TALL), rtol=1e-10)
    y = RNG.uniform(-1, 1, 5)
    x, res, rank, s = L.lstsq(TALL, y)
    nx, nres, nrank, ns_ = np.linalg.lstsq(TALL, y, rcond=None)
    assert_close(x, nx, rtol=1e-10)
    assert_close(res, nres, rtol=1e-10)
    assert int(rank) == nrank
    for o in [None, 1, 2, np.inf, -np.inf, 0, 3.5]:
        assert_close(L.norm(y, o), np.linalg.norm(y, o), rtol=1e-12)
    for o in [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf]:
        assert_close(L.norm(TALL, o), np.linalg.norm(TALL, o), rtol=1e-12)
    assert_close(L.norm(G, axis=(1, 2), ord="nuc"), np.linalg.norm(G, axis=(1, 2), ord="nuc"), rtol=1e-12)
    assert_close(L.norm(TALL, axis=0, keepdims=True), np.linalg.norm(TALL, axis=0, keepdims=True), rtol=1e-12)
    assert_close(L.matrix_power(G[0], 5), np.linalg.matrix_power(G[0], 5), rtol=1e-11)
    assert_close(L.matrix_power(G[0], -2), np.linalg.matrix_power(G[0], -2), rtol=1e-10)
    for p in [None, 2, -2, 1, np.inf, "fro"]:
        assert_close(L.cond(G[0], p), np.linalg.cond(G[0], p), rtol=1e-10)
    assert int(L.matrix_rank(np.outer([1.0, 2.0, 3.0], [1.0, 1.0]))) == 1
    assert_close(L.eigvalsh(SPD), nw, rtol=1e-12)


def test_scipy_style_solvers():
    a = np.triu(G[0])
    b = RNG.uniform(-1, 1, (4, 2))
    assert_close(L.solve_triangular(a, b), np.linalg.solve(a, b), rtol=1e-12)
    assert_close(L.solve_triangular(a, b, trans="T"), np.linalg.solve(a.T, b), rtol=1e-12)
    assert_close(L.solve_triangular(a.T, b, lower=True), np.linalg.solve(a.T, b), rtol=1e-12)
    c = L.cho_factor(SPD[0])
    assert_close(L.cho_solve(c, b), np.linalg.solve(SPD[0], b), rtol=1e-11)
    c = L.cho_factor(SPD[0], lower=True)
    assert_close(L.cho_solve(c, b), np.linalg.solve(SPD[0], b), rtol=1e-11)
    lu, piv, perm = L.lu(G[0])
    f = np.asarray(lu)
    lo, up = np.tril(f, -1) + np.eye(4), np.triu(f)
    assert_close(lo @ up, G[0][np.asarray(perm)], rtol=1e-12)
    # lax-style triangular_solve: JAX's defaults (right side, upper).
    x = L.triangular_solve(a, b.T)
    assert_close(np.asarray(x) @ a, b.T, rtol=1e-12)


def test_singular_and_indefinite_input_follow_numpy_and_jax():
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert float(L.det(sing)) == 0.0
    assert not np.all(np.isfinite(np.asarray(L.solve(sing, np.ones(2)))))
    indefinite = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert np.all(np.isnan(np.asarray(L.cholesky(indefinite))))
    with pytest.raises(quabla.linalg.LinAlgError, match="positive definite"):
        L.cholesky_checked(indefinite)
    with pytest.raises(TypeError, match="square"):
        L.inv(np.ones((2, 3)))
    with pytest.raises(ValueError, match="ord"):
        L.norm(np.ones(3), "max")


@pytest.mark.parametrize("name", ["det", "slogdet", "inv", "solve", "cholesky", "eigh", "svd",
                                  "qr", "pinv", "norm_nuc", "norm_2", "matrix_power_3"])
def test_gradients_match_jax(name):
    g = golden("jax_linalg")
    w, b = dec(g["w"]), dec(g["b"])

    def wsum(x, k=0):
        x = x.reshape(-1)
        return qnp.sum(x * qnp.asarray(w[k:k + x.size]))

    fns = {
        "det": lambda a: L.det(a),
        "slogdet": lambda a: L.slogdet(a)[1],
        "inv": lambda a: wsum(L.inv(a)),
        "solve": lambda a: wsum(L.solve(a, qnp.asarray(b))),
        "cholesky": lambda a: wsum(L.cholesky(a)),
        "eigh": lambda a: wsum(L.eigh(a)[0]) + wsum(L.eigh(a)[1] ** 2, 4),
        "svd": lambda a: (wsum(L.svd(a, full_matrices=False)[1])
                          + wsum(L.svd(a, full_matrices=False)[0] ** 2, 3)
                          + wsum(L.svd(a, full_matrices=False)[2] ** 2, 20)),
        "qr": lambda a: wsum(L.qr(a)[0]) + wsum(L.qr(a)[1], 15),
        "pinv": lambda a: wsum(L.pinv(a)),
        "norm_nuc": lambda a: L.norm(a, "nuc"),
        "norm_2": lambda a: L.norm(a, 2),
        "matrix_power_3": lambda a: wsum(L.matrix_power(a, 3)),
    }
    c = g["cases"][name]
    x = qnp.asarray(dec(c["x"]))
    assert_close(fns[name](x), dec(c["value"]), rtol=1e-10)
    assert_close(quabla.grad(fns[name])(x), dec(c["grad"]), rtol=1e-8, atol=1e-12)
    assert_close(quabla.jit(quabla.grad(fns[name]))(x), dec(c["grad"]), rtol=1e-8, atol=1e-12)


def test_batched_factorizations_under_vmap_and_second_order():
    dets = quabla.vmap(L.det)(qnp.asarray(G))
    assert_close(dets, np.linalg.det(G), rtol=1e-12)
    # d²/da² of log det at a: the Hessian applied to e is -a⁻ᵀ eᵀ a⁻ᵀ.
    a = G[0]
    e = RNG.uniform(-1, 1, (4, 4))
    hv = quabla.jvp(quabla.grad(lambda x: L.slogdet(x)[1]), (qnp.asarray(a),), (qnp.asarray(e),))[1]
    ai = np.linalg.inv(a)
    assert_close(hv, -(ai @ e @ ai).T, rtol=1e-10)
