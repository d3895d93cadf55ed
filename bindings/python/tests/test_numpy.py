"""quabla.numpy against numpy: values, dtypes, shapes and errors."""

import numpy as np
import pytest

import quabla.numpy as qnp
from conftest import assert_close, x64_mode

rng = np.random.default_rng(0)
X64 = rng.uniform(0.1, 0.9, size=(3, 4))
X32 = X64.astype(np.float32)

UNARY = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
         "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "cbrt",
         "square", "abs", "sign", "floor", "ceil", "round", "isnan", "isinf", "isfinite"]


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("x", [X64, X32], ids=["f64", "f32"])
def test_unary_matches_numpy(name, x):
    got = getattr(qnp, name)(qnp.asarray(x))
    want = getattr(np, name)(x)
    assert got.dtype == want.dtype
    assert_close(got, want, rtol=2e-7 if x.dtype == np.float32 else 1e-15)


def test_arccosh_domain():
    x = np.array([1.0, 1.5, 10.0, 0.5])
    with np.errstate(invalid="ignore"):
        want = np.arccosh(x)  # NaN below 1
    assert_close(qnp.arccosh(qnp.asarray(x)), want, rtol=1e-15)


BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "arctan2",
          "hypot", "logaddexp", "fmod", "mod", "floor_divide"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_matches_numpy(name):
    a = rng.normal(size=(3, 1, 4))
    b = rng.normal(size=(2, 4)) + 0.5
    if name == "power":
        a = np.abs(a)
    got = getattr(qnp, name)(qnp.asarray(a), qnp.asarray(b))
    assert_close(got, getattr(np, name)(a, b), rtol=1e-13, atol=1e-15)


