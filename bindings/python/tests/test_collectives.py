"""``lax.psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``axis_index`` and
``axis_size`` under ``vmap(..., axis_name=)``, against JAX 0.10.2 on the same programs
(recorded by hand): values, pytrees, nesting, several names at once, gradients in both
orders, jit, and the error outside a named vmap."""

import numpy as np
import pytest

import quabla
import quabla.numpy as jnp
from quabla import lax

from conftest import assert_close

X = np.array([1.0, 3.0, 2.0])
M = np.arange(6.0).reshape(3, 2)
G = np.arange(6.0).reshape(2, 3)


def _over(f, x=X):
    return quabla.vmap(f, axis_name="i")(jnp.asarray(x))


def test_reductions_index_and_size():
    assert_close(_over(lambda v: lax.psum(v, "i")), [6.0, 6.0, 6.0], rtol=0)
    assert_close(_over(lambda v: lax.pmean(v, "i")), [2.0, 2.0, 2.0], rtol=0)
    assert_close(_over(lambda v: lax.pmax(v, "i")), [3.0, 3.0, 3.0], rtol=0)
    assert_close(_over(lambda v: lax.pmin(v, "i")), [1.0, 1.0, 1.0], rtol=0)
    assert _over(lambda v: lax.axis_index("i")).tolist() == [0, 1, 2]
    assert_close(_over(lambda v: v * lax.axis_size("i")), [3.0, 9.0, 6.0], rtol=0)
    # A value shared by every element is summed once per element; booleans are counted.
    assert_close(_over(lambda v: lax.psum(2.0, "i")), [6.0, 6.0, 6.0], rtol=0)
    counted = _over(lambda v: lax.psum(v > 1, "i"))
    assert counted.dtype == np.int32 and counted.tolist() == [2, 2, 2]
    assert_close(_over(lambda v: lax.psum({"a": v, "b": 2 * v}, "i")["b"]), [12.0, 12.0, 12.0],
                 rtol=0)


def test_all_gather():
    assert_close(_over(lambda v: lax.all_gather(v, "i")), [[1.0, 3.0, 2.0], [1.0, 3.0, 2.0], [1.0, 3.0, 2.0]], rtol=0)
    assert_close(_over(lambda v: lax.all_gather(v, "i", axis=1), M), [[[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]], [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]], [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]], rtol=0)
    assert_close(_over(lambda v: lax.all_gather(v, "i", tiled=True), M), [[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]],
                 rtol=0)
    # Another element's inf stays in its own slot.
    inf = _over(lambda v: lax.all_gather(v, "i"), np.array([1.0, np.inf]))
    assert_close(inf, [[1.0, np.inf], [1.0, np.inf]], rtol=0)


def test_nested_names_and_several_at_once():
    inner = lambda v: lax.psum(v, "i") + 10 * lax.psum(v, "j")  # noqa: E731
    nested = quabla.vmap(quabla.vmap(inner, axis_name="j"), axis_name="i")
    assert_close(nested(jnp.asarray(G)), [[33.0, 35.0, 37.0], [123.0, 125.0, 127.0]], rtol=0)
    both = quabla.vmap(quabla.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"),
                       axis_name="i")
    assert_close(both(jnp.asarray(G)), [[15.0, 15.0, 15.0], [15.0, 15.0, 15.0]], rtol=0)


