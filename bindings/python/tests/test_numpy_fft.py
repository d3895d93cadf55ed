"""quabla.numpy.fft's real-valued helpers against values recorded from JAX 0.10.2 (x64 on,
as this suite runs), bit for bit, and numpy; the complex transforms' refusal."""

import numpy as np
import pytest

import quabla.numpy as qnp

# jnp.fft.fftfreq / rfftfreq(n, d), recorded: (float64, float32) for fftfreq, float64 for
# rfftfreq.
RECORDED = {
    (5, 0.5): ([0.0, 0.4, 0.8, -0.8, -0.4],
               [0.0, 0.4000000059604645, 0.800000011920929, -0.800000011920929,
                -0.4000000059604645],
               [0.0, 0.4, 0.8]),
    (4, 1.0): ([0.0, 0.25, -0.5, -0.25], [0.0, 0.25, -0.5, -0.25], [0.0, 0.25, 0.5]),
    (7, 0.1): ([0.0, 1.4285714285714284, 2.8571428571428568, 4.285714285714285,
                -4.285714285714285, -2.8571428571428568, -1.4285714285714284],
               [0.0, 1.4285714626312256, 2.857142925262451, 4.285714149475098,
                -4.285714149475098, -2.857142925262451, -1.4285714626312256],
               [0.0, 1.4285714285714284, 2.8571428571428568, 4.285714285714285]),
    (1, 1.0): ([0.0], [0.0], [0.0]),
    (6, 0.3): ([0.0, 0.5555555555555556, 1.1111111111111112, -1.6666666666666667,
                -1.1111111111111112, -0.5555555555555556],
               [0.0, 0.5555555820465088, 1.1111111640930176, -1.6666667461395264,
                -1.1111111640930176, -0.5555555820465088],
               [0.0, 0.5555555555555556, 1.1111111111111112, 1.6666666666666667]),
}


@pytest.mark.parametrize("n,d", list(RECORDED))
def test_frequencies_are_jaxs_bits(n, d):
    f64, f32, r64 = RECORDED[(n, d)]
    got = qnp.fft.fftfreq(n, d)
    assert got.dtype == np.float64 and np.asarray(got).tolist() == f64
    got = qnp.fft.fftfreq(n, d, dtype=np.float32)
    assert got.dtype == np.float32 and np.asarray(got).astype(np.float64).tolist() == f32
    assert np.asarray(qnp.fft.rfftfreq(n, d)).tolist() == r64
    # numpy multiplies by 1 / (n d) instead of dividing: the same values to rounding.
    np.testing.assert_allclose(np.asarray(qnp.fft.fftfreq(n, d)), np.fft.fftfreq(n, d),
                               rtol=1e-15, atol=0)
    np.testing.assert_allclose(np.asarray(qnp.fft.rfftfreq(n, d)), np.fft.rfftfreq(n, d),
                               rtol=1e-15, atol=0)


def test_shifts_roll_half_of_each_axis():
    x = np.arange(15).reshape(3, 5)
    # Recorded from JAX 0.10.2.
    assert np.asarray(qnp.fft.fftshift(x)).tolist() == [[13, 14, 10, 11, 12], [3, 4, 0, 1, 2],
                                                        [8, 9, 5, 6, 7]]
    assert np.asarray(qnp.fft.ifftshift(x, axes=1)).tolist() == [
        [2, 3, 4, 0, 1], [7, 8, 9, 5, 6], [12, 13, 14, 10, 11]]
    assert np.asarray(qnp.fft.fftshift(x, axes=-2)).tolist() == [
        [10, 11, 12, 13, 14], [0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    for axes in [None, 0, 1, (0, 1), (1,)]:
        assert np.array_equal(np.asarray(qnp.fft.fftshift(x, axes)), np.fft.fftshift(x, axes))
        assert np.array_equal(np.asarray(qnp.fft.ifftshift(qnp.fft.fftshift(x, axes), axes)),
                              x)


def test_refusals_say_what_is_wrong():
    assert qnp.fft.fftfreq(0).shape == (0,) and qnp.fft.rfftfreq(0).shape == (1,)
    with pytest.raises(ValueError, match="only takes an int"):
        qnp.fft.fftfreq((3, 4))
    with pytest.raises(ValueError, match="single value"):
        qnp.fft.rfftfreq(4, [0.1, 0.2])
    # JAX returns a meaningless array for a negative length; Quabla refuses it.
    with pytest.raises(ValueError, match="non-negative"):
        qnp.fft.fftfreq(-1)
    with pytest.raises(AttributeError, match="complex numbers"):
        qnp.fft.rfft(np.ones(4))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        qnp.fft.nope
