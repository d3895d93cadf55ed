"""quabla.nn against jax.nn (JAX 0.10.2, x64; tests/goldens/jax_nn.json): activation values
and derivatives at kinks, signed zeros, infinities and NaN; the softmax family with axes,
masks and weights; one_hot; the initializers' draws; and finite differences."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
import quabla.nn as nn
import quabla.random as qr
from conftest import assert_close, central_diff, dec, golden

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import softmax_family_cases, weighted_finite_sum  # noqa: E402

G = golden("jax_nn")
X = dec(G["inputs"])


def _activation(name):
    if name == "gelu_exact":
        return lambda v: nn.gelu(v, approximate=False)
    return getattr(nn, name)


@pytest.mark.parametrize("name", sorted(G["activations"]))
def test_activation_values_and_derivatives_match_jax(name):
    f = _activation(name)
    g = G["activations"][name]
    x = qnp.asarray(X)
    # atol: gelu's tanh form cancels (1 + tanh(-17.8)) to a few ulps of 1, where a 1-ulp
    # difference in tanh shows; everything else agrees to rtol alone.
    assert_close(f(x), dec(g["value"]), rtol=1e-13, atol=1e-14)
    # The derivative at every input, kinks (0, +-1, 6) and infinities included.
    assert_close(quabla.vmap(quabla.grad(f))(x), dec(g["grad"]), rtol=1e-13, atol=1e-14)


def test_activation_signed_zeros_match_jax():
    for name, g in G["activations"].items():
        v = np.asarray(_activation(name)(qnp.asarray(X)))
        want = dec(g["value"])
        zeros = want == 0
        assert np.array_equal(np.signbit(v[zeros]), np.signbit(want[zeros])), name


@pytest.mark.parametrize("name", sorted(G["softmax_family"]))
def test_softmax_family_matches_jax(name):
    m, w = qnp.asarray(dec(G["matrix"])), qnp.asarray(dec(G["weights"]))
    mask, b = qnp.asarray(dec(G["mask"])), qnp.asarray(dec(G["b"]))
    f = softmax_family_cases(nn, quabla.scipy.special, qnp, mask, b)[name]
    g = G["softmax_family"][name]
    assert_close(f(m), dec(g["value"]), rtol=1e-13, atol=1e-15)
    assert_close(quabla.grad(weighted_finite_sum(qnp, f, w))(m), dec(g["grad"]), rtol=1e-12,
                 atol=1e-15)


def test_logsumexp_return_sign_matches_jax():
    m, b = qnp.asarray(dec(G["matrix"])), qnp.asarray(dec(G["b"]))
    out, sign = nn.logsumexp(m, axis=1, b=b, return_sign=True)
    assert_close(out, dec(G["logsumexp_sign"][0]), rtol=1e-14)
    assert_close(sign, dec(G["logsumexp_sign"][1]), rtol=0)


def test_softmax_derivatives_match_finite_differences():
    x = np.array([[0.3, -1.2, 2.0], [1.0, 1.0, -0.5]])
    w = np.array([[1.0, -2.0, 0.5], [0.3, 0.7, -1.1]])
    for f in (lambda v: nn.softmax(v, axis=1), lambda v: nn.log_softmax(v, axis=0),
              lambda v: nn.logsumexp(v, axis=1)[:, None] * v):
        def loss(v, f=f):
            return qnp.sum(f(v) * qnp.asarray(w))
        assert_close(quabla.grad(loss)(qnp.asarray(x)),
                     central_diff(lambda v: float(loss(qnp.asarray(v))), x), rtol=1e-7,
                     atol=1e-9)


def test_softmax_works_under_jit_and_vmap():
    x = qnp.asarray(np.arange(12.0).reshape(3, 4) / 7)
    assert_close(quabla.jit(nn.softmax)(x), nn.softmax(x), rtol=1e-15)
    assert_close(quabla.vmap(nn.softmax)(x), nn.softmax(x, axis=-1), rtol=1e-15)
    assert_close(qnp.sum(nn.softmax(x, axis=0), axis=0), np.ones(4), rtol=1e-15)


def test_one_hot_matches_jax():
    assert_close(nn.one_hot(qnp.array([0, 2, 5, -1, 1]), 3), dec(G["one_hot"]), rtol=0)
    h = nn.one_hot(qnp.array([0, 2, 1]), 4, dtype=np.int32, axis=0)
    assert h.dtype == np.int32
    assert_close(h, dec(G["one_hot_axis0_i32"]), rtol=0)
    with pytest.raises(TypeError, match="num_classes"):
        nn.one_hot(qnp.array([0]), 2.5)
    with pytest.raises(ValueError, match="axis"):
        nn.one_hot(qnp.array([0]), 2, axis=3)


def test_glu_needs_an_even_axis():
    with pytest.raises(ValueError, match="even"):
        nn.glu(qnp.ones((2, 3)))


@pytest.mark.parametrize("name", sorted(G["initializers"]))
def test_initializers_match_jax(name):
    k = qr.PRNGKey(7)
    init = getattr(nn.initializers, name)()
    want = G["initializers"][name]
    # Draws are normal or scaled uniform samples, which agree with JAX's to a few ulps.
    assert_close(init(k, (4, 3), np.float64), dec(want["4x3_f64"]), rtol=1e-12, atol=1e-15)
    got = init(k, (3, 5), np.float32)
    assert got.dtype == np.float32
    assert_close(got, dec(want["3x5_f32"]), rtol=2e-5, atol=1e-6)
    assert_close(init(k, (3, 3, 4, 2), np.float64), dec(want["3x3x4x2_f64"]), rtol=1e-12,
                 atol=1e-15)


def test_simple_initializers_and_their_errors():
    k = qr.PRNGKey(0)
    assert np.asarray(nn.initializers.zeros(k, (2, 3))).tolist() == [[0.0] * 3] * 2
    assert np.asarray(nn.initializers.ones(k, (2,), np.int32)).tolist() == [1, 1]
    assert np.asarray(nn.initializers.constant(2.5)(k, (2,))).tolist() == [2.5, 2.5]
    u = np.asarray(nn.initializers.uniform(0.5)(k, (1000,)))
    assert u.min() >= 0 and u.max() < 0.5
    with pytest.raises(ValueError, match="at least 2D"):
        nn.initializers.he_normal()(k, (5,))
    with pytest.raises(ValueError, match="invalid mode"):
        nn.initializers.variance_scaling(1.0, "fan_sum", "normal")
    with pytest.raises(ValueError, match="invalid distribution"):
        nn.initializers.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="2D"):
        nn.initializers.orthogonal()(k, (5,))
    q = np.asarray(nn.initializers.orthogonal(2.0)(k, (3, 6)))
    np.testing.assert_allclose(q @ q.T, 4.0 * np.eye(3), atol=1e-12)


def test_truncated_normal_matches_jax_and_stays_inside():
    k = qr.PRNGKey(7)
    t64 = np.asarray(qr.truncated_normal(k, -1.5, 2.5, (200,), np.float64))
    assert_close(t64, dec(G["truncated_normal_f64"]), rtol=1e-12, atol=1e-15)
    assert t64.min() > -1.5 and t64.max() < 2.5
    t32 = qr.truncated_normal(k, -2.0, 2.0, (200,), np.float32)
    assert t32.dtype == np.float32
    assert_close(t32, dec(G["truncated_normal_f32"]), rtol=2e-5, atol=1e-6)
    big = np.asarray(qr.truncated_normal(qr.PRNGKey(1), -1.0, 1.0, (20000,), np.float64))
    # The standard normal truncated to (-1, 1) has variance 1 - 2 phi(1) / (2 Phi(1) - 1).
    var = 1 - 2 * np.exp(-0.5) / np.sqrt(2 * np.pi) / 0.6826894921370859
    assert abs(big.mean()) < 0.02 and abs(big.var() - var) < 0.01
