"""Transformations over pytrees: against finite differences, analytic values and JAX."""

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla.tree_util import register_dataclass
from conftest import assert_close, central_diff

rng = np.random.default_rng(1)


def mlp_loss(params, x):
    h = qnp.tanh(x @ params["w1"] + params["b1"])
    return qnp.mean((h @ params["w2"]) ** 2)


def make_params():
    return {"w1": rng.normal(size=(3, 5)), "b1": rng.normal(size=5),
            "w2": rng.normal(size=(5, 2))}


def test_grad_of_tree_matches_finite_differences():
    p = make_params()
    x = rng.normal(size=(4, 3))
    g = quabla.grad(mlp_loss)({k: qnp.asarray(v) for k, v in p.items()}, qnp.asarray(x))
    assert set(g) == set(p)
    for k in p:
        def f(v, k=k):
            q = dict(p)
            q[k] = v
            return mlp_loss({kk: qnp.asarray(vv) for kk, vv in q.items()}, qnp.asarray(x))
        assert_close(g[k], central_diff(f, p[k]), rtol=1e-6, atol=1e-9)


def test_value_and_grad_argnums_and_aux():
    def f(a, b, c):
        return qnp.sum(a * b) + c, {"prod": a * b}

    a, b = qnp.asarray(np.array([1.0, 2.0])), qnp.asarray(np.array([3.0, 4.0]))
    (v, aux), (ga, gc) = quabla.value_and_grad(f, argnums=(0, 2), has_aux=True)(a, b, 1.0)
    assert float(v) == 12.0
    assert aux["prod"].tolist() == [3.0, 8.0]
    assert ga.tolist() == [3.0, 4.0] and float(gc) == 1.0
    g, aux2 = quabla.grad(f, has_aux=True)(a, b, 1.0)
    assert g.tolist() == [3.0, 4.0] and aux2["prod"].tolist() == [3.0, 8.0]


def test_grad_errors():
    with pytest.raises(TypeError, match="scalar output"):
        quabla.grad(lambda x: x * 2)(qnp.ones(3))
    with pytest.raises(TypeError, match="float"):
        quabla.grad(lambda i: qnp.sum(i * 2.0))(qnp.arange(3))


def test_python_exceptions_propagate_unchanged():
    class Boom(Exception):
        pass

    def f(x):
        raise Boom("inside")

    for t, x in ((quabla.grad(f), qnp.ones(())), (quabla.jit(f), qnp.ones(())),
                 (quabla.vmap(f), qnp.ones(3)), (lambda x: quabla.jvp(f, (x,), (x,)), qnp.ones(()))):
        with pytest.raises(Boom, match="inside"):
            t(x)
    with pytest.raises(Boom):
        quabla.grad(lambda x: quabla.lax.cond(x > 0, f, f, x))(qnp.ones(()))


def test_nested_grad_and_higher_order():
    x = 0.7
    d3 = quabla.grad(quabla.grad(quabla.grad(qnp.sin)))(x)
    assert_close(d3, -np.cos(np.float32(x)), rtol=1e-6)
    h = quabla.hessian(lambda v: qnp.sum(v ** 3) * v[0])(qnp.asarray(np.array([1.0, 2.0])))
    # f = (x0^3 + x1^3) x0: H = [[12 x0^2, 3 x1^2], [3 x1^2, 6 x1 x0]]
    assert_close(h, [[12.0, 12.0], [12.0, 12.0]], rtol=1e-14)


