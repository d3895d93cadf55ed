"""JAX's conventions at edge inputs (NaN, inf, -0, ties): values and derivatives against the
goldens recorded from JAX 0.10.2 (x64), NaNs in the same places; and JAX's dtype rules."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from conftest import assert_close, dec, golden, x64_mode

G = golden("jax_conventions")


@pytest.mark.parametrize("name", sorted(G["unary"]))
def test_unary_values_and_derivatives_at_edges(name):
    q = getattr(qnp, name)
    want_v, want_g = dec(G["unary"][name]["value"]), dec(G["unary"][name]["grad"])
    for i, x in enumerate(G["edge"]):
        x = qnp.asarray(np.float64(x))
        assert_close(q(x), want_v[i], rtol=1e-15)
        assert_close(quabla.grad(q)(x), want_g[i], rtol=1e-14)


@pytest.mark.parametrize("name", sorted(G["binary"]))
def test_binary_values_and_derivatives_at_edges(name):
    q = getattr(qnp, name)
    case = G["binary"][name]
    want_v, want_g = dec(case["value"]), dec(case["grad"])
    for i, (a, b) in enumerate(case["points"]):
        qa, qb = qnp.asarray(np.float64(a)), qnp.asarray(np.float64(b))
        assert_close(q(qa, qb), want_v[i], rtol=1e-15)
        g = quabla.grad(q, argnums=(0, 1))(qa, qb)
        assert_close(np.array([float(g[0]), float(g[1])]), want_g[i], rtol=1e-14)


def test_analytic_conventions():
    """The headline conventions, written out: abs'(0) = 1, max splits ties, hypot'(0, 0) =
    (0.5, 0.5), sqrt'(0) = inf, x ** 2 has derivative 0 at 0, prod's gradient with a zero."""
    g = lambda f, *a: quabla.grad(f, argnums=tuple(range(len(a))))(  # noqa: E731
        *[qnp.asarray(np.float64(v)) for v in a])
    assert float(g(qnp.abs, 0.0)[0]) == 1.0
    assert [float(v) for v in g(qnp.maximum, 1.0, 1.0)] == [0.5, 0.5]
    assert [float(v) for v in g(qnp.hypot, 0.0, 0.0)] == [0.5, 0.5]
    assert float(g(qnp.sqrt, 0.0)[0]) == np.inf
    assert float(g(lambda x: x ** 2, 0.0)[0]) == 0.0
    p = quabla.grad(qnp.prod)(qnp.asarray(np.array([2.0, 0.0, 3.0])))
    assert p.tolist() == [0.0, 6.0, 0.0]


FUNCS = {
    "max_tie": lambda x: qnp.max(x),
    "prod_two_zeros": lambda x: qnp.prod(x),
    "prod_one_zero": lambda x: qnp.prod(x),
    "std_constant": lambda x: qnp.std(x),
    "sqrt_at_zero": lambda x: qnp.sum(qnp.sqrt(x)),
    "interp_knots": lambda x: qnp.interp(x, qnp.asarray(np.array([0.0, 1.0, 2.0])),
                                         qnp.asarray(np.array([0.0, 1.0, 3.0]))).sum(),
    "double_where": lambda x: qnp.sum(qnp.where(x > 0, qnp.sqrt(qnp.where(x > 0, x, 1.0)), 0.0)),
    "single_where": lambda x: qnp.sum(qnp.where(x > 0, qnp.sqrt(x), 0.0)),
    "clip_bounds": lambda x: qnp.sum(qnp.clip(x, 0.0, 1.0)),
    "abs_zeros": lambda x: qnp.sum(qnp.abs(x)),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_reduction_and_where_gradients(name):
    case = G["reductions"][name]
    x = qnp.asarray(np.array(case["x"]))
    assert_close(FUNCS[name](x), dec(case["value"]), rtol=1e-14)
    assert_close(quabla.grad(FUNCS[name])(x), dec(case["grad"]), rtol=1e-14)


def test_dtype_results_follow_jax():
    i = qnp.asarray(np.arange(3, dtype=np.int32))
    f = qnp.asarray(np.ones(3, np.float32))
    assert (i + f).dtype == np.float32  # numpy would give float64
    # True division of ints gives the default float: float64 with x64 on (this suite's
    # mode), float32 with it off, as JAX.
    assert (i / 2).dtype == np.float64
    with x64_mode(False):
        assert (qnp.asarray(np.arange(3, dtype=np.int32)) / 2).dtype == np.float32
    assert (f * 2.0).dtype == np.float32
    assert (i * 2).dtype == np.int32
    assert qnp.sqrt(f).dtype == np.float32
