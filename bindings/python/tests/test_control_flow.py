"""quabla.lax control flow over pytrees, with AD and vmap, against Python loops and JAX."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax
from conftest import assert_close, central_diff


def test_cond_is_lazy_in_values_and_gradients():
    def f(x):
        return lax.cond(x > 0, lambda v: qnp.log(v), lambda v: v * 2.0, x)

    assert float(f(qnp.asarray(np.float64(-1.0)))) == -2.0
    g = quabla.grad(f)(qnp.asarray(np.float64(-1.0)))
    assert float(g) == 2.0 and np.isfinite(float(g))
    assert_close(quabla.grad(f)(qnp.asarray(np.float64(4.0))), 0.25)


def test_cond_structure_mismatch_is_named():
    with pytest.raises(TypeError, match="true_fun and false_fun"):
        lax.cond(qnp.asarray(True), lambda x: (x, x), lambda x: [x, x], qnp.ones(2))
    with pytest.raises(TypeError):
        lax.cond(qnp.asarray(True), lambda x: x, lambda x: x[:1], qnp.ones(2))


def test_switch_clamps_and_trees():
    branches = [lambda p: {"y": p["x"] + 1}, lambda p: {"y": p["x"] * 10},
                lambda p: {"y": -p["x"]}]
    x = {"x": qnp.asarray(2.0)}
    assert [float(lax.switch(i, branches, x)["y"]) for i in (-5, 0, 1, 2, 9)] == \
        [3.0, 3.0, 20.0, -2.0, -2.0]


def test_while_loop_and_forward_mode():
    def newton_sqrt(a):
        return lax.while_loop(lambda c: qnp.abs(c[0] * c[0] - a) > 1e-12,
                              lambda c: (0.5 * (c[0] + a / c[0]), c[1] + 1),
                              (a, qnp.asarray(0)))

    r, n = newton_sqrt(qnp.asarray(np.float64(2.0)))
    assert_close(r, np.sqrt(2.0), rtol=1e-15)
    assert int(n) > 2
    _, t = quabla.jvp(lambda a: newton_sqrt(a)[0], (qnp.asarray(np.float64(2.0)),),
                      (qnp.asarray(np.float64(1.0)),))
    assert_close(t, 0.5 / np.sqrt(2.0), rtol=1e-10)
    with pytest.raises(TypeError, match="structure"):
        lax.while_loop(lambda c: c < 3, lambda c: (c, c), qnp.asarray(0))


def test_while_loop_reverse_mode_points_to_max_steps():
    def f(x):
        return lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)

    with pytest.raises(ValueError, match="max_steps"):
        quabla.grad(f)(qnp.asarray(1.0))


def test_while_loop_with_max_steps_is_reverse_differentiable():
    """A pytree carry, a data-dependent trip count and a captured parameter: the gradient
    against central differences and against the same trips unrolled in Python; vmap with a
    different trip count per element; the bound stops a loop whose predicate stays true."""
    def f(x, a):
        def body(c):
            return {"v": c["v"] * a + qnp.sin(c["v"]), "k": c["k"] + 1}
        out = lax.while_loop(lambda c: c["v"] < 40.0, body, {"v": x, "k": 0}, max_steps=64)
        return out["v"], out["k"]

    def unrolled(x, a, k):
        for _ in range(k):
            x = x * a + qnp.sin(x)
        return x

    x, a = np.float64(0.3), np.float64(1.5)
    v, k = f(x, a)
    assert_close(v, unrolled(x, a, int(k)), rtol=1e-15)
    gx, ga = quabla.grad(lambda x, a: f(x, a)[0], argnums=(0, 1))(x, a)
    ux, ua = quabla.grad(lambda x, a: unrolled(x, a, int(k)), argnums=(0, 1))(x, a)
    assert_close(gx, ux, rtol=1e-12)
    assert_close(ga, ua, rtol=1e-12)
    assert_close(ga, central_diff(lambda p: float(f(x, p[0])[0]), [a])[0], rtol=1e-6)
    xs = np.array([0.3, 50.0, 2.0])
    gv = quabla.vmap(quabla.grad(lambda x: f(x, a)[0]))(xs)
    for i, xi in enumerate(xs):
        assert_close(gv[i], quabla.grad(lambda x: f(x, a)[0])(xi), rtol=1e-12)
    capped = lax.while_loop(lambda c: c < 1e9, lambda c: c * 2.0, np.float64(1.0), max_steps=7)
    assert float(capped) == 128.0
    with pytest.raises(ValueError, match="max_steps"):
        lax.while_loop(lambda c: c < 1.0, lambda c: c, 0.0, max_steps=-1)


def test_while_loop_checkpoints_keep_values_and_gradients():
    """``checkpoints`` is the bounded loop's reverse-mode memory budget (1, 2 and 5: the
    binomial schedule; 20: two levels, segments of 14; 64: every carry kept): the values
    and the gradient bit for bit; bad values and a missing bound are errors."""
    def f(x, a, k):
        out = lax.while_loop(lambda c: c < 40.0, lambda c: c * a + qnp.sin(c), x,
                             max_steps=64, checkpoints=k)
        return out

    def grads(k):
        return quabla.grad(lambda x, a: f(x, a, k), argnums=(0, 1))(x, a)

    x, a = np.float64(0.3), np.float64(1.5)
    base = f(x, a, None)
    base_g = grads(None)
    for k in (1, 2, 5, 20, 64):
        assert float(f(x, a, k)) == float(base)
        g = grads(k)
        for u, v in zip(g, base_g):
            assert float(u) == float(v)
    for k in (0, -3, 2.0, True):
        with pytest.raises(ValueError, match="checkpoints must be an int >= 1"):
            lax.while_loop(lambda c: c < 1.0, lambda c: c, 0.0, max_steps=5, checkpoints=k)
    with pytest.raises(ValueError, match="pass max_steps too"):
        lax.while_loop(lambda c: c < 1.0, lambda c: c, 0.0, checkpoints=4)


def test_fori_loop_static_and_traced_bounds():
    out = lax.fori_loop(0, 5, lambda i, c: (c[0] + i, c[1] * 2.0), (qnp.asarray(0), 1.0))
    assert int(out[0]) == 10 and float(out[1]) == 32.0
    f = quabla.jit(lambda n, x: lax.fori_loop(0, n, lambda i, c: c * x, 1.0))
    assert float(f(qnp.asarray(3), qnp.asarray(2.0))) == 8.0
    with pytest.raises(TypeError, match="leaf 0 went from float32\\[\\] to float64"):
        lax.fori_loop(0, 2, lambda i, c: c * qnp.asarray(np.float64(2.0)), np.float32(1.0))
    # static bounds: reverse mode works
    g = quabla.grad(lambda x: lax.fori_loop(0, 4, lambda i, c: c * x, qnp.ones((), np.float64)))(
        qnp.asarray(np.float64(1.5)))
    assert_close(g, 4 * 1.5 ** 3, rtol=1e-15)


def rnn_step(w, c, x):
    return qnp.tanh(w @ c + x)


def test_scan_equals_the_python_loop_bit_for_bit():
    rng = np.random.default_rng(3)
    w = qnp.asarray(rng.normal(size=(4, 4)) * 0.5)
    xs = qnp.asarray(rng.normal(size=(12, 4)))
    c0 = qnp.zeros(4, np.float64)
    carry, ys = lax.scan(lambda c, x: (rnn_step(w, c, x), qnp.sum(c)), c0, xs)
    c = c0
    sums = []
    for t in range(12):
        sums.append(float(qnp.sum(c)))
        c = rnn_step(w, c, xs[t])
    assert np.asarray(carry).tobytes() == np.asarray(c).tobytes()
    assert np.asarray(ys).tolist() == sums
    carry_r, ys_r = lax.scan(lambda c, x: (c + x, c), qnp.asarray(0.0), qnp.arange(4.0),
                             reverse=True)
    assert float(carry_r) == 6.0 and ys_r.tolist() == [6.0, 5.0, 3.0, 0.0]
    carry_u, _ = lax.scan(lambda c, x: (rnn_step(w, c, x), None), c0, xs, unroll=5)
    assert np.asarray(carry_u).tobytes() == np.asarray(c).tobytes()


def test_grad_through_long_scan_matches_finite_differences():
    rng = np.random.default_rng(4)
    xs = qnp.asarray(rng.normal(size=(1000,)) * 0.1)

    def loss(theta):
        def step(c, x):
            return c * qnp.cos(theta[0]) + qnp.sin(theta[1] * x), None
        c, _ = lax.scan(step, qnp.asarray(np.float64(0.3)), xs)
        return c

    theta = np.array([0.2, 0.7])
    g = quabla.grad(loss)(qnp.asarray(theta))
    fd = central_diff(lambda t: loss(qnp.asarray(t)), theta, eps=1e-5)
    assert_close(g, fd, rtol=1e-7, atol=1e-9)


def test_scan_grad_hessian_and_vmap_equal_the_unrolled_loop():
    rng = np.random.default_rng(5)
    w = rng.normal(size=(3, 3)) * 0.4
    xs = rng.normal(size=(20, 3))

    def scanned(w, xs):
        c, ys = lax.scan(lambda c, x: (qnp.tanh(w @ c + x), c[0]),
                         qnp.zeros(3, np.float64), xs)
        return qnp.sum(c) + qnp.sum(ys ** 2)

    def unrolled(w, xs):
        c, total = qnp.zeros(3, np.float64), 0.0
        for t in range(xs.shape[0]):
            total = total + c[0] ** 2
            c = qnp.tanh(w @ c + xs[t])
        return qnp.sum(c) + total

    qw, qx = qnp.asarray(w), qnp.asarray(xs)
    assert_close(quabla.grad(scanned)(qw, qx), quabla.grad(unrolled)(qw, qx), rtol=1e-13,
                 atol=1e-15)
    assert_close(quabla.grad(scanned)(qw, qx),
                 central_diff(lambda v: scanned(qnp.asarray(v), qx), w, 1e-6), rtol=1e-7,
                 atol=1e-9)
    h = quabla.hessian(lambda x0: scanned(qw, x0))(qx[:4])
    hu = quabla.hessian(lambda x0: unrolled(qw, x0))(qx[:4])
    assert_close(h, hu, rtol=1e-12, atol=1e-14)
    batch = rng.normal(size=(5, 20, 3))
    vg = quabla.vmap(quabla.grad(lambda xs: scanned(qw, xs)))(qnp.asarray(batch))
    for i in range(5):
        assert_close(vg[i], quabla.grad(lambda xs: scanned(qw, xs))(qnp.asarray(batch[i])),
                     rtol=1e-13, atol=1e-15)


def test_closures_over_traced_values_get_gradients():
    def f(a):
        return lax.fori_loop(0, 3, lambda i, c: c + a * a, qnp.zeros((), np.float64)) + \
            lax.cond(a > 0, lambda: a * 3.0, lambda: a)

    assert_close(quabla.grad(f)(qnp.asarray(np.float64(2.0))), 3 * 2 * 2.0 + 3.0)


def test_vmap_of_cond_with_batched_predicate():
    x = qnp.asarray(np.array([-1.0, 2.0, -3.0]))
    out = quabla.vmap(lambda v: lax.cond(v > 0, lambda u: u * 10, lambda u: u, v))(x)
    assert out.tolist() == [-1.0, 20.0, -3.0]


BAD_BRANCHES = {
    "sqrt": lambda c: c + qnp.sqrt(c - c),   # value finite, derivative inf
    "log": lambda c: c + qnp.log(c - c),     # value -inf
    "div": lambda c: c + 1.0 / (c - c),      # value inf, derivative -inf
}


@pytest.mark.parametrize("bad", sorted(BAD_BRANCHES))
def test_an_untaken_branch_with_inf_or_nan_leaves_derivatives_alone(bad):
    """A cond's untaken branch is not differentiated, as in JAX: its inf and NaN reach no
    cotangent, under grad, vmap of grad, scan and forward mode through while_loop. The
    expected values are analytic (the taken branch is 2c)."""
    branch = BAD_BRANCHES[bad]

    def f(x):
        return quabla.lax.cond(x > 50.0, branch, lambda c: 2.0 * c, x)

    assert float(quabla.grad(f)(1.0)) == 2.0
    assert_close(quabla.vmap(quabla.grad(f))(qnp.array([1.0, 2.0])), [2.0, 2.0])

    def scanned(x):
        return quabla.lax.scan(lambda c, _: (f(c), None), x, None, length=3)[0]

    assert float(quabla.grad(scanned)(1.0)) == 8.0
    assert_close(quabla.vmap(quabla.grad(scanned))(qnp.array([1.0, 2.0])), [8.0, 8.0])

    def looped(x):
        return quabla.lax.while_loop(lambda c: c < 10.0, f, x)

    value, tangent = quabla.jvp(looped, (1.0,), (1.0,))
    assert (float(value), float(tangent)) == (16.0, 16.0)


def test_cond_branches_closing_over_values_run_only_when_taken():
    """Branches that close over a traced value compute with it inside the branch: the
    `log` of the branch not taken never meets its zero cotangent. JAX 0.10.2 (x64): 1.0,
    1.0 under jit, 0.25 at 4, 0.0 for the sqrt form at 0."""
    def f(x):
        return lax.cond(x > 0, lambda _: qnp.log(x), lambda _: x, None)

    def g(x):
        return lax.cond(x > 0, lambda: qnp.sqrt(x), lambda: qnp.zeros_like(x))

    assert float(quabla.grad(f)(0.0)) == 1.0
    assert float(quabla.jit(quabla.grad(f))(0.0)) == 1.0
    assert float(quabla.grad(f)(4.0)) == 0.25
    assert float(quabla.grad(g)(0.0)) == 0.0


def test_where_differentiates_both_sides_as_jax_does():
    """`where` (select) is not `cond`: both sides are computed and differentiated, so at 0 the
    unselected `sqrt`'s infinite derivative times its zero cotangent is NaN, as in JAX
    (numerical conventions). The double-where idiom keeps it out."""
    def plain(x):
        return qnp.where(x > 0.0, qnp.sqrt(x), 0.0)

    def double(x):
        return qnp.where(x > 0.0, qnp.sqrt(qnp.where(x > 0.0, x, 1.0)), 0.0)

    assert np.isnan(float(quabla.grad(plain)(0.0)))
    got = np.asarray(quabla.vmap(quabla.grad(plain))(qnp.array([0.0, 4.0])))
    assert np.isnan(got[0]) and got[1] == 0.25
    assert float(quabla.grad(double)(0.0)) == 0.0
    assert_close(quabla.vmap(quabla.grad(double))(qnp.array([0.0, 4.0])), [0.0, 0.25])