def test_jvp_vjp_jacobians_against_analytic_derivatives():
    x = rng.normal(size=3)
    y = rng.normal(size=(2, 3))

    def f(a, b):
        return {"u": qnp.sin(a) * b, "v": qnp.sum(a * b, axis=1)}

    ta, tb = rng.normal(size=3), rng.normal(size=(2, 3))
    out, tout = quabla.jvp(f, (qnp.asarray(x), qnp.asarray(y)), (qnp.asarray(ta), qnp.asarray(tb)))
    assert_close(out["u"], np.sin(x) * y, rtol=1e-15)
    assert_close(tout["u"], np.cos(x) * ta * y + np.sin(x) * tb, rtol=1e-13)
    assert_close(tout["v"], np.sum(ta * y + x * tb, axis=1), rtol=1e-13)
    out, pb = quabla.vjp(f, qnp.asarray(x), qnp.asarray(y))
    cu, cv = rng.normal(size=(2, 3)), rng.normal(size=2)
    ga, gb = pb({"u": qnp.asarray(cu), "v": qnp.asarray(cv)})
    assert_close(ga, np.sum(cu * np.cos(x) * y + cv[:, None] * y, axis=0), rtol=1e-13)
    assert_close(gb, cu * np.sin(x) + cv[:, None] * x, rtol=1e-13)
    # Jacobians: d u[i, j] / d a[k] = cos(a[j]) b[i, j] [j == k]; d v[i] / d b[k, l] = a[l] [i == k]
    ju_a = np.zeros((2, 3, 3))
    for i in range(2):
        for j in range(3):
            ju_a[i, j, j] = np.cos(x[j]) * y[i, j]
    jv_b = np.zeros((2, 2, 3))
    for i in range(2):
        jv_b[i, i] = x
    for jac in (quabla.jacfwd, quabla.jacrev):
        j = jac(f, argnums=(0, 1))(qnp.asarray(x), qnp.asarray(y))
        assert_close(j["u"][0], ju_a, rtol=1e-13, atol=1e-15)
        assert_close(j["v"][1], jv_b, rtol=1e-13, atol=1e-15)
        assert_close(j["v"][0], y, rtol=1e-13)

    def s(a, b):
        return qnp.sum(qnp.sin(a) * b) + qnp.sum(a ** 2)

    h = quabla.hessian(s, argnums=(0, 1))(qnp.asarray(x), qnp.asarray(y[0]))
    assert_close(h[0][0], np.diag(-np.sin(x) * y[0] + 2.0), rtol=1e-13, atol=1e-15)
    assert_close(h[0][1], np.diag(np.cos(x)), rtol=1e-13, atol=1e-15)
    assert_close(h[1][0], np.diag(np.cos(x)), rtol=1e-13, atol=1e-15)
    assert_close(h[1][1], np.zeros((3, 3)))


def test_jacobian_in_a_scalar_of_a_vector_function():
    # d tanh(x + b) / db for a scalar b: a column of sech^2(x + b). The CPU plugin's fused
    # plan once repeated the first element here (a broadcast adding a leading axis of
    # length 1 to a value computed in the same elementwise chain).
    x = np.array([0.5, -1.0, 2.0])
    want = 1.0 - np.tanh(x + 0.1) ** 2
    for jac in (quabla.jacfwd, quabla.jacrev):
        got = jac(lambda b: qnp.tanh(qnp.asarray(x) + b))(qnp.asarray(0.1))
        assert_close(got, want, rtol=1e-13)
        assert_close(quabla.jit(jac(lambda b: qnp.sin(qnp.asarray(x) * 2.0 + b)))(0.1),
                     np.cos(x * 2.0 + 0.1), rtol=1e-13)


def test_vmap_axes_and_trees():
    a = rng.normal(size=(4, 3))
    b = rng.normal(size=(3, 5))
    out = quabla.vmap(lambda r, m: r @ m, in_axes=(0, None))(qnp.asarray(a), qnp.asarray(b))
    assert_close(out, a @ b, rtol=1e-14)
    out = quabla.vmap(lambda c: c * 2, in_axes=1, out_axes=1)(qnp.asarray(b))
    assert_close(out, b * 2)
    tree = {"x": qnp.asarray(a), "y": qnp.asarray(a[:, :1])}
    out = quabla.vmap(lambda t: {"s": t["x"].sum() + t["y"][0], "k": 1.0},
                      in_axes=({"x": 0, "y": 0},), out_axes={"s": 0, "k": None})(tree)
    assert_close(out["s"], a.sum(1) + a[:, 0], rtol=1e-14)
    assert float(out["k"]) == 1.0
    with pytest.raises(ValueError, match="in_axes"):
        quabla.vmap(lambda x: x, in_axes=(0, 0))(qnp.ones(2))
    with pytest.raises(ValueError, match="batch sizes"):
        quabla.vmap(lambda x, y: x + y)(qnp.ones(2), qnp.ones(3))
    m = quabla.vmap(quabla.vmap(lambda u, v: u * v, (0, None)), (None, 0))(
        qnp.asarray(a[0]), qnp.asarray(b[0]))
    assert_close(m, np.outer(b[0], a[0]), rtol=1e-15)


