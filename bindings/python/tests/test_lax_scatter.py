"""``lax.scatter``/``scatter_mul``/``scatter_min``/``scatter_max``/``scatter_sub``/
``scatter_apply`` with dimension numbers, and ``x.at[].divide/power/apply``: values against
a numpy loop over the update elements written here (XLA's scatter semantics, updates
applied in order), and JAX 0.10.2's results and derivative conventions recorded by hand
(x64 on): the last repeated ``set`` wins, ``scatter_apply`` applies ``func`` once per update,
a window not wholly inside is dropped by default and clamped with ``mode="clip"``, and the
derivative of a ``min``/``max`` splits evenly between the tied values."""

import itertools

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax
from quabla.test_util import check_grads
from conftest import assert_close

AT = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                 scatter_dims_to_operand_dims=(0,))
# Windows along rows: updates[i, :] go to x[r, c:c + w] for idx[i] = (r, c).
ROW_WINDOWS = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                          scatter_dims_to_operand_dims=(0, 1))
# out[b, idx[b, j]] op= updates[b, j].
BATCHED = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(1,),
                                      scatter_dims_to_operand_dims=(1,),
                                      operand_batching_dims=(0,),
                                      scatter_indices_batching_dims=(0,))
NUMPY_OPS = {"set": lambda a, b: b, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def numpy_scatter(x, idx, upd, dn, op, mode="drop"):
    """XLA's scatter, one update element at a time in row-major order."""
    out = np.array(x, dtype=float)
    win = list(dn.update_window_dims)
    window_axes = [d for d in range(x.ndim)
                   if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    sizes = [1] * x.ndim
    for d, u in zip(window_axes, win):
        sizes[d] = upd.shape[u]
    for u in itertools.product(*map(range, upd.shape)):
        batch = tuple(u[k] for k in range(upd.ndim) if k not in win)
        start = [0] * x.ndim
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            start[d] = int(idx[batch + (k,)])
        for d, bd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            start[d] = batch[bd]
        if mode == "clip":
            start = [min(max(s, 0), x.shape[d] - sizes[d]) for d, s in enumerate(start)]
        elif any(s < 0 or s + sizes[d] > x.shape[d] for d, s in enumerate(start)):
            continue
        target = list(start)
        for d, k in zip(window_axes, win):
            target[d] += u[k]
        out[tuple(target)] = NUMPY_OPS[op](out[tuple(target)], upd[u])
    return out


SCATTERS = {"set": lax.scatter, "mul": lax.scatter_mul, "min": lax.scatter_min,
            "max": lax.scatter_max}


@pytest.mark.parametrize("op", sorted(SCATTERS))
@pytest.mark.parametrize("mode", ["drop", "clip"])
def test_scatter_windows_and_batching_against_numpy(op, mode):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(4, 6))
    # Repeated and overlapping windows, and some that stick out of the operand.
    idx = np.array([[0, 1], [0, 1], [3, 4], [1, 5], [2, -1], [0, 2]])
    upd = np.round(rng.normal(size=(6, 3)), 1)
    # Repeated updates are multiplied together before the operand (XLA multiplies them in
    # one by one): a product may differ in its last bit.
    rtol = 1e-15 if op == "mul" else 0
    got = SCATTERS[op](x, idx, upd, ROW_WINDOWS, mode=mode)
    assert_close(got, numpy_scatter(x, idx, upd, ROW_WINDOWS, op, mode), rtol=rtol)
    xb = rng.normal(size=(3, 5))
    ib = np.array([[[4], [4], [0]], [[1], [2], [9]], [[3], [3], [3]]])
    ub = rng.normal(size=(3, 3))
    got = SCATTERS[op](xb, ib, ub, BATCHED, mode=mode)
    assert_close(got, numpy_scatter(xb, ib, ub, BATCHED, op, mode), rtol=rtol)


def test_scatters_as_jax_records_them():
    x = qnp.arange(12.0).reshape(3, 4)
    idx = qnp.array([[0, 1], [0, 2], [2, 3], [1, 0]])
    upd = qnp.array([[10.0, 20], [30, 40], [50, 60], [-1, -2]])
    # JAX: the window at (2, 3) is dropped by default, moved to (2, 2) by "clip".
    assert_close(lax.scatter(x, idx, upd, ROW_WINDOWS),
                 [[0, 10, 30, 40], [-1, -2, 6, 7], [8, 9, 10, 11]], rtol=0)
    assert_close(lax.scatter(x, idx, upd, ROW_WINDOWS, mode="clip"),
                 [[0, 10, 30, 40], [-1, -2, 6, 7], [8, 9, 50, 60]], rtol=0)
    assert_close(lax.scatter_mul(x, idx, upd, ROW_WINDOWS, mode="clip"),
                 [[0, 10, 1200, 120], [-4, -10, 6, 7], [8, 9, 500, 660]], rtol=0)
    assert_close(lax.scatter_max(x, idx, upd, ROW_WINDOWS),
                 [[0, 10, 30, 40], [4, 5, 6, 7], [8, 9, 10, 11]], rtol=0)
    v = qnp.arange(5.0)
    at = qnp.array([[1], [1], [3], [7]])
    assert_close(lax.scatter_min(v, at, qnp.array([10.0, -20, 30, 40]), AT), [0, -20, 2, 3, 4],
                 rtol=0)
    assert_close(lax.scatter_sub(v, at, qnp.array([10.0, -20, 30, 40]), AT),
                 [0, 11, 2, -27, 4], rtol=0)
    xb = qnp.arange(10.0).reshape(2, 5)
    ib = qnp.array([[[4], [4], [0]], [[1], [2], [9]]])
    ub = qnp.array([[1.0, 2, 3], [4, 5, 6]])
    assert_close(lax.scatter(xb, ib, ub, BATCHED), [[3, 1, 2, 3, 2], [5, 4, 5, 8, 9]], rtol=0)
    assert_close(lax.scatter_max(xb, ib, ub, BATCHED), [[3, 1, 2, 3, 4], [5, 6, 7, 8, 9]],
                 rtol=0)
    flags = qnp.array([True, False, True])
    two = qnp.array([[0], [1]])
    assert np.asarray(lax.scatter(flags, two, qnp.array([False, True]), AT)).tolist() == [
        False, True, True]
    assert np.asarray(lax.scatter_max(flags, two, qnp.array([False, True]), AT)).all()
    ints = lax.scatter_mul(qnp.arange(1, 6), at, qnp.array([2, 3, 4, 5]), AT)
    assert np.asarray(ints).tolist() == [1, 12, 3, 16, 5]


def test_scatter_apply_applies_once_per_update():
    v = qnp.arange(5.0)
    at = qnp.array([[1], [1], [3], [7]])
    # JAX: [0, 100, 2, 30, 4] (index 1 twice, 7 dropped).
    assert_close(lax.scatter_apply(v, at, lambda e: e * 10, AT, update_shape=(4,)),
                 [0, 100, 2, 30, 4], rtol=0)
    xb = qnp.arange(10.0).reshape(2, 5)
    ib = qnp.array([[[4], [4], [0]], [[1], [2], [9]]])
    assert_close(lax.scatter_apply(xb, ib, lambda e: e * 2 + 1, BATCHED, update_shape=(2, 3)),
                 [[1, 1, 2, 3, 19], [5, 13, 15, 8, 9]], rtol=0)
    # No updates at all leave the operand as it is.
    none = qnp.zeros((0, 1), np.int32)
    assert_close(lax.scatter_apply(v, none, qnp.sin, AT, update_shape=(0,)), v, rtol=0)
    jitted = quabla.jit(lambda a: lax.scatter_apply(a, at, qnp.exp, AT, update_shape=(4,)))
    want = np.arange(5.0)
    want[1] = np.exp(np.exp(1.0))
    want[3] = np.exp(3.0)
    assert_close(jitted(v), want, rtol=1e-6)


def test_at_divide_power_apply_as_jax():
    x = qnp.arange(1.0, 6.0)
    i = qnp.array([1, 1, 3, 9])
    # JAX: repeated updates multiply first; out-of-range ones are dropped (or clipped).
    assert_close(x.at[i].divide(2.0), [1, 0.5, 3, 2, 5], rtol=0)
    assert_close(x.at[qnp.array([1, 1, 3])].power(2.0), [1, 16, 3, 16, 5], rtol=0)
    assert_close(x.at[qnp.array([1, 1, 9])].apply(lambda e: e + 1), [1, 4, 3, 4, 5], rtol=0)
    assert_close(x.at[qnp.array([1, 1, 9])].apply(lambda e: e + 1, mode="clip"),
                 [1, 4, 3, 4, 6], rtol=0)
    # More repeats than elements: the loop's bound is the number of updates.
    assert_close(qnp.ones(2).at[qnp.zeros(5, np.int32)].apply(lambda e: e * 2), [32, 1],
                 rtol=0)
    assert_close(x.at[1:3].divide(qnp.array([2.0, 4.0])), [1, 1, 0.75, 4, 5], rtol=0)


def test_derivatives_of_the_scatters():
    at = qnp.array([[1], [1], [3]])
    w = qnp.arange(1.0, 6.0)

    def weighted(scatter):
        return lambda x, u: (scatter(x, at, u, AT) * w).sum()

    x0 = qnp.arange(5.0)
    # JAX: the last set wins, so its update takes the cotangent and the operand none.
    g = quabla.grad(weighted(lax.scatter), (0, 1))(x0, qnp.array([7.0, 8, 9]))
    assert_close(g[0], [1, 0, 3, 0, 5], rtol=0)
    assert_close(g[1], [0, 2, 4], rtol=0)
    g = quabla.grad(weighted(lax.scatter_max), (0, 1))(x0, qnp.array([7.0, 8, 1]))
    assert_close(g[0], [1, 0, 3, 4, 5], rtol=0)
    assert_close(g[1], [0, 2, 0], rtol=0)
    # Ties split evenly (three-way at 1, two-way at 3), as JAX's.
    g = quabla.grad(weighted(lax.scatter_max), (0, 1))(x0, qnp.array([1.0, 1, 3]))
    assert_close(g[0], [1, 2 / 3, 3, 2, 5], rtol=1e-12)
    assert_close(g[1], [2 / 3, 2 / 3, 2], rtol=1e-12)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 6))
    idx = np.array([[0, 1], [0, 1], [3, 4], [1, 5], [0, 2]])
    upd = rng.normal(size=(5, 3))
    for scatter in (lax.scatter, lax.scatter_mul, lax.scatter_min, lax.scatter_max):
        check_grads(lambda a, b, s=scatter: s(a, idx, b, ROW_WINDOWS, mode="clip"), (x, upd),
                    order=2, modes=("fwd", "rev"))
    check_grads(lambda a: lax.scatter_apply(a, idx, qnp.sin, ROW_WINDOWS, update_shape=(5, 3),
                                            mode="clip"), (x,), order=1, modes=("fwd", "rev"))
    check_grads(lambda a: qnp.asarray(a).at[qnp.array([0, 0, 2])].apply(qnp.tanh), (rng.normal(size=4),),
                order=2, modes=("fwd", "rev"))


