"""quabla.optim against optax (the reference implementation of the rules) and a training run."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import optim


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


def run_optax(opt, jax, jnp, steps=120):
    params = {"a": jnp.array([0.5, -1.0, 2.0]), "b": jnp.array([1.5])}
    state = opt.init(params)

    def loss(p):
        return jnp.sum((p["a"] - 3.0) ** 2) + jnp.sum(p["b"] ** 4)

    traj = []
    for _ in range(steps):
        g = jax.grad(loss)(params)
        updates, state = opt.update(g, state, params)
        params = jax.tree_util.tree_map(lambda p, u: p + u, params, updates)
        traj.append(np.concatenate([np.asarray(params["a"]), np.asarray(params["b"])]))
    return np.array(traj)


def test_trajectories_match_optax(jax_ref):
    jax, jnp = jax_ref
    optax = pytest.importorskip("optax")
    # optax evaluates its schedules in float32 even for float64 parameters (the learning rate
    # 0.05 becomes 0.0500000007...); Quabla evaluates them in the parameters' dtype, so the
    # scheduled runs agree to float32 precision and the others to float64 precision.
    cases = [
        (optim.adam(0.05), optax.adam(0.05), 1e-10),
        (optim.sgd(0.01, momentum=0.9, nesterov=True), optax.sgd(0.01, 0.9, nesterov=True),
         1e-10),
        (optim.rmsprop(0.01), optax.rmsprop(0.01), 1e-10),
        (optim.adamw(optim.exponential_decay(0.05, 10, 0.9), weight_decay=0.01),
         optax.adamw(optax.exponential_decay(0.05, 10, 0.9), weight_decay=0.01), 1e-6),
        (optim.chain(optim.clip_by_global_norm(0.5), optim.adam(
            optim.warmup_cosine_decay_schedule(0.0, 0.1, 10, 100))),
         optax.chain(optax.clip_by_global_norm(0.5), optax.adam(
             optax.warmup_cosine_decay_schedule(0.0, 0.1, 10, 100))), 1e-6),
    ]
    for ours, theirs, rtol in cases:
        a = run_ours(ours)
        b = run_optax(theirs, jax, jnp)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * 0.1)


def test_schedules_match_optax(jax_ref):
    optax = pytest.importorskip("optax")
    pairs = [
        (optim.exponential_decay(1.0, 5, 0.5, staircase=True),
         optax.exponential_decay(1.0, 5, 0.5, staircase=True)),
        (optim.cosine_decay_schedule(2.0, 50, 0.1), optax.cosine_decay_schedule(2.0, 50, 0.1)),
        (optim.piecewise_constant_schedule(1.0, [(10, 0.5), (20, 0.1)]),
         optax.piecewise_constant_schedule(1.0, {10: 0.5, 20: 0.1})),
    ]
    for ours, theirs in pairs:
        for step in (0, 3, 10, 15, 20, 49, 80):
            v = ours(qnp.asarray(np.int32(step))._raw, "float64")
            assert float(quabla.Array(v)) == pytest.approx(float(theirs(step)), rel=1e-6)


def test_update_checks_structures():
    opt = optim.sgd(0.1)
    p = {"w": qnp.ones(2)}
    s = opt.init(p)
    with pytest.raises(ValueError, match="structure"):
        opt.update({"v": qnp.ones(2)}, s, p)
    with pytest.raises(TypeError, match="OptState"):
        opt.update(p, [1], p)
