"""``scipy.interpolate.RegularGridInterpolator`` and ``scipy.cluster.vq.vq`` against JAX
0.10.2 on the same inputs (recorded by hand; the values agree to the last bit)."""

import numpy as np
import pytest

import quabla
import quabla.numpy as jnp
from quabla.scipy.cluster.vq import vq
from quabla.scipy.interpolate import RegularGridInterpolator

from conftest import assert_close

nan = float("nan")
GX = np.array([0.0, 0.5, 1.5, 3.0])
GY = np.array([-1.0, 0.0, 2.0])
VALS = np.sin(GX[:, None] * 1.3 + GY[None, :] ** 2)
PTS = np.array([[0.2, -0.5], [1.5, 0.0], [2.9, 1.9], [3.2, 0.0], [0.0, -1.0], [1.0, 1.0],
                [-0.1, 0.5]])
JAX = {
    ("linear", True): [0.5728515822803606, 0.9289597150038692, 0.8360152964442749, nan, 0.8414709848078965, 0.052259216777822165, nan],
    ("linear", False): [0.5728515822803606, 0.9289597150038692, 0.8360152964442749, -0.9033296090756868, 0.8414709848078965, 0.052259216777822165, -0.2679159875148404],
    ("nearest", True): [0.8414709848078965, 0.9289597150038692, 0.998941341839772, nan, 0.8414709848078965, 0.6051864057360395, nan],
    ("nearest", False): [0.8414709848078965, 0.9289597150038692, 0.998941341839772, -0.6877661591839741, 0.8414709848078965, 0.6051864057360395, 0.0],
}


def _grid(values=VALS, **kw):
    return RegularGridInterpolator((jnp.asarray(GX), jnp.asarray(GY)), jnp.asarray(values), **kw)


@pytest.mark.parametrize("method,fill", list(JAX))
def test_methods_and_fill_match_jax(method, fill):
    f = _grid(method=method) if fill else _grid(method=method, fill_value=None)
    assert_close(f(jnp.asarray(PTS)), JAX[(method, fill)], rtol=1e-15)


def test_trailing_axes_tuples_and_one_dimension():
    v3 = np.stack([VALS, 2 * VALS], axis=-1)
    want = [[0.5728515822803606, 1.1457031645607212], [0.9289597150038692, 1.8579194300077384], [0.8360152964442749, 1.6720305928885497]]
    f = _grid(v3, fill_value=-7.0)
    assert_close(f(jnp.asarray(PTS[:3])), want, rtol=1e-15)
    assert_close(f((jnp.asarray(PTS[:3, 0]), jnp.asarray(PTS[:3, 1]))), want, rtol=1e-15)
    assert_close(f(jnp.asarray(PTS[3:4])), [[-7.0, -7.0]], rtol=0)
    f1 = RegularGridInterpolator((jnp.asarray(GX),), jnp.asarray(VALS[:, 0]))
    assert_close(f1(jnp.asarray([0.25, 2.0, 3.5])), [0.9191680066309077, -0.20053577263409275, nan], rtol=1e-15)


def test_gradient_in_the_values_and_the_points():
    # Inside one cell the interpolant is bilinear: its weights are the gradient in values.
    g = quabla.grad(lambda v: _grid(v)(jnp.asarray([[1.0, 1.0]]))[0])(jnp.asarray(VALS))
    want = np.zeros_like(VALS)
    want[1, 1], want[1, 2], want[2, 1], want[2, 2] = 0.25, 0.25, 0.25, 0.25
    assert_close(g, want, rtol=1e-15)
    gp = quabla.grad(lambda p: _grid()(p[None])[0])(jnp.asarray([1.0, 1.0]))
    eps = 1e-6
    fd = [(float(_grid()(jnp.asarray([[1.0 + eps * (i == 0), 1.0 + eps * (i == 1)]]))[0])
           - float(_grid()(jnp.asarray([[1.0 - eps * (i == 0), 1.0 - eps * (i == 1)]]))[0]))
          / (2 * eps) for i in range(2)]
    assert_close(gp, fd, rtol=1e-7)


def test_errors():
    with pytest.raises(ValueError, match="not defined"):
        _grid(method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        _grid(bounds_error=True)
    with pytest.raises(ValueError, match="dimension"):
        _grid()(jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="points\\[1\\]"):
        RegularGridInterpolator((jnp.asarray(GX), jnp.asarray(GY[:2])), jnp.asarray(VALS))


def test_vq_as_jax():
    obs = np.array([[1.1, 2.1, 3.1], [5.9, 4.8, 6.2], [2.5, 3.5, 4.5]])
    cb = np.array([[1.0, 2, 3], [2, 3, 4], [3, 4, 5], [4, 5, 6]])
    codes, dists = vq(jnp.asarray(obs), jnp.asarray(cb))
    assert codes.tolist() == [0, 3, 1]
    assert_close(dists, [0.1732050807568879, 1.920937271229855, 0.8660254037844386], rtol=1e-15)
    codes, dists = vq(jnp.asarray([0.2, 2.6]), jnp.asarray([0.0, 1.0, 3.0]))
    assert codes.tolist() == [0, 2]
    assert_close(dists, [0.2, 0.3999999999999999], rtol=1e-15)
    with pytest.raises(ValueError, match="same rank"):
        vq(jnp.ones((2, 2)), jnp.ones(2))
