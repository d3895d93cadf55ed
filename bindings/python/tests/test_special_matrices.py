"""``quabla.scipy.linalg``'s special matrices against their definitions written as numpy
loops here (scipy's docs), ``numpy.convolve`` for ``convolution_matrix``, exact inverses
(``invhilbert @ hilbert``, ``invpascal @ pascal``), orthonormality (``helmert``,
``hadamard``), and ``expm_frechet`` against central differences of ``expm``."""

import math

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
import quabla.scipy.linalg as sl
from quabla.test_util import check_grads
from conftest import assert_close

RNG = np.random.default_rng(5)


def test_structured_matrices_match_their_definitions():
    c, r = RNG.standard_normal(4), RNG.standard_normal(3)
    t = np.array([[c[i - j] if i >= j else r[j - i] for j in range(3)] for i in range(4)])
    assert_close(sl.toeplitz(c, r), t, rtol=0)
    assert_close(sl.toeplitz(c), [[c[abs(i - j)] for j in range(4)] for i in range(4)], rtol=0)
    h = np.array([[c[i + j] if i + j < 4 else r[i + j - 3] for j in range(3)] for i in range(4)])
    assert_close(sl.hankel(c, r), h, rtol=0)
    assert_close(sl.hankel(c), [[c[i + j] if i + j < 4 else 0.0 for j in range(4)]
                                for i in range(4)], rtol=0)
    assert_close(sl.circulant(c), [[c[(i - j) % 4] for j in range(4)] for i in range(4)], rtol=0)
    assert_close(sl.fiedler(c), np.abs(c[:, None] - c[None, :]), rtol=0)
    a = np.array([2.0, -3.0, 4.0, 5.0])
    comp = np.asarray(sl.companion(a))
    assert_close(comp, [[1.5, -2.0, -2.5], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], rtol=0)
    # Its eigenvalues are the polynomial's roots.
    assert_close(np.sort_complex(np.linalg.eigvals(comp)), np.sort_complex(np.roots(a)),
                 rtol=1e-12)
    assert_close(sl.leslie([0.1, 2.0, 1.0], [0.2, 0.8]),
                 [[0.1, 2.0, 1.0], [0.2, 0.0, 0.0], [0.0, 0.8, 0.0]], rtol=0)


def test_batched_as_jax():
    # JAX 0.10.2: toeplitz and circulant of a (2, 3) stack are (2, 3, 3), one per row.
    cs = RNG.standard_normal((2, 3))
    for f in (sl.toeplitz, sl.circulant, sl.hankel):
        out = np.asarray(f(cs))
        assert out.shape == (2, 3, 3)
        for b in range(2):
            assert_close(out[b], f(cs[b]), rtol=0)


def test_convolution_matrix_is_numpy_convolve():
    a = RNG.standard_normal(4)
    for n in (2, 4, 7):
        v = RNG.standard_normal(n)
        for mode in ("full", "same", "valid"):
            m = sl.convolution_matrix(a, n, mode)
            assert_close(np.asarray(m) @ v, np.convolve(a, v, mode), rtol=1e-13, atol=1e-15)
    with pytest.raises(ValueError, match="mode"):
        sl.convolution_matrix(a, 3, "circular")


def test_fixed_matrices_are_exact():
    for n in (1, 3, 6):
        assert_close(sl.hilbert(n), [[1 / (i + j + 1) for j in range(n)] for i in range(n)],
                     rtol=0)
        assert_close(np.asarray(sl.invhilbert(n)) @ np.asarray(sl.hilbert(n)), np.eye(n),
                     rtol=0, atol=1e-6 * 10 ** n)
        for kind in (None, "lower", "upper"):
            p, q = np.asarray(sl.pascal(n, kind)), np.asarray(sl.invpascal(n, kind))
            assert_close(q @ p, np.eye(n), rtol=0, atol=1e-9)
        assert_close(sl.pascal(n), [[math.comb(i + j, i) for j in range(n)] for i in range(n)],
                     rtol=0)
    assert_close(sl.invhilbert(4)[1, 2], -2700.0, rtol=0)
    for n in (1, 2, 8):
        h = np.asarray(sl.hadamard(n))
        assert h.dtype == np.int32
        assert_close(h @ h.T, n * np.eye(n), rtol=0)
    for n in (2, 5):
        full = np.asarray(sl.helmert(n, full=True))
        assert_close(full @ full.T, np.eye(n), rtol=0, atol=1e-15)
        assert_close(sl.helmert(n), full[1:], rtol=0)
    with pytest.raises(ValueError, match="power of 2"):
        sl.hadamard(6)
    with pytest.raises(ValueError, match="kind"):
        sl.pascal(3, "diagonal")


def test_derivatives_and_transformations():
    c, r = qnp.asarray(RNG.standard_normal(3)), qnp.asarray(RNG.standard_normal(3))
    check_grads(lambda x, y: qnp.sum(sl.toeplitz(x, y) ** 2), (c, r), order=2)
    check_grads(lambda x: qnp.linalg.det(sl.companion(qnp.concatenate([qnp.ones(1), x]))),
                (c,), order=1)
    f = quabla.jit(quabla.vmap(lambda x: qnp.trace(sl.circulant(x) @ sl.hankel(x))))
    xs = RNG.standard_normal((4, 3))
    assert_close(f(qnp.asarray(xs)), [np.trace(np.asarray(sl.circulant(x)) @
                                               np.asarray(sl.hankel(x))) for x in xs],
                 rtol=1e-13)


def test_expm_frechet_is_the_directional_derivative_of_expm():
    a, e = RNG.standard_normal((3, 3)) * 0.5, RNG.standard_normal((3, 3))
    value, derivative = sl.expm_frechet(a, e)
    assert_close(value, sl.expm(a), rtol=1e-14)
    h = 1e-5
    numerical = (np.asarray(sl.expm(a + h * e)) - np.asarray(sl.expm(a - h * e))) / (2 * h)
    assert_close(derivative, numerical, rtol=1e-7, atol=1e-9)
    assert_close(sl.expm_frechet(a, e, compute_expm=False), derivative, rtol=0)
    with pytest.raises(ValueError, match="one shape"):
        sl.expm_frechet(a, e[:2])
