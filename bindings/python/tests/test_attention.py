"""``nn.dot_product_attention`` against JAX 0.10.2 goldens under each option
(tools/programs.py runs the same code on both), against a numpy loop over heads and
positions, its derivatives, and the refusals."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.nn as nn
import quabla.numpy as qnp
from quabla.test_util import check_grads
from conftest import assert_close, assert_matches_golden, golden, program_outputs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import attention_cases  # noqa: E402

G = golden("jax_attention")


def test_every_option_matches_jax():
    # JAX rounds the logits to float32 for its softmax even when the inputs are float64
    # (for bfloat16 inputs' sake); Quabla keeps the inputs' precision, so float64 results
    # differ from JAX's by up to about 1e-7 relative, and agree with the float64 loop below.
    for name, k, o, w in program_outputs(attention_cases(quabla, qnp), G):
        assert_matches_golden(name, k, o, w, rtol=2e-6, atol=1e-7)


def _loop_attention(q, k, v, keep):
    t, n, h = q.shape
    out = np.zeros_like(q)
    for head in range(n):
        for i in range(t):
            logits = k[:, head] @ q[i, head] / np.sqrt(h)
            logits = np.where(keep[i], logits, -np.inf)
            if np.isinf(logits).all():
                continue
            p = np.exp(logits - logits.max())
            out[i, head] = (p / p.sum()) @ v[:, head]
    return out


def test_against_a_loop_and_fully_masked_rows_are_zero():
    r = np.random.default_rng(3)
    q, k, v = r.standard_normal((4, 2, 3)), r.standard_normal((6, 2, 3)), r.standard_normal((6, 2, 3))
    keep = r.random((4, 6)) > 0.4
    keep[1] = False
    got = nn.dot_product_attention(qnp.asarray(q), qnp.asarray(k), qnp.asarray(v),
                                   mask=qnp.asarray(keep))
    assert_close(got, _loop_attention(q, k, v, keep), rtol=1e-12, atol=1e-14)
    assert np.all(np.asarray(got)[1] == 0.0)


def test_derivatives_and_refusals():
    r = np.random.default_rng(4)
    q, k, v = (qnp.asarray(r.standard_normal((3, 2, 4))) for _ in range(3))
    check_grads(lambda a, b, c: nn.dot_product_attention(a, b, c, is_causal=True), (q, k, v),
                order=1)
    f = quabla.jit(lambda a: nn.dot_product_attention(a, a, a))
    assert_close(f(q), nn.dot_product_attention(q, q, q), rtol=1e-14)
    with pytest.raises(ValueError, match="implementation"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")
    with pytest.raises(ValueError, match="multiple"):
        nn.dot_product_attention(qnp.ones((3, 3, 4)), k, v)
    with pytest.raises(TypeError, match="boolean"):
        nn.dot_product_attention(q, k, v, mask=qnp.ones((3, 3)))


def test_delta_orthogonal_and_key_helpers():
    key = quabla.random.PRNGKey(0)
    w = np.array(nn.initializers.delta_orthogonal()(key, (3, 3, 4, 6), qnp.float64))
    centre = w[1, 1]
    assert_close(centre @ centre.T, np.eye(4), rtol=0, atol=1e-12)
    w[1, 1] = 0.0
    assert not w.any()
    w5 = np.asarray(nn.initializers.delta_orthogonal(scale=2.0)(key, (2, 2, 2, 3, 3)))
    assert_close(np.linalg.svd(w5[0, 0, 0], compute_uv=False), [2.0] * 3, rtol=1e-5)
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        nn.initializers.delta_orthogonal()(key, (4, 6))
    with pytest.raises(ValueError, match="fan_in"):
        nn.initializers.delta_orthogonal()(key, (3, 6, 4))
    init: nn.initializers.Initializer = nn.initializers.zeros
    assert init(key, (2,)).shape == (2,)
    assert quabla.random.key_impl(key) == "threefry2x32"
    assert quabla.random.clone(key) is key
    data = quabla.random.key_data(quabla.random.split(key, 3))
    assert_close(quabla.random.wrap_key_data(data), data, rtol=0)
    with pytest.raises(ValueError, match="threefry2x32"):
        quabla.random.wrap_key_data(data, impl="rbg")
