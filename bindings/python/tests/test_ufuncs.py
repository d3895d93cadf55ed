"""quabla.numpy's ufuncs (JAX's set: ``add.reduce``, ``subtract.outer``, ``maximum.at``...)
and ``frompyfunc`` against numpy's own ufunc methods on the same inputs, under jit and
grad."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp

from conftest import assert_close

RNG = np.random.default_rng(11)
X = RNG.normal(size=(3, 4))
Y = RNG.normal(size=(5,))
I = np.arange(12, dtype=np.int32).reshape(3, 4) - 5


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "maximum", "minimum",
                                  "logaddexp", "logaddexp2"])
def test_float_methods_match_numpy(name):
    q, n = getattr(qnp, name), getattr(np, name)
    base = X
    assert_close(q.outer(qnp.asarray(base[0]), qnp.asarray(Y)), n.outer(base[0], Y), rtol=1e-12)
    for axis in (0, 1, -1):
        assert_close(q.reduce(qnp.asarray(base), axis=axis), n.reduce(base, axis=axis),
                     rtol=1e-12)
        assert_close(q.accumulate(qnp.asarray(base), axis=axis),
                     n.accumulate(base, axis=axis), rtol=1e-12)
    assert_close(q.reduce(qnp.asarray(base), axis=1, keepdims=True),
                 n.reduce(base, axis=1, keepdims=True), rtol=1e-12)
    idx = np.array([0, 2, 0, 3, 0])
    want = base[1].copy()
    n.at(want, idx, Y)
    assert_close(q.at(qnp.asarray(base[1]), qnp.asarray(idx), qnp.asarray(Y)), want,
                 rtol=1e-12)


def test_integer_and_logical_methods_match_numpy():
    for name in ["bitwise_and", "bitwise_or", "bitwise_xor", "add", "maximum"]:
        q, n = getattr(qnp, name), getattr(np, name)
        assert q.reduce(qnp.asarray(I), axis=1).tolist() == n.reduce(I, axis=1).tolist()
        assert q.reduce(qnp.asarray(I), axis=None).tolist() == n.reduce(I, axis=None).tolist()
    b = I > 0
    for name in ["logical_and", "logical_or", "logical_xor"]:
        q, n = getattr(qnp, name), getattr(np, name)
        assert q.reduce(qnp.asarray(b), axis=0).tolist() == n.reduce(b, axis=0).tolist()
        assert q.accumulate(qnp.asarray(b), axis=1).tolist() == n.accumulate(b, axis=1).tolist()
    assert qnp.negative.at(qnp.arange(4), qnp.asarray([1, 3])).tolist() == [0, -1, 2, -3]
    # Repeated positions compound, as numpy's unbuffered at: negated twice.
    want = np.arange(4)
    np.negative.at(want, [1, 1, 3])
    assert qnp.negative.at(qnp.arange(4), qnp.asarray([1, 1, 3])).tolist() == want.tolist()
    with pytest.raises(ValueError, match="binary"):
        qnp.negative.reduce(qnp.arange(3))


def test_initial_where_and_identities():
    w = np.array([True, False, True, True])
    v = np.arange(4.0)
    assert float(qnp.add.reduce(qnp.asarray(v), where=qnp.asarray(w), initial=10.0)) == \
        np.add.reduce(v, where=w, initial=10.0)
    assert float(qnp.maximum.reduce(qnp.asarray(v), where=qnp.asarray(w), initial=-1.0)) == \
        np.maximum.reduce(v, where=w, initial=-1.0)
    assert float(qnp.multiply.reduce(qnp.zeros((0,)))) == 1.0
    assert qnp.add.identity == 0 and qnp.multiply.identity == 1 and qnp.maximum.identity is None
    # maximum has no identity but its order is free: every axis at once, as JAX's.
    assert float(qnp.maximum.reduce(qnp.asarray(X), axis=None)) == X.max()
    with pytest.raises(ValueError, match="not reorderable"):
        qnp.subtract.reduce(qnp.asarray(X), axis=(0, 1))
    with pytest.raises(ValueError, match="identity"):
        qnp.maximum.reduce(qnp.asarray(v), where=qnp.asarray(w))
    with pytest.raises(ValueError, match="no identity"):
        qnp.subtract.reduce(qnp.zeros((0,)))
    with pytest.raises(NotImplementedError, match="inplace"):
        qnp.add.at(qnp.zeros(3), 0, 1.0, inplace=True)


def test_frompyfunc_and_transformations():
    f = qnp.frompyfunc(lambda x, y: x * y + 1.0, 2, 1, identity=None)
    g = np.frompyfunc(lambda x, y: x * y + 1.0, 2, 1)
    assert f.nin == 2 and f.nout == 1 and f.nargs == 3
    assert_close(f(qnp.asarray(X), 2.0), (g(X, 2.0)).astype(float), rtol=1e-12)
    assert_close(f.reduce(qnp.asarray(X), axis=1), g.reduce(X, axis=1).astype(float),
                 rtol=1e-12)
    assert_close(f.accumulate(qnp.asarray(X), axis=0), g.accumulate(X, axis=0).astype(float),
                 rtol=1e-12)
    want = X[0].copy().astype(object)
    g.at(want, np.array([1, 1, 3]), np.array([2.0, 3.0, 4.0]))
    got = f.at(qnp.asarray(X[0]), qnp.asarray([1, 1, 3]), qnp.asarray([2.0, 3.0, 4.0]))
    assert_close(got, want.astype(float), rtol=1e-12)
    pair = qnp.frompyfunc(lambda x: (x + 1.0, x * 2.0), 1, 2)
    a, b = pair(qnp.asarray(Y))
    assert_close(a, Y + 1.0) and assert_close(b, Y * 2.0)
    # jit and grad go through the folds: d/dx of x0 - x1 - x2 is (1, -1, -1).
    assert_close(quabla.grad(lambda v: qnp.subtract.reduce(v))(qnp.asarray([3.0, 1.0, 2.0])),
                 [1.0, -1.0, -1.0])
    assert_close(quabla.jit(lambda v: f.reduce(v))(qnp.asarray([1.0, 2.0, 3.0])), 10.0)
    assert repr(qnp.add) == "<quabla.numpy.ufunc 'add'>" and qnp.add(2, 3).tolist() == 5