def test_gradients_jit_and_a_batch_softmax():
    g = quabla.grad(lambda x: jnp.sum(quabla.vmap(lambda v: lax.psum(v * v, "i") * v,
                                                  axis_name="i")(x)))(jnp.asarray(X))
    assert_close(g, [26.0, 50.0, 38.0], rtol=1e-15)
    inside = quabla.vmap(quabla.grad(lambda b: lax.psum(b * b * lax.psum(b, "i"), "i")),
                         axis_name="i")(jnp.asarray(X))
    assert_close(inside, [78.0, 150.0, 114.0], rtol=1e-15)
    centred = quabla.jit(quabla.vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i"))
    assert_close(centred(jnp.asarray(X)), [-1.0, 1.0, 0.0], rtol=0)
    soft = _over(lambda v: jnp.exp(v) / lax.psum(jnp.exp(v), "i"))
    assert_close(soft, [0.09003057317038048, 0.665240955774822, 0.2447284710547977], rtol=1e-15)
    with pytest.raises(ValueError, match="pmax has no derivative"):
        _over(quabla.grad(lambda b: lax.pmax(b, "i")))


def test_errors_outside_a_named_vmap():
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(jnp.asarray(X), "i")
    with pytest.raises(NameError, match="unbound axis name: k"):
        _over(lambda v: lax.psum(v, "k"))
    with pytest.raises(ValueError, match="axis_size"):
        quabla.vmap(lambda v: v, axis_name="i", axis_size=4)(jnp.asarray(X))
    with pytest.raises(TypeError, match="axis_name"):
        quabla.vmap(lambda v: v, axis_name=3)


def test_permutations_and_scatter_as_jax():
    perm = [(0, 1), (1, 2), (2, 0)]
    assert_close(_over(lambda v: lax.ppermute(v, "i", perm), X), [2.0, 1.0, 3.0], rtol=0)
    assert_close(_over(lambda v: lax.ppermute(v, "i", perm), np.arange(3.0)), [2.0, 0.0, 1.0],
                 rtol=0)
    # Without a source an element gets zeros (as pmap's ppermute).
    assert_close(_over(lambda v: lax.ppermute(v, "i", [(0, 1)]), X), [0.0, 1.0, 0.0], rtol=0)
    assert_close(_over(lambda v: lax.pshuffle(v, "i", [3, 2, 0, 1]), np.arange(4.0)),
                 [3.0, 2.0, 0.0, 1.0], rtol=0)
    assert_close(_over(lambda v: lax.psum_scatter(v, "i", tiled=True),
                       np.arange(8.0).reshape(2, 4)), [[4.0, 6.0], [8.0, 10.0]], rtol=0)
    assert_close(_over(lambda v: lax.psum_scatter(v, "i"), np.arange(9.0).reshape(3, 3)),
                 [9.0, 12.0, 15.0], rtol=0)
    assert_close(_over(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
                       np.arange(16.0).reshape(2, 2, 4)),
                 [[[8.0, 10.0], [16.0, 18.0]], [[12.0, 14.0], [20.0, 22.0]]], rtol=0)
    g = quabla.grad(lambda x: jnp.sum(quabla.vmap(
        lambda v: lax.ppermute(v * v, "i", perm) * lax.axis_index("i"), axis_name="i")(x)))(
        jnp.asarray(np.arange(3.0) + 1))
    assert_close(g, [2.0, 8.0, 0.0], rtol=0)
    with pytest.raises(ValueError, match="twice"):
        _over(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 1)]))
    with pytest.raises(ValueError, match="not a permutation"):
        _over(lambda v: lax.pshuffle(v, "i", [0, 0, 1]))
    with pytest.raises(ValueError, match="axis size"):
        _over(lambda v: lax.psum_scatter(jnp.ones(2), "i"))


def test_all_to_all_as_jax():
    x = np.arange(12.0).reshape(2, 2, 3)
    assert_close(_over(lambda v: lax.all_to_all(v, "i", 0, 0), x), [[[0.0, 1.0, 2.0], [6.0, 7.0, 8.0]], [[3.0, 4.0, 5.0], [9.0, 10.0, 11.0]]], rtol=0)
    assert_close(_over(lambda v: lax.all_to_all(v, "i", 0, 1), x), [[[0.0, 6.0], [1.0, 7.0], [2.0, 8.0]], [[3.0, 9.0], [4.0, 10.0], [5.0, 11.0]]], rtol=0)
    assert_close(_over(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True),
                       np.arange(24.0).reshape(2, 4, 3)), [[[0.0, 1.0, 2.0, 12.0, 13.0, 14.0], [3.0, 4.0, 5.0, 15.0, 16.0, 17.0]], [[6.0, 7.0, 8.0, 18.0, 19.0, 20.0], [9.0, 10.0, 11.0, 21.0, 22.0, 23.0]]], rtol=0)
    assert_close(_over(lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
                       np.arange(24.0).reshape(2, 3, 4)), [[[0.0, 1.0], [4.0, 5.0], [8.0, 9.0], [12.0, 13.0], [16.0, 17.0], [20.0, 21.0]], [[2.0, 3.0], [6.0, 7.0], [10.0, 11.0], [14.0, 15.0], [18.0, 19.0], [22.0, 23.0]]], rtol=0)
    assert_close(_over(lambda v: lax.all_to_all(v, "i", 1, 0), np.arange(18.0).reshape(3, 2, 3)),
                 [[[0.0, 3.0], [6.0, 9.0], [12.0, 15.0]], [[1.0, 4.0], [7.0, 10.0], [13.0, 16.0]], [[2.0, 5.0], [8.0, 11.0], [14.0, 17.0]]], rtol=0)
    assert_close(_over(lambda v: lax.all_to_all(v, "i", 0, 1), np.arange(18.0).reshape(3, 3, 2)),
                 [[[0.0, 6.0, 12.0], [1.0, 7.0, 13.0]], [[2.0, 8.0, 14.0], [3.0, 9.0, 15.0]], [[4.0, 10.0, 16.0], [5.0, 11.0, 17.0]]], rtol=0)
    with pytest.raises(ValueError, match="axis size"):
        _over(lambda v: lax.all_to_all(v, "i", 0, 0), np.ones((2, 3, 1)))
    with pytest.raises(ValueError, match="divisible"):
        _over(lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True), np.ones((2, 4, 3)))


