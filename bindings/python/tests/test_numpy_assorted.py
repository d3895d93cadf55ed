"""numpy's small conveniences (stacking and splitting, matrices, elementwise names, integer
functions, selection, index helpers, unwrap, resize) against JAX 0.10.2 goldens
(tools/programs.py runs the same code on both), and their errors."""

import os
import sys

import pytest

import quabla
import quabla.numpy as qnp

from conftest import assert_matches_golden, golden, program_outputs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import numpy_assorted_cases  # noqa: E402

G = golden("jax_numpy_assorted")


def test_every_program_matches_jax():
    for name, k, o, w in program_outputs(numpy_assorted_cases(quabla, qnp), G):
        assert_matches_golden(name, k, o, w, rtol=1e-13, atol=1e-14)


def test_errors():
    x = qnp.ones((3, 3))
    with pytest.raises(NotImplementedError, match="inplace=False"):
        qnp.fill_diagonal(x, 1.0)
    with pytest.raises(ValueError, match="inplace=False"):
        qnp.put_along_axis(x, qnp.asarray([[0]]), 1.0, axis=0)
    with pytest.raises(ValueError, match="invalid entry"):
        qnp.choose(qnp.asarray([3]), [x[0], x[1]])
    with pytest.raises(ValueError, match="concrete"):
        quabla.jit(lambda z: qnp.trim_zeros(z))(qnp.ones(3))
    with pytest.raises(TypeError, match="integer"):
        qnp.gcd(x, x)
    with pytest.raises(ValueError, match="larger than 0"):
        qnp.array_split(x, 0)
