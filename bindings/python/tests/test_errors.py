"""``quabla.errors`` as ``jax.errors``: each conversion of a traced array raises JAX's
specific error, still a ``ConcretizationTypeError``; and ``quabla.typing``'s names."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import errors


def test_each_conversion_raises_its_own_error():
    cases = [
        (lambda x: x if x > 0 else -x, errors.TracerBoolConversionError, qnp.float32(1.0)),
        (lambda x: qnp.ones(int(x)), errors.TracerIntegerConversionError, qnp.int32(3)),
        (lambda x: [1, 2, 3][x], errors.TracerIntegerConversionError, qnp.int32(1)),
        (lambda x: np.asarray(x), errors.TracerArrayConversionError, qnp.float32(3.0)),
    ]
    for f, error, arg in cases:
        with pytest.raises(error, match="traced array"):
            quabla.jit(f)(arg)
        with pytest.raises(quabla.ConcretizationTypeError):
            quabla.jit(f)(arg)
    with pytest.raises(errors.ConcretizationTypeError, match="float"):
        quabla.jit(lambda x: float(x))(qnp.float32(1.0))


def test_outside_jit_the_values_are_known():
    # grad sees concrete primal values, as JAX's does: no error.
    assert float(quabla.grad(lambda x: x ** 2 if x > 0 else -x)(2.0)) == 4.0


def test_runtime_error_and_typing_names():
    assert errors.JaxRuntimeError is quabla.BackendError
    from quabla.typing import ArrayLike, DTypeLike

    def f(x: ArrayLike, dtype: DTypeLike = "float32") -> ArrayLike:
        return qnp.asarray(x, dtype=dtype)

    assert f([1, 2]).dtype == qnp.float32
    assert "Array" in str(ArrayLike) and "dtype" in str(DTypeLike)


def test_traced_arrays_at_a_custom_vjps_nondiff_arguments_are_refused():
    import functools

    @functools.partial(quabla.custom_vjp, nondiff_argnums=(1,))
    def g(x, s):
        return x * s

    g.defvjp(lambda x, s: (g(x, s), None), lambda s, r, ct: (ct * s,))
    with pytest.raises(errors.UnexpectedTracerError, match="nondiff_argnums"):
        quabla.jit(quabla.grad(lambda x, s: g(x, s), argnums=(0, 1)))(2.0, 3.0)
    # A concrete value there is fine (JAX's fixed-point pattern passes functions).
    assert float(quabla.grad(lambda x: g(x, 3.0))(2.0)) == 3.0
