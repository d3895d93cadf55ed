"""``frexp``, ``ldexp``, ``nextafter`` and ``spacing`` against numpy, bit for bit, in
float32 and float64, over random magnitudes across the whole exponent range and the edges
(zeros of both signs, the least normal and subnormal numbers, the largest finite, infs,
NaN); derivatives as JAX 0.10.2's (``ldexp``: 2**n; ``frexp``'s mantissa: 2**-e)."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp


def values(dt, n=300, seed=0):
    fi = np.finfo(dt)
    edges = [0.0, -0.0, 1.0, -1.0, 0.75, 2.0, 0.5, fi.tiny, fi.tiny / 2,
             fi.smallest_subnormal, -fi.smallest_subnormal, fi.max, -fi.max, np.inf, -np.inf,
             np.nan, 3.0, 1e-3, fi.tiny * 1.5, fi.tiny - fi.smallest_subnormal,
             fi.max / 2, 2.0 ** (fi.maxexp - 2)]
    rng = np.random.default_rng(seed)
    span = fi.maxexp - fi.minexp + int(fi.nmant)
    exps = rng.integers(fi.minexp - int(fi.nmant), fi.maxexp, n)
    with np.errstate(over="ignore", under="ignore"):
        rand = rng.uniform(-1, 1, n) * 2.0 ** exps
    assert span > 0
    return np.array(edges + list(rand), dt)


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    u = np.uint64 if got.dtype == np.float64 else np.uint32
    ok = (got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))
    assert ok.all(), list(zip(got[~ok][:5], want[~ok][:5]))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_frexp_and_ldexp_as_numpy(dt):
    x = values(dt)
    m, e = qnp.frexp(x)
    mn, en = np.frexp(x)
    same_bits(m, mn)
    assert np.asarray(e).dtype == np.int32
    assert (np.asarray(e) == en).all()
    n = np.random.default_rng(1).integers(-1300, 1300, x.size).astype(np.int32)
    with np.errstate(over="ignore"):
        want = np.ldexp(x, n)
    same_bits(qnp.ldexp(x, n), want)
    # Rounding once into the subnormals (ties to even) and exactly at the overflow edge.
    fi = np.finfo(dt)
    odd = np.array([fi.tiny * 1.75, -fi.tiny * 1.25, fi.max, 1.0], dt)
    k = np.array([-3, -2, 1, fi.maxexp], np.int32)
    with np.errstate(over="ignore"):
        same_bits(qnp.ldexp(odd, k), np.ldexp(odd, k))
    with pytest.raises(TypeError, match="integer"):
        qnp.ldexp(x, 1.5)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_nextafter_and_spacing_as_numpy(dt):
    x = values(dt, seed=2)
    y = np.roll(values(dt, seed=3), 7)
    same_bits(qnp.nextafter(x, y), np.nextafter(x, y))
    same_bits(qnp.nextafter(x, x), np.nextafter(x, x))
    with np.errstate(over="ignore"):
        same_bits(qnp.spacing(x), np.spacing(x))
    # Under jit and vmap too.
    f = quabla.jit(qnp.nextafter)
    same_bits(f(x, y), np.nextafter(x, y))
    with np.errstate(over="ignore"):
        same_bits(quabla.vmap(qnp.spacing)(x[:40]), np.spacing(x[:40]))


def test_derivatives_as_jax():
    # JAX: d ldexp(x, 3)/dx = 8, d frexp(x)[0]/dx at 3 = 1/4.
    assert float(quabla.grad(lambda x: qnp.ldexp(x, 3))(1.5)) == 8.0
    assert float(quabla.grad(lambda x: qnp.frexp(x)[0])(3.0)) == 0.25
    assert float(quabla.grad(lambda x: qnp.ldexp(x, -1100))(1.5)) == 0.0
