"""``quabla.scipy.stats``'s other families (exponential, Laplace, logistic, uniform, Cauchy,
Pareto, Gumbel, truncated normal, von Mises, wrapped Cauchy, generalized normal, geometric,
binomial, negative binomial, beta-binomial, Dirichlet, multinomial) against JAX 0.10.2
goldens (tools/programs.py runs the same code on both) at points inside, on the edge of and
outside each support; densities against their integrals, derivatives, and the refusals."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
import quabla.scipy.stats as st
from quabla.test_util import check_grads
from conftest import assert_close, assert_matches_golden, golden, program_outputs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import stats_family_cases  # noqa: E402

G = golden("jax_stats")


# Where JAX's values are less accurate than ours (checked against exact values below):
# its beta-binomial is off by up to 1.3e-6 relative (log(1/6) came out -1.79175818), and its
# Cauchy ppf/isf at q = 1 - 1e-9 by 8e-8 (ours: 1e-8; tan near pi/2 amplifies rounding).
LOOSER = {"betabinom": 2e-6, ("cauchy", 8): 1e-7, ("cauchy", 9): 1e-7}
# Deliberate differences: a NaN point gives NaN (scipy's answer). JAX's comparisons count
# NaN inside the support, so its uniform density there is 1/scale and its truncated normal's
# cdf 1.
NAN_IN_NAN_OUT = ("uniform", "truncnorm")


def test_every_family_matches_jax():
    for name, k, o, w in program_outputs(stats_family_cases(quabla, qnp), G):
        rtol = LOOSER.get(name, LOOSER.get((name, k), 1e-12))
        if name in NAN_IN_NAN_OUT and o.shape == (13,):
            assert np.isnan(o[12]), (name, k)
            o, w = o[:12], w[:12]
        assert_matches_golden(name, k, o, w, rtol=rtol, atol=1e-15)


def test_against_exact_values():
    from math import comb, exp, lgamma, log, pi
    # Beta-binomial at a = b = 1/2: C(n, k) Gamma(k + 1/2) Gamma(n - k + 1/2) / (n! pi).
    k = np.arange(11.0)
    exact = [comb(10, int(i)) * exp(lgamma(i + 0.5) + lgamma(10.5 - i) - lgamma(11.0)) / pi
             for i in k]
    assert_close(st.betabinom.pmf(qnp.asarray(k), 10.0, 0.5, 0.5), exact, rtol=1e-13)
    assert_close(st.betabinom.logpmf(0.0, 5.0, 2.0, 3.0), log(1 / 6), rtol=1e-14)
    # The Cauchy ppf near 1: 1 / (pi (1 - q)), 1 - q exact in floating point.
    q = 1 - 1e-9
    assert_close(st.cauchy.ppf(q), 1 / (pi * (1 - q)), rtol=2e-8)


def test_densities_integrate_to_their_cdfs():
    # The trapezoid rule over a fine grid against the cdf's increase, on an interval where the
    # density is smooth (an independent check of each density's normalization).
    for family, params, lo, hi in (
            (st.expon, (0.5, 2.0), 0.5, 6.0), (st.laplace, (1.0, 0.5), 1.0, 4.0),
            (st.logistic, (-1.0, 2.0), -3.0, 6.0), (st.cauchy, (1.0, 0.5), -3.0, 6.0),
            (st.pareto, (2.5, -1.0, 1.0), 0.0, 6.0), (st.gumbel_r, (1.0, 2.0), -3.0, 6.0),
            (st.gumbel_l, (1.0, 2.0), -3.0, 6.0), (st.truncnorm, (-1.0, 2.0, 0.5, 1.5), 0.0, 3.0),
            (st.gennorm, (1.7,), 0.0, 3.0), (st.uniform, (-1.0, 3.0), -1.0, 2.0)):
        grid = np.linspace(lo, hi, 200001)
        pdf = np.asarray(family.pdf(qnp.asarray(grid), *params))
        mass = np.trapezoid(pdf, grid)
        cdf = np.asarray(family.cdf(qnp.asarray(np.array([lo, hi])), *params))
        assert abs(mass - (cdf[1] - cdf[0])) < 1e-9, family


def test_probability_masses_sum_to_one():
    k = qnp.arange(0.0, 400.0)
    for pmf in (lambda: st.binom.pmf(k, 12.0, 0.35), lambda: st.nbinom.pmf(k, 3.5, 0.4),
                lambda: st.betabinom.pmf(k, 9.0, 1.5, 2.5), lambda: st.geom.pmf(k, 0.3)):
        assert abs(float(qnp.sum(pmf())) - 1.0) < 1e-12


def test_ppfs_invert_their_cdfs():
    q = qnp.asarray(np.array([0.01, 0.2, 0.5, 0.8, 0.99]))
    for family, params in ((st.expon, (0.5, 2.0)), (st.logistic, (-1.0, 2.0)),
                           (st.uniform, (-1.0, 3.0)), (st.cauchy, (1.0, 0.5)),
                           (st.pareto, (2.5, -1.0, 1.0)), (st.gumbel_r, (1.0, 2.0)),
                           (st.gumbel_l, (1.0, 2.0))):
        assert_close(family.cdf(family.ppf(q, *params), *params), q, rtol=1e-12)


def test_derivatives_and_transformations():
    x = qnp.asarray(np.array([0.3, 1.2, 2.5]))
    for f in (lambda v: st.expon.logpdf(v, 0.1, 2.0), lambda v: st.logistic.logpdf(v, 0.5),
              lambda v: st.gumbel_r.cdf(v), lambda v: st.truncnorm.logpdf(v, -1.0, 4.0),
              lambda v: st.cauchy.logsf(v), lambda v: st.vonmises.logpdf(v, 2.0),
              lambda v: st.pareto.logpdf(v + 1.0, 2.0)):
        check_grads(f, (x,), order=2)
    check_grads(lambda p: st.binom.logpmf(3.0, 7.0, p), (qnp.asarray(0.4),), order=2)
    check_grads(lambda a: st.dirichlet.logpdf(qnp.asarray([0.2, 0.3, 0.5]), a),
                (qnp.asarray([1.5, 2.25, 3.5]),), order=2)
    f = quabla.jit(quabla.vmap(lambda v: st.laplace.cdf(v, 1.0, 2.0)))
    assert_close(f(x), np.asarray(st.laplace.cdf(x, 1.0, 2.0)), rtol=0)


def test_refusals_as_jax():
    with pytest.raises(ValueError, match="integer type"):
        st.multinomial.logpmf(qnp.asarray([1.0, 2.0]), 3, qnp.asarray([0.5, 0.5]))
    with pytest.raises(ValueError, match="entries along its first axis"):
        st.dirichlet.logpdf(qnp.asarray([0.2, 0.3, 0.5, 0.0]), qnp.asarray([1.0, 2.0, 3.0]))


def test_multinomial_batches_counts_along_the_last_axis_as_scipy():
    # JAX 0.10.2 returns -inf for both rows here (it compares the sum of every count with n);
    # scipy.stats.multinomial.logpmf gives each row its own value: log(6!/(1!2!3!) 0.2 0.3^2
    # 0.5^3) = log(60 * 0.00225) and log(0.5^6).
    out = st.multinomial.logpmf(qnp.asarray([[1, 2, 3], [0, 0, 6]]), 6,
                                qnp.asarray([0.2, 0.3, 0.5]))
    assert_close(out, [np.log(60 * 0.2 * 0.09 * 0.125), 6 * np.log(0.5)], rtol=1e-13)
