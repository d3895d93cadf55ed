"""``optim.scale_by_zoom_linesearch`` against optax 0.2.8, recorded by hand (x64 on): L-BFGS
on Rosenbrock (optax's ``lbfgs()``, whose default search is this one with
``initial_guess_strategy="one"``) follows optax's values step for step while the first guess
is accepted; every accepted step meets the strong Wolfe conditions, checked here by
evaluating the function again; out of evaluations it takes the safe step or the last one
tried, as optax."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import optim
from conftest import assert_close


def rosenbrock(w):
    return qnp.sum(100.0 * (w[1:] - w[:-1] ** 2) ** 2 + (1.0 - w[:-1]) ** 2)


def quartic(w):
    return qnp.sum(w ** 4)


def lbfgs_steps(n, jit=False):
    opt = optim.lbfgs(linesearch=optim.scale_by_zoom_linesearch(
        20, initial_guess_strategy="one"))
    vg = optim.value_and_grad_from_state(rosenbrock)

    def step(w, state):
        v, g = vg(w, state=state)
        u, state = opt.update(g, state, w, value=v, grad=g, value_fn=rosenbrock)
        return optim.apply_updates(w, u), state

    if jit:
        step = quabla.jit(step)
    w = qnp.array([-1.2, 1.0, -0.5, 0.8])
    state = opt.init(w)
    values = []
    for _ in range(n):
        w, state = step(w, state)
        values.append(float(rosenbrock(w)))
    return w, state, values


def test_lbfgs_with_the_zoom_search_follows_optax():
    # optax.lbfgs() on the same start, the first ten values.
    optax_values = [75.06148906451887, 23.87964840936054, 8.64767186240202,
                    3.6181269175844584, 3.5128722304489037, 3.5050329438049803,
                    3.4937502220178063, 3.479474807124221, 3.455387211253968,
                    3.426588110311071]
    w, state, values = lbfgs_steps(10)
    assert_close(values, optax_values, rtol=1e-12)
    assert_close(w, [-0.21854604838552733, 0.0354854476429712, 0.01726690610769564,
                     -0.006761653155474755], rtol=1e-9)
    # Run on (jitted), it converges as optax's does (1e-7 after 40 steps there).
    w, state, values = lbfgs_steps(45, jit=True)
    assert values[-1] < 1e-8
    assert_close(w, [1.0, 1.0, 1.0, 1.0], rtol=1e-4)
    info = optim.tree_get(state, "info")
    assert float(info.decrease_error) == 0.0 and float(info.curvature_error) == 0.0


@pytest.mark.parametrize("strategy", ["one", "keep"])
def test_accepted_steps_meet_the_strong_wolfe_conditions(strategy):
    c1, c2 = 1e-4, 0.9
    opt = optim.chain(optim.sgd(1.0), optim.scale_by_zoom_linesearch(
        30, initial_guess_strategy=strategy, slope_rtol=c1, curv_rtol=c2))
    w = qnp.array([1.0, 2.0])
    state = opt.init(w)
    for _ in range(4):
        f0, g0 = quabla.value_and_grad(quartic)(w)
        u, state = opt.update(g0, state, w, value=f0, grad=g0, value_fn=quartic)
        s = float(optim.tree_get(state, "learning_rate"))
        direction = -np.asarray(g0)
        slope0 = float(np.dot(direction, np.asarray(g0)))
        new = optim.apply_updates(w, u)
        f1, g1 = quabla.value_and_grad(quartic)(new)
        assert float(f1) <= float(f0) + c1 * s * slope0
        assert abs(float(np.dot(np.asarray(g1), direction))) <= c2 * abs(slope0)
        # The state holds the value and gradient at the accepted point.
        assert_close(optim.tree_get(state, "value"), f1, rtol=1e-12)
        assert_close(optim.tree_get(state, "grad"), g1, rtol=1e-12)
        w = new


def test_out_of_evaluations_and_the_step_bound_as_optax():
    w = qnp.array([1.0, 2.0])
    f0, g0 = quabla.value_and_grad(quartic)(w)

    def search(**kw):
        opt = optim.chain(optim.sgd(1.0), optim.scale_by_zoom_linesearch(**kw))
        u, state = opt.update(g0, opt.init(w), w, value=f0, grad=g0, value_fn=quartic)
        return u, state[-1]

    # optax: one evaluation, no decrease, so the only step tried (1.0) is taken.
    u, st = search(max_linesearch_steps=1)
    assert_close(u, [-4.0, -32.0], rtol=0)
    assert float(st.learning_rate) == 1.0 and int(st.info.num_linesearch_steps) == 1
    assert float(st.info.decrease_error) > 0
    u, st = search(max_linesearch_steps=3)
    assert int(st.info.num_linesearch_steps) == 3
    assert 0 < float(st.learning_rate) < 1.0
    # A bound on the step: optax takes 0.1 at once on this quadratic.
    f2 = lambda x: qnp.sum((x - 3.0) ** 2)  # noqa: E731
    p = qnp.array([0.0])
    v, g = quabla.value_and_grad(f2)(p)
    opt = optim.chain(optim.sgd(1.0), optim.scale_by_zoom_linesearch(10, max_learning_rate=0.1))
    u, st = opt.update(g, opt.init(p), p, value=v, grad=g, value_fn=f2)
    assert_close(u, [0.6], rtol=1e-15)
    assert int(st[-1].info.num_linesearch_steps) == 1


def test_optax_docstring_examples():
    # optax's examples: SGD directions with the search drive a least-squares loss to ~0.
    def fn(params, x, y):
        return 0.5 * (x.dot(params) - y) ** 2

    params = qnp.array([1.0, 2.0, 3.0])
    solver = optim.chain(optim.sgd(learning_rate=1.0),
                         optim.scale_by_zoom_linesearch(max_linesearch_steps=15))
    state = solver.init(params)
    x, y = qnp.array([3.0, 2.0, 1.0]), qnp.array(0.0)
    assert float(fn(params, x, y)) == 50.0
    for _ in range(5):
        value, grad = quabla.value_and_grad(fn)(params, x, y)
        updates, state = solver.update(grad, state, params, value=value, grad=grad,
                                       value_fn=fn, x=x, y=y)
        params = optim.apply_updates(params, updates)
        assert float(fn(params, x, y)) < 1e-12
    params = qnp.array([1.0, 2.0, 3.0])
    state = solver.init(params)
    vg = optim.value_and_grad_from_state(lambda p: qnp.sum(p ** 2))
    for _ in range(3):
        value, grad = vg(params, state=state)
        updates, state = solver.update(grad, state, params, value=value, grad=grad,
                                       value_fn=lambda p: qnp.sum(p ** 2))
        params = optim.apply_updates(params, updates)
    assert float(qnp.sum(params ** 2)) < 1e-20


def test_refusals():
    with pytest.raises(ValueError, match="initial_guess_strategy"):
        optim.scale_by_zoom_linesearch(10, initial_guess_strategy="half")
    with pytest.raises(ValueError, match="at least 1"):
        optim.scale_by_zoom_linesearch(0)
    opt = optim.scale_by_zoom_linesearch(5)
    w = qnp.ones(2)
    with pytest.raises(ValueError, match="needs params"):
        opt.update(w, opt.init(w), value=1.0, grad=w, value_fn=quartic)
    with pytest.raises(TypeError, match="not consumed"):
        opt.update(w, opt.init(w), w, value=1.0, grad=w, value_fn=quartic, scale=2.0)