def test_min_max_updates_derivatives_at_ties_nan_and_inf():
    w = qnp.arange(1.0, 6.0)
    x0 = qnp.arange(5.0)
    i = qnp.array([1, 1, 3])

    def f(x, u):
        return (x.at[i].min(u) * w).sum()

    # JAX: ties share evenly; a NaN result gives no one a derivative; tied -inf share.
    g = quabla.grad(f, (0, 1))(x0, qnp.array([1.0, 1, 3]))
    assert_close(g[0], [1, 2 / 3, 3, 2, 5], rtol=1e-12)
    assert_close(g[1], [2 / 3, 2 / 3, 2], rtol=1e-12)
    g = quabla.grad(f, (0, 1))(x0, qnp.array([np.nan, 1, 3]))
    assert_close(g[0], [1, 0, 3, 2, 5], rtol=0)
    assert_close(g[1], [0, 0, 2], rtol=0)
    g = quabla.grad(f, (0, 1))(x0, qnp.array([-np.inf, -np.inf, 3]))
    assert_close(g[0], [1, 0, 3, 2, 5], rtol=0)
    assert_close(g[1], [1, 1, 2], rtol=0)
    g = quabla.jit(quabla.grad(f, (0, 1)))(x0, qnp.array([1.0, 1, 3]))
    assert_close(g[1], [2 / 3, 2 / 3, 2], rtol=1e-12)
    _, t = quabla.jvp(lambda u: x0.at[i].max(u), (qnp.array([1.0, 1, 3]),),
                      (qnp.array([1.0, 2, 3]),))
    assert_close(t, [0, 1, 0, 1.5, 0], rtol=0)
    batched = quabla.vmap(lambda u: x0.at[i].max(u))(qnp.array([[1.0, 1, 3], [4, 5, 6]]))
    assert_close(batched, [[0, 1, 2, 3, 4], [0, 5, 2, 6, 4]], rtol=0)


