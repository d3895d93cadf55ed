"""Gamma-family draws differentiate in their parameters by implicit reparameterisation, as
JAX's: ``lax.random_gamma_grad`` / ``igamma_grad_a`` against mpmath, and the
sample gradients as unbiased estimates of the analytic derivatives of the means."""

import numpy as np

import quabla
import quabla.numpy as qnp
from quabla import lax, random
from quabla.scipy.special import polygamma

from conftest import assert_close

A = np.array([0.1, 0.5, 1.0, 2.5, 7.0, 30.0, 150.0, 0.01, 3.0, 1e3])
X = np.array([0.05, 0.3, 1.2, 2.0, 9.0, 25.0, 160.0, 1e-30, 0.001, 990.0])


def test_the_pieces_match_mpmath():
    # mpmath at 50 digits: -dP/da / pdf and dP/da (numerical derivative of the regularized
    # gammainc). JAX 0.10.2's random_gamma_grad agrees to 2e-16 but at a = 0.1 and 0.5, where
    # it is 1.2e-9 and 1.4e-9 off (its igamma_grad_a agrees everywhere).
    expected_grad = [1.3672830678368923, 1.0098019459488546, 1.2854717535902721,
                     0.9534627029186165, 1.158184918071533, 0.91668159973565724,
                     1.0337643167612614, 6.85166673319527e-27, 0.0027219922821392068,
                     0.9951490959698876]
    expected_dpda = [-2.0264226621003975, -0.77057035137535192, -0.38717665175801845,
                     -0.27455132194588155, -0.10549943367004839, -0.049954877425834856,
                     -0.022928713966447527, -34.535639314126297, -1.3596358251998284e-9,
                     -0.012057749285283054]
    a, x = qnp.asarray(A), qnp.asarray(X)
    assert_close(lax.random_gamma_grad(a, x), expected_grad, rtol=1e-12)
    assert_close(lax.igamma_grad_a(a, x), expected_dpda, rtol=1e-12)
    assert float(lax.random_gamma_grad(2.0, 0.0)) == 0.0


def _unbiased(per_sample, expected):
    """The mean of per-sample derivatives within five standard errors of ``expected``."""
    g = np.asarray(per_sample)
    err = 5 * g.std() / np.sqrt(g.size)
    assert abs(g.mean() - expected) < err, (g.mean(), expected, err)


def test_sample_gradients_are_unbiased():
    key, n = random.PRNGKey(3), 20000
    for a in [0.3, 2.5]:
        alphas = qnp.full((n,), a)
        # Each draw's own derivative (one parameter per draw): E[z] = a, E[log z] = psi(a).
        _unbiased(quabla.grad(lambda s: qnp.sum(random.gamma(key, s)))(alphas), 1.0)
        _unbiased(quabla.grad(lambda s: qnp.sum(random.loggamma(key, s)))(alphas),
                  float(polygamma(1, a)))
    # Beta(a, 3): E = a / (a + 3).
    a = qnp.full((n,), 2.5)
    _unbiased(quabla.grad(lambda s: qnp.sum(random.beta(key, s, 3.0)))(a), 3.0 / 5.5 ** 2)


def test_dirichlet_and_transformations():
    key = random.PRNGKey(5)
    g = quabla.grad(lambda al: qnp.mean(random.dirichlet(key, al, (20000,))[:, 0]))(
        qnp.asarray([1.0, 2.0, 3.0]))
    assert_close(g, [5 / 36, -1 / 36, -1 / 36], atol=3e-3)
    f = lambda a: qnp.sum(random.gamma(key, a, (4,)))  # noqa: E731
    assert_close(quabla.jit(quabla.grad(f))(qnp.asarray(0.7)), quabla.grad(f)(0.7))
    per_key = quabla.vmap(lambda k: quabla.grad(lambda a: random.gamma(k, a))(1.5))(
        random.split(key, 3))
    assert per_key.shape == (3,) and bool(qnp.all(qnp.isfinite(per_key)))
