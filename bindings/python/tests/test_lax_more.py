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
