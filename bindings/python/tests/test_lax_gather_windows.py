"""``lax.gather``/``scatter_add`` with dimension numbers and ``lax.reduce_window``/``reduce``:
values against numpy loops written here, and JAX 0.10.2's conventions recorded by hand
(x64 on): ``gather`` clamps by default and fills with NaN / the least int / True under
``mode="fill"``; ``scatter_add`` drops out-of-bounds windows by default and clamps them with
``"clip"``; ``reduce_window`` folds ``init_value`` in once per window, and the derivative of
a window's maximum goes to its first maximum in row-major order."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax
from quabla.test_util import check_grads
from conftest import assert_close

POINT = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                   start_index_map=(0,))
ADD_AT = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))


def test_gather_modes_as_jax():
    x = qnp.arange(10.0)
    idx = qnp.array([[2], [9], [12], [-1]])
    # JAX: [2, 9, 9, 0] by default and with "clip"; NaN / 7 / int min / True with "fill".
    assert_close(lax.gather(x, idx, POINT, (1,)), [2.0, 9.0, 9.0, 0.0], rtol=0)
    assert_close(lax.gather(x, idx, POINT, (1,), mode="clip"), [2.0, 9.0, 9.0, 0.0], rtol=0)
    assert_close(lax.gather(x, idx, POINT, (1,), mode="fill"), [2.0, 9.0, np.nan, np.nan],
                 rtol=0)
    assert_close(lax.gather(x, idx, POINT, (1,), mode="fill", fill_value=7),
                 [2.0, 9.0, 7.0, 7.0], rtol=0)
    ints = lax.gather(qnp.arange(10), idx, POINT, (1,), mode=lax.GatherScatterMode.FILL_OR_DROP)
    assert np.asarray(ints).tolist() == [2, 9, np.iinfo(np.int32).min, np.iinfo(np.int32).min]
    assert np.asarray(lax.gather(qnp.ones(10, bool), idx, POINT, (1,), mode="fill")).all()
    # A window of 3: a start past 7 does not fit in 10, so the whole slice is filled.
    window = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(),
                                        start_index_map=(0,))
    got = lax.gather(x, qnp.array([[2], [8], [7]]), window, (3,), mode="fill")
    assert_close(got, [[2, 3, 4], [np.nan] * 3, [7, 8, 9]], rtol=0)
    assert_close(lax.gather(x, qnp.array([[2], [8]]), window, (3,)), [[2, 3, 4], [7, 8, 9]],
                 rtol=0)


def test_gather_of_rows_columns_and_batching_dims_against_numpy():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 5, 3))
    # Rows a[i, :, :] picked by i, as x[idx] is.
    rows = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))
    idx = np.array([[3], [0], [3]])
    assert_close(lax.gather(a, idx, rows, (1, 5, 3)), a[idx[:, 0]], rtol=0)
    # 2x2 windows at (row, col) starts of the first two axes, the last kept whole.
    win = lax.GatherDimensionNumbers(offset_dims=(1, 2, 3), collapsed_slice_dims=(),
                                     start_index_map=(0, 1))
    starts = np.array([[0, 1], [2, 3]])
    want = np.stack([a[r:r + 2, c:c + 2] for r, c in starts])
    assert_close(lax.gather(a, starts, win, (2, 2, 3)), want, rtol=0)
    # Batching: out[i, j] = a[i, idx[i, j], 0] (take_along_axis on the second axis).
    batched = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1, 2),
                                         start_index_map=(1, 2), operand_batching_dims=(0,),
                                         start_indices_batching_dims=(0,))
    j = rng.integers(0, 5, size=(4, 6))
    bidx = np.stack([j, np.zeros_like(j)], axis=-1)
    assert_close(lax.gather(a, bidx, batched, (1, 1, 1)),
                 np.take_along_axis(a[:, :, 0], j, axis=1), rtol=0)


def test_gather_and_scatter_add_derivatives():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(6, 4))
    rows = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                      start_index_map=(0,))
    idx = qnp.array([[1], [5], [1]])
    check_grads(lambda x: lax.gather(x, idx, rows, (1, 4)) ** 2, (a,), order=2)
    upd = rng.normal(size=(3, 4))
    add_rows = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))
    check_grads(lambda x, u: lax.scatter_add(x, idx, u, add_rows) ** 2, (a, upd), order=2)


def test_scatter_add_modes_windows_and_batching():
    upd = qnp.array([1.0, 2.0, 3.0, 4.0])
    idx = qnp.array([[1], [1], [7], [-1]])
    # JAX: repeated indices add; out-of-bounds dropped ([0, 3, 0, 0, 0]) or clamped.
    assert_close(lax.scatter_add(qnp.zeros(5), idx, upd, ADD_AT), [0, 3, 0, 0, 0], rtol=0)
    assert_close(lax.scatter_add(qnp.zeros(5), idx, upd, ADD_AT, mode="clip"),
                 [4, 3, 0, 0, 3], rtol=0)
    # Windows of 2 along the second axis of a 3x5 operand, at (row, col) starts.
    rng = np.random.default_rng(2)
    base = rng.normal(size=(3, 5))
    u = rng.normal(size=(3, 2))
    starts = np.array([[0, 0], [2, 3], [0, 4]])  # the last window does not fit
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0, 1))
    want = base.copy()
    for (r, c), w in zip(starts[:2], u[:2]):
        want[r, c:c + 2] += w
    assert_close(lax.scatter_add(base, starts, u, dn), want, rtol=1e-15)
    clipped = want.copy()
    clipped[0, 3:5] += u[2]
    assert_close(lax.scatter_add(base, starts, u, dn, mode="clip"), clipped, rtol=1e-15)
    # Batching: out[i, idx[i, j]] += u[i, j].
    bdn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(1,),
                                      scatter_dims_to_operand_dims=(1,),
                                      operand_batching_dims=(0,),
                                      scatter_indices_batching_dims=(0,))
    j = rng.integers(0, 5, size=(3, 4))
    v = rng.normal(size=(3, 4))
    want = base.copy()
    for i in range(3):
        np.add.at(want[i], j[i], v[i])
    assert_close(lax.scatter_add(base, j[..., None], v, bdn), want, rtol=1e-15)


def _windows(x, init, op, window, strides, pads, base=None, wdil=None):
    """reduce_window by loops over a dilated, padded numpy array."""
    base = base or (1,) * x.ndim
    wdil = wdil or (1,) * x.ndim
    shape = [(n - 1) * b + 1 for n, b in zip(x.shape, base)]
    d = np.full(shape, init, dtype=x.dtype)
    d[tuple(slice(None, None, b) for b in base)] = x
    d = np.pad(d, pads, constant_values=init)
    span = [(w - 1) * q + 1 for w, q in zip(window, wdil)]
    out_shape = [(p - s) // st + 1 for p, s, st in zip(d.shape, span, strides)]
    out = np.empty(out_shape, dtype=x.dtype)
    for pos in np.ndindex(*out_shape):
        sl = tuple(slice(p * st, p * st + s, q) for p, st, s, q in zip(pos, strides, span, wdil))
        out[pos] = op.reduce(np.append(d[sl].ravel(), init))
    return out


@pytest.mark.parametrize("op,qop,init", [(np.add, lax.add, 0.0), (np.maximum, lax.max, -np.inf),
                                         (np.minimum, lax.min, np.inf),
                                         (np.multiply, lax.mul, 1.0)])
def test_reduce_window_against_loops(op, qop, init):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(5, 6))
    cases = [((2, 2), (2, 2), "VALID", None, None), ((3, 3), (1, 1), "SAME", None, None),
             ((2, 3), (1, 2), ((1, 0), (0, 2)), None, None),
             ((2, 2), (1, 1), "VALID", (1, 2), (2, 1)), ((2, 2), (2, 1), "SAME_LOWER", None, None)]
    for window, strides, padding, base, wdil in cases:
        got = lax.reduce_window(a, init, qop, window, strides, padding, base, wdil)
        dilated = [(n - 1) * b + 1 for n, b in zip(a.shape, base or (1, 1))]
        span = [(w - 1) * q + 1 for w, q in zip(window, wdil or (1, 1))]
        pads = (lax.padtype_to_pads(dilated, span, strides, padding)
                if isinstance(padding, str) else padding)
        want = _windows(a, init, op, window, strides, pads, base, wdil)
        assert_close(got, want, rtol=1e-13)


def test_reduce_window_as_jax_records_it():
    a = qnp.arange(16.0).reshape(4, 4)
    # JAX 0.10.2's results for these calls.
    assert_close(lax.reduce_window(a, 0.0, lax.add, (3, 3), (1, 1), "SAME"),
                 [[10, 18, 24, 18], [27, 45, 54, 39], [51, 81, 90, 63], [42, 66, 72, 50]],
                 rtol=0)
    assert_close(lax.reduce_window(a, 1.0, lax.add, (2, 2), (2, 2), "VALID"),
                 [[11, 19], [43, 51]], rtol=0)
    assert_close(lax.reduce_window(a, 0.0, lax.add, (2, 2), (1, 1), "VALID",
                                   base_dilation=(1, 2), window_dilation=(2, 1)),
                 [[8, 10, 10, 12, 12, 14], [16, 18, 18, 20, 20, 22]], rtol=0)
    ints = lax.reduce_window(qnp.arange(16).reshape(4, 4), 0, lax.add, (2, 2), (2, 2), "VALID")
    assert np.asarray(ints).tolist() == [[10, 18], [42, 50]]
    # A lambda that adds is recognised as addition.
    assert_close(lax.reduce_window(a, 0.0, lambda u, v: u + v, (2, 2), (2, 2), "VALID"),
                 [[10, 18], [42, 50]], rtol=0)
    # Max pooling's derivative goes to each window's first maximum (JAX: not split at ties).
    t = qnp.array([[1.0, 3.0, 3.0, 2.0], [0.0, 3.0, 1.0, 1.0]])
    g = quabla.grad(lambda t: lax.reduce_window(t, -np.inf, lax.max, (2, 2), (2, 2),
                                                "VALID").sum())(t)
    assert_close(g, [[0, 1, 1, 0], [0, 0, 0, 0]], rtol=0)
    # NaN propagates through max as through lax.max.
    n = lax.reduce_window(qnp.array([1.0, np.nan, 2.0, 0.0]), -np.inf, lax.max, (2,), (2,),
                          "VALID")
    assert_close(n, [np.nan, 2.0], rtol=0)


def test_reduce_window_derivatives_jit_and_vmap():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(5, 6))
    for qop, init in ((lax.add, 0.0), (lax.max, -np.inf), (lax.mul, 1.0)):
        f = lambda x, qop=qop, init=init: lax.reduce_window(  # noqa: E731
            x, init, qop, (2, 3), (1, 2), "SAME")
        check_grads(f, (a,), order=2)
        assert_close(quabla.jit(f)(a), f(a), rtol=0)
        stack = rng.normal(size=(3, 5, 6))
        assert_close(quabla.vmap(f)(stack), np.stack([np.asarray(f(s)) for s in stack]), rtol=0)


def test_reduce_against_numpy_and_refusals():
    a = qnp.arange(16.0).reshape(4, 4)
    # JAX 0.10.2: the init value folded in once.
    assert_close(lax.reduce(a, 0.0, lax.add, (0,)), [24, 28, 32, 36], rtol=0)
    assert_close(lax.reduce(a, 5.0, lax.add, (1,)), [11, 27, 43, 59], rtol=0)
    assert float(lax.reduce(a, -np.inf, lax.max, (0, 1))) == 15.0
    assert_close(lax.reduce(a + 1, 2.0, lax.mul, (0,)), [1170, 3360, 6930, 12288], rtol=0)
    assert_close(lax.reduce((a,), (0.0,), lax.add, (1,))[0], [6, 22, 38, 54], rtol=0)
    assert_close(lax.reduce(a, 1.0, lax.add, ()), np.arange(16.0).reshape(4, 4) + 1, rtol=0)
    with pytest.raises(TypeError, match="structure"):
        lax.reduce((a, a), (0.0,), lax.add, (0,))
    with pytest.raises(ValueError, match="one shape"):
        lax.reduce((a, a[0]), (0.0, 0.0), lambda x, y: x, (0,))
    with pytest.raises(ValueError, match="window_strides"):
        lax.reduce_window(a, 0.0, lax.add, (2, 2), (0, 1), "VALID")
    with pytest.raises(ValueError, match="padding"):
        lax.reduce_window(a, 0.0, lax.add, (2, 2), (1, 1), "FULL")
    with pytest.raises(ValueError, match="dimensions"):
        lax.reduce(a, 0.0, lax.add, (2,))
    with pytest.raises(TypeError, match="GatherDimensionNumbers"):
        lax.gather(a, qnp.array([[0]]), ADD_AT, (1, 4))
    with pytest.raises(ValueError, match="mode"):
        lax.gather(a, qnp.array([[0]]), POINT, (1, 4), mode="wrap")
    with pytest.raises(TypeError, match="integers"):
        lax.gather(a, qnp.array([[0.5]]), POINT, (1, 4))


def test_padtype_to_pads_as_jax():
    assert lax.padtype_to_pads((10, 7), (3, 2), (2, 3), "SAME") == [(0, 1), (0, 1)]
    assert lax.padtype_to_pads((10, 7), (4, 2), (1, 1), "SAME") == [(1, 2), (0, 1)]
    assert lax.padtype_to_pads((10, 7), (4, 2), (1, 1), "SAME_LOWER") == [(2, 1), (1, 0)]
    assert lax.padtype_to_pads((10, 7), (4, 2), (1, 1), "VALID") == [(0, 0), (0, 0)]


def test_any_computation_and_several_operands_fold_in_order_as_jax():
    a = qnp.arange(16.0).reshape(4, 4)
    # JAX 0.10.2 (XLA on CPU folds from the init, in row-major order over the reduced axes).
    out = lax.reduce((a, a), (0.0, 0.0), lambda x, y: (x[0] + y[0], x[1] * 0 + y[1]), (0,))
    assert_close(out[0], [24, 28, 32, 36], rtol=0)
    assert_close(out[1], [12, 13, 14, 15], rtol=0)
    assert float(lax.reduce(a, 0.0, lambda u, v: u - v, (0, 1))) == -120.0
    assert float(lax.reduce(a, 0.0, lambda u, v: u - 2 * v, (1, 0))) == -240.0
    assert_close(lax.reduce(a, 0.0, lambda u, v: u + 2 * v, (1,)), [12, 44, 76, 108], rtol=0)
    assert_close(lax.reduce_window(a, 0.0, lambda u, v: u - v, (2, 2), (1, 1), "VALID"),
                 [[-10, -14, -18], [-26, -30, -34], [-42, -46, -50]], rtol=0)
    # Padding and base-dilation holes are skipped, so the init enters once per window (the
    # sum of squares does not depend on the order XLA folds a padded window in).
    squares = lambda u, v: u + v * v  # noqa: E731
    assert_close(lax.reduce_window(a, 1.0, squares, (2, 3), (2, 1), ((1, 0), (0, 1))),
                 [[6, 15, 14], [323, 413, 307]], rtol=0)
    assert_close(lax.reduce_window(a, 2.0, squares, (2, 2), (1, 2), "SAME",
                                   base_dilation=(2, 1)),
                 [[3, 15], [43, 87], [43, 87], [147, 223], [147, 223], [315, 423],
                  [315, 423]], rtol=0)
    # The monoids too: JAX's add with init 5 counts the init once per padded window.
    assert_close(lax.reduce_window(a, 5.0, lax.add, (2, 2), (1, 1), ((1, 0), (0, 0))),
                 [[6, 8, 10], [15, 19, 23], [31, 35, 39], [47, 51, 55]], rtol=0)
    assert_close(lax.reduce_window(a, 5.0, lax.add, (2, 2), (1, 1), "VALID",
                                   base_dilation=(2, 1))[:3],
                 [[6, 8, 10], [14, 16, 18], [14, 16, 18]], rtol=0)
    # An argmax as a variadic reduction (values and their indices), plain and windowed.
    x = qnp.array([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]])
    idx = lax.broadcasted_iota(np.int32, x.shape, 1)

    def larger(p, q):
        (pv, pi), (qv, qi) = p, q
        keep = (pv > qv) | ((pv == qv) & (pi < qi))
        return qnp.where(keep, pv, qv), qnp.where(keep, pi, qi)

    v, i = quabla.jit(lambda x: lax.reduce((x, idx), (-np.inf, np.int32(0)), larger, (1,)))(x)
    assert_close(v, [4, 9], rtol=0)
    assert np.asarray(i).tolist() == [2, 2]
    v, i = lax.reduce_window((x, idx), (-np.inf, np.int32(0)), larger, (1, 2), (1, 1),
                             "VALID")
    assert_close(v, [[3, 4], [5, 9]], rtol=0)
    assert np.asarray(i).tolist() == [[0, 2], [1, 2]]
    tree = lax.reduce({"a": x}, {"a": 0.0}, lambda p, q: {"a": p["a"] + q["a"]}, (0,))
    assert_close(tree["a"], [4, 6, 13], rtol=0)
    # Differentiable (JAX's general reduce_window is not), against finite differences.
    check_grads(lambda m: lax.reduce_window(m, 0.0, lambda u, v: u * 0.9 + v * v, (2, 2),
                                            (1, 1), "VALID"),
                (np.arange(9.0).reshape(3, 3) / 7,), order=2, modes=("fwd", "rev"))
    check_grads(lambda m: lax.reduce(m, 1.0, lambda u, v: u * v + u, (1,)),
                (np.arange(6.0).reshape(2, 3) / 5,), order=2, modes=("fwd", "rev"))
    with pytest.raises(TypeError, match="must return"):
        lax.reduce((a, a), (0.0, 0.0), lambda p, q: p[0] + q[0], (0,))
