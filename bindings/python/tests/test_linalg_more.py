"""``scipy.linalg.qr``, ``polar``, ``eigh_tridiagonal`` and ``solve_sylvester`` against
their defining identities and JAX 0.10.2's results recorded by hand."""

import numpy as np
import pytest

import quabla.numpy as qnp
import quabla.scipy.linalg as sl
from quabla.test_util import check_grads
from conftest import assert_close

RNG = np.random.default_rng(8)


def test_qr_modes():
    a = qnp.asarray([[1.0, 2], [3, 4], [5, 6]])
    q, r = sl.qr(a)
    assert q.shape == (3, 3) and r.shape == (3, 2)
    assert_close(np.asarray(q) @ np.asarray(r), a, rtol=1e-14)
    assert_close(np.asarray(q).T @ np.asarray(q), np.eye(3), rtol=0, atol=1e-15)
    q, r = sl.qr(a, mode="economic")
    assert q.shape == (3, 2) and r.shape == (2, 2)
    (r_only,) = sl.qr(a, mode="r")
    # JAX: [[-5.91607978, -7.43735744], [0, 0.82807867], [0, 0]].
    assert_close(np.abs(np.asarray(r_only)), [[5.91607978, 7.43735744], [0, 0.82807867],
                                              [0, 0]], rtol=5e-8)
    with pytest.raises(NotImplementedError, match="pivoting"):
        sl.qr(a, pivoting=True)


def test_polar():
    # JAX: u = [[0.98058068, 0.19611614], [-0.19611614, 0.98058068]],
    # p = [[1.96116135, 0.39223227], [0.39223227, 3.13785816]].
    a = np.array([[2.0, 1], [0, 3]])
    u, p = sl.polar(qnp.asarray(a))
    assert_close(u, [[0.98058068, 0.19611614], [-0.19611614, 0.98058068]], rtol=5e-8)
    assert_close(p, [[1.96116135, 0.39223227], [0.39223227, 3.13785816]], rtol=5e-8)
    for shape, side in (((4, 3), "right"), ((3, 4), "left"), ((3, 3), "left")):
        m = RNG.standard_normal(shape)
        u, p = map(np.asarray, sl.polar(qnp.asarray(m), side=side, method="svd"))
        assert_close(u @ p if side == "right" else p @ u, m, rtol=1e-12, atol=1e-13)
        assert_close(p, p.T, rtol=1e-13, atol=1e-14)
        assert (np.linalg.eigvalsh(p) > -1e-12).all()


def test_eigh_tridiagonal():
    d, e = qnp.asarray([1.0, 2, 3]), qnp.asarray([0.5, 0.25])
    # JAX: [0.78868248, 2.145189, 3.06612852].
    assert_close(sl.eigh_tridiagonal(d, e, eigvals_only=True),
                 [0.78868248, 2.145189, 3.06612852], rtol=5e-8)
    w, v = sl.eigh_tridiagonal(d, e)
    t = np.diag([1.0, 2, 3]) + np.diag([0.5, 0.25], 1) + np.diag([0.5, 0.25], -1)
    assert_close(t @ np.asarray(v), np.asarray(v) * np.asarray(w), rtol=1e-13, atol=1e-14)
    with pytest.raises(NotImplementedError, match="select"):
        sl.eigh_tridiagonal(d, e, select="i")


def test_solve_sylvester():
    # JAX: [[0.21547619, -0.04166667], [-0.01785714, 0.125]].
    a, b, c = [[1.0, 2], [0, 3]], [[4.0, 0], [1, 5]], [[1.0, 0], [0, 1]]
    assert_close(sl.solve_sylvester(qnp.asarray(a), qnp.asarray(b), qnp.asarray(c)),
                 [[0.21547619, -0.04166667], [-0.01785714, 0.125]], rtol=3e-7)
    a, b, c = RNG.standard_normal((3, 3)), RNG.standard_normal((2, 2)), RNG.standard_normal((3, 2))
    x = np.asarray(sl.solve_sylvester(qnp.asarray(a), qnp.asarray(b), qnp.asarray(c)))
    assert_close(a @ x + x @ b, c, rtol=1e-12, atol=1e-13)
    check_grads(lambda p, q, r: sl.solve_sylvester(p, q, r),
                (qnp.asarray(a), qnp.asarray(b), qnp.asarray(c)), order=1)
