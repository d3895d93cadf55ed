"""``quabla.numpy.linalg``'s Array API names against numpy 2's ``numpy.linalg`` (same names,
same keywords), derivatives by ``check_grads`` against finite differences, and the
refusals the standard asks for."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla.test_util import check_grads
from conftest import assert_close

RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape)


def test_last_two_axes_functions_match_numpy():
    x = rand(2, 3, 4)
    for k in (-1, 0, 2):
        assert_close(qnp.linalg.diagonal(qnp.asarray(x), offset=k),
                     np.linalg.diagonal(x, offset=k), rtol=0)
        assert_close(qnp.linalg.trace(qnp.asarray(x), offset=k),
                     np.linalg.trace(x, offset=k), rtol=1e-14)
    assert_close(qnp.linalg.matrix_transpose(qnp.asarray(x)), np.linalg.matrix_transpose(x),
                 rtol=0)
    for ord in ("fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        for keepdims in (False, True):
            assert_close(qnp.linalg.matrix_norm(qnp.asarray(x), ord=ord, keepdims=keepdims),
                         np.linalg.matrix_norm(x, ord=ord, keepdims=keepdims), rtol=1e-12)
    with pytest.raises(ValueError, match="at least 2"):
        qnp.linalg.diagonal(qnp.arange(3.0))


def test_vector_norm_over_any_axes_matches_numpy():
    x = rand(3, 4, 5)
    for axis in (None, 0, -1, (0, 2), (2, 0), (0, 1, 2)):
        for ord in (2, 1, 0, np.inf, -np.inf, 3.5, -1):
            for keepdims in (False, True):
                got = qnp.linalg.vector_norm(qnp.asarray(x), axis=axis, ord=ord,
                                             keepdims=keepdims)
                want = np.linalg.vector_norm(x, axis=axis, ord=ord, keepdims=keepdims)
                assert got.shape == want.shape, (axis, ord, keepdims)
                assert_close(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="ord must be a number"):
        qnp.linalg.vector_norm(qnp.asarray(x), ord="fro")
    check_grads(lambda v: qnp.linalg.vector_norm(v, axis=(0, 2)), (qnp.asarray(x),), order=2)


def test_vector_forms_match_numpy_and_refuse_what_the_standard_does():
    a, b = rand(4, 3), rand(4, 3)
    assert_close(qnp.linalg.cross(qnp.asarray(a), qnp.asarray(b)), np.linalg.cross(a, b),
                 rtol=1e-14)
    assert_close(qnp.linalg.cross(qnp.asarray(a.T), qnp.asarray(b.T), axis=0),
                 np.linalg.cross(a.T, b.T, axis=0), rtol=1e-14)
    assert_close(qnp.linalg.vecdot(qnp.asarray(a), qnp.asarray(b)), np.linalg.vecdot(a, b),
                 rtol=1e-14)
    assert_close(qnp.linalg.outer(qnp.asarray(a[0]), qnp.asarray(b[1])),
                 np.linalg.outer(a[0], b[1]), rtol=0)
    assert_close(qnp.linalg.matmul(qnp.asarray(a), qnp.asarray(b.T)), np.linalg.matmul(a, b.T),
                 rtol=1e-14)
    assert_close(qnp.linalg.tensordot(qnp.asarray(a), qnp.asarray(b), axes=2),
                 np.linalg.tensordot(a, b, axes=2), rtol=1e-14)
    with pytest.raises(ValueError, match="3 components"):
        qnp.linalg.cross(qnp.ones(2), qnp.ones(2))
    with pytest.raises(ValueError, match="vectors"):
        qnp.linalg.outer(qnp.ones((2, 2)), qnp.ones(2))


def test_multi_dot_picks_the_cheap_order_and_matches_numpy():
    shapes = [(10,), (10, 100), (100, 5), (5, 50), (50,)]
    arrs = [rand(*s) for s in shapes]
    for lo, hi in ((0, 5), (1, 5), (0, 4), (1, 4), (1, 3)):
        got = qnp.linalg.multi_dot([qnp.asarray(m) for m in arrs[lo:hi]])
        want = np.linalg.multi_dot(arrs[lo:hi])
        assert got.shape == want.shape
        assert_close(got, want, rtol=1e-12)
    # The textbook example (CLRS 15.2): six matrices, 15,125 scalar multiplications at best.
    from quabla._src.linalg_array_api import _chain_order
    split = _chain_order([30, 35, 15, 5, 10, 20, 25])
    assert (split[0][5], split[0][2], split[3][5]) == (2, 0, 4)
    check_grads(lambda p, q, r: qnp.linalg.multi_dot([p, q, r]),
                tuple(qnp.asarray(rand(*s)) for s in [(3, 4), (4, 2), (2, 5)]), order=1)
    with pytest.raises(ValueError, match="at least two"):
        qnp.linalg.multi_dot([qnp.ones((2, 2))])
    with pytest.raises(ValueError, match="inner dimensions"):
        qnp.linalg.multi_dot([qnp.ones((2, 3)), qnp.ones((2, 3))])


def test_tensorinv_and_tensorsolve_match_numpy():
    a = rand(4, 6, 8, 3)
    assert_close(qnp.linalg.tensorinv(qnp.asarray(a), ind=2), np.linalg.tensorinv(a, ind=2),
                 rtol=1e-10)
    a2 = rand(6, 2, 3)
    assert_close(qnp.linalg.tensorinv(qnp.asarray(a2), ind=1), np.linalg.tensorinv(a2, ind=1),
                 rtol=1e-10)
    s, b = rand(2, 3, 6), rand(2, 3)
    assert_close(qnp.linalg.tensorsolve(qnp.asarray(s), qnp.asarray(b)),
                 np.linalg.tensorsolve(s, b), rtol=1e-10)
    s2 = rand(6, 2, 3)
    assert_close(qnp.linalg.tensorsolve(qnp.asarray(s2), qnp.asarray(b), axes=(0,)),
                 np.linalg.tensorsolve(s2, b, axes=(0,)), rtol=1e-10)
    check_grads(lambda m, v: qnp.linalg.tensorsolve(m, v),
                (qnp.asarray(s), qnp.asarray(b)), order=1)
    with pytest.raises(ValueError, match="must be equal"):
        qnp.linalg.tensorinv(qnp.ones((2, 3)), ind=1)
    with pytest.raises(ValueError, match="shape"):
        qnp.linalg.tensorsolve(qnp.ones((2, 3, 6)), qnp.ones((3, 2)))


def test_the_new_names_trace_under_jit_and_vmap():
    x = qnp.asarray(rand(5, 3, 3))
    f = quabla.jit(lambda m: qnp.linalg.matrix_norm(m) + qnp.linalg.trace(m))
    assert_close(f(x), np.linalg.matrix_norm(np.asarray(x)) + np.trace(np.asarray(x), axis1=1,
                                                                        axis2=2), rtol=1e-12)
    g = quabla.vmap(lambda m: qnp.linalg.vector_norm(qnp.linalg.diagonal(m), ord=1))
    assert_close(g(x), np.abs(np.diagonal(np.asarray(x), axis1=1, axis2=2)).sum(-1), rtol=1e-12)
