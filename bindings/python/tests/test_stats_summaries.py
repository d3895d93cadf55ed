"""``scipy.stats.sem``, ``mode`` and ``rankdata`` against JAX 0.10.2's results recorded by
hand (x64 on; JAX's int64 counts are int32 here), and numpy's definitions."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
import quabla.scipy.stats as st
from quabla.test_util import check_grads
from conftest import assert_close

A = np.array([[3.0, 1, 2, 2], [5, 5, 1, 1], [np.nan, 2, 2, 7]])
B = np.array([[3.0, 1, 2, 2], [5, 5, 1, 1]])


def test_sem_as_jax():
    a = qnp.asarray(A)
    assert_close(st.sem(a), [np.nan, 1.20185043, 0.33333333, 1.85592145], rtol=2e-8)
    assert_close(st.sem(a, axis=1), [0.40824829, 1.15470054, np.nan], rtol=2e-8)
    assert np.isnan(float(st.sem(a, axis=None)))
    assert_close(st.sem(a, axis=1, nan_policy="omit"), [0.40824829, 1.15470054, 1.66666667],
                 rtol=2e-8)
    assert_close(st.sem(a, axis=1, ddof=0, keepdims=True), [[0.35355339], [1.0], [np.nan]],
                 rtol=2e-8)
    assert np.isnan(float(st.sem(qnp.asarray([1.0]))))
    b = np.random.default_rng(2).standard_normal((5, 7))
    assert_close(st.sem(qnp.asarray(b), axis=1), b.std(axis=1, ddof=1) / np.sqrt(7), rtol=1e-13)
    check_grads(lambda x: st.sem(x, axis=None), (qnp.asarray(b),), order=2)
    with pytest.raises(ValueError, match="not supported"):
        st.sem(a, nan_policy="raise")


def test_mode_as_jax():
    a = qnp.asarray(A)
    m = st.mode(a, axis=1)
    assert_close(m.mode, [2.0, 1.0, 2.0], rtol=0)
    assert_close(m.count, [2, 2, 2], rtol=0)
    m = st.mode(a, axis=0)
    assert_close(m.mode, [3.0, 1.0, 2.0, 1.0], rtol=0)
    assert_close(m.count, [1, 1, 2, 1], rtol=0)
    m = st.mode(a, axis=None)
    assert (float(m.mode), int(m.count)) == (2.0, 4)
    m = st.mode(qnp.asarray([2, 2, 1, 1, 3]))
    assert (int(m.mode), int(m.count)) == (1, 2)
    m = st.mode(a, axis=1, keepdims=True)
    assert m.mode.shape == (3, 1) and m.count.shape == (3, 1)
    # NaNs are one value: [nan, nan, 1] -> nan twice; [nan, nan, 1, 1, 1] -> 1 three times.
    m = st.mode(qnp.asarray([np.nan, np.nan, 1.0]))
    assert np.isnan(float(m.mode)) and int(m.count) == 2
    m = st.mode(qnp.asarray([np.nan, np.nan, 1.0, 1, 1]))
    assert (float(m.mode), int(m.count)) == (1.0, 3)
    jitted = quabla.jit(lambda x: st.mode(x, axis=1))(a)
    assert_close(jitted.mode, [2.0, 1.0, 2.0], rtol=0)
    with pytest.raises(NotImplementedError, match="NaN"):
        st.mode(a, nan_policy="omit")
    with pytest.raises(ValueError, match="Illegal nan_policy"):
        st.mode(a, nan_policy="bogus")


def test_rankdata_as_jax():
    b = qnp.asarray(B)
    want = {
        "average": ([6, 2, 4.5, 4.5, 7.5, 7.5, 2, 2], [[4, 1, 2.5, 2.5], [3.5, 3.5, 1.5, 1.5]]),
        "min": ([6, 1, 4, 4, 7, 7, 1, 1], [[4, 1, 2, 2], [3, 3, 1, 1]]),
        "max": ([6, 3, 5, 5, 8, 8, 3, 3], [[4, 1, 3, 3], [4, 4, 2, 2]]),
        "dense": ([3, 1, 2, 2, 4, 4, 1, 1], [[3, 1, 2, 2], [2, 2, 1, 1]]),
        "ordinal": ([6, 1, 4, 5, 7, 8, 2, 3], [[4, 1, 2, 3], [3, 4, 1, 2]]),
    }
    for method, (flat, rows) in want.items():
        assert_close(st.rankdata(b, method=method), flat, rtol=0)
        assert_close(st.rankdata(b, method=method, axis=1), rows, rtol=0)
        assert_close(st.rankdata(b.T, method=method, axis=0), np.asarray(rows).T, rtol=0)
    assert np.isnan(np.asarray(st.rankdata(qnp.asarray([1.0, np.nan, 0.0])))).all()
    assert_close(st.rankdata(qnp.asarray([[1.0, np.nan, 0.0], [1, 2, 3]]), axis=1),
                 [[np.nan] * 3, [1, 2, 3]], rtol=0)
    # Infinities rank as values.
    assert_close(st.rankdata(qnp.asarray([np.inf, -np.inf, 0.0])), [3, 1, 2], rtol=0)
    v = quabla.vmap(lambda r: st.rankdata(r, method="dense"))(b)
    assert_close(v, want["dense"][1], rtol=0)
    with pytest.raises(ValueError, match="unknown method"):
        st.rankdata(b, method="first")
    with pytest.raises(NotImplementedError, match="omit"):
        st.rankdata(b, nan_policy="omit")
