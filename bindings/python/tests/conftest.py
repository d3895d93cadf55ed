"""Shared helpers. JAX (with x64 on) is the independent reference where it is installed
(`cargo xtask test` installs it); numpy and finite differences are used everywhere."""

import numpy as np
import pytest

try:
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    import jax.numpy as jnp
except ImportError:  # pragma: no cover - the test venv installs jax
    jax = None
    jnp = None


@pytest.fixture
def jax_ref():
    if jax is None:
        pytest.skip("jax is not installed: the JAX-reference checks need it "
                    "(cargo xtask test installs it)")
    return jax, jnp


def assert_close(actual, expected, rtol=1e-6, atol=0.0):
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)


def central_diff(f, x, eps=1e-6):
    """Gradient of scalar f at float64 numpy x by central differences."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (float(f(xp)) - float(f(xm))) / (2 * eps)
    return g
