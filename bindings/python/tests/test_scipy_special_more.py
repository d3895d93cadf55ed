"""``poch``, ``comb``, ``loggamma``, ``boxcox`` and ``boxcox1p`` against closed forms
(Python's ``math``), with JAX 0.10.2's conventions recorded by hand (x64 on): ``poch`` is 1
at ``m == 0`` and NaN at poles, ``comb`` 0 outside ``0 <= k <= N``, ``loggamma`` NaN for
``x <= 0``."""

import math

import numpy as np

import quabla
import quabla.numpy as qnp
from quabla.scipy import special as sp
from conftest import assert_close


def test_poch_against_gamma_ratios_and_its_derivatives():
    z = np.array([2.0, -1.5, 0.5, 7.25, 150.0])
    m = np.array([3.0, 2.0, -1.0, 0.5, 2.5])
    want = [math.gamma(a + b) / math.gamma(a) if a < 100 else
            math.exp(math.lgamma(a + b) - math.lgamma(a)) for a, b in zip(z, m)]
    assert_close(sp.poch(z, m), want, rtol=1e-12)  # 150: both gammas overflow, the ratio not
    assert_close(sp.poch(qnp.asarray([-2.0, 0.0, 3.0]), qnp.asarray([1.0, 0.0, 0.0])),
                 [np.nan, 1.0, 1.0], rtol=0)
    # d/dz = poch (digamma(z + m) - digamma(z)), d/dm = poch digamma(z + m): JAX's values.
    assert_close(quabla.grad(lambda a: sp.poch(a, 2.5))(1.5), 8.257214892202494, rtol=1e-12)
    assert_close(quabla.grad(lambda b: sp.poch(1.5, b))(2.5), 8.504262050874198, rtol=1e-12)


def test_comb_with_and_without_repetition():
    n = np.array([5.0, 5.0, 5.0, 10.0, 4.5, 30.0, -1.0])
    k = np.array([2.0, 0.0, 6.0, -1.0, 2.0, 15.0, 0.0])
    want = [10.0, 1.0, 0.0, 0.0, 7.875, float(math.comb(30, 15)), 0.0]
    assert_close(sp.comb(n, k), want, rtol=1e-12)
    assert_close(sp.comb(qnp.asarray([4.0, 3.0, 0.0]), qnp.asarray([2.0, 0.0, 0.0]),
                         repetition=True),
                 [math.comb(5, 2), 1.0, 1.0], rtol=1e-12)


def test_loggamma_and_box_cox():
    x = np.array([0.5, 3.0, 0.0, -0.5, np.inf])
    assert_close(sp.loggamma(x), [math.lgamma(0.5), math.lgamma(3.0), np.nan, np.nan, np.inf],
                 rtol=1e-13)
    xs = np.array([0.0, -1.0, 1.0, 2.5])
    assert_close(sp.boxcox(xs, 0.5), [-2.0, np.nan, 0.0, (2.5 ** 0.5 - 1) / 0.5], rtol=1e-14)
    assert_close(sp.boxcox(np.array([0.0, 1.0, 2.5]), 0.0), [-np.inf, 0.0, math.log(2.5)],
                 rtol=1e-14)
    assert_close(sp.boxcox1p(np.array([1e-10, 1.5]), 0.0), [math.log1p(1e-10), math.log(2.5)],
                 rtol=1e-14)
    assert_close(sp.boxcox1p(1e-10, 0.5), (math.expm1(0.5 * math.log1p(1e-10))) / 0.5,
                 rtol=1e-14)
    # At lmbda == 0 the branch not taken leaks no NaN into derivatives (d/dx log x = 1/x).
    # The derivative in lmbda is finite at 0 (0 there: the log branch does not depend on
    # lmbda) and near 0 it is log(x)^2 / 2.
    assert_close(quabla.grad(lambda v: sp.boxcox(v, 0.0))(2.0), 0.5, rtol=1e-14)
    g = quabla.grad(lambda lam: sp.boxcox(2.0, lam), argnums=0)
    assert np.isfinite(float(g(0.0)))
    assert_close(g(1e-6), math.log(2.0) ** 2 / 2, rtol=1e-5)
