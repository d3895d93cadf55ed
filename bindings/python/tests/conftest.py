"""Shared helpers. Reference values come from numpy, analytic formulas, finite differences,
and goldens recorded once from JAX 0.10.2 / optax 0.2.8 (tests/goldens, written by
tools/make_goldens.py): the tests never import JAX."""

import json
import os

import numpy as np

GOLDENS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens")


def golden(name):
    with open(os.path.join(GOLDENS, name + ".json")) as f:
        return json.load(f)


def dec(d):
    """A golden array (dtype, shape and the exact bytes)."""
    return np.frombuffer(bytes.fromhex(d["hex"]), dtype=np.dtype(d["dtype"])).reshape(d["shape"])


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
