"""``quabla.image`` against JAX 0.10.2's ``jax.image`` (the programs in tools/programs.py
run on both): every method up and down, antialiasing on and off, batched images, integer
images, ``scale_and_translate`` and gradients in the image and in a traced scale."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import image

from conftest import assert_matches_golden, golden, program_outputs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import image_cases  # noqa: E402

G = golden("jax_image")


def test_every_image_program_matches_jax():
    for name, k, o, w in program_outputs(image_cases(quabla, qnp), G):
        assert o.dtype == w.dtype or (w.dtype.kind == "i" and o.dtype.kind == "i"), (name, k)
        tol = 1e-12 if w.dtype == np.float64 else 2e-6
        assert_matches_golden(name, k, o, w, rtol=tol, atol=tol)


def test_gradient_in_the_scale_matches_finite_differences():
    x = qnp.asarray(np.random.RandomState(4).randn(6, 5))

    def loss(s):
        return qnp.sum(image.scale_and_translate(x, (8, 7), (0, 1), s, qnp.asarray([0.1, 0.0]),
                                                 "cubic") ** 3)

    # No output pixel's sample sits on the image's edge (where the weights jump).
    s = np.array([1.4, 1.15])
    g = np.asarray(quabla.grad(loss)(qnp.asarray(s)))
    for k in range(2):
        e = np.zeros(2)
        e[k] = 1e-6
        fd = (float(loss(qnp.asarray(s + e))) - float(loss(qnp.asarray(s - e)))) / 2e-6
        assert abs(g[k] - fd) <= 1e-6 * max(1.0, abs(fd)), (k, g[k], fd)


def test_bad_arguments_say_what_to_do():
    x = qnp.ones((3, 3))
    with pytest.raises(ValueError, match="number of dimensions"):
        image.resize(x, (4,), "linear")
    with pytest.raises(ValueError, match="Unknown resize method"):
        image.resize(x, (4, 4), "bogus")
    with pytest.raises(ValueError, match="Nearest"):
        image.scale_and_translate(x, (4, 4), (0, 1), [1.0, 1.0], [0.0, 0.0], "nearest")
    with pytest.raises(ValueError, match="not in spatial_dims"):
        image.scale_and_translate(x, (4, 5), (0,), [1.0], [0.0], "linear")
    assert image.ResizeMethod.from_string("bilinear") is image.ResizeMethod.LINEAR
