"""lax.conv_general_dilated and its wrappers against JAX 0.10.2 goldens (the programs in
tools/programs.py run on both), a numpy reference written from the definition, finite
differences, and the errors."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax

from conftest import central_diff, golden, program_outputs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import convolution_cases  # noqa: E402

G = golden("jax_convolution")


def test_every_convolution_program_matches_jax():
    for name, k, o, w in program_outputs(convolution_cases(quabla, qnp), G):
        assert o.dtype == w.dtype, (name, k, o.dtype, w.dtype)
        # Sums of products in another order than XLA's: float64 rounding apart.
        np.testing.assert_allclose(o, w, rtol=1e-12, atol=1e-12, err_msg=f"{name}[{k}]")


def reference_conv(x, w, stride, pads, lhs_dil, rhs_dil, groups):
    """NCHW x OIHW cross-correlation from the definition, loops over outputs."""
    n, c, h, wd = x.shape
    o, i, kh, kw = w.shape
    dil = np.zeros((n, c, (h - 1) * lhs_dil[0] + 1, (wd - 1) * lhs_dil[1] + 1))
    dil[:, :, ::lhs_dil[0], ::lhs_dil[1]] = x
    (pt, pb), (pl, pr) = pads
    padded = np.pad(dil, ((0, 0), (0, 0), (max(pt, 0), max(pb, 0)), (max(pl, 0), max(pr, 0))))
    padded = padded[:, :, max(-pt, 0):padded.shape[2] - max(-pb, 0),
                    max(-pl, 0):padded.shape[3] - max(-pr, 0)]
    ekh, ekw = (kh - 1) * rhs_dil[0] + 1, (kw - 1) * rhs_dil[1] + 1
    oh = (padded.shape[2] - ekh) // stride[0] + 1
    ow = (padded.shape[3] - ekw) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for b in range(n):
        for f in range(o):
            g = f // og
            for p in range(oh):
                for q in range(ow):
                    win = padded[b, g * i:(g + 1) * i,
                                 p * stride[0]:p * stride[0] + ekh:rhs_dil[0],
                                 q * stride[1]:q * stride[1] + ekw:rhs_dil[1]]
                    out[b, f, p, q] = np.sum(win * w[f])
    return out


@pytest.mark.parametrize("stride,pads,lhs_dil,rhs_dil,groups", [
    ((1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1),
    ((2, 3), ((1, 2), (3, 0)), (1, 1), (2, 1), 1),
    ((1, 2), ((-1, 1), (1, -2)), (3, 2), (1, 2), 1),
    ((2, 1), ((2, 2), (1, 1)), (1, 1), (1, 1), 3),
])
def test_against_the_definition(stride, pads, lhs_dil, rhs_dil, groups):
    r = np.random.RandomState(6)
    x = r.randn(2, 6, 9, 8)
    w = r.randn(6, 6 // groups, 3, 2)
    got = lax.conv_general_dilated(x, w, stride, pads, lhs_dil, rhs_dil,
                                   feature_group_count=groups)
    np.testing.assert_allclose(np.asarray(got),
                               reference_conv(x, w, stride, pads, lhs_dil, rhs_dil, groups),
                               rtol=1e-12, atol=1e-12)


def test_gradients_match_finite_differences():
    r = np.random.RandomState(9)
    x0, w0 = r.randn(1, 2, 5, 4), r.randn(3, 2, 2, 3)
    ct = r.randn(1, 3, 3, 2)

    def f(x, w):
        y = lax.conv_general_dilated(x, w, (2, 1), ((1, 1), (0, 0)), rhs_dilation=(1, 1))
        return qnp.sum(qnp.sin(y) * ct)

    gx, gw = quabla.grad(f, argnums=(0, 1))(x0, w0)
    np.testing.assert_allclose(np.asarray(gx), central_diff(lambda z: float(f(z, w0)), x0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gw), central_diff(lambda z: float(f(x0, z)), w0),
                               rtol=1e-6, atol=1e-8)


def test_errors_say_what_is_wrong():
    x, w = qnp.ones((1, 4, 5, 5)), qnp.ones((2, 3, 3, 3))
    with pytest.raises(Exception, match="feature_group_count"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID")
    with pytest.raises(Exception, match="window_strides"):
        lax.conv_general_dilated(x, qnp.ones((2, 4, 3, 3)), (1,), "VALID")
    with pytest.raises(Exception, match="padding"):
        lax.conv_general_dilated(x, qnp.ones((2, 4, 3, 3)), (1, 1), "HALF")
    with pytest.raises(ValueError, match="String padding"):
        lax.conv_general_dilated(x, qnp.ones((2, 4, 3, 3)), (1, 1), "SAME", lhs_dilation=(2, 2))
    with pytest.raises(TypeError, match="'N' and 'C'"):
        lax.conv_general_dilated(x, qnp.ones((2, 4, 3, 3)), (1, 1), "VALID",
                                 dimension_numbers=("NHWX", "OIHW", "NCHW"))
    with pytest.raises(Exception, match="at most one"):
        lax.conv_general_dilated(x, qnp.ones((2, 2, 3, 3)), (1, 1), "VALID",
                                 feature_group_count=2, batch_group_count=2)


def test_signal_against_numpy_and_its_errors():
    from quabla.scipy import signal
    r = np.random.RandomState(12)
    a, v = r.randn(9), r.randn(4)
    for mode in ["full", "same", "valid"]:
        np.testing.assert_allclose(np.asarray(signal.convolve(a, v, mode)),
                                   np.convolve(a, v, mode), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(signal.correlate(a, v, mode)),
                                   np.correlate(a, v, mode), rtol=1e-12, atol=1e-12)
    with pytest.raises(NotImplementedError, match="FFT"):
        signal.convolve(a, v, method="fft")
    with pytest.raises(ValueError, match="same number of dimensions"):
        signal.convolve(a, v.reshape(2, 2))
    with pytest.raises(ValueError, match="smaller than the other"):
        signal.convolve2d(np.ones((2, 5)), np.ones((3, 3)))
    with pytest.raises(NotImplementedError, match="boundary"):
        signal.convolve2d(np.ones((4, 4)), np.ones((2, 2)), boundary="wrap")
