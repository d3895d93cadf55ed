"""quabla.linalg.cg/gmres, quabla.newton and quabla.odeint against numpy, closed forms,
finite differences and goldens recorded from jax.experimental.ode (JAX 0.10.2)."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from conftest import assert_close, central_diff, dec, golden

SPD = np.array([[5.0, 1.0, 0.5], [1.0, 4.0, 1.0], [0.5, 1.0, 3.0]])
NONSYM = np.array([[4.0, -1.0, 0.5], [1.0, 3.0, -2.0], [-0.5, 1.0, 5.0]])
B = np.array([1.0, -2.0, 0.5])
C = np.array([0.3, 0.9, -1.1])


@pytest.mark.parametrize("name,A", [("cg", SPD), ("gmres", NONSYM)])
def test_solvers_match_numpy_and_the_adjoint_formulas(name, A):
    solve = getattr(quabla.linalg, name)
    x, info = solve(A, B, tol=1e-12)
    assert int(info) == 0
    assert_close(x, np.linalg.solve(A, B), rtol=1e-10)

    def loss(a, b):
        x, _ = solve(a, b, tol=1e-13)
        return qnp.sum(x * C)

    ga, gb = quabla.grad(loss, argnums=(0, 1))(qnp.asarray(A), qnp.asarray(B))
    lam = np.linalg.solve(A.T, C)
    assert_close(gb, lam, rtol=1e-9)
    assert_close(ga, -np.outer(lam, np.linalg.solve(A, B)), rtol=1e-9)


def test_cg_on_a_pytree_with_a_matrix_free_operator_a_preconditioner_and_jit():
    # Block-diagonal SPD operator on {"u": (3,), "w": (2,)}.
    W = np.array([[2.0, 0.3], [0.3, 1.0]])

    def op(v):
        return {"u": qnp.asarray(SPD) @ v["u"], "w": qnp.asarray(W) @ v["w"]}

    def jacobi(v):
        return {"u": v["u"] / qnp.asarray(np.diag(SPD)), "w": v["w"] / qnp.asarray(np.diag(W))}

    b = {"u": qnp.asarray(B), "w": qnp.asarray(np.array([1.0, 2.0]))}
    x, info = quabla.jit(lambda b: quabla.linalg.cg(op, b, tol=1e-12, M=jacobi))(b)
    assert int(info) == 0
    assert_close(x["u"], np.linalg.solve(SPD, B), rtol=1e-10)
    assert_close(x["w"], np.linalg.solve(W, [1.0, 2.0]), rtol=1e-10)


def test_solutions_batch_and_differentiate_twice():
    bs = np.stack([B, C, np.zeros(3)])
    xs, infos = quabla.vmap(lambda b: quabla.linalg.gmres(NONSYM, b, tol=1e-12))(bs)
    assert_close(xs, np.linalg.solve(NONSYM, bs.T).T, rtol=1e-10, atol=1e-14)
    assert np.asarray(infos).tolist() == [0, 0, 0]
    # The Hessian of ½‖A⁻¹b‖² in b is A⁻ᵀA⁻¹.
    h = quabla.hessian(lambda b: 0.5 * qnp.sum(quabla.linalg.cg(SPD, b, tol=1e-13)[0] ** 2))(
        qnp.asarray(B))
    inv = np.linalg.inv(SPD)
    assert_close(h, inv.T @ inv, rtol=1e-8)


def test_solver_input_errors():
    with pytest.raises(TypeError, match="square"):
        quabla.linalg.cg(np.ones((2, 3)), np.ones(2))
    with pytest.raises(TypeError, match="shaped like b"):
        quabla.linalg.cg(lambda v: v[:2], qnp.ones(3))
    with pytest.raises(ValueError, match="restart"):
        quabla.linalg.gmres(SPD, B, restart=0)


def test_newton_roots_and_implicit_derivatives():
    cube = lambda x, a: x ** 3 - a  # noqa: E731
    x = quabla.newton(cube, qnp.asarray(1.0, dtype="float64"), qnp.asarray(5.0, dtype="float64"))
    assert abs(float(x) - 5.0 ** (1 / 3)) < 1e-14
    root = lambda a: quabla.newton(cube, qnp.ones_like(a), a)  # noqa: E731
    a = qnp.asarray(5.0, dtype="float64")
    assert abs(float(quabla.grad(root)(a)) - 5.0 ** (-2 / 3) / 3) < 1e-13
    assert abs(float(quabla.grad(quabla.grad(root))(a)) + 2 / 9 * 5.0 ** (-5 / 3)) < 1e-13
    # A coupled system over a pytree x, vmapped over the right-hand side.
    M = np.array([[2.0, 0.5], [-0.4, 3.0]])

    def f(x, th):
        return {"p": 2.0 * x["p"] + 0.5 * x["q"] + 0.3 * qnp.tanh(x["p"]) - th[0],
                "q": -0.4 * x["p"] + 3.0 * x["q"] + 0.3 * qnp.tanh(x["q"]) - th[1]}

    x0 = {"p": qnp.asarray(0.0, dtype="float64"), "q": qnp.asarray(0.0, dtype="float64")}
    ths = np.array([[1.0, -0.5], [2.0, 1.0]])
    roots, infos = quabla.vmap(lambda th: quabla.newton(f, x0, th, full_output=True))(ths)
    assert np.asarray(infos).tolist() == [0, 0]
    for k, th in enumerate(ths):
        r = np.array([float(roots["p"][k]), float(roots["q"][k])])
        assert_close(M @ r + 0.3 * np.tanh(r), th, rtol=1e-12)

    def loss(th):
        r = quabla.newton(f, x0, th)
        return r["p"] * r["q"]

    th = np.array([1.0, -0.5])
    fd = central_diff(lambda v: loss(qnp.asarray(v)), th)
    assert_close(quabla.grad(loss)(qnp.asarray(th)), fd, rtol=1e-7)


def lv(y, t, p):
    return qnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], p[3] * y[0] * y[1] - p[2] * y[1]])


@pytest.mark.parametrize("gradient,checkpoints", [
    ("direct", None), ("adjoint", None),
    # The direct gradient's memory budget (1 and 4 states: the binomial schedule, one
    # recomputing every step from the start; two levels with long segments; every state
    # kept): the same JAX gradient.
    ("direct", 1), ("direct", 4), ("direct", 300), ("direct", 5000)])
def test_odeint_matches_jax_values_and_gradients(gradient, checkpoints):
    g = golden("jax_ode")
    y0, p, t = (qnp.asarray(dec(g[k])) for k in ("y0", "p", "t"))
    ys = quabla.odeint(lv, y0, t, p, rtol=1e-11, atol=1e-11)
    assert_close(ys, dec(g["ys"]), rtol=1e-8)

    def loss(y0, p):
        ys = quabla.odeint(lv, y0, t, p, rtol=1e-11, atol=1e-11, gradient=gradient,
                           checkpoints=checkpoints)
        return qnp.sum(ys[:, 0] ** 2 + qnp.sin(ys[:, 1]))

    gy, gp = quabla.grad(loss, argnums=(0, 1))(y0, p)
    assert_close(gy, dec(g["grad_y0"]), rtol=1e-6)
    assert_close(gp, dec(g["grad_p"]), rtol=1e-6)


@pytest.mark.parametrize("method,tol,err", [("dopri5", 1e-10, 1e-8), ("tsit5", 1e-10, 1e-8),
                                            ("rosenbrock23", 1e-8, 1e-5), ("rk4", None, 1e-9)])
def test_odeint_methods_on_a_pytree_oscillator(method, tol, err):
    w = 1.7

    def f(s, t, w):
        return {"x": s["v"], "v": -w * w * s["x"]}

    t = np.linspace(0.0, 3.0, 7)
    kw = {"dt0": 0.005} if method == "rk4" else {"rtol": tol, "atol": tol}
    s0 = {"x": qnp.asarray(1.0, dtype="float64"), "v": qnp.asarray(0.0, dtype="float64")}
    ys, stats = quabla.odeint(f, s0, t, w, method=method, full_output=True, **kw)
    assert_close(ys["x"], np.cos(w * t), atol=err)
    assert_close(ys["v"], -w * np.sin(w * t), atol=10 * err)
    assert int(stats.steps) == int(stats.accepted) + int(stats.rejected)


def test_odeint_is_stiff_capable_batched_and_jitted():
    def rober(y, t):
        return qnp.stack([-0.04 * y[0] + 1e4 * y[1] * y[2],
                          0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                          3e7 * y[1] ** 2])

    ys = quabla.odeint(rober, np.array([1.0, 0.0, 0.0]), np.array([0.0, 40.0]),
                       method="rosenbrock23", rtol=1e-6, atol=1e-10, gradient="forward")
    assert_close(ys[1], [0.7158270687, 9.185534764e-6, 0.2841637457], rtol=2e-4)
    decay = lambda y, t, k: -k * y  # noqa: E731
    t = np.array([0.0, 1.0])
    run = quabla.jit(quabla.vmap(lambda k: quabla.odeint(decay, qnp.ones(1, dtype="float64"),
                                                         qnp.asarray(t), k, rtol=1e-10,
                                                         atol=1e-10)))
    ks = np.array([0.5, 1.0, 4.0])
    assert_close(run(qnp.asarray(ks))[:, 1, 0], np.exp(-ks), rtol=1e-8)


def test_odeint_input_errors():
    decay = lambda y, t: -y  # noqa: E731
    with pytest.raises(ValueError, match="method"):
        quabla.odeint(decay, np.ones(1), np.array([0.0, 1.0]), method="euler")
    with pytest.raises(ValueError, match="strictly increasing"):
        quabla.odeint(decay, np.ones(1), np.array([0.0, 1.0, 0.5]))
    with pytest.raises(TypeError, match="shaped like y"):
        quabla.odeint(lambda y, t: qnp.sum(y), np.ones(2), np.array([0.0, 1.0]))
    for k in (0, 2.5, True):
        with pytest.raises(ValueError, match="checkpoints must be None or an int >= 1"):
            quabla.odeint(decay, np.ones(1), np.array([0.0, 1.0]), checkpoints=k)


@pytest.mark.parametrize("method,gradient,batched", [
    ("dopri5", "direct", True), ("dopri5", "direct", False), ("tsit5", "direct", True),
    ("dopri5", "adjoint", True)])
def test_odenet_gradient_is_finite_and_matches_jax(method, gradient, batched):
    """The ODE-Net of the JAX tutorials in float32 at the default tolerances: its steps get
    so short that some error estimates are exactly 0, where the controller's norm used to
    turn a zero cotangent into 0 * inf = NaN ("direct" mode: every gradient NaN)."""
    g = golden("jax_odenet")
    params = [(qnp.asarray(dec(g["w1"])), qnp.asarray(dec(g["b1"]))),
              (qnp.asarray(dec(g["w2"])), qnp.asarray(dec(g["b2"])))]
    inputs, targets = qnp.asarray(dec(g["inputs"])), qnp.asarray(dec(g["targets"]))
    t = qnp.array([0.0, 1.0], dtype=qnp.float32)

    def mlp(params, x):
        for w, b in params:
            out = qnp.dot(x, w) + b
            x = qnp.tanh(out)
        return out

    def dynamics(state, time, params):
        return mlp(params, qnp.hstack([state, qnp.array(time)]))

    def final(params, x):
        return quabla.odeint(dynamics, x, t, params, method=method, gradient=gradient)[1]

    def loss(params):
        if batched:
            preds = quabla.vmap(final, in_axes=(None, 0))(params, inputs)
        else:
            preds = qnp.stack([final(params, inputs[i]) for i in range(10)])
        return qnp.mean(qnp.sum((preds - targets) ** 2, axis=1))

    assert_close(loss(params), dec(g["loss"]), rtol=1e-5)
    (g1, gb1), (g2, gb2) = quabla.grad(loss)(params)
    for got, name in [(g1, "grad_w1"), (gb1, "grad_b1"), (g2, "grad_w2"), (gb2, "grad_b2")]:
        assert np.isfinite(np.asarray(got)).all(), name
        assert_close(got, dec(g[name]), rtol=2e-4, atol=2e-5)


def test_odeint_says_when_max_steps_runs_out():
    """The times not reached are NaN: a concrete solve warns, OdeStats.reached says so
    (also batched under vmap), throw=True raises, and refuses a traced solve."""
    import warnings

    t = np.array([0.0, 0.1, 5.0])
    decay = lambda y, t, k: -k * y  # noqa: E731
    y0, k = np.ones(1), np.array(50.0)
    with pytest.warns(RuntimeWarning, match="max_steps=20"):
        ys, stats = quabla.odeint(decay, y0, t, k, max_steps=20, full_output=True)
    assert np.isnan(np.asarray(ys)[2]).all() and not bool(stats.reached)
    with pytest.raises(ValueError, match="max_steps = 20"):
        quabla.odeint(decay, y0, t, k, max_steps=20, throw=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ys, stats = quabla.odeint(decay, y0, t, k, full_output=True, throw=True)
    assert bool(stats.reached) and abs(float(np.asarray(ys)[2, 0])) < 1e-7
    reached = quabla.vmap(
        lambda k: quabla.odeint(decay, y0, t, k, max_steps=40, full_output=True)[1].reached
    )(np.array([0.5, 500.0]))
    assert np.asarray(reached).tolist() == [True, False]
    with pytest.raises(ValueError, match="traced"):
        quabla.jit(lambda k: quabla.odeint(decay, y0, t, k, throw=True))(k)
