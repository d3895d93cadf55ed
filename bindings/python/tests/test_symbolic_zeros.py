"""``symbolic_zeros=True`` in custom_jvp / custom_vjp: rules written for JAX's protocol
(SymbolicZero tangents, CustomVJPPrimal inputs, SymbolicZero results) run and give the
analytic derivatives, eagerly, under jit and under vmap."""

import math

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla.custom_derivatives import (
    CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp, zero_from_primal,
)

from conftest import assert_close

# JAX's float0, the dtype of an integer value's tangent.
FLOAT0 = np.dtype([("float0", np.void, 0)])


def _f64(v):
    return qnp.asarray(np.float64(v))


def _scaled_power():
    """f(x, n) = x**n with an integer n, a rule in equinox's style: it branches on which
    tangents are symbolic zeros and records what it saw."""
    seen = []

    @custom_jvp
    def f(x, n):
        return x ** n

    def f_jvp(primals, tangents):
        x, n = primals
        tx, tn = tangents
        seen.append((type(tx).__name__, type(tn).__name__))
        assert isinstance(tn, SymbolicZero) and tn.shape == () and tn.dtype == FLOAT0
        out = f(x, n)
        if isinstance(tx, SymbolicZero):
            return out, SymbolicZero.from_primal_value(out)
        return out, n * x ** (n - 1) * tx

    f.defjvp(f_jvp, symbolic_zeros=True)
    return f, seen


def test_custom_jvp_integer_input_gets_a_symbolic_zero_float_input_an_array():
    f, seen = _scaled_power()
    assert_close(quabla.grad(f)(_f64(1.5), 3), 3 * 1.5 ** 2, rtol=1e-15)
    assert seen and all(s == ("Array", "SymbolicZero") for s in seen)
    # Forward mode, jit and vmap see the same protocol.
    _, t = quabla.jvp(lambda x: f(x, 4), (_f64(2.0),), (_f64(1.0),))
    assert_close(t, 4 * 2.0 ** 3, rtol=1e-15)
    assert_close(quabla.jit(quabla.grad(f), static_argnums=1)(_f64(0.5), 2), 1.0, rtol=1e-15)
    xs = qnp.asarray(np.array([0.5, 1.0, 2.0]))
    assert_close(quabla.vmap(quabla.grad(f), in_axes=(0, None))(xs, 3),
                 3 * np.array([0.5, 1.0, 2.0]) ** 2, rtol=1e-15)


def test_custom_jvp_rule_may_return_symbolic_zero_output_tangents():
    @custom_jvp
    def split(x):
        return qnp.sin(x), qnp.floor(x)

    def split_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        s, fl = split(x)
        # floor's derivative is zero almost everywhere: say so symbolically.
        return (s, fl), (qnp.cos(x) * t, SymbolicZero.from_primal_value(fl))

    split.defjvp(split_jvp, symbolic_zeros=True)

    jac = quabla.jacfwd(lambda x: qnp.stack(split(x)))(_f64(0.7))
    assert_close(jac, [math.cos(0.7), 0.0], rtol=1e-15)
    assert_close(quabla.grad(lambda x: split(x)[0] + 5 * split(x)[1])(_f64(0.7)),
                 math.cos(0.7), rtol=1e-15)


def test_custom_vjp_fwd_gets_custom_vjp_primals_per_leaf():
    seen = {}

    @custom_vjp
    def weighted(p, k):
        return p["w"] * p["x"] ** k

    def fwd(p, k):
        seen["p"], seen["k"] = p, k
        w, x, kv = p["w"].value, p["x"].value, k.value
        return weighted({"w": w, "x": x}, kv), (w, x, kv)

    def bwd(res, g):
        w, x, kv = res
        # k is an integer: its cotangent is symbolically zero, as a JAX rule would say.
        return {"w": g * x ** kv, "x": g * w * kv * x ** (kv - 1)}, SymbolicZero(None)

    weighted.defvjp(fwd, bwd, symbolic_zeros=True)
    p = {"w": _f64(2.0), "x": _f64(3.0)}
    g = quabla.grad(weighted)(p, qnp.asarray(np.int32(2)))
    assert isinstance(seen["p"]["w"], CustomVJPPrimal) and seen["p"]["w"].perturbed
    assert isinstance(seen["k"], CustomVJPPrimal) and not seen["k"].perturbed
    assert_close(g["w"], 9.0, rtol=1e-15)
    assert_close(g["x"], 12.0, rtol=1e-15)
    # Under jit and vmap too.
    gj = quabla.jit(quabla.grad(weighted))(p, qnp.asarray(np.int32(3)))
    assert_close(gj["x"], 2.0 * 3 * 9.0, rtol=1e-15)
    xs = qnp.asarray(np.array([1.0, 2.0]))
    gv = quabla.vmap(lambda x: quabla.grad(weighted)({"w": _f64(2.0), "x": x},
                                                     qnp.asarray(np.int32(2)))["x"])(xs)
    assert_close(gv, [4.0, 8.0], rtol=1e-15)


