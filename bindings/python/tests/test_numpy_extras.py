"""jax.numpy's nan-reductions, statistics and binning, index helpers, spacings and 1-D set
operations against JAX 0.10.2 goldens (tools/programs.py runs the same code on both), with
numpy for the cases JAX is not asked, and the errors."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp

from conftest import assert_matches_golden, golden, program_outputs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import numpy_extras_cases  # noqa: E402

G = golden("jax_numpy_extras")


def test_every_program_matches_jax():
    for name, k, o, w in program_outputs(numpy_extras_cases(quabla, qnp), G):
        assert_matches_golden(name, k, o, w, rtol=1e-13, atol=1e-14)


def test_against_numpy_on_random_data():
    r = np.random.RandomState(3)
    v = r.randn(5, 7)
    v[r.rand(5, 7) < 0.2] = np.nan
    for fn in ["nansum", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar"]:
        np.testing.assert_allclose(np.asarray(getattr(qnp, fn)(v, axis=0)),
                                   getattr(np, fn)(v, axis=0), rtol=1e-12, equal_nan=True)
    d = r.randn(4, 30)
    np.testing.assert_allclose(np.asarray(qnp.cov(d)), np.cov(d), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(qnp.corrcoef(d)), np.corrcoef(d), rtol=1e-12)
    c, e = qnp.histogram(d[0], 7)
    wc, we = np.histogram(d[0], 7)
    np.testing.assert_array_equal(np.asarray(c), wc)
    np.testing.assert_allclose(np.asarray(e), we, rtol=1e-12)


def test_errors_say_what_to_do():
    with pytest.raises(ValueError, match="static `length`"):
        quabla.jit(lambda z: qnp.bincount(z))(qnp.asarray([1, 2]))
    with pytest.raises(ValueError, match="static `size`"):
        quabla.jit(lambda z: qnp.union1d(z, z))(qnp.asarray([1, 2]))
    with pytest.raises(ValueError, match="mode='raise'"):
        quabla.jit(lambda i: qnp.ravel_multi_index((i,), (3,)))(qnp.asarray([1]))
    with pytest.raises(ValueError, match="invalid entry"):
        qnp.ravel_multi_index((qnp.asarray([3]),), (3,))
    with pytest.raises(ValueError, match="1-D weights"):
        qnp.average(qnp.ones((2, 3)), axis=1, weights=qnp.ones(2))
    with pytest.raises(TypeError, match="integers"):
        qnp.bincount(qnp.asarray([1.0]))
