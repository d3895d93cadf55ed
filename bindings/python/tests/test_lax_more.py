"""More of jax.lax's user-facing functions against JAX 0.10.2 goldens (tools/programs.py
runs the same code on both), and their errors."""

import os
import sys

import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax

from conftest import assert_matches_golden, golden, program_outputs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import lax_more_cases  # noqa: E402

G = golden("jax_lax_more")


def test_every_program_matches_jax():
    for name, k, o, w in program_outputs(lax_more_cases(quabla, qnp), G):
        assert_matches_golden(name, k, o, w, rtol=1e-13, atol=1e-14)


def test_errors():
    x = qnp.ones((2, 3))
    with pytest.raises(ValueError, match="padding_config"):
        lax.pad(x, 0.0, [(1, 1, 0)])
    with pytest.raises(ValueError, match="add up to"):
        lax.split(x, (1, 1), axis=1)
    with pytest.raises(TypeError, match="integers"):
        lax.population_count(x)
    with pytest.raises(TypeError, match="rank 1 or 2"):
        lax.dot(qnp.ones((2, 2, 2)), x)
    with pytest.raises(ValueError, match="two cases"):
        lax.select_n(x > 0, x)


def test_stack_refuses_what_jax_refuses():
    # JAX 0.10.2: IndexError for no operands, ValueError for shapes or axes, TypeError for
    # dtypes (lax.stack does not promote).
    x = qnp.ones((2, 3))
    with pytest.raises(IndexError, match="at least one"):
        lax.stack([])
    with pytest.raises(ValueError, match="same shape"):
        lax.stack([x, x[:1]])
    with pytest.raises(TypeError, match="same dtypes, got float64, int32"):
        lax.stack([x, qnp.ones((2, 3), dtype=qnp.int32)])
    with pytest.raises(ValueError, match="out of bounds"):
        lax.stack([x, x], axis=3)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.unstack(x, axis=2)
    # Under jit the same arrays stack and unstack.
    f = quabla.jit(lambda a: lax.unstack(lax.stack([a, 2 * a], axis=1), axis=1))
    a, b = f(qnp.arange(3.0))
    assert a.tolist() == [0.0, 1.0, 2.0] and b.tolist() == [0.0, 2.0, 4.0]


def test_dtype_is_jaxs_canonical_dtype():
    # JAX 0.10.2 with x64 on (this suite's setting): lax.dtype(True) bool, (1.0) float64,
    # ("foo") TypeError; its int64 / uint64 for 3, np.int64(3) and "uint64" are int32 /
    # uint32 here (Quabla has no 64-bit integers: the README's dtype differences).
    import numpy as np
    assert lax.dtype(3) == np.int32 and lax.dtype(True) == np.bool_
    assert lax.dtype(np.int64(3)) == np.int32 and lax.dtype(1.0) == np.float64
    assert lax.dtype(np.ones(2, np.float32)) == np.float32
    assert lax.dtype(qnp.ones(2, dtype=qnp.int32)) == np.int32
    assert lax.dtype("uint64") == np.uint32
    with pytest.raises(TypeError):
        lax.dtype("foo")


def test_broadcast_like_keeps_its_dtype_as_jax():
    # JAX 0.10.2: lax.broadcast_like(ones(3), zeros((2, 3), int32)) is float32[2, 3] (the
    # first argument's dtype); a shape that does not broadcast is a ValueError.
    import numpy as np
    out = lax.broadcast_like(qnp.asarray([1.0, 2.0, 3.0], dtype=qnp.float32),
                             qnp.zeros((2, 3), dtype=qnp.int32))
    assert out.shape == (2, 3) and out.dtype == np.float32
    assert out.tolist() == [[1.0, 2.0, 3.0]] * 2
    assert lax.broadcast_like(2.0, np.zeros((2, 3))).shape == (2, 3)
    assert lax.broadcast_like(qnp.ones((1, 3)), qnp.zeros((2, 3))).shape == (2, 3)
    with pytest.raises(ValueError):
        lax.broadcast_like(qnp.ones(2), qnp.zeros((2, 3)))


def test_top_level_sharding_names_are_jaxs():
    # jax.NamedSharding and jax.P are the sharding module's classes.
    assert quabla.NamedSharding is quabla.sharding.NamedSharding
    assert quabla.P is quabla.sharding.PartitionSpec
