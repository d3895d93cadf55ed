"""``random.binomial`` and ``random.multinomial``: the distribution against the binomial pmf
(``math.comb``) by a chi-square statistic over 20,000 draws from fixed keys, in both
samplers' ranges (inversion below a mean of 10, BTRS above, ``p > 1/2`` by reflection);
multinomial sums, means and covariances against ``n p_i (delta_ij - p_j)``; and JAX
0.10.2's edge values, dtypes and errors, recorded by hand (x64 on)."""

import math

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import random as qr
from conftest import assert_close

DRAWS = 20000


def _chi2_per_dof(counts: np.ndarray, n: int, p: float) -> float:
    """Pearson's statistic over the values with an expected count of at least 5 (the tails
    pooled into their neighbours), divided by its degrees of freedom."""
    pmf = np.array([math.comb(n, k) * p**k * (1 - p) ** (n - k) for k in range(n + 1)])
    observed = np.bincount(counts.astype(int), minlength=n + 1).astype(float)
    expected = pmf * len(counts)
    keep = expected >= 5
    lo, hi = np.argmax(keep), len(keep) - np.argmax(keep[::-1]) - 1
    obs = observed[lo:hi + 1].copy()
    exp = expected[lo:hi + 1].copy()
    obs[0] += observed[:lo].sum()
    exp[0] += expected[:lo].sum()
    obs[-1] += observed[hi + 1:].sum()
    exp[-1] += expected[hi + 1:].sum()
    return float(((obs - exp) ** 2 / exp).sum() / max(len(obs) - 1, 1))


@pytest.mark.parametrize("n,p", [(10, 0.3), (7, 0.95), (200, 0.02), (40, 0.6), (300, 0.5),
                                 (1000, 0.1)])
def test_binomial_follows_the_pmf_in_both_samplers(n, p):
    x = np.asarray(qr.binomial(qr.key(11), n, p, shape=(DRAWS,)))
    assert x.min() >= 0 and x.max() <= n and np.all(x == np.floor(x))
    # chi2/dof of a correct sampler is 1 +- sqrt(2/dof); 1.6 is beyond 3 sigma here.
    assert _chi2_per_dof(x, n, p) < 1.6, (n, p)
    assert abs(x.mean() - n * p) < 5 * math.sqrt(n * p * (1 - p) / DRAWS)


def test_binomial_edges_dtypes_and_errors_as_jax():
    n = qnp.array([0.0, 5.0, 5.0, 5.0, 5.0, -1.0, 1000.0])
    p = qnp.array([0.3, 0.0, 1.0, 1.5, np.nan, 0.3, 0.0])
    got = np.asarray(qr.binomial(qr.key(0), n, p))
    # JAX: 0 trials, p = 0 and p = 1 are exact; p outside [0, 1], NaN p and n < 0 are NaN.
    assert_close(got, [0.0, 0.0, 5.0, np.nan, np.nan, np.nan, 0.0], rtol=0)
    # A fractional n counts its whole trials.
    assert np.asarray(qr.binomial(qr.key(1), 3.9, 1.0, shape=(4,))).tolist() == [3.0] * 4
    assert qr.binomial(qr.key(0), 10.0, 0.3, shape=(3,)).dtype == np.float64
    assert qr.binomial(qr.key(0), 10, 0.3, dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="must be a float dtype"):
        qr.binomial(qr.key(0), 10, 0.3, shape=(2,), dtype=np.int32)
    # n and p broadcast to the shape.
    out = qr.binomial(qr.key(2), qnp.array([[10.0], [100.0]]), qnp.array([0.1, 0.5, 0.9]))
    assert out.shape == (2, 3)
    with pytest.raises(ValueError, match="broadcast"):
        qr.binomial(qr.key(0), qnp.ones(3), 0.5, shape=(2,))


def test_binomial_under_jit_and_vmap_keeps_the_draws():
    f = lambda k: qr.binomial(k, qnp.array([8.0, 300.0]), 0.4)  # noqa: E731
    eager = np.asarray(f(qr.key(5)))
    assert np.array_equal(np.asarray(quabla.jit(f)(qr.key(5))), eager)
    keys = qr.split(qr.key(6), 3)
    batched = np.asarray(quabla.vmap(f)(keys))
    for i in range(3):
        assert np.array_equal(batched[i], np.asarray(f(keys[i])))


def test_multinomial_counts_means_and_covariances():
    p = np.array([0.2, 0.3, 0.5])
    m = np.asarray(qr.multinomial(qr.key(3), 50.0, qnp.asarray(p), shape=(DRAWS, 3)))
    assert np.all(m.sum(axis=1) == 50.0) and m.min() >= 0
    assert_close(m.mean(axis=0), 50 * p, rtol=0.01)
    cov = 50 * (np.diag(p) - np.outer(p, p))
    assert np.abs(np.cov(m.T) - cov).max() < 0.05 * np.abs(cov).max()


def test_multinomial_shapes_remainders_and_errors_as_jax():
    k = qr.key(0)
    out = qr.multinomial(k, qnp.array([10.0, 20.0]), qnp.array([0.2, 0.3, 0.5]), shape=(2, 3))
    assert out.shape == (2, 3)
    assert np.asarray(out).sum(axis=1).tolist() == [10.0, 20.0]
    # A row with all its mass on one category; JAX gives [10, 0, 0].
    rows = qr.multinomial(k, 10.0, qnp.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]]))
    assert np.asarray(rows)[1].tolist() == [10.0, 0.0, 0.0]
    # Probabilities that do not sum to 1: the last category takes what is left.
    assert np.asarray(qr.multinomial(k, 10.0, qnp.array([0.0, 0.0, 0.6]))).tolist() == \
        [0.0, 0.0, 10.0]
    assert qr.multinomial(k, 10.0, qnp.array([0.5, 0.5]), dtype=np.float32).dtype == np.float32
    with pytest.raises(ValueError, match="categories"):
        qr.multinomial(k, 10.0, qnp.array([0.5, 0.5]), shape=(4, 3))
    with pytest.raises(ValueError, match="category axis"):
        qr.multinomial(k, 10.0, 0.5)