def test_custom_jvp_gets_float0_tangents_for_integer_arguments():
    # JAX passes float0 zeros for an integer argument's tangent and ignores the rule's
    # tangent for an integer output.
    seen = []

    @quabla.custom_jvp
    def f(x, n):
        return x * n, n

    @f.defjvp
    def f_jvp(primals, tangents):
        seen.append(tangents[1].dtype)
        return f(*primals), (tangents[0] * primals[1], tangents[1])

    three = qnp.array(3, np.int32)
    assert float(quabla.grad(lambda x: f(x, three)[0])(2.0)) == 3.0
    assert float(quabla.jit(quabla.grad(lambda x: f(x, three)[0]))(2.0)) == 3.0
    assert seen and all(d == np.dtype([("float0", np.void, 0)]) for d in seen)


def test_scatter_refusals():
    x = qnp.zeros((3, 4))
    idx = qnp.array([[0, 1]])
    with pytest.raises(ValueError, match="do not match"):
        lax.scatter(x, idx, qnp.ones((1, 3, 2)), ROW_WINDOWS)
    with pytest.raises(ValueError, match="update_window_dims"):
        lax.scatter(x, idx, qnp.ones((1, 2)), AT)
    with pytest.raises(TypeError, match="ScatterDimensionNumbers"):
        lax.scatter_max(x, idx, qnp.ones((1, 2)), (1,))
    with pytest.raises(TypeError, match="integers"):
        lax.scatter_min(x, qnp.array([[0.5, 1.0]]), qnp.ones((1, 2)), ROW_WINDOWS)
    with pytest.raises(ValueError, match="mode"):
        lax.scatter(x, idx, qnp.ones((1, 2)), ROW_WINDOWS, mode="wrap")
    with pytest.raises(TypeError, match="callable"):
        lax.scatter_apply(x, idx, 2.0, ROW_WINDOWS, update_shape=(1, 2))
    with pytest.raises(ValueError, match="pair up"):
        lax.scatter(x, idx, qnp.ones((1, 2)), ROW_WINDOWS._replace(operand_batching_dims=(0,)))
    with pytest.raises(TypeError, match="boolean"):
        lax.scatter_mul(qnp.ones(3, bool), qnp.array([[0]]), qnp.array([False]), AT)
