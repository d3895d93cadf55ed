"""The Array API namespace (2024.12): the dunders, the inspection object, and the names the
standard spells differently from numpy 1, checked against numpy 2 (which implements them)."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from conftest import assert_close


def test_arrays_name_their_namespace():
    x = qnp.arange(6.0)
    xp = x.__array_namespace__()
    assert xp is qnp and xp.__array_api_version__ == "2024.12"
    assert x.__array_namespace__(api_version="2023.12") is qnp
    with pytest.raises(ValueError, match="version"):
        x.__array_namespace__(api_version="2021.12")
    info = xp.__array_namespace_info__()
    assert info.default_dtypes()["integral"] == np.int32
    assert info.default_dtypes()["real floating"] == np.float64  # x64 on in this suite
    assert set(info.dtypes(kind="integral")) == {"int32", "uint32"}
    assert set(info.dtypes(kind="real floating")) == {"float32", "float64"}
    assert info.capabilities()["max dimensions"] == 64
    assert info.default_device() in info.devices()


def test_standard_names_match_numpy_2():
    a = np.arange(24.0).reshape(2, 3, 4) / 7 - 1
    b = np.linspace(-2, 2, 4)
    x, y = qnp.asarray(a), qnp.asarray(b)
    assert_close(qnp.astype(x, np.int32), np.astype(a, np.int32), rtol=0)
    assert_close(qnp.concat([x, x], axis=1), np.concat([a, a], axis=1), rtol=0)
    assert_close(qnp.concat([x, y[None, None, :]], axis=None),
                 np.concat([a, b[None, None, :]], axis=None), rtol=0)
    for got, want in zip(qnp.unstack(x, axis=2), np.unstack(a, axis=2)):
        assert_close(got, want, rtol=0)
    assert_close(qnp.matrix_transpose(x), np.matrix_transpose(a), rtol=0)
    assert_close(qnp.vecdot(x, y), np.vecdot(a, b), rtol=1e-15)
    assert_close(qnp.vecdot(x, x, axis=1), np.vecdot(a, a, axis=1), rtol=1e-15)
    assert_close(qnp.trunc(x), np.trunc(a), rtol=0)
    assert np.array_equal(np.signbit(np.asarray(qnp.trunc(qnp.array([-0.2])))), [True])
    i = np.array([-9, -1, 0, 7, 1 << 20], np.int32)
    s = np.array([0, 1, 2, 3, 4], np.int32)
    assert np.asarray(qnp.bitwise_left_shift(i, s)).tolist() == np.left_shift(i, s).tolist()
    assert np.asarray(qnp.bitwise_right_shift(i, s)).tolist() == np.right_shift(i, s).tolist()
    u, su = i.astype(np.uint32), s.astype(np.uint32)  # logical shifts for unsigned
    assert np.asarray(qnp.bitwise_right_shift(u, su)).tolist() == np.right_shift(u, su).tolist()
    assert np.asarray(qnp.bitwise_invert(i)).tolist() == np.invert(i).tolist()
    assert np.asarray(qnp.positive(x)).tolist() == a.tolist()
    assert np.asarray(qnp.imag(x)).tolist() == np.zeros_like(a).tolist()


def test_dtype_inspection_follows_the_standard():
    for d, kind, want in [(np.float32, "real floating", True), (np.int32, "integral", True),
                          (np.uint32, "signed integer", False), (np.bool_, "numeric", False),
                          (np.int32, ("bool", "numeric"), True), (np.float64, np.float64, True)]:
        assert qnp.isdtype(np.dtype(d), kind) == np.isdtype(np.dtype(d), kind) == want
    with pytest.raises(ValueError, match="kind"):
        qnp.isdtype(np.float32, "floating")
    # No cross-kind casts; bool only to bool; within a kind, what promotion allows.
    assert qnp.can_cast(np.float32, np.float64) and not qnp.can_cast(np.float64, np.float32)
    assert not qnp.can_cast(np.int32, np.float32) and not qnp.can_cast(np.bool_, np.int32)
    assert qnp.can_cast(qnp.ones(2), np.float64)
    with pytest.raises(ValueError, match="2 axes"):
        qnp.matrix_transpose(qnp.ones(3))
    assert float(quabla.jit(lambda v: qnp.vecdot(v, v))(qnp.ones(3))) == 3.0
