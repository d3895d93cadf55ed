"""JAX's conventions at edge inputs (NaN, inf, -0, ties), checked against JAX itself:
values and gradients must agree, NaNs in the same places."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from conftest import assert_close

EDGE = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-300, 0.5])

UNARY = ["sin", "cos", "tanh", "exp", "log", "log1p", "expm1", "sqrt", "cbrt", "abs", "sign",
         "arctan", "arcsinh", "floor", "round", "square", "log2", "arctanh", "arcsin"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_values_and_derivatives_at_edges(jax_ref, name):
    jax, jnp = jax_ref
    q = getattr(qnp, name)
    j = getattr(jnp, name)
    for x in EDGE:
        assert_close(q(qnp.asarray(np.float64(x))), j(x), rtol=1e-15)
        gq = quabla.grad(q)(qnp.asarray(np.float64(x)))
        gj = jax.grad(j)(x)
        assert_close(gq, gj, rtol=1e-14), (name, x)


@pytest.mark.parametrize("name", ["maximum", "minimum", "hypot", "logaddexp", "arctan2",
                                  "power", "mod"])
def test_binary_derivatives_at_edges(jax_ref, name):
    jax, jnp = jax_ref
    q = getattr(qnp, name)
    j = getattr(jnp, name)
    pts = [(0.0, 0.0), (1.0, 1.0), (-np.inf, -np.inf), (2.0, 0.0), (0.0, 2.0), (-0.0, 0.0),
           (np.inf, 1.0), (3.0, -2.0)]
    for a, b in pts:
        if name == "power" and a < 0:
            continue
        qa, qb = qnp.asarray(np.float64(a)), qnp.asarray(np.float64(b))
        assert_close(q(qa, qb), j(a, b), rtol=1e-15)
        gq = quabla.grad(q, argnums=(0, 1))(qa, qb)
        gj = jax.grad(j, argnums=(0, 1))(a, b)
        for k in range(2):
            assert_close(gq[k], gj[k], rtol=1e-14)


def test_reduction_gradient_conventions(jax_ref):
    jax, jnp = jax_ref
    cases = [
        (lambda x: qnp.max(x), lambda x: jnp.max(x), [1.0, 3.0, 3.0, 2.0]),
        (lambda x: qnp.prod(x), lambda x: jnp.prod(x), [2.0, 0.0, 3.0, 0.0]),
        (lambda x: qnp.prod(x), lambda x: jnp.prod(x), [2.0, 0.0, 3.0, 4.0]),
        (lambda x: qnp.std(x), lambda x: jnp.std(x), [2.0, 2.0, 2.0]),
        (lambda x: qnp.sum(qnp.sqrt(x)), lambda x: jnp.sum(jnp.sqrt(x)), [0.0, 4.0]),
        (lambda x: qnp.interp(x, qnp.asarray(np.array([0.0, 1.0, 2.0])),
                              qnp.asarray(np.array([0.0, 1.0, 3.0]))).sum(),
         lambda x: jnp.interp(x, jnp.array([0.0, 1.0, 2.0]), jnp.array([0.0, 1.0, 3.0])).sum(),
         [1.0, 0.5, 2.0]),
        (lambda x: qnp.sum(qnp.where(x > 0, qnp.sqrt(qnp.where(x > 0, x, 1.0)), 0.0)),
         lambda x: jnp.sum(jnp.where(x > 0, jnp.sqrt(jnp.where(x > 0, x, 1.0)), 0.0)),
         [-1.0, 0.0, 4.0]),
        (lambda x: qnp.sum(qnp.where(x > 0, qnp.sqrt(x), 0.0)),
         lambda x: jnp.sum(jnp.where(x > 0, jnp.sqrt(x), 0.0)), [-1.0, 0.0, 4.0]),
        (lambda x: qnp.sum(qnp.clip(x, 0.0, 1.0)), lambda x: jnp.sum(jnp.clip(x, 0.0, 1.0)),
         [0.0, 0.5, 1.0, 2.0]),
        (lambda x: qnp.sum(qnp.abs(x)), lambda x: jnp.sum(jnp.abs(x)), [0.0, -0.0, -2.0]),
    ]
    for i, (q, j, x) in enumerate(cases):
        x = np.array(x)
        assert_close(q(qnp.asarray(x)), j(x), rtol=1e-14)
        assert_close(quabla.grad(q)(qnp.asarray(x)), jax.grad(j)(x), rtol=1e-14)


def test_dtype_results_match_jax(jax_ref):
    jax, jnp = jax_ref
    i = np.arange(3, dtype=np.int32)
    f = np.ones(3, np.float32)
    for q, j in [(lambda: qnp.asarray(i) + qnp.asarray(f), lambda: jnp.asarray(i) + f),
                 (lambda: qnp.asarray(i) / 2, lambda: jnp.asarray(i) / 2),
                 (lambda: qnp.asarray(f) * 2.0, lambda: jnp.asarray(f) * 2.0),
                 (lambda: qnp.asarray(i) * 2, lambda: jnp.asarray(i) * 2),
                 (lambda: qnp.sqrt(qnp.asarray(f)), lambda: jnp.sqrt(jnp.asarray(f)))]:
        assert q().dtype == j().dtype