def test_integer_division_and_modulo_follow_python():
    a = np.array([7, -7, 7, -7], dtype=np.int32)
    b = np.array([2, 2, -2, -2], dtype=np.int32)
    qa, qb = qnp.asarray(a), qnp.asarray(b)
    assert (qa // qb).tolist() == (a // b).tolist()
    assert (qa % qb).tolist() == (a % b).tolist()
    assert qnp.fmod(qa, qb).tolist() == np.fmod(a, b).tolist()
    # true division of ints is the default float (float64 with x64 on, as here), as jnp
    assert (qa / qb).dtype == np.float64


@pytest.mark.x64_off
def test_weak_scalars_and_promotion():
    x32 = qnp.ones(3)
    assert (x32 * 2.0).dtype == np.float32
    assert (2.0 * x32).dtype == np.float32
    # numpy scalars are strong, but float64 is float32 with x64 off, as JAX
    assert (x32 + np.float64(1.0)).dtype == np.float32
    with x64_mode(True):
        assert (x32 + np.float64(1.0)).dtype == np.float64
    i = qnp.arange(3)
    assert i.dtype == np.int32
    assert (i * 2).dtype == np.int32
    assert (i * 2.0).dtype == np.float32
    assert (i + x32).dtype == np.float32
    assert (qnp.asarray(X64) + x32[:1]).dtype == np.float32
    with x64_mode(True):
        assert (qnp.asarray(X64) + x32[:1]).dtype == np.float64
    assert qnp.sqrt(i).dtype == np.float32
    assert qnp.mean(i).dtype == np.float32
    assert (1 - i).tolist() == [1, 0, -1]


def test_shape_mismatch_is_type_error():
    with pytest.raises(TypeError, match="broadcast"):
        qnp.ones(3) + qnp.ones(4)
    with pytest.raises(TypeError):
        qnp.ones((2, 3)) @ qnp.ones((2, 3))
    with pytest.raises(TypeError):
        qnp.ones(6).reshape(4, 2)


def test_where_clip_nan_to_num():
    x = np.array([-np.inf, -1.0, np.nan, 0.5, np.inf])
    q = qnp.asarray(x)
    assert_close(qnp.where(q > 0, q, -q), np.where(x > 0, x, -x))
    assert_close(qnp.where(q > 0, 1.0, q), np.where(x > 0, 1.0, x))
    assert_close(qnp.where(q > 0, q, 0.0), np.where(x > 0, x, 0.0))
    assert_close(qnp.clip(q, -0.5, 0.25), np.clip(x, -0.5, 0.25))
    assert_close(qnp.nan_to_num(q), np.nan_to_num(x))
    assert_close(qnp.nan_to_num(q, nan=1.0, posinf=2.0, neginf=-2.0),
                 np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "var", "std", "any",
                                  "all", "argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_match_numpy(name, axis, keepdims):
    x = rng.normal(size=(2, 3, 4))
    if name in ("any", "all"):
        x = x > 0
    if name in ("argmax", "argmin") and isinstance(axis, tuple):
        pytest.skip("numpy's argmax takes one axis")
    got = getattr(qnp, name)(qnp.asarray(x), axis=axis, keepdims=keepdims)
    want = getattr(np, name)(x, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    assert_close(got, want, rtol=1e-13)


def test_argmax_takes_first_nan_and_first_tie():
    x = np.array([1.0, 3.0, 3.0, np.nan, np.nan])
    assert int(qnp.argmax(qnp.asarray(x))) == np.argmax(x) == 3
    assert int(qnp.argmax(qnp.asarray(x[:3]))) == 1
    assert int(qnp.argmin(qnp.asarray(np.array([2, 0, 0], np.int32)))) == 1


def test_sum_of_bools_and_var_ddof():
    b = qnp.asarray(np.array([True, False, True]))
    assert qnp.sum(b).dtype == np.int32 and int(qnp.sum(b)) == 2
    assert_close(qnp.var(qnp.asarray(X64), axis=0, ddof=1), np.var(X64, axis=0, ddof=1))
    assert_close(qnp.cumsum(qnp.asarray(X64), axis=1), np.cumsum(X64, axis=1))
    assert_close(qnp.cumprod(qnp.asarray(X64)), np.cumprod(X64))


def test_shape_functions_match_numpy():
    x = rng.normal(size=(2, 3, 4))
    q = qnp.asarray(x)
    cases = [
        (qnp.reshape(q, (4, 6)), x.reshape(4, 6)),
        (qnp.transpose(q), x.T),
        (qnp.transpose(q, (1, 0, 2)), x.transpose(1, 0, 2)),
        (qnp.swapaxes(q, 0, 2), np.swapaxes(x, 0, 2)),
        (qnp.moveaxis(q, 0, -1), np.moveaxis(x, 0, -1)),
        (qnp.moveaxis(q, (0, 1), (2, 0)), np.moveaxis(x, (0, 1), (2, 0))),
        (qnp.expand_dims(q, (0, 3)), np.expand_dims(x, (0, 3))),
        (qnp.squeeze(qnp.asarray(x[:, :1])), np.squeeze(x[:, :1])),
        (qnp.concatenate([q, q], axis=1), np.concatenate([x, x], axis=1)),
        (qnp.concatenate([q, q], axis=None), np.concatenate([x, x], axis=None)),
        (qnp.stack([q, q], axis=-1), np.stack([x, x], axis=-1)),
        (qnp.flip(q, 1), np.flip(x, 1)),
        (qnp.flip(q), np.flip(x)),
        (qnp.roll(q, 2, axis=2), np.roll(x, 2, axis=2)),
        (qnp.roll(q, -3), np.roll(x, -3)),
        (qnp.pad(q, ((0, 1), (2, 0), (1, 1))), np.pad(x, ((0, 1), (2, 0), (1, 1)))),
        (qnp.pad(q, 2, mode="edge"), np.pad(x, 2, mode="edge")),
        (qnp.pad(q, 2, mode="reflect"), np.pad(x, 2, mode="reflect")),
        (qnp.pad(q, 1, mode="wrap"), np.pad(x, 1, mode="wrap")),
        (qnp.tile(q, (2, 1, 2)), np.tile(x, (2, 1, 2))),
        (qnp.tile(qnp.asarray(x[0, 0]), 3), np.tile(x[0, 0], 3)),
        (qnp.repeat(q, 2, axis=1), np.repeat(x, 2, axis=1)),
        (qnp.repeat(q, 2), np.repeat(x, 2)),
        (qnp.ravel(q), x.ravel()),
        (qnp.broadcast_to(qnp.asarray(x[0]), (5, 3, 4)), np.broadcast_to(x[0], (5, 3, 4))),
        (qnp.diagonal(q, 1, 1, 2), np.diagonal(x, 1, 1, 2)),
        (qnp.trace(qnp.asarray(x[0]), -1), np.trace(x[0], -1)),
        (qnp.tril(q), np.tril(x)),
        (qnp.triu(q, 1), np.triu(x, 1)),
        (qnp.diag(qnp.asarray(x[0, 0])), np.diag(x[0, 0])),
        (qnp.diag(qnp.asarray(x[0, 0]), -1), np.diag(x[0, 0], -1)),
        (qnp.diag(qnp.asarray(x[0])), np.diag(x[0])),
        (qnp.split(q, 2, axis=2)[1], np.split(x, 2, axis=2)[1]),
        (qnp.hstack([q, q]), np.hstack([x, x])),
        (qnp.vstack([q[0], q[1]]), np.vstack([x[0], x[1]])),
    ]
    for i, (got, want) in enumerate(cases):
        assert got.shape == want.shape, i
        assert_close(got, want, rtol=1e-15)


def test_products_match_numpy():
    a = rng.normal(size=(2, 3, 4))
    b = rng.normal(size=(4, 5))
    v = rng.normal(size=4)
    qa, qb, qv = qnp.asarray(a), qnp.asarray(b), qnp.asarray(v)
    assert_close(qa @ qb, a @ b, rtol=1e-13)
    assert_close(qnp.matmul(qv, qb), v @ b, rtol=1e-13)
    assert_close(qnp.matmul(qa, qv), a @ v, rtol=1e-13)
    batch = rng.normal(size=(1, 4, 2))
    assert_close(qnp.matmul(qa, qnp.asarray(batch)), np.matmul(a, batch), rtol=1e-13)
    assert_close(qnp.dot(qv, qv), v @ v, rtol=1e-13)
    assert_close(qnp.dot(qa, qb), np.dot(a, b), rtol=1e-13)
    assert_close(qnp.tensordot(qa, qnp.asarray(a), axes=([1, 2], [1, 2])),
                 np.tensordot(a, a, axes=([1, 2], [1, 2])), rtol=1e-13)
    assert_close(qnp.outer(qv, qv), np.outer(v, v), rtol=1e-15)
    m = rng.normal(size=(2, 3))
    assert_close(qnp.kron(qnp.asarray(m), qb), np.kron(m, b), rtol=1e-15)
    u, w = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    assert_close(qnp.cross(qnp.asarray(u), qnp.asarray(w)), np.cross(u, w), rtol=1e-13)
    assert_close(qnp.inner(qv, qv), np.inner(v, v), rtol=1e-13)


@pytest.mark.parametrize("spec,shapes", [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("ij->", [(2, 3)]),
    ("ij->ji", [(2, 3)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 2)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 1)]),
])
def test_einsum_matches_numpy(spec, shapes):
    ops = [rng.normal(size=s) for s in shapes]
    got = qnp.einsum(spec, *[qnp.asarray(o) for o in ops])
    assert_close(got, np.einsum(spec, *ops), rtol=1e-12, atol=1e-14)


def test_misc_functions_match_numpy():
    x = np.sort(rng.uniform(0, 1, 10))
    y = np.sin(x)
    assert_close(qnp.diff(qnp.asarray(y)), np.diff(y))
    assert_close(qnp.diff(qnp.asarray(y), n=2, prepend=0.0), np.diff(y, n=2, prepend=0.0))
    assert_close(qnp.trapezoid(qnp.asarray(y), qnp.asarray(x)), np.trapezoid(y, x), rtol=1e-14)
    assert_close(qnp.trapezoid(qnp.asarray(y), dx=0.5), np.trapezoid(y, dx=0.5), rtol=1e-14)
    q = np.array([-1.0, 0.0, 0.3, x[3], 0.99, 2.0])
    assert_close(qnp.interp(qnp.asarray(q), qnp.asarray(x), qnp.asarray(y)),
                 np.interp(q, x, y), rtol=1e-14)
    assert_close(qnp.interp(qnp.asarray(q), qnp.asarray(x), qnp.asarray(y), left=-5.0,
                            right=5.0), np.interp(q, x, y, left=-5.0, right=5.0), rtol=1e-14)
    p = np.array([2.0, -1.0, 0.5])
    assert_close(qnp.polyval(qnp.asarray(p), qnp.asarray(x)), np.polyval(p, x), rtol=1e-14)
    gx, gy = qnp.meshgrid(qnp.asarray(x[:3]), qnp.asarray(x[:2]))
    ex, ey = np.meshgrid(x[:3], x[:2])
    assert_close(gx, ex)
    assert_close(gy, ey)
    m = np.array([[0, 1, 0], [2, 0, 3]], dtype=np.int32)
    for g, w in zip(qnp.nonzero(qnp.asarray(m)), np.nonzero(m)):
        assert g.tolist() == w.tolist()
    for g, w in zip(qnp.nonzero(qnp.asarray(m), size=4, fill_value=-1),
                    [np.array([0, 1, 1, -1]), np.array([1, 0, 2, -1])]):
        assert g.tolist() == w.tolist()


@pytest.mark.x64_off
def test_creation_functions():
    assert qnp.zeros((2, 3)).dtype == np.float32
    with x64_mode(True):
        assert qnp.zeros(3, np.float64).dtype == np.float64
        assert_close(qnp.linspace(0, 1, 4, endpoint=False, dtype=np.float64),
                     np.linspace(0, 1, 4, endpoint=False))
        assert qnp.asarray(np.arange(3.0)).dtype == np.float64
    assert_close(qnp.linspace(0, 1, 5), np.linspace(0, 1, 5, dtype=np.float32))
    assert_close(qnp.arange(1, 7, 2), np.arange(1, 7, 2))
    assert_close(qnp.arange(0.0, 1.0, 0.25), np.arange(0.0, 1.0, 0.25))
    assert_close(qnp.eye(3, 4, 1), np.eye(3, 4, 1))
    assert_close(qnp.full((2,), 7, np.int32), np.full((2,), 7))
    assert qnp.full_like(qnp.ones(2), 3).dtype == np.float32
    assert qnp.asarray(np.arange(3)).dtype == np.int32  # int64 narrowed
    assert qnp.asarray(np.arange(3.0)).dtype == np.float32  # x64 off, as JAX
    assert qnp.asarray([1.0, 2.0]).dtype == np.float32
    with pytest.raises(OverflowError, match="int32"):
        qnp.asarray(np.array([2**40]))
    with pytest.raises(TypeError, match="complex"):
        qnp.asarray(np.array([1j]))


INDEXES = [
    1, -1, (1, 2), (slice(None), 1), (slice(1, None), slice(None, None, 2)),
    (slice(None, None, -1),), (slice(4, 0, -2), Ellipsis), (Ellipsis, -1), (None, 1),
    (slice(None), None, 2), (Ellipsis, None), (0, Ellipsis, slice(1, 3)),
    ([0, 2],), ([0, 2], [1, 3]), (slice(None), [3, 0, 0]), ([[0], [1]], [1, 2]),
    (1, slice(None), [0, 1]), ([0, -1], slice(None), 1), (np.array([True, False, True, False, True]),),
    (slice(0, 0),), (slice(10, 20),),
]


@pytest.mark.parametrize("idx", INDEXES, ids=[repr(i) for i in INDEXES])
def test_indexing_matches_numpy(idx):
    x = np.arange(5 * 4 * 3, dtype=np.float64).reshape(5, 4, 3)
    got = qnp.asarray(x)[idx]
    want = x[idx]
    assert got.shape == want.shape
    assert_close(got, want)


def test_index_errors():
    x = qnp.arange(6.0).reshape(2, 3)
    # An out-of-range read clamps, as JAX's (tests/test_jax_semantics.py has the modes).
    assert x[2].tolist() == x[1].tolist()
    with pytest.raises(IndexError, match="too many"):
        x[0, 0, 0]
    with pytest.raises(TypeError, match="immutable"):
        x[0] = 1.0


UPDATES = [(1,), (slice(None), 1), ([0, 2],), (slice(None, None, -2), [1]), (Ellipsis, 0)]


@pytest.mark.parametrize("idx", UPDATES, ids=[repr(i) for i in UPDATES])
@pytest.mark.parametrize("op", ["set", "add", "mul", "min", "max"])
def test_at_updates_match_numpy(idx, op):
    x = rng.normal(size=(4, 3))
    want = x.copy()
    vals = rng.normal(size=want[idx].shape)
    if op == "set":
        want[idx] = vals
    elif op == "add":
        want[idx] += vals
    elif op == "mul":
        want[idx] *= vals
    elif op == "min":
        want[idx] = np.minimum(want[idx], vals)
    else:
        want[idx] = np.maximum(want[idx], vals)
    got = getattr(qnp.asarray(x).at[idx], op)(qnp.asarray(vals))
    assert_close(got, want, rtol=1e-15)


def test_at_add_accumulates_duplicates():
    got = qnp.zeros(3).at[qnp.asarray([0, 0, 2])].add(1.0)
    want = np.zeros(3)
    np.add.at(want, [0, 0, 2], 1.0)
    assert_close(got, want)


def test_array_protocols():
    x = qnp.asarray(np.array([[1.5, 2.0]]))
    assert np.asarray(x).dtype == np.float64
    assert x.tolist() == [[1.5, 2.0]]
    assert float(x[0, 0]) == 1.5
    assert len(x) == 1 and [r.shape for r in x] == [(2,)]
    assert "Array([[1.5, 2. ]], dtype=float64)" == repr(x)
    assert x.T.shape == (2, 1)
    assert_close(x.sum(axis=1), [3.5])
    assert_close(-x, [[-1.5, -2.0]])
    assert (~qnp.asarray(np.array([True, False]))).tolist() == [False, True]
    assert (qnp.asarray(np.array([5], np.int32)) >> 1).tolist() == [2]
    # Shifts with the array on the right (JAX's `1 << jnp.arange(3)`), signed and unsigned.
    k = qnp.arange(3)
    assert (1 << k).tolist() == [1, 2, 4] and (-64 >> k).tolist() == [-64, -32, -16]
    assert (np.uint32(0x80000000) >> k.astype(qnp.uint32)).tolist() == [2**31, 2**30, 2**29]
    import pickle
    assert pickle.loads(pickle.dumps(x)).tolist() == x.tolist()


def test_dlpack_round_trip():
    x = qnp.asarray(np.arange(6.0).reshape(2, 3))
    n = np.from_dlpack(x)
    assert n.dtype == np.float64 and n.tolist() == x.tolist()
    assert x.__dlpack_device__() == (1, 0)
    back = qnp.from_dlpack(np.arange(4, dtype=np.int32))
    assert back.dtype == np.int32 and back.tolist() == [0, 1, 2, 3]


def test_dlpack_hands_a_dlpack1_consumer_the_arrays_own_memory_read_only():
    x = qnp.asarray(np.arange(6.0).reshape(2, 3))
    a, b = np.from_dlpack(x), np.from_dlpack(x)
    # Both are views of the CPU plugin's buffer: one address, nothing copied.
    assert a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    assert not a.flags.writeable
    assert a.tolist() == x.tolist()
    del x
    import gc
    gc.collect()
    assert a.sum() == 15.0  # the consumer keeps the memory alive
    for dt in (np.float32, np.int32, np.uint32, np.bool_):
        v = (np.arange(5) % 3).astype(dt)
        got = np.from_dlpack(qnp.asarray(v))
        assert got.dtype == v.dtype and np.array_equal(got, v)
    # Asked for a copy, a consumer gets a writable one; no copy at all cannot be promised to
    # a consumer of DLPack before 1.0, which cannot be told the memory is read-only.
    y = qnp.ones(3)
    assert np.from_dlpack(y, copy=True).flags.writeable
    with pytest.raises(BufferError):
        y.__dlpack__(copy=False)
