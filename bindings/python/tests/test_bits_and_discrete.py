"""``numpy.packbits``/``unpackbits``/``fromiter``/``fromfile`` and
``scipy.stats.bernoulli.ppf``/``poisson.entropy`` against JAX 0.10.2 and numpy on the same
inputs (recorded by hand)."""

import numpy as np
import pytest

import quabla
import quabla.numpy as jnp
import quabla.scipy.stats as st

from conftest import assert_close

nan = float("nan")


def test_packbits_as_jax():
    assert jnp.packbits(jnp.array([[1, 0, 1], [0, 1, 1]], dtype=jnp.uint8)).tolist() == [172]
    assert jnp.packbits(jnp.array([1, 0, 1, 1, 0, 0, 0, 1, 1]), bitorder="little").tolist() == \
        [141, 1]
    assert jnp.packbits(jnp.array([[1, 0, 1], [0, 1, 1]]), axis=1).tolist() == [[160], [96]]
    nine = jnp.array([[True, False, True, True, True, True, True, True, True],
                      [False, True, True, False, False, False, False, False, True]])
    assert jnp.packbits(nine, axis=1).tolist() == [[191, 128], [96, 128]]
    assert jnp.packbits(jnp.array([[1, 0], [0, 1], [1, 1]]), axis=0).tolist() == [[160, 96]]
    # No uint8 here: packed bytes are uint32, as uint8 maps everywhere.
    assert jnp.packbits(jnp.array([1, 1])).dtype == np.uint32
    with pytest.raises(ValueError, match="bitorder"):
        jnp.packbits(jnp.array([1]), bitorder="middle")
    with pytest.raises(TypeError, match="integer or boolean"):
        jnp.packbits(jnp.ones(3))


def test_unpackbits_as_jax():
    u = jnp.array([5, 200], dtype=jnp.uint8)
    big, little = [0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0], [1, 0, 1, 0, 0]
    assert jnp.unpackbits(u).tolist() == big
    assert jnp.unpackbits(u, count=5, bitorder="little").tolist() == little
    assert jnp.unpackbits(jnp.array([[5], [200]], dtype=jnp.uint8), axis=1, count=-3).tolist() \
        == [[0, 0, 0, 0, 0], [1, 1, 0, 0, 1]]
    assert jnp.unpackbits(u, count=20).tolist() == [0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    assert jnp.unpackbits(jnp.array([[5, 7], [200, 1]], dtype=jnp.uint8), axis=0).tolist() == \
        [[0, 0], [0, 0], [0, 0], [0, 0], [0, 0], [1, 1], [0, 1], [1, 1], [1, 0], [1, 0], [0, 0], [0, 0], [1, 0], [0, 0], [0, 0], [0, 1]]
    assert jnp.packbits(jnp.unpackbits(u)).tolist() == [5, 200]
    with pytest.raises(TypeError, match="unsigned"):
        jnp.unpackbits(jnp.array([5]))


def test_fromiter_and_fromfile(tmp_path):
    assert_close(jnp.fromiter((i * i for i in range(4)), dtype=jnp.float32), [0, 1, 4, 9], rtol=0)
    path = tmp_path / "raw.bin"
    np.arange(5, dtype=np.float64).tofile(path)
    assert_close(jnp.fromfile(path, dtype=np.float64, count=3), [0.0, 1.0, 2.0], rtol=0)
    text = tmp_path / "text.txt"
    text.write_text("1.5, 2.5, 3.5")
    assert_close(jnp.fromfile(text, sep=","), [1.5, 2.5, 3.5], rtol=0)


def test_bernoulli_ppf_as_jax():
    q = jnp.asarray([0.0, 0.2, 0.7, 1.0, 1.2, -0.1, nan])
    assert_close(st.bernoulli.ppf(q, 0.3), [0.0, 0.0, 0.0, 1.0, nan, nan, nan], rtol=0)
    assert_close(st.bernoulli.ppf(0.5, jnp.asarray([0.0, 0.5, 0.6, 1.0, 1.5])), [0.0, 0.0, 1.0, 1.0, nan], rtol=0)


def test_poisson_entropy_as_jax_in_every_regime():
    mu = jnp.asarray([0.5, 3.0, 9.99, 10.0, 20.0, 99.5, 100.0, 1e4, 0.0, -1.0])
    assert_close(st.poisson.entropy(mu), [0.9276374674957976, 1.9314701981424343, 2.5608962955861676, 2.561409935274911, 2.9125264001823146, 3.718175570939322, 3.7206902928653847, 6.02410038585943, 0.0, nan], rtol=1e-13)
    assert_close(st.poisson.entropy(jnp.asarray([[1.0], [5.0]]), jnp.asarray([0.0, 2.0, 3.0])),
                 [[1.3048422422562513, 1.3048422422562513, 1.3048422422562513], [2.204395239724679, 2.204395239724679, 2.204395239724679]], rtol=1e-13)
    g_small, g_large = 0.18243084821501176, 0.0016675925925925927
    assert_close(quabla.grad(st.poisson.entropy)(jnp.asarray(3.0)), g_small, rtol=1e-12)
    assert_close(quabla.grad(st.poisson.entropy)(jnp.asarray(300.0)), g_large, rtol=1e-14)