def test_vmap_of_grad_and_grad_of_vmap():
    xs = rng.normal(size=(6, 3))
    per = quabla.vmap(quabla.grad(lambda v: qnp.sum(qnp.sin(v) ** 2)))(qnp.asarray(xs))
    assert_close(per, np.sin(2 * xs), rtol=1e-13)
    w = xs[0]
    g = quabla.grad(lambda w: qnp.sum(quabla.vmap(lambda r: qnp.tanh(r @ w))(qnp.asarray(xs))))(
        qnp.asarray(w))
    assert_close(g, np.sum((1 - np.tanh(xs @ w)[:, None] ** 2) * xs, axis=0), rtol=1e-13)


@pytest.mark.x64_off
def test_jit_caches_lowers_and_refuses_python_control_flow():
    calls = []

    def f(x, n):
        calls.append(1)
        return x * n

    jf = quabla.jit(f, static_argnums=1)
    x = qnp.ones(3)
    assert jf(x, 2).tolist() == [2.0] * 3
    assert jf(x + 1, 2).tolist() == [4.0] * 3
    assert len(calls) == 1
    jf(x, 3)
    assert len(calls) == 2
    jf(qnp.ones(4), 3)
    assert len(calls) == 3
    text = quabla.jit(lambda a: qnp.sin(a) * 2).lower(x).as_text()
    assert "sin(%0)" in text and text.startswith("program(%0: f32[3])")
    compiled = quabla.jit(lambda a: a + 1).lower(x).compile()
    assert compiled(x).tolist() == [2.0] * 3

    @quabla.jit
    def branchy(a):
        if a.sum() > 0:
            return a
        return -a

    with pytest.raises(quabla.ConcretizationTypeError, match="while tracing `.*branchy`.*cond"):
        branchy(x)
    with pytest.raises(ValueError, match="non-hashable static"):
        quabla.jit(f, static_argnums=1)(x, [1])


def test_jit_kwargs_and_donation():
    jf = quabla.jit(lambda p, scale=1.0: {"w": p["w"] * scale}, donate_argnums=0)
    p = {"w": qnp.ones(2)}
    out = jf(p, scale=3.0)
    assert out["w"].tolist() == [3.0, 3.0]


def test_custom_jvp_and_custom_vjp():
    @quabla.custom_jvp
    def safe_log1pexp(x):
        return qnp.log1p(qnp.exp(x))

    @safe_log1pexp.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return safe_log1pexp(x), t / (1 + qnp.exp(-x))

    g = quabla.grad(lambda x: safe_log1pexp(x))(qnp.asarray(np.float64(200.0)))
    assert float(g) == 1.0  # the naive derivative is inf / inf = nan

    @quabla.custom_vjp
    def clip_grad(x):
        return x

    def fwd(x):
        return x, None

    def bwd(_, g):
        return (qnp.clip(g, -1.0, 1.0),)

    clip_grad.defvjp(fwd, bwd)
    g = quabla.grad(lambda x: qnp.sum(clip_grad(x) * 10.0))(qnp.ones(3))
    assert g.tolist() == [1.0, 1.0, 1.0]


def test_checkpoint_gives_the_same_gradient():
    x = qnp.asarray(rng.normal(size=4))

    def body(v):
        return qnp.sin(qnp.cos(v)) * v

    g1 = quabla.grad(lambda v: qnp.sum(body(v)))(x)
    g2 = quabla.grad(lambda v: qnp.sum(quabla.checkpoint(body)(v)))(x)
    assert g1.tolist() == g2.tolist()


class Point(NamedTuple):
    x: object
    y: object


@register_dataclass
@dataclasses.dataclass
class Params:
    w: object
    b: object


def test_namedtuple_and_dataclass_pytrees():
    g = quabla.grad(lambda p: qnp.sum(p.x * p.y))(Point(qnp.ones(2), qnp.full(2, 3.0)))
    assert isinstance(g, Point) and g.x.tolist() == [3.0, 3.0]
    g = quabla.grad(lambda p: qnp.sum(p.w ** 2) + p.b)(Params(qnp.ones(2), qnp.asarray(1.0)))
    assert isinstance(g, Params) and g.w.tolist() == [2.0, 2.0] and float(g.b) == 1.0
    out = quabla.jit(lambda p: Params(p.w * 2, p.b))(Params(qnp.ones(2), qnp.asarray(1.0)))
    assert isinstance(out, Params) and out.w.tolist() == [2.0, 2.0]


def test_stop_gradient():
    g = quabla.grad(lambda x: qnp.sum(x * quabla.stop_gradient(x)))(qnp.full(2, 3.0))
    assert g.tolist() == [3.0, 3.0]
