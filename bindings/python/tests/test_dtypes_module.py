"""``quabla.dtypes`` against JAX 0.10.2's ``jax.dtypes`` on the same calls (recorded by
hand), and ``quabla.numpy.i0``."""

import math

import numpy as np
import pytest

import quabla
import quabla.dtypes as qd
import quabla.numpy as qnp

from conftest import assert_close


# (arguments, JAX's result_type, JAX's weak-type flag), x64 on. Where JAX gives int64 a
# weak int is int32 here: Quabla has no int64 (the README's differences from JAX).
RESULT_TYPES = [
    ((np.int32, 1.0), "float64", True),
    ((np.float32, 1.0), "float32", False),
    ((1, 2.0), "float64", True),
    ((np.uint32, 1), "uint32", False),
    ((True,), "bool", False),
    ((np.int32, np.float64), "float64", False),
    ((1,), "int32", True),
    ((True, 1), "int32", True),
    ((np.bool_, 2), "int32", True),
]


@pytest.mark.parametrize("args,want,weak", RESULT_TYPES)
def test_result_type_promotes_weak_scalars_as_jax(args, want, weak):
    assert qd.result_type(*args) == np.dtype(want)
    assert qd.result_type(*args, return_weak_type_flag=True) == (np.dtype(want), weak)


def test_result_type_of_arrays_and_errors():
    assert qd.result_type(qnp.ones(2, dtype=qnp.int32), 2.5) == np.float64
    assert qd.result_type(qnp.ones(2, dtype=qnp.float32), 2) == np.float32
    with pytest.raises(TypeError, match="complex"):
        qd.result_type(1j)
    with pytest.raises(ValueError):
        qd.result_type()


def test_result_type_without_x64_gives_float32():
    quabla.config.update("jax_enable_x64", False)
    try:
        assert qd.result_type(np.int32, 1.0) == np.float32
        assert qd.canonicalize_dtype("float64") == np.float32
    finally:
        quabla.config.update("jax_enable_x64", True)


def test_canonicalize_itemsize_scalar_type_and_float0():
    assert qd.canonicalize_dtype("int64") == np.int32
    assert qd.canonicalize_dtype(np.float16) == np.float32
    assert qd.canonicalize_dtype("float64") == np.float64
    assert qd.itemsize_bits("float32") == 32 and qd.itemsize_bits(np.float64) == 64
    assert qd.itemsize_bits(np.bool_) == 8 and qd.itemsize_bits(qd.float0) == 0
    assert qd.scalar_type_of(1.5) is float and qd.scalar_type_of(qnp.arange(3)) is int
    assert qd.scalar_type_of(qnp.ones(2) > 0) is bool
    assert qd.float0 == np.dtype([("float0", np.void, 0)])
    assert qd.issubdtype(np.float32, np.floating)
    assert qd.finfo(np.float32).eps == np.finfo(np.float32).eps


def test_numpy_i0_is_the_bessel_function_with_its_derivative():
    # numpy.i0(1.0) and scipy.special.i1(1.0) (the derivative).
    assert_close(qnp.i0(qnp.asarray([0.0, 1.0])), [1.0, 1.2660658777520084], rtol=1e-15)
    assert_close(quabla.grad(qnp.i0)(qnp.asarray(1.0)), 0.5651591039924851, rtol=1e-14)
    assert math.isinf(float(qnp.i0(qnp.asarray(np.inf))))
