"""``scipy.linalg.hessenberg``, ``qr_multiply`` and ``fiedler_companion`` against values
scipy 1.x (LAPACK) and JAX 0.10.2 gave for the same inputs (recorded by hand: the test venv
has neither), and against their defining identities."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
import quabla.scipy.linalg as sl
from quabla.test_util import check_grads

from conftest import assert_close

A5 = np.array([[4.0, 1, -2, 2, 7], [1, 2, 0, 1, 3], [-2, 0, 3, -2, 1], [-0.25, 1, -2, -1, 0],
               [0.5, -1, 2, 0, 1]])
# scipy.linalg.hessenberg(A5, calc_q=True); JAX's is the same to the last bit.
H5 = np.array([
    [4.0, -3.4708873250984977, -2.755716810253272, -3.1404563064275006, 5.338211332045394],
    [-2.3048861143232218, 1.823529411764706, -1.5901293567429509, 0.44110173128699426,
     -1.9155431174297428],
    [0.0, -3.5169387443468345, 0.9127207980489795, 0.2947911602999026, -0.5787325506683652],
    [0.0, 0.0, 2.3654869786050092, 2.838017334023629, -0.7223495793958608],
    [0.0, 0.0, 0.0, 1.4687270679661932, -0.574267543837316]])
Q5 = np.array([
    [1.0, 0.0, 0.0, 0.0, 0.0],
    [0.0, -0.4338609156373123, 0.1759740161912887, -0.7598876382222094, -0.4509641103069442],
    [0.0, 0.8677218312746247, -0.16690319061441808, -0.4413418896585331, -0.15626735079591686],
    [0.0, 0.10846522890932808, 0.7038960647651548, -0.2807466313080656, 0.6433870943179923],
    [0.0, -0.21693045781865616, -0.6676127624576723, -0.38596559784374673, 0.5985523645892169]])


def test_hessenberg_matches_lapack_signs_and_values():
    h, q = sl.hessenberg(qnp.asarray(A5), calc_q=True)
    assert_close(h, H5, rtol=0, atol=1e-14)
    assert_close(q, Q5, rtol=0, atol=1e-14)
    # Exactly zero below the first subdiagonal, and a = Q H Q^T.
    assert np.all(np.tril(np.asarray(h), -2) == 0)
    assert_close(q @ h @ q.T, A5, rtol=0, atol=1e-13)
    assert_close(sl.hessenberg(qnp.asarray(A5)), H5, rtol=0, atol=1e-14)


def test_hessenberg_skips_columns_already_reduced_and_small_sizes():
    # Columns with zeros below the subdiagonal need no reflection: LAPACK's tau = 0.
    z = np.array([[1.0, 2, 3, 4], [5, 6, 7, 8], [0, 0, 1, 2], [0, 0, 3, 4]])
    h, q = sl.hessenberg(qnp.asarray(z), calc_q=True)
    assert_close(h, z, rtol=0)
    assert_close(q, np.eye(4), rtol=0)
    for n in (1, 2):
        m = np.arange(1.0, n * n + 1).reshape(n, n)
        assert_close(sl.hessenberg(qnp.asarray(m)), m, rtol=0)
    with pytest.raises(ValueError, match="square"):
        sl.hessenberg(qnp.ones((2, 3)))


def test_hessenberg_batches_and_differentiates():
    stack = np.stack([A5, A5.T, 2 * A5])
    h = sl.hessenberg(qnp.asarray(stack))
    for i in range(3):
        assert_close(h[i], sl.hessenberg(qnp.asarray(stack[i])), rtol=0, atol=1e-14)
    # H's entries are smooth away from a column that is already reduced.
    check_grads(lambda a: sl.hessenberg(a), (qnp.asarray(A5),), order=1, modes=("fwd", "rev"))


def test_qr_multiply_matches_jax():
    a = np.array([[2.0, -1, 0.5], [1, 3, -2], [0, 1, 4], [-1, 2, 1]])
    c = np.array([[1.0, 0, 2, -1], [0.5, 1, -1, 3]])
    out, r = sl.qr_multiply(qnp.asarray(a), qnp.asarray(c))
    assert_close(out, [[-1.224744871391589, 0.12982269672237462, -1.8694676151566059],
                       [0.408248290463863, -1.9040662185948274, 0.5894773547791556]],
                 rtol=0, atol=1e-14)
    assert_close(r, [[-2.449489742783178, 0.4082482904638629, 0.816496580927726],
                     [0.0, -3.851406669430448, 0.21637116120395783],
                     [0.0, 0.0, -4.5317233867406985]], rtol=0, atol=1e-14)
    left, _ = sl.qr_multiply(qnp.asarray(a), qnp.asarray([[1.0, 2], [0, 1], [-1, 0.5]]),
                             mode="left")
    assert_close(left, [[-0.5673168789075154, -1.5844860839023913],
                        [-0.7367687931273249, -1.4744467421710343],
                        [0.8950634072566777, -0.7071770970730881],
                        [0.5780871918408226, 0.25556057559053935]], rtol=0, atol=1e-14)
    # A wide a and a vector c (a row, raveled back).
    vec, r = sl.qr_multiply(qnp.asarray(a.T), qnp.asarray([1.0, 2, -1]))
    assert vec.shape == (3,) and r.shape == (3, 4)
    assert_close(vec, [0.21821789023599236, -2.4212502751320435, 0.29988007195203337],
                 rtol=0, atol=1e-14)


def test_qr_multiply_errors():
    a = qnp.ones((4, 3))
    with pytest.raises(ValueError, match="3 columns"):
        sl.qr_multiply(a, qnp.ones((2, 2)), mode="left")
    with pytest.raises(ValueError, match="4 rows"):
        sl.qr_multiply(a, qnp.ones((2, 3)))
    with pytest.raises(ValueError, match="mode"):
        sl.qr_multiply(a, qnp.ones((2, 4)), mode="up")
    with pytest.raises(NotImplementedError, match="pivoting"):
        sl.qr_multiply(a, qnp.ones((2, 4)), pivoting=True)


# scipy.linalg.fiedler_companion([2, -3, 5, 0.5, -7, 1.5, 4]); shorter polynomials give its
# leading blocks.
FC7 = np.array([[1.5, -2.5, 1, 0, 0, 0], [1, 0, 0, 0, 0, 0], [0, -0.25, 0, 3.5, 1, 0],
                [0, 1, 0, 0, 0, 0], [0, 0, 0, -0.75, 0, -2], [0, 0, 0, 1, 0, 0]])


def test_fiedler_companion_matches_scipy():
    coef = [2.0, -3, 5, 0.5, -7, 1.5, 4]
    for n in range(2, 8):
        assert_close(sl.fiedler_companion(qnp.asarray(coef[:n])), FC7[:n - 1, :n - 1], rtol=0)
    assert sl.fiedler_companion(qnp.asarray([3.0])).shape == (0, 0)
    # Its eigenvalues are the polynomial's roots.
    roots = np.sort(np.linalg.eigvals(np.asarray(sl.fiedler_companion(
        qnp.asarray([1.0, -16, 86, -176, 105])))).real)
    assert_close(roots, [1.0, 3.0, 5.0, 7.0], rtol=1e-12)
    with pytest.raises(ValueError, match="at least one coefficient"):
        sl.fiedler_companion(qnp.zeros((0,)))


def test_fiedler_companion_batches_and_keeps_infs_in_place():
    batch = qnp.asarray([[1.0, 2, 3], [2.0, -4, 8]])
    out = sl.fiedler_companion(batch)
    assert_close(out, [[[-2, -3], [1, 0]], [[2, -4], [1, 0]]], rtol=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        bad = np.asarray(sl.fiedler_companion(qnp.asarray([0.0, 2, 3, 4])))
    assert_close(bad, [[-np.inf, -np.inf, 1], [1, 0, 0], [0, -np.inf, 0]], rtol=0)
    g = quabla.grad(lambda a: qnp.sum(sl.fiedler_companion(a) * qnp.arange(4.0).reshape(2, 2)))
    # d/da of -a1/a0 * 0 - a2/a0 * 1: (a2/a0^2, 0, -1/a0) at a = (2, -4, 8).
    assert_close(g(qnp.asarray([2.0, -4, 8])), [2.0, 0.0, -0.5], rtol=1e-15)