def test_pswapaxes_swaps_the_named_axis_as_jax():
    # JAX 0.10.2: under vmap, pswapaxes(v, "i", k) is swapaxes(batch, 0, k + 1).
    c = np.arange(4 * 3 * 4.0).reshape(4, 3, 4)
    assert_close(_over(lambda v: lax.pswapaxes(v, "i", 1), c), np.swapaxes(c, 0, 2), rtol=0)
    a = np.arange(4 * 4 * 2.0).reshape(4, 4, 2)
    assert_close(_over(lambda v: lax.pswapaxes(v, "i", 0), a), np.swapaxes(a, 0, 1), rtol=0)


def test_pbroadcast_is_jax_s_definition():
    """JAX defines pbroadcast as psum(where(axis_index == source, x, 0)) (its own fails under
    vmap in 0.10.2, so the definition is the reference): values, a pytree, -0.0 (arriving
    as 0.0, as the sum makes it) and inf from the source, NaN elsewhere not leaking, and the
    gradient reaching the source only."""
    x = np.array([1.5, -0.0, np.inf, np.nan])
    out = np.asarray(_over(lambda v: lax.pbroadcast(v, "i", 1), x))
    assert (out == 0).all() and not np.signbit(out).any()
    assert_close(_over(lambda v: lax.pbroadcast(v, "i", 2), x), [np.inf] * 4, rtol=0)
    tree = quabla.vmap(lambda a, b: lax.pbroadcast({"a": a, "b": b}, "i", 0), axis_name="i")(
        jnp.asarray(M), jnp.asarray(X))
    assert_close(tree["a"], np.tile(M[0], (3, 1)), rtol=0)
    assert_close(tree["b"], [1.0] * 3, rtol=0)
    g = quabla.grad(lambda v: jnp.sum(quabla.vmap(
        lambda e: lax.pbroadcast(e * e, "i", 1), axis_name="i")(v)))(jnp.asarray(X))
    assert_close(g, [0.0, 3 * 2 * 3.0, 0.0], rtol=0)
    for bad in (3, -1, 1.0, True):
        with pytest.raises(ValueError, match="source must be an index"):
            _over(lambda v: lax.pbroadcast(v, "i", bad))


def test_pmap_is_a_named_map_compiled_once():
    """pmap against JAX 0.10.2's results on one device (recorded by hand): psum over the
    mapped axis, a static argument, in_axes with None; then an axis longer than the device
    count (JAX refuses it; Quabla maps it on one device) against the per-row definition,
    and one trace per signature."""
    f = quabla.pmap(lambda x: x * 2 + lax.psum(x, "i"), axis_name="i")
    assert_close(f(jnp.ones((1, 3))), [[3.0, 3.0, 3.0]], rtol=0)
    g = quabla.pmap(lambda x, n: x * n, static_broadcasted_argnums=(1,))
    assert_close(g(jnp.ones((1, 2)), 3), [[3.0, 3.0]], rtol=0)
    h = quabla.pmap(lambda x, y: x + y, in_axes=(0, None))
    assert_close(h(jnp.ones((1, 2)), jnp.arange(2.0)), [[1.0, 2.0]], rtol=0)
    traces = []

    def body(x, scale):
        traces.append(scale)
        return x * scale - lax.pmean(x, "d")
    p = quabla.pmap(body, axis_name="d", static_broadcasted_argnums=1)
    xs = np.arange(6.0).reshape(3, 2)
    want = xs * 2.0 - xs.mean(axis=0)
    assert_close(p(jnp.asarray(xs), 2.0), want, rtol=0)
    assert_close(p(jnp.asarray(xs + 1), 2.0), (xs + 1) * 2.0 - (xs + 1).mean(axis=0), rtol=0)
    assert traces == [2.0]  # once per signature: the second call reused the compilation
    p(jnp.asarray(xs), 3.0)
    assert traces == [2.0, 3.0]
    with pytest.raises(ValueError, match="one platform"):
        quabla.pmap(lambda x: x, devices=[quabla.Device("cpu"), quabla.Device("mlx")])
