"""Shared helpers. Reference values come from numpy, analytic formulas, finite differences,
and goldens recorded once from JAX 0.10.2 / optax 0.2.8 (tests/goldens, written by
tools/make_goldens.py): the tests never import JAX."""

import contextlib
import json
import os

import numpy as np
import pytest

import quabla

GOLDENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens")


def golden(name):
    with open(os.path.join(GOLDENS, name + ".json")) as f:
        return json.load(f)


def dec(d):
    """A golden array (dtype, shape and the exact bytes)."""
    return np.frombuffer(bytes.fromhex(d["hex"]), dtype=np.dtype(d["dtype"])).reshape(d["shape"])


def output_leaves(tree):
    """A program's outputs (nested tuples and lists of arrays) as one flat list."""
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in output_leaves(t)]
    return [tree]


def golden_leaves(tree):
    """A recorded golden (nested lists of encoded arrays) as one flat list of arrays."""
    if isinstance(tree, list):
        return [leaf for t in tree for leaf in golden_leaves(t)]
    return [dec(tree)]


def program_outputs(cases, goldens):
    """``(name, k, output, expected)`` for every output of every named program, after
    checking that the programs and the goldens name the same cases and count the same
    outputs."""
    assert set(cases) == set(goldens)
    for name, want in goldens.items():
        outs, wants = output_leaves(cases[name]()), golden_leaves(want)
        assert len(outs) == len(wants), (name, len(outs), len(wants))
        for k, (o, w) in enumerate(zip(outs, wants)):
            o = np.asarray(o)
            assert o.shape == w.shape, (name, k, o.shape, w.shape)
            yield name, k, o, w


def assert_matches_golden(name, k, o, w, rtol, atol):
    """Integers exactly (JAX's x64 indices are int64, Quabla's int32: it has no int64);
    floats of the same dtype to ``rtol``/``atol``, NaN where NaN."""
    if w.dtype.kind in "iub":
        np.testing.assert_array_equal(o.astype(w.dtype), w, err_msg=f"{name}[{k}]")
    else:
        assert o.dtype == w.dtype, (name, k, o.dtype, w.dtype)
        np.testing.assert_allclose(o, w, rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=f"{name}[{k}]")


def assert_close(actual, expected, rtol=1e-6, atol=0.0):
    a = np.asarray(actual)
    e = np.asarray(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape}"
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)


def central_diff(f, x, eps=1e-6):
    """Gradient of scalar f at float64 numpy x by central differences."""
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (float(f(xp)) - float(f(xm))) / (2 * eps)
    return g


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "x64_off: run with jax_enable_x64 off (the default users get), to test "
        "float32 defaults; every other test runs with it on")


@pytest.fixture(autouse=True)
def _x64_mode(request):
    """The suite runs with ``jax_enable_x64`` on, as JAX's own tests of float64 programs do
    (with it off their float64 inputs would be float32); ``@pytest.mark.x64_off`` tests run
    with it off. Each test gets the mode back as it found it."""
    before = quabla.config.jax_enable_x64
    quabla.config.update("jax_enable_x64", request.node.get_closest_marker("x64_off") is None)
    yield
    quabla.config.update("jax_enable_x64", before)


@contextlib.contextmanager
def x64_mode(on):
    """``jax_enable_x64`` set to ``on`` inside the block, then back as it was."""
    before = quabla.config.jax_enable_x64
    quabla.config.update("jax_enable_x64", on)
    try:
        yield
    finally:
        quabla.config.update("jax_enable_x64", before)
