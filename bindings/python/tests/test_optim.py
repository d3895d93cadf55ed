"""quabla.optim against trajectories recorded from optax (tests/goldens/optax.json)."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import optim
from conftest import dec, golden

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import custom_transformation_program, optimizer_state_program  # noqa: E402


def quadratic(p):
    return qnp.sum((p["a"] - 3.0) ** 2) + qnp.sum(p["b"] ** 4)


def run_ours(opt, steps=120):
    params = {"a": qnp.asarray(np.array([0.5, -1.0, 2.0])), "b": qnp.asarray(np.array([1.5]))}
    state = opt.init(params)

    @quabla.jit
    def step(params, state):
        g = quabla.grad(quadratic)(params)
        updates, state = opt.update(g, state, params)
        return optim.apply_updates(params, updates), state

    traj = []
    for _ in range(steps):
        params, state = step(params, state)
        traj.append(np.concatenate([np.asarray(params["a"]), np.asarray(params["b"])]))
    return np.array(traj)


G = golden("optax")


def test_trajectories_match_optax():
    """120 steps on a quadratic against trajectories recorded from optax 0.2.8. optax evaluates
    its schedules in float32 even for float64 parameters (the learning rate 0.05 becomes
    0.0500000007...); Quabla evaluates them in the parameters' dtype, so the scheduled runs
    agree to float32 precision and the others to float64 precision."""
    cases = [
        ("adam", optim.adam(0.05), 1e-10),
        ("sgd_nesterov", optim.sgd(0.01, momentum=0.9, nesterov=True), 1e-10),
        ("rmsprop", optim.rmsprop(0.01), 1e-10),
        ("adamw_expdecay", optim.adamw(optim.exponential_decay(0.05, 10, 0.9),
                                       weight_decay=0.01), 1e-6),
        ("clip_adam_warmup_cosine", optim.chain(optim.clip_by_global_norm(0.5), optim.adam(
            optim.warmup_cosine_decay_schedule(0.0, 0.1, 10, 100))), 1e-6),
    ]
    for name, opt, rtol in cases:
        np.testing.assert_allclose(run_ours(opt), dec(G["trajectories"][name]), rtol=rtol,
                                   atol=rtol * 0.1, err_msg=name)


def test_schedules_match_optax():
    pairs = {
        "exponential_staircase": optim.exponential_decay(1.0, 5, 0.5, staircase=True),
        "cosine": optim.cosine_decay_schedule(2.0, 50, 0.1),
        "piecewise": optim.piecewise_constant_schedule(1.0, [(10, 0.5), (20, 0.1)]),
    }
    for name, ours in pairs.items():
        want = dec(G["schedules"][name])
        for step, w in zip(G["schedule_steps"], want):
            assert float(ours(step, "float64")) == pytest.approx(float(w), rel=1e-6), \
                (name, step)
    # optax's dict form of the boundaries.
    pw = optim.piecewise_constant_schedule(1.0, {10: 0.5, 20: 0.1})
    assert [float(pw(k)) for k in (0, 9, 10, 19, 20, 40)] == \
        pytest.approx(G["piecewise_dict"], rel=1e-12)


def test_a_python_transformation_chains_with_built_in_ones_as_in_optax():
    # optax's protocol: GradientTransformation(init, update) over pytrees, EmptyState,
    # scale_by_schedule, and a chain mixing it with core transformations.
    losses = custom_transformation_program(quabla, qnp, optim)
    # optax evaluates the schedule in float32 (see above): agreement to float32 precision.
    np.testing.assert_allclose(losses, G["custom_chain_losses"], rtol=1e-7)


def test_python_transformations_train_under_jit_and_trainer():
    sign = optim.stateless(lambda u, p: quabla.tree.map(qnp.sign, u))
    opt = optim.chain(sign, optim.scale_by_schedule(lambda c: 0.1 / (1.0 + c)),
                      optim.scale(-1.0))
    t = optim.Trainer(lambda p, x: qnp.sum((p["w"] - x) ** 2), {"w": qnp.zeros(2)}, opt)
    t.run(30, qnp.array([1.0, -2.0]), progress=False)
    # Sign steps of 0.1 / (1 + k) move each weight by 0.1 * H_30 toward its target, which
    # neither reaches.
    h = 0.1 * sum(1.0 / (1 + k) for k in range(30))
    np.testing.assert_allclose(np.asarray(t.params()["w"]), [h, -h], rtol=1e-12)
    init, update = optim.identity()
    u, s = update({"a": qnp.ones(2)}, init({"a": qnp.ones(2)}))
    assert s == optim.EmptyState() and np.asarray(u["a"]).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="tuple of 2 states"):
        optim.chain(sign, optim.identity()).update({"a": qnp.ones(2)}, optim.EmptyState())


def test_update_checks_structures():
    opt = optim.sgd(0.1)
    p = {"w": qnp.ones(2)}
    s = opt.init(p)
    with pytest.raises(ValueError, match="structure"):
        opt.update({"v": qnp.ones(2)}, s, p)
    with pytest.raises(TypeError, match="OptState"):
        opt.update(p, [1], p)


def test_lbfgs_minimises_rosenbrock_like_scipy():
    """scipy's L-BFGS-B reaches (1, 1) from (-1.2, 1) in 38 iterations; the same point and a
    similar count here, jitted, with optax's update convention."""
    def rosen(p):
        x = p["x"]
        return qnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    opt = optim.lbfgs()
    params = {"x": qnp.asarray(np.array([-1.2, 1.0]))}
    state = opt.init(params)

    @quabla.jit
    def step(params, state):
        value, grads = quabla.value_and_grad(rosen)(params)
        updates, state = opt.update(grads, state, params, value=value, grad=grads,
                                    value_fn=rosen)
        return optim.apply_updates(params, updates), state

    for _ in range(60):
        params, state = step(params, state)
    np.testing.assert_allclose(np.asarray(params["x"]), [1.0, 1.0], rtol=0, atol=1e-8)