def test_custom_vjp_bwd_may_return_symbolic_zero_or_none_for_a_float_argument():
    @custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (f(x.value, y.value), x.value),
             lambda xv, g: (SymbolicZero.from_primal_value(xv), g * xv),
             symbolic_zeros=True)
    gx, gy = quabla.grad(f, argnums=(0, 1))(_f64(2.0), _f64(5.0))
    assert_close(gx, 0.0, rtol=0)
    assert_close(gy, 2.0, rtol=0)
    # A plain call runs f alone; fwd and bwd never see CustomVJPPrimal values then.
    assert_close(f(_f64(2.0), _f64(5.0)), 10.0, rtol=0)


def test_custom_vjp_bwd_returning_none_for_a_float_argument():
    # Without symbolic_zeros too: None's zeros are made in bwd's own trace (they were made
    # beside the primal argument, in the enclosing trace, which failed under grad).
    @custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (f(x, y), x), lambda xv, g: (None, g * xv))
    gx, gy = quabla.grad(f, argnums=(0, 1))(_f64(2.0), _f64(5.0))
    assert_close(gx, 0.0, rtol=0)
    assert_close(gy, 2.0, rtol=0)
    gj = quabla.jit(quabla.grad(lambda x, y: f(x, y) * x, argnums=(0, 1)))(_f64(2.0), _f64(5.0))
    assert_close(gj[0], 10.0, rtol=0)
    assert_close(gj[1], 4.0, rtol=0)


def test_symbolic_zero_objects():
    z = SymbolicZero.from_primal_value(qnp.ones((2, 3), dtype=qnp.float32))
    assert z.shape == (2, 3) and z.ndim == 2 and z.dtype == np.float32
    assert repr(z) == "SymbolicZero"
    assert_close(z.to_zero(), np.zeros((2, 3)), rtol=0)
    zi = SymbolicZero.from_primal_value(qnp.arange(4))
    assert zi.dtype == FLOAT0
    assert zi.to_zero().dtype == FLOAT0 and zi.to_zero().shape == (4,)
    tree = {"a": qnp.ones(2), "n": qnp.arange(3)}
    symbolic = zero_from_primal(tree, symbolic_zeros=True)
    assert all(isinstance(v, SymbolicZero) for v in symbolic.values())
    dense = zero_from_primal(tree)
    assert_close(dense["a"], [0.0, 0.0], rtol=0)
    assert dense["n"].dtype == FLOAT0
    p = CustomVJPPrimal(qnp.ones(2), True)
    assert p.perturbed and p.value.shape == (2,)


def test_custom_jvp_without_symbolic_zeros_still_gets_float0_arrays():
    @custom_jvp
    def f(x, n):
        return x * n

    @f.defjvp
    def f_jvp(primals, tangents):
        (x, n), (tx, tn) = primals, tangents
        assert isinstance(tn, np.ndarray) and tn.dtype == FLOAT0
        return f(x, n), tx * n

    assert_close(quabla.grad(f)(_f64(1.0), 3), 3.0, rtol=0)


@pytest.mark.parametrize("flag", [False, True])
def test_defjvp_records_the_flag(flag):
    @custom_jvp
    def f(x):
        return x

    f.defjvp(lambda p, t: (p[0], t[0]), symbolic_zeros=flag)
    assert f.symbolic_zeros is flag
