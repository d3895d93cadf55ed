"""``lax.reduce_xor``, ``index_take``, ``platform_dependent``, ``composite``, ``empty`` and
the aliases, against JAX 0.10.2's results on the same inputs (recorded by hand)."""

import numpy as np
import pytest

import quabla
import quabla.lax as lax
import quabla.numpy as qnp

from conftest import assert_close


def test_reduce_xor_as_jax():
    assert lax.reduce_xor(qnp.array([[1, 2, 4], [3, 3, 3]]), (1,)).tolist() == [7, 3]
    assert lax.reduce_xor(qnp.array([[1, 2, 4], [3, 3, 3]]), (0, 1)).tolist() == 4
    assert lax.reduce_xor(qnp.array([True, True, False]), (0,)).tolist() is False
    with pytest.raises(TypeError, match="integer or boolean"):
        lax.reduce_xor(qnp.ones(3), (0,))


def test_index_take_puts_index_dimensions_first():
    x = qnp.arange(24.0).reshape(2, 3, 4)
    out = lax.index_take(x, (qnp.array([1, 0]), qnp.array([3, 1])), (0, 2))
    assert_close(out, [[15.0, 19.0, 23.0], [1.0, 5.0, 9.0]], rtol=0)
    assert lax.index_take(x, (qnp.array([2, 0, 1]),), (1,)).shape == (3, 2, 4)
    assert_close(lax.index_take(x, (qnp.array([2, 0, 1]),), (1,))[0], np.asarray(x)[:, 2],
                 rtol=0)
    # Differentiable in src, as a gather.
    g = quabla.grad(lambda s: qnp.sum(lax.index_take(s, (qnp.array([1, 1]),), (0,))))(
        qnp.ones((2, 3)))
    assert_close(g, [[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]], rtol=0)
    with pytest.raises(ValueError, match="one index array per distinct axis"):
        lax.index_take(x, (qnp.array([0]),), (0, 1))


def test_platform_dependent_composite_empty_and_aliases():
    assert float(lax.platform_dependent(2.0, cpu=lambda v: v * 3, default=lambda v: v)) == 6.0
    assert float(lax.platform_dependent(2.0, tpu=lambda v: v * 3, default=lambda v: -v)) == -2.0
    with pytest.raises(NotImplementedError, match="no branch"):
        lax.platform_dependent(2.0, tpu=lambda v: v)
    op = lax.composite(lambda a, b: a * b + 1, "my.fma")
    assert float(op(2.0, 3.0)) == 7.0
    assert float(quabla.grad(op)(qnp.asarray(2.0), 3.0)) == 3.0
    e = lax.empty((2, 3), qnp.float32)
    assert e.shape == (2, 3) and e.dtype == np.float32
    assert lax.broadcast_shapes((2, 1), (3,)) == (2, 3)
    assert_close(lax.bessel_i0e(qnp.asarray(1.0)), 0.46575960759364043, rtol=1e-14)
    assert_close(lax.bessel_i1e(qnp.asarray(1.0)), 0.2079104153497085, rtol=1e-14)
    assert float(lax.nextafter(qnp.asarray(1.0), qnp.asarray(2.0))) == 1.0 + 2.0 ** -52


def test_approx_top_k_is_exact_as_jax_on_cpu():
    v, i = lax.approx_max_k(qnp.array([3.0, 1, 4, 1, 5, 9, 2, 6]), 3)
    assert v.tolist() == [9.0, 6.0, 5.0] and i.tolist() == [5, 7, 4]
    v, i = lax.approx_min_k(qnp.array([3.0, 1, 4, 1, 5, 9, 2, 6]), 2)
    assert v.tolist() == [1.0, 1.0] and i.tolist() == [1, 3]
    v, i = lax.approx_max_k(qnp.arange(12.0).reshape(3, 4) % 5, 2, reduction_dimension=0)
    assert v.tolist() == [[4.0, 4.0, 2.0, 3.0], [3.0, 1.0, 1.0, 2.0]]
    assert i.tolist() == [[1, 2, 0, 0], [2, 0, 1, 1]]


def test_bitwise_reductions_of_integers_as_jax():
    # JAX 0.10.2's values (lax.reduce_and / reduce_or / reduce_xor are bitwise on integers).
    x = qnp.array([[-7, 3, -1], [12, -10, 6]], dtype=qnp.int32)
    u = qnp.array([[0xFFFFFFFF, 0x80000001, 5], [8, 8, 0]], dtype=qnp.uint32)
    empty = qnp.zeros((2, 0), dtype=qnp.int32)
    expected = {
        "reduce_and": ([1, 4], [8, 2, 6], 0, [1, 0], [-1, -1]),
        "reduce_or": ([-1, -2], [-3, -9, -1], -1, [4294967295, 8], [0, 0]),
        "reduce_xor": ([5, -4], [-11, -11, -7], -7, [2147483643, 0], [0, 0]),
    }
    for name, (rows, cols, whole, unsigned, of_empty) in expected.items():
        f = getattr(lax, name)
        assert f(x, (1,)).tolist() == rows, name
        assert f(x, (0,)).tolist() == cols, name
        assert f(x, (0, 1)).tolist() == whole, name
        assert f(u, (1,)).tolist() == unsigned and f(u, (1,)).dtype == qnp.uint32, name
        assert f(empty, (1,)).tolist() == of_empty, name
        assert f(x, ()).tolist() == x.tolist(), name
        assert f(x, (1,)).dtype == qnp.int32


def test_logical_reductions_of_booleans():
    b = qnp.array([[True, False], [True, True]])
    assert lax.reduce_and(b, (1,)).tolist() == [False, True]
    assert lax.reduce_or(b, (0,)).tolist() == [True, True]
    assert lax.reduce_xor(b, (1,)).tolist() == [True, False]
    with pytest.raises(TypeError, match="integer or boolean"):
        lax.reduce_and(qnp.ones(3), (0,))
