"""optax's L-BFGS toolbox in quabla.optim against optax 0.2.8 trajectories (the programs in
tools/programs.py run on both): the notebook's loop with value_and_grad_from_state, a
while_loop that reads the state by name, the backtracking line search, scale_by_lbfgs
chained by hand; and the errors."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import optim

from conftest import golden, program_outputs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import lbfgs_toolbox_program  # noqa: E402

G = golden("optax_lbfgs")


def test_trajectories_follow_optax():
    cases = lbfgs_toolbox_program(quabla, qnp, optim, optim.tree_get)
    for name, k, o, w in program_outputs(cases, G):
        # Same algorithm, same order of operations; dot products and norms may sum in
        # another order than XLA's, and 25 quasi-Newton steps amplify that a little.
        np.testing.assert_allclose(o, w.astype(o.dtype), rtol=1e-9, atol=1e-12,
                                   err_msg=f"{name}[{k}]")


def test_state_helpers_and_errors():
    state = optim.lbfgs(linesearch=optim.scale_by_backtracking_linesearch(
        max_backtracking_steps=5, store_grad=True)).init({"w": qnp.ones(2)})
    assert int(optim.tree_get(state, "count")) == 0
    assert optim.tree_get(state, "missing", 7) == 7
    with pytest.raises(KeyError, match="fields named"):
        optim.tree_get((state, state), "count")
    no_grad = optim.lbfgs(linesearch=optim.scale_by_backtracking_linesearch(
        max_backtracking_steps=5)).init(qnp.ones(2))
    with pytest.raises(ValueError, match="store_grad"):
        optim.value_and_grad_from_state(lambda p: qnp.sum(p))(qnp.ones(2), state=no_grad)
    with pytest.raises(ValueError, match="memory_size"):
        optim.scale_by_lbfgs(memory_size=0)
    with pytest.raises(ValueError, match="linesearch="):
        optim.lbfgs(learning_rate=0.1)
    solver = optim.lbfgs(linesearch=optim.scale_by_backtracking_linesearch(
        max_backtracking_steps=5, store_grad=True))
    p = qnp.ones(2)
    s = solver.init(p)
    with pytest.raises(TypeError, match="not consumed by `value_fn`"):
        solver.update(p, s, p, value=qnp.asarray(2.0), grad=p,
                      value_fn=lambda q: qnp.sum(q * q), batch=3)
    # Extra arguments reach value_fn when it takes them.
    u, _ = solver.update(p, s, p, value=qnp.asarray(4.0), grad=p * 2,
                         value_fn=lambda q, scale: scale * qnp.sum(q * q), scale=2.0)
    assert np.all(np.isfinite(np.asarray(u)))


def test_the_step_runs_under_jit():
    solver = optim.lbfgs(linesearch=optim.scale_by_backtracking_linesearch(
        max_backtracking_steps=10, store_grad=True))
    f = lambda p: qnp.sum((p - 3.0) ** 2)  # noqa: E731
    vg = optim.value_and_grad_from_state(f)

    @quabla.jit
    def step(p, s):
        v, g = vg(p, state=s)
        u, s = solver.update(g, s, p, value=v, grad=g, value_fn=f)
        return optim.apply_updates(p, u), s

    p, s = qnp.zeros(3), solver.init(qnp.zeros(3))
    for _ in range(5):
        p, s = step(p, s)
    np.testing.assert_allclose(np.asarray(p), 3.0, rtol=1e-9)
