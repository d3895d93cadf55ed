"""``scipy.special.spence`` and ``expn`` against mpmath (``polylog(2, 1 - x)`` and
``expint(n, x)`` at 100 digits, recorded here), JAX 0.10.2's conventions at the edges
(recorded by hand), and their derivatives against finite differences."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
import quabla.scipy.special as sp
from quabla.test_util import check_grads
from conftest import assert_close

SPENCE = [(0.0, 1.6449340668482264), (1e-10, 1.6449340644456414), (0.3, 0.8893776242860387),
          (0.5, 0.5822405264650125), (0.99, 0.010025111740139104), (1.0, 0.0),
          (1.5, -0.4484142069236462), (2.0, -0.8224670334241132), (2.01, -0.8293888705204264),
          (10.0, -3.9506637782441576), (1000000.0, -97.07908523994168)]
EXPN = [(0, 0.5, 1.2130613194252668), (1, 1e-08, 17.84346508905083), (1, 0.5, 0.5597735947761608),
        (2, 0.999, 0.14871507477274132), (3, 1.0, 0.10969196719776014),
        (3, 1.001, 0.10954358132166883), (5, 2.0, 0.02132240020232302),
        (10, 0.01, 0.10986822627360165), (10, 10.0, 2.3253026570282106e-06),
        (30, 40.0, 6.105857502922376e-20), (60, 200.0, 5.327379610665956e-90),
        (1, 50.0, 3.783264029550459e-24)]


def test_spence_against_mpmath_and_jax_edges():
    x, want = map(np.array, zip(*SPENCE))
    assert_close(sp.spence(qnp.asarray(x)), want, rtol=2e-15, atol=1e-300)
    # JAX: NaN below 0 and for NaN. At +inf the value's limit, -inf (JAX gives NaN).
    edge = np.asarray(sp.spence(qnp.asarray([-1.0, np.nan, np.inf])))
    assert np.isnan(edge[:2]).all() and edge[2] == -np.inf


def test_expn_against_mpmath_and_jax_edges():
    n, x, want = map(np.array, zip(*EXPN))
    assert_close(sp.expn(qnp.asarray(n.astype(float)), qnp.asarray(x)), want, rtol=1e-14)
    # JAX: [1.21306132, 0.55977359, 0.5, 0.0213224, nan, nan, nan], and inf, inf, 0.5 at
    # x = 0. Its E_2(0) = 0.5 is wrong: E_n(0) = int_1^inf t^-n dt = 1 / (n - 1).
    got = sp.expn(qnp.asarray([0.0, 1, 2, 5, 2.5, -1, 3]), qnp.asarray([0.5, 0.5, 0, 2, 1, 1, -1]))
    assert_close(got, [1.21306132, 0.55977359, 1.0, 0.0213224, np.nan, np.nan, np.nan],
                 rtol=1e-8)
    assert_close(sp.expn(qnp.asarray([0.0, 1.0, 2.0, 5.0]), 0.0), [np.inf, np.inf, 1.0, 0.25],
                 rtol=0)
    assert float(sp.expn(1, 1.0)) == pytest.approx(0.21938393439552029, rel=1e-15)


def test_derivatives():
    x = qnp.asarray([0.3, 0.9, 1.0, 1.7, 3.5])
    check_grads(sp.spence, (x,), order=1)
    # d/dx spence at 1 is -1 (JAX's gives 0, and NaN at 2); the second derivative,
    # d/dx ln(x) / (1 - x) = 1 / (x (1 - x)) + ln(x) / (1 - x)^2, is 1/2 at 1.
    assert_close(quabla.vmap(quabla.grad(sp.spence))(qnp.asarray([1.0, 2.0])),
                 [-1.0, np.log(2.0) / (1.0 - 2.0)], rtol=1e-15)
    v = np.array([0.3, 0.9, 1.0, 1.7, 3.5])
    vs = np.where(v == 1.0, 2.0, v)
    want = np.where(v == 1.0, 0.5, 1 / (vs * (1 - vs)) + np.log(vs) / (1 - vs) ** 2)
    assert_close(quabla.vmap(quabla.grad(quabla.grad(sp.spence)))(x), want, rtol=1e-12)
    for n in (1.0, 4.0):
        check_grads(lambda t, n=n: sp.expn(n, t), (qnp.asarray([0.4, 1.0, 2.5]),), order=1)
    # d^2/dx^2 E_3 = E_1.
    e2 = quabla.vmap(quabla.grad(quabla.grad(lambda t: sp.expn(3.0, t))))(qnp.asarray([0.4, 2.5]))
    assert_close(e2, sp.expn(1.0, qnp.asarray([0.4, 2.5])), rtol=1e-13)
    # d/dx E_3(1.5) = -E_2(1.5) (JAX: -0.0731007865384808).
    assert float(quabla.grad(lambda v: sp.expn(3.0, v))(qnp.asarray(1.5))) == pytest.approx(
        -0.0731007865384808, rel=1e-13)
    f = quabla.jit(quabla.vmap(lambda n, v: sp.expn(n, v)))
    assert_close(f(qnp.asarray([1.0, 2.0]), qnp.asarray([0.5, 2.0])),
                 [float(sp.expn(1.0, 0.5)), float(sp.expn(2.0, 2.0))], rtol=0)


OWENS_T = [(0.0, 0.5, 0.07379180882521663), (0.5, 1.0, 0.10667106296144852),
           (-1.0, 0.3, 0.027728115901104102), (2.0, 2.0, 0.011374908793187566),
           (5.0, 0.5, 1.4192549621069272e-07), (10.0, 3.0, 3.809926512080263e-24),
           (1.0, -2.0, -0.0784681869930841), (0.1, 0.99, 0.12341502312505476),
           (3.0, 1.0, 0.0006740379034671478), (8.0, 0.1, 1.8141981844090175e-16),
           (20.0, 0.7, 1.3768120593031673e-89), (0.3, 50.0, 0.1910442889055237),
           (6.0, 1.5, 4.93293822518849e-10)]


def test_owens_t_against_mpmath_and_jax():
    # mpmath: the defining integral over 400 panels at 50 digits. At h = 20 the exponent is
    # near -200, whose rounding alone is 2e-14 relative.
    h, a, want = map(np.array, zip(*OWENS_T))
    assert_close(sp.owens_t(qnp.asarray(h), qnp.asarray(a)), want, rtol=3e-14)
    # JAX: 0 at a = 0, +-0.0793276 = Phi(-1)/2 at a = +-inf, 0 at h = 40 and inf, NaN for NaN.
    got = sp.owens_t(qnp.asarray([1.0, 1, 1, 40, np.nan, np.inf]),
                     qnp.asarray([0.0, np.inf, -np.inf, 1, 1, 1]))
    assert_close(got, [0.0, 0.079327627, -0.079327627, 0.0, np.nan, 0.0], rtol=1e-8)
    # JAX's gradient at (1, 0.5): (-0.04632831, 0.0681516).
    g = quabla.grad(sp.owens_t, argnums=(0, 1))(1.0, 0.5)
    assert_close(g, [-0.04632831, 0.0681516], rtol=1e-6)
    check_grads(sp.owens_t, (qnp.asarray([0.3, 1.5, -2.0]), qnp.asarray([0.4, 2.5, 0.9])),
                order=1)
