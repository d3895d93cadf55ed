"""``scipy.stats.gaussian_kde`` and ``scipy.signal.detrend`` against JAX 0.10.2's results
recorded by hand (x64 on); the estimate's integral, resampling's moments, and its use as a
pytree."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
import quabla.scipy.stats as st
from conftest import assert_close

DATA = [0.0, 1.0, 3.0, 4.5, 2.0]


def test_one_dimensional_estimate_as_jax():
    k = st.gaussian_kde(qnp.asarray([DATA]))
    assert (k.d, k.n) == (1, 5)
    assert_close(k.neff, 5.0, rtol=1e-15)
    assert_close(k.covariance, [[1.60218196]], rtol=1e-8)
    assert_close(k.inv_cov, [[0.62414883]], rtol=1e-8)
    assert_close(k.evaluate(qnp.asarray([[0.5, 2.0]])), [0.15723515, 0.18236472], rtol=1e-7)
    assert_close(k(qnp.asarray([0.5, 2.0])), [0.15723515, 0.18236472], rtol=1e-7)
    assert_close(k.logpdf(qnp.asarray([0.5])), [-1.85001285], rtol=1e-8)
    assert_close(k.integrate_box_1d(-1.0, 2.0), 0.4371189674039196, rtol=1e-14)
    assert_close(k.integrate_gaussian(qnp.asarray([1.0]), qnp.asarray([[2.0]])),
                 0.14702718420395536, rtol=1e-14)
    k3 = st.gaussian_kde(qnp.asarray(DATA), bw_method=0.3)
    assert_close(k3.covariance, [[0.2745]], rtol=1e-14)
    assert_close(k3.evaluate(qnp.asarray([1.0])), [0.20166932], rtol=1e-7)
    assert_close(k.integrate_kde(k3), 0.14815333130447905, rtol=1e-13)
    # The density integrates to one, and far out its log stays finite.
    grid = np.linspace(-15.0, 20.0, 20001)
    assert abs(np.trapezoid(np.asarray(k(qnp.asarray(grid))), grid) - 1.0) < 1e-9
    assert np.isfinite(float(k.logpdf(qnp.asarray([80.0]))[0]))


def test_weighted_silverman_in_two_dimensions_as_jax():
    k = st.gaussian_kde(qnp.asarray([DATA, [1.0, 0, 2, 1, 3]]), bw_method="silverman",
                        weights=qnp.asarray([1.0, 2, 1, 1, 3]))
    assert_close(k.neff, 4.0, rtol=1e-15)
    assert_close(k.covariance, [[1.38788178, 0.34779071], [0.34779071, 1.24679687]],
                 rtol=2e-8)
    assert_close(k.evaluate(qnp.asarray([[0.5, 2.0], [1.0, 1.0]])), [0.03913053, 0.03886539],
                 rtol=1e-6)


def test_resampling_and_transformations():
    k = st.gaussian_kde(qnp.asarray(DATA))
    draws = np.asarray(k.resample(quabla.random.PRNGKey(0), (40000,)))
    assert draws.shape == (1, 40000)
    # Mean 2.1; variance the data's (2.44, weights 1/5) plus the kernel's.
    assert abs(draws.mean() - 2.1) < 0.05
    assert abs(draws.var() - (2.44 + float(k.covariance[0, 0]))) < 0.15
    f = quabla.jit(lambda kde, x: kde.logpdf(x))
    assert_close(f(k, qnp.asarray([0.5])), k.logpdf(qnp.asarray([0.5])), rtol=1e-15)
    g = quabla.grad(lambda x: k.logpdf(x)[0])(qnp.asarray([0.5]))
    h = 1e-6
    fd = (float(k.logpdf(qnp.asarray([0.5 + h]))[0]) - float(k.logpdf(qnp.asarray([0.5 - h]))[0])) / (2 * h)
    assert_close(g, [fd], rtol=1e-7)
    with pytest.raises(NotImplementedError, match="integrate_box_1d"):
        k.integrate_box(qnp.asarray([0.0]), qnp.asarray([1.0]))
    with pytest.raises(NotImplementedError, match="bandwidth"):
        k.set_bandwidth(0.5)
    with pytest.raises(ValueError, match="bw_method"):
        st.gaussian_kde(qnp.asarray(DATA), bw_method="wide")


def test_detrend_as_jax():
    import quabla.scipy.signal as sig
    x = qnp.asarray([[1.0, 3, 2, 5, 4, 7], [0, 1, 0, 1, 0, 1.0]])
    # JAX 0.10.2's results.
    assert_close(sig.detrend(x), [[-0.0952381, 0.87619048, -1.15238095, 0.81904762,
                                   -1.20952381, 0.76190476],
                                  [-0.28571429, 0.62857143, -0.45714286, 0.45714286,
                                   -0.62857143, 0.28571429]], rtol=1e-7)
    assert_close(sig.detrend(x, type="constant"),
                 [[-8 / 3, -2 / 3, -5 / 3, 4 / 3, 1 / 3, 10 / 3], [-0.5, 0.5] * 3], rtol=1e-14)
    assert_close(sig.detrend(x, axis=0), np.zeros((2, 6)), rtol=0, atol=1e-14)
    assert_close(sig.detrend(x, bp=[3]), [[-0.5, 1, -0.5, 2 / 3, -4 / 3, 2 / 3],
                                          [-1 / 3, 2 / 3, -1 / 3, 1 / 3, -2 / 3, 1 / 3]],
                 rtol=1e-14, atol=1e-15)
    with pytest.raises(ValueError, match="linear"):
        sig.detrend(x, type="quadratic")
