"""``scipy.special.sici`` and ``fresnel`` against mpmath (``si``, ``ci``, ``fresnels``,
``fresnelc`` at 50 digits, recorded here) on both sides of the series/continued-fraction
switch, JAX 0.10.2's conventions at the edges (recorded by hand), and their derivatives."""

import numpy as np

import quabla
import quabla.numpy as qnp
import quabla.scipy.special as sp
from quabla.test_util import check_grads
from conftest import assert_close

SICI = [(1e-06, 9.999999999999445e-07, -13.23829489306299),
        (0.5, 0.4931074180430667, -0.1777840788066129),
        (1.5, 1.3246835311721197, 0.4703563171953999),
        (2.0, 1.6054129768026948, 0.422980828774865),
        (2.01, 1.6099376909382972, 0.4208826569468742),
        (5.0, 1.549931244944674, -0.19002974965664388),
        (30.0, 1.5667565400303511, -0.033032417282071146),
        (100.0, 1.5622254668890563, -0.005148825142610492)]
FRESNEL = [(1e-06, 5.235987755982988e-19, 1e-06), (0.5, 0.06473243285999927, 0.4923442258714464),
           (1.5, 0.6975049600820931, 0.4452611760398215),
           (2.0, 0.34341567836369824, 0.48825340607534073),
           (2.01, 0.34373025726590506, 0.4982468029499104),
           (5.0, 0.49919138191711687, 0.5636311887040122),
           (30.0, 0.4893896744421938, 0.4999962473706099),
           (100.0, 0.49681690114783755, 0.4999998986788179)]


def test_sici_against_mpmath_and_jax_edges():
    x, si, ci = map(np.array, zip(*SICI))
    got_si, got_ci = sp.sici(qnp.asarray(x))
    assert_close(got_si, si, rtol=2e-15)
    assert_close(got_ci, ci, rtol=2e-15)
    # JAX: Si odd, Ci(-2) = Ci(2); Si(0) = 0, Ci(0) = -inf; pi/2 and 0 at inf; NaN for NaN.
    s, c = map(np.asarray, sp.sici(qnp.asarray([-2.0, 0.0, np.inf, np.nan])))
    assert_close(s[:3], [-si[3], 0.0, np.pi / 2], rtol=1e-15)
    assert_close(c[:3], [ci[3], -np.inf, 0.0], rtol=1e-15)
    assert np.isnan(s[3]) and np.isnan(c[3])


def test_fresnel_against_mpmath_and_jax_edges():
    x, fs, fc = map(np.array, zip(*FRESNEL))
    got_s, got_c = sp.fresnel(qnp.asarray(x))
    assert_close(got_s, fs, rtol=2e-15)
    assert_close(got_c, fc, rtol=2e-15)
    s, c = map(np.asarray, sp.fresnel(qnp.asarray([-2.0, 0.0, np.inf, np.nan])))
    assert_close(s[:3], [-fs[3], 0.0, 0.5], rtol=1e-15)
    assert_close(c[:3], [-fc[3], 0.0, 0.5], rtol=1e-15)
    assert np.isnan(s[3]) and np.isnan(c[3])


def test_derivatives():
    # Points on both sides of each switch (2 and 1.5); finite differences of Fresnel's
    # fast phase would need a smaller step past 3.
    x = qnp.asarray([0.3, 1.4, 2.2, 3.0])
    for f in (lambda v: sp.sici(v)[0], lambda v: sp.sici(v)[1],
              lambda v: sp.fresnel(v)[0], lambda v: sp.fresnel(v)[1]):
        check_grads(f, (x,), order=1)
    # Second derivatives against the closed forms: Si'' = (x cos x - sin x) / x^2,
    # Ci'' = -(x sin x + cos x) / x^2, S'' = pi x cos(pi x^2/2), C'' = -pi x sin(pi x^2/2).
    v = np.asarray(x)
    second = quabla.vmap(quabla.grad(quabla.grad(lambda t: sp.sici(t)[0] + 2 * sp.sici(t)[1])))
    assert_close(second(x), (v * np.cos(v) - np.sin(v)) / v ** 2
                 - 2 * (v * np.sin(v) + np.cos(v)) / v ** 2, rtol=1e-13)
    second = quabla.vmap(quabla.grad(quabla.grad(
        lambda t: sp.fresnel(t)[0] + 2 * sp.fresnel(t)[1])))
    ph = np.pi * v * v / 2
    assert_close(second(x), np.pi * v * np.cos(ph) - 2 * np.pi * v * np.sin(ph), rtol=1e-13)
    # JAX: d/dx Ci at 2 = cos(2)/2; Si's derivative at 0 is 1.
    assert_close(quabla.grad(lambda v: sp.sici(v)[1])(qnp.asarray(2.0)), np.cos(2.0) / 2,
                 rtol=1e-15)
    assert_close(quabla.grad(lambda v: sp.sici(v)[0])(qnp.asarray(0.0)), 1.0, rtol=0)
    f = quabla.jit(quabla.vmap(lambda v: sp.fresnel(v)[1]))
    assert_close(f(qnp.asarray([0.5, 5.0])), [FRESNEL[1][2], FRESNEL[5][2]], rtol=2e-15)
