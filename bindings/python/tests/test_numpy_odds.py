"""numpy names that round out ``quabla.numpy``, against numpy and JAX 0.10.2's results
recorded by hand: ``r_``/``c_``, ``angle``, ``bitwise_count``, ``kaiser``, ``einsum_path``,
printing, ``frombuffer``/``fromstring``, the scalar type names and ``euler_gamma``."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from conftest import assert_close


def test_r_and_c_as_numpy():
    # JAX: [1 2 3 0 7 8], [0 .25 .5 .75 1], [[1 3] [2 4]], [[1 2] [3 4]].
    assert_close(qnp.r_[1:4, 0, qnp.asarray([7, 8])], [1, 2, 3, 0, 7, 8], rtol=0)
    assert_close(qnp.r_[0:1:5j], [0, 0.25, 0.5, 0.75, 1], rtol=0)
    assert_close(qnp.c_[qnp.asarray([1, 2]), qnp.asarray([3, 4])], [[1, 3], [2, 4]], rtol=0)
    assert_close(qnp.r_["0,2", [1, 2], [3, 4]], [[1, 2], [3, 4]], rtol=0)
    a, b = np.arange(6.0).reshape(2, 3), np.ones((2, 3))
    for spec in ("1", "0,3", "-1,3,0", "0,3,1"):
        assert_close(qnp.r_[spec, a, b], np.r_[spec, a, b], rtol=0)
    assert_close(qnp.c_[a, b, np.array([7.0, 8.0])], np.c_[a, b, np.array([7.0, 8.0])], rtol=0)
    f = quabla.jit(lambda x: qnp.r_[x, 2 * x])
    assert_close(f(qnp.asarray([1.0, 2.0])), [1, 2, 2, 4], rtol=0)
    with pytest.raises(ValueError, match="matrix"):
        qnp.r_["r", [1, 2]]


def test_small_functions_as_numpy_and_jax():
    # JAX: angle [-1, 2, -0] = [pi, 0, pi]; bitwise_count [0, 7, -1, 255] = [0, 3, 1, 8].
    assert_close(qnp.angle(qnp.asarray([-1.0, 2.0, -0.0])), [np.pi, 0.0, np.pi], rtol=0)
    assert_close(qnp.angle(qnp.asarray([-1.0]), deg=True), [180.0], rtol=1e-15)
    ints = np.array([0, 7, -1, 255, -2 ** 31, 2 ** 31 - 1], np.int32)
    assert_close(qnp.bitwise_count(qnp.asarray(ints)), np.bitwise_count(ints), rtol=0)
    u = np.array([0, 2 ** 32 - 1, 12345], np.uint32)
    assert_close(qnp.bitwise_count(qnp.asarray(u)), np.bitwise_count(u), rtol=0)
    with pytest.raises(TypeError, match="integers"):
        qnp.bitwise_count(qnp.ones(2))
    for m, beta in ((5, 3.0), (12, 8.6), (1, 2.0)):
        assert_close(qnp.kaiser(m, beta), np.kaiser(m, beta), rtol=1e-13)
    path, text = qnp.einsum_path("ij,jk,kl->il", qnp.ones((2, 3)), qnp.ones((3, 4)),
                                 qnp.ones((4, 5)))
    want = np.einsum_path("ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)),
                          optimize="greedy")
    assert path == want[0][1:] and text == want[1]
    assert qnp.euler_gamma == pytest.approx(0.5772156649015329, rel=1e-16)


def test_printing_and_reading():
    x = qnp.asarray([[1.5, 2.0], [3.0, 4.0]])
    assert qnp.array_str(x) == np.array_str(np.asarray(x))
    assert qnp.array_repr(x) == repr(x)
    with qnp.printoptions(precision=2):
        assert str(qnp.asarray([1.23456])) == "[1.23]"
    assert qnp.get_printoptions()["precision"] == 8
    data = np.array([1, 2], np.int32).tobytes()
    assert_close(qnp.frombuffer(data, dtype=qnp.int32), [1, 2], rtol=0)
    assert_close(qnp.fromstring("1 2 3", dtype=float, sep=" "), [1.0, 2.0, 3.0], rtol=0)


def test_scalar_type_names_canonicalize():
    assert qnp.zeros(2, qnp.int64).dtype == np.int32
    assert qnp.zeros(2, qnp.float16).dtype == np.float32
    assert qnp.zeros(2, qnp.single).dtype == np.float32
    assert qnp.zeros(2, qnp.bool).dtype == np.bool_
    assert qnp.asarray([1, 2], dtype=qnp.uint8).dtype == np.uint32
