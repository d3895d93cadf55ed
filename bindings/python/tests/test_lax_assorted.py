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


def _reduce_precision_bits(x, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision written on the bits in numpy (round the mantissa at its last
    kept bit, ties to even; then exponents past the format's range to inf, below its least
    normal to zero; NaN kept): the reference. On 200,000 random bit patterns of each dtype and
    the edge values below it gave JAX 0.10.2's bits for every (exponent, mantissa) pair tested
    here."""
    f, u = (np.float32, np.uint32) if x.dtype == np.float32 else (np.float64, np.uint64)
    nbits, src_m = (32, 23) if f is np.float32 else (64, 52)
    src_e, one = nbits - 1 - src_m, u(1)
    b = x.view(u).copy()
    if mantissa_bits < src_m:
        shift = u(src_m - mantissa_bits)
        last = one << shift
        b = (b + ((b & last) >> shift) + ((last >> one) - one)) & ~(last - one)
    if exponent_bits < src_e:
        exp_mask = ((one << u(src_e)) - one) << u(src_m)
        ebias, rbias = (1 << (src_e - 1)) - 1, (1 << (exponent_bits - 1)) - 1
        e, signed_zero = b & exp_mask, b & (one << u(nbits - 1))
        b = np.where(e > (u(ebias + rbias) << u(src_m)), signed_zero | exp_mask,
                     np.where(e <= (u(ebias - rbias) << u(src_m)), signed_zero, b))
    return np.where(np.isnan(x), x, b.view(f))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_reduce_precision_gives_xlas_bits(dtype):
    rng = np.random.default_rng(7)
    u = np.uint32 if dtype == np.float32 else np.uint64
    bits = rng.integers(0, np.iinfo(u).max, size=4000, dtype=u, endpoint=True)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 1.5, 2.5, 0.1, 65504.0, 65520.0,
             1.00390625, 1.005859375, -1.0039, 3.3e38, 1e-40, 1e-45, 6e-8, 1e-5, 2.0 ** -14,
             2.0 ** -15, 2.0 ** -126, 2.0 ** -127]
    x = np.concatenate([bits.view(dtype), np.array(edges, dtype)])
    for e, m in [(5, 10), (8, 7), (8, 0), (2, 1), (4, 3), (5, 2), (3, 0), (8, 23), (11, 52),
                 (11, 10), (1, 0)]:
        full = (8, 23) if dtype == np.float32 else (11, 52)
        if e > full[0] or m > full[1]:
            continue
        got = np.asarray(lax.reduce_precision(qnp.asarray(x), e, m))
        want = _reduce_precision_bits(x, e, m)
        same = (got.view(u) == want.view(u)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (e, m, x[~same][:5], got[~same][:5], want[~same][:5])
        assert got.dtype == dtype


def test_reduce_precision_refuses_what_has_no_format():
    with pytest.raises(TypeError, match="float"):
        lax.reduce_precision(qnp.arange(3), 5, 10)
    with pytest.raises(ValueError, match="exponent_bits"):
        lax.reduce_precision(qnp.ones(3), 0, 10)


def test_dot_general_batches_contracts_and_takes_jaxs_keywords():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4))
    dn = (((2,), (2,)), ((0,), (0,)))
    assert_close(lax.dot_general(qnp.asarray(a), qnp.asarray(b), dn),
                 np.einsum("bik,bjk->bij", a, b))
    out = lax.dot_general(qnp.asarray(a), qnp.asarray(b), dn, precision=lax.Precision.HIGHEST,
                          preferred_element_type=qnp.float32)
    assert out.dtype == qnp.float32 and out.shape == (2, 3, 5)


def test_bitcast_convert_type_between_32_bit_dtypes():
    x = np.array([1.0, -0.0, np.inf, np.nan, -2.5e-40], np.float32)
    u = lax.bitcast_convert_type(qnp.asarray(x), qnp.uint32)
    assert u.dtype == qnp.uint32 and u.tolist() == x.view(np.uint32).tolist()
    i = lax.bitcast_convert_type(u, qnp.int32)
    assert i.tolist() == x.view(np.int32).tolist()
    back = np.asarray(lax.bitcast_convert_type(i, qnp.float32))
    assert (back.view(np.uint32) == x.view(np.uint32)).all()
    assert lax.bitcast_convert_type(qnp.asarray(x), qnp.float32).dtype == qnp.float32
    with pytest.raises(TypeError, match="float32, int32 and uint32"):
        lax.bitcast_convert_type(qnp.ones(2, dtype=qnp.float64), qnp.uint32)


def test_mulhi_as_jax():
    # jax.lax.mulhi on these operands (JAX 0.10.2).
    a = np.array([3, -7, 2**31 - 1, -2**31, 123456789, -1], np.int32)
    b = np.array([5, 9, 2**31 - 1, -2**31, -987654321, -1], np.int32)
    got = lax.mulhi(qnp.asarray(a), qnp.asarray(b))
    assert got.dtype == qnp.int32
    assert got.tolist() == [0, -1, 1073741823, 1073741824, -28389653, 0]
    got = lax.mulhi(qnp.asarray(a.astype(np.uint32)), qnp.asarray(b.astype(np.uint32)))
    assert got.tolist() == [0, 8, 1073741823, 1073741824, 95067136, 4294967294]
    # Against the 64-bit products numpy computes, on random operands.
    rng = np.random.default_rng(2)
    x, y = (rng.integers(-2**31, 2**31, 500).astype(np.int32) for _ in range(2))
    want = ((x.astype(np.int64) * y.astype(np.int64)) >> 32).astype(np.int32)
    assert (np.asarray(lax.mulhi(qnp.asarray(x), qnp.asarray(y))) == want).all()
    xu, yu = x.view(np.uint32), y.view(np.uint32)
    want_u = ((xu.astype(np.uint64) * yu.astype(np.uint64)) >> np.uint64(32)).astype(np.uint32)
    assert (np.asarray(lax.mulhi(qnp.asarray(xu), qnp.asarray(yu))) == want_u).all()
    with pytest.raises(TypeError, match="int32 or two uint32"):
        lax.mulhi(qnp.ones(2), qnp.ones(2))