def test_trainer_trains_and_reports_progress():
    import io

    def loss(p, x, y):
        return qnp.mean((x @ p["w"] + p["b"] - y) ** 2)

    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 3))
    w_true = np.array([1.5, -2.0, 0.5])
    y = x @ w_true + 0.3
    t = optim.Trainer(loss, {"w": qnp.zeros(3, np.float64), "b": qnp.zeros((), np.float64)},
                      optim.adam(0.05))
    with pytest.raises(ValueError, match="no step"):
        t.loss()
    out = io.StringIO()
    t.run(400, qnp.asarray(x), qnp.asarray(y), file=out, every=0.0)
    text = out.getvalue()
    assert "step 400/400" in text and "steps/s" in text
    assert t.steps == 400 and t.loss() < 1e-4
    np.testing.assert_allclose(np.asarray(t.params()["w"]), w_true, atol=1e-2)
    quiet = io.StringIO()
    t.run(5, qnp.asarray(x), qnp.asarray(y), progress=False, file=quiet)
    assert quiet.getvalue() == ""


def test_example_libraries_optimizers_and_stax_layers():
    from quabla.example_libraries import optimizers, stax
    params = {"w": qnp.array([1.0, -2.0])}
    g = {"w": qnp.array([0.3, -0.1])}
    for name, make in [("sgd", lambda: optimizers.sgd(0.1)),
                       ("momentum", lambda: optimizers.momentum(0.1, 0.9)),
                       ("nesterov", lambda: optimizers.nesterov(0.1, 0.9)),
                       ("adagrad", lambda: optimizers.adagrad(0.1)),
                       ("rmsprop", lambda: optimizers.rmsprop(0.1)),
                       ("adamax", lambda: optimizers.adamax(0.1))]:
        init, update, get = make()
        s = init(params)
        for i in range(2):
            s = quabla.jit(update)(i, g, s)
        assert np.all(np.asarray(get(s)["w"]) != [1.0, -2.0]), name
    # sgd by hand: two steps of -0.1 * g.
    init, update, get = optimizers.sgd(0.1)
    s = update(1, g, update(0, g, init(params)))
    np.testing.assert_allclose(np.asarray(get(s)["w"]), [0.94, -1.98], rtol=1e-15)
    sched = optimizers.piecewise_constant([2, 4], [1.0, 0.5, 0.1])
    assert [float(sched(i)) for i in (0, 2, 3, 4, 9)] == [1.0, 1.0, 0.5, 0.5, 0.1]
    with pytest.raises(ValueError, match="boundaries"):
        optimizers.piecewise_constant([1, 2], [1.0])
    with pytest.raises(TypeError, match="gradient tree"):
        update(0, {"v": g["w"]}, init(params))
    init_fn, apply_fn = stax.serial(stax.Dense(4), stax.Flatten, stax.Dropout(0.5))
    shape, p = init_fn(quabla.random.PRNGKey(1), (2, 3))
    assert shape == (2, 4)
    out = apply_fn(p, qnp.ones((2, 3)), rng=quabla.random.PRNGKey(2))
    assert out.shape == (2, 4)
    with pytest.raises(ValueError, match="PRNG key"):
        apply_fn(p, qnp.ones((2, 3)))
    cat_init, cat_apply = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Dense(5)),
                                      stax.FanInConcat())
    shape, p = cat_init(quabla.random.PRNGKey(0), (7, 2))
    assert shape == (7, 8) and cat_apply(p, qnp.ones((7, 2))).shape == (7, 8)


@pytest.mark.parametrize("name", ["adam", "adam_schedule", "sgd_momentum", "rmsprop", "adamw",
                                  "chain"])
def test_built_in_states_have_optaxs_named_shape(name):
    # The same key paths as optax's states (state[0].mu['w'], state[1].count, ...) and the
    # same values after three updates.
    got = optimizer_state_program(quabla, qnp, optim, name)
    want = G["named_states"][name]
    assert [p for p, _ in got] == [p for p, _ in want]
    for (path, leaf), (_, w) in zip(got, want):
        np.testing.assert_allclose(leaf, dec(w), rtol=1e-6, atol=1e-12, err_msg=path)
