"""``checkpoint`` with JAX's policies and ``static_argnums``, ``ad_checkpoint``: every policy
gives the gradient the plain function gives (policies trade memory for time only)."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import checkpoint_policies as cp
from quabla.ad_checkpoint import checkpoint, checkpoint_name

from conftest import assert_close


def layer(w, x):
    h = checkpoint_name(qnp.tanh(w @ x), "h")
    return qnp.sin(w.T @ h)


POLICIES = [cp.everything_saveable, cp.nothing_saveable, cp.dots_saveable, cp.checkpoint_dots,
            cp.dots_with_no_batch_dims_saveable, cp.checkpoint_dots_with_no_batch_dims,
            cp.save_only_these_names("h"), cp.save_any_names_but_these("h"),
            cp.save_anything_except_these_names("h"),
            cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("h")),
            cp.offload_dot_with_no_batch_dims("device", "pinned_host")]


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_every_policy_gives_the_plain_gradient(policy):
    rng = np.random.default_rng(1)
    w, x = qnp.asarray(rng.normal(size=(4, 3))), qnp.asarray(rng.normal(size=3))
    plain = quabla.grad(lambda w: qnp.sum(layer(w, x)))(w)
    remat = checkpoint(layer, policy=policy)
    assert_close(quabla.grad(lambda w: qnp.sum(remat(w, x)))(w), plain, rtol=1e-12)
    assert_close(quabla.jit(quabla.grad(lambda w: qnp.sum(remat(w, x))))(w), plain, rtol=1e-12)


def test_static_argnums_and_refusals():
    def power(x, n):
        return x ** n  # n is a Python int: the exponent picks the program

    f = quabla.checkpoint(power, static_argnums=(1,))
    assert float(quabla.grad(lambda x: f(x, 3))(2.0)) == 12.0
    with pytest.raises(TypeError, match="checkpoint_policies"):
        quabla.checkpoint(power, policy="dots")
    with pytest.raises(TypeError, match="names"):
        cp.save_only_these_names(3)
