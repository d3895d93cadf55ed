"""lax.associative_scan and lax.map, the numpy selection and editing functions, quabla.tree
and flatten_util.ravel_pytree, against JAX 0.10.2 (tests/goldens/jax_surface.json) and
numpy."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax, tree
from quabla.flatten_util import ravel_pytree
from conftest import assert_close, central_diff, dec, golden

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import surface_lax_cases  # noqa: E402

G = golden("jax_surface")


@pytest.fixture(autouse=True)
def data():
    # Built under the x64 fixture (not at import, where x64 is still off).
    global X, MATS
    X = qnp.asarray(dec(G["x"]))
    MATS = qnp.asarray(dec(G["mats"]))


def affine(a, b):
    return (a[0] * b[0], a[1] * b[0] + b[1])


def test_associative_scan_matches_jax():
    assert_close(lax.associative_scan(qnp.add, X), dec(G["cumsum_odd"]), rtol=1e-15)
    assert_close(lax.associative_scan(qnp.add, X[:6], reverse=True),
                 dec(G["cumsum_even_reverse"]), rtol=1e-15)
    for got, want in zip(lax.associative_scan(affine, (X, X * X + 1.0)), G["affine"]):
        assert_close(got, dec(want), rtol=1e-15)
    for got, want in zip(lax.associative_scan(affine, (X, X * X + 1.0), reverse=True),
                         G["affine_reverse"]):
        assert_close(got, dec(want), rtol=1e-15)
    assert_close(lax.associative_scan(qnp.matmul, MATS), dec(G["matmul_axis0"]), rtol=1e-14)
    assert_close(lax.associative_scan(qnp.maximum, MATS.reshape(3, 8), axis=1),
                 dec(G["max_axis1"]), rtol=0)


def test_associative_scan_is_a_sequential_scan_of_every_length():
    rng = np.random.RandomState(0)
    for n in range(1, 20):
        a, b = rng.randn(n), rng.randn(n)
        s, t = lax.associative_scan(affine, (qnp.asarray(a), qnp.asarray(b)))
        ws, wt = [a[0]], [b[0]]
        for i in range(1, n):
            ws.append(ws[-1] * a[i])
            wt.append(wt[-1] * a[i] + b[i])
        assert_close(s, ws, rtol=1e-12)
        assert_close(t, wt, rtol=1e-12, atol=1e-14)


def test_associative_scan_differentiates_jits_and_checks_its_input():
    def loss(v):
        s, t = lax.associative_scan(affine, (v, v * v + 1.0))
        return qnp.sum(s * qnp.arange(7.0)) + qnp.sum(qnp.sin(t))

    assert_close(quabla.grad(loss)(X), dec(G["scan_grad"]), rtol=1e-13)
    assert_close(quabla.grad(loss)(X), central_diff(lambda v: float(loss(qnp.asarray(v))),
                                                    np.asarray(X)), rtol=1e-6, atol=1e-8)
    assert_close(quabla.jit(lambda v: lax.associative_scan(qnp.add, v))(X),
                 dec(G["cumsum_odd"]), rtol=1e-15)
    with pytest.raises(ValueError, match="same length"):
        lax.associative_scan(affine, (X, X[:3]))
    with pytest.raises(ValueError, match="out of range"):
        lax.associative_scan(qnp.add, X, axis=1)


def test_lax_map_matches_jax():
    assert_close(lax.map(lambda v: qnp.sin(v) * v, X), dec(G["lax_map"]), rtol=1e-15)
    s, d = lax.map(lambda v: (v.sum(), v * 2), MATS.reshape(6, 4), batch_size=4)
    assert_close(s, dec(G["lax_map_batched"][0]), rtol=1e-15)
    assert_close(d, dec(G["lax_map_batched"][1]), rtol=1e-15)
    with pytest.raises(ValueError, match="batch_size"):
        lax.map(lambda v: v, X, batch_size=0)


def test_selection_and_editing_match_jax():
    assert_close(qnp.select([X < 0, X > 1], [X * 10, -X], default=7.0), dec(G["select"]),
                 rtol=0)
    pw = qnp.piecewise(X, [X < 0, X > 1], [lambda v: v ** 2, lambda v: -v, lambda v: v + 100])
    assert_close(pw, dec(G["piecewise"]), rtol=0)
    assert_close(qnp.piecewise(X, [X < 0], [3.0, 4.0]), dec(G["piecewise_consts"]), rtol=0)
    assert_close(qnp.append(MATS[0], X[:3]), dec(G["append_flat"]), rtol=0)
    assert_close(qnp.append(MATS[0], MATS[1], axis=1), dec(G["append_axis"]), rtol=0)
    assert_close(qnp.insert(MATS[0], 1, qnp.array([7.0, 8.0]), axis=0), dec(G["insert_row"]),
                 rtol=0)
    assert_close(qnp.insert(X, [1, 3, 7], qnp.array([10.0, 11.0, 12.0])),
                 dec(G["insert_many"]), rtol=0)
    assert_close(qnp.insert(MATS[0], 0, 5.0, axis=1), dec(G["insert_col_scalar"]), rtol=0)
    assert_close(qnp.delete(X, [0, 2, -1]), dec(G["delete"]), rtol=0)
    assert_close(qnp.delete(MATS[:2], 1, axis=1), dec(G["delete_axis"]), rtol=0)
    assert_close(qnp.cumulative_sum(MATS[0], axis=0, include_initial=True),
                 dec(G["cumulative_sum"]), rtol=0)


def test_selection_edges_and_errors():
    with pytest.raises(ValueError, match="match"):
        qnp.select([X < 0], [X, X])
    with pytest.raises(TypeError, match="boolean"):
        qnp.select([X], [X])
    with pytest.raises(ValueError, match="funclist"):
        qnp.piecewise(X, [X < 0], [1.0, 2.0, 3.0])
    with pytest.raises(IndexError, match="out of range"):
        qnp.delete(X, [9])
    with pytest.raises(ValueError, match="axis is required"):
        qnp.cumulative_sum(MATS)
    a = np.arange(12.0).reshape(3, 4)
    assert_close(qnp.insert(a, [0, 2], 9.0, axis=1), np.insert(a, [0, 2], 9.0, axis=1), rtol=0)
    assert_close(qnp.delete(a, slice(0, 2), axis=0), np.delete(a, slice(0, 2), axis=0), rtol=0)
    mask = np.array([True, False, True, False])
    assert_close(qnp.delete(a, mask, axis=1), np.delete(a, mask, axis=1), rtol=0)
    assert_close(qnp.cumulative_prod(qnp.arange(1.0, 5.0), include_initial=True),
                 [1.0, 1.0, 2.0, 6.0, 24.0], rtol=0)
    # select's gradient reaches only the chosen entries.
    g = quabla.grad(lambda v: qnp.sum(qnp.select([v < 0], [v * 3], default=v * v)))(X)
    assert_close(g, np.where(np.asarray(X) < 0, 3.0, 2 * np.asarray(X)), rtol=0)


def test_tree_and_ravel_pytree_match_jax():
    t = G["tree"]
    assert tree.reduce(lambda a, b: a * 10 + b, {"b": [1.0, (2.0, 3.0)], "a": 4.0}, 0.0) == \
        t["reduce"]
    assert [tree.all([1, True, 2]), tree.all({"a": 1, "b": 0})] == t["all"]
    got = tree.transpose(tree.structure([0, 0, 0]), tree.structure({"p": 0, "q": 0}),
                         [{"p": 1, "q": 2}, {"p": 3, "q": 4}, {"p": 5, "q": 6}])
    assert repr(got) == t["transpose"]
    with pytest.raises(TypeError, match="leaves"):
        tree.transpose(tree.structure([0, 0]), tree.structure([0, 0]), [1, 2, 3])
    flat, unravel = ravel_pytree({"w": MATS[0], "b": X[:3], "n": qnp.arange(2)})
    assert_close(flat, dec(t["ravel"]), rtol=0)
    back = unravel(flat)
    # Quabla's int32 stands for JAX's int64 (it has no int64).
    want = [d.replace("int64", "int32") for d in t["unravel_dtypes"]]
    assert [str(v.dtype) for v in tree.leaves(back)] == want
    assert_close(back["w"], MATS[0], rtol=0)
    with pytest.raises(ValueError, match="shape"):
        unravel(flat[:3])
    assert tree.map(lambda v: v * 2, {"a": 1, "b": (2,)}) == {"a": 2, "b": (4,)}


def test_ravel_pytree_differentiates():
    params = {"w": qnp.ones((2, 2)), "b": qnp.array([0.5, -1.0])}
    flat, unravel = ravel_pytree(params)

    def loss(v):
        p = unravel(v)
        return qnp.sum(p["w"] ** 2) + qnp.sum(qnp.sin(p["b"]))

    g = quabla.grad(loss)(flat)
    assert_close(g, np.concatenate([np.cos([0.5, -1.0]), 2 * np.ones(4)]), rtol=1e-15)


def test_convolve_and_correlate_match_numpy_for_every_length_and_mode():
    rng = np.random.RandomState(0)
    for n in range(1, 8):
        for m in range(1, 8):
            a, v = rng.randn(n), rng.randn(m)
            for mode in ("full", "same", "valid"):
                assert_close(qnp.convolve(a, v, mode), np.convolve(a, v, mode), rtol=1e-13,
                             atol=1e-14)
                assert_close(qnp.correlate(a, v, mode), np.correlate(a, v, mode),
                             rtol=1e-13, atol=1e-14)
    with pytest.raises(ValueError, match="mode"):
        qnp.convolve(np.ones(3), np.ones(2), "circular")
    with pytest.raises(ValueError, match="1-D"):
        qnp.correlate(np.ones((2, 2)), np.ones(2))


def test_convolve_differentiates_and_batches():
    a, v = np.array([0.5, -1.0, 2.0, 0.3]), np.array([1.0, 0.2, -0.7])
    w = np.array([1.0, -2.0, 0.5, 3.0, 1.5, -1.0])

    def loss(x, y):
        return qnp.sum(qnp.convolve(x, y) * qnp.asarray(w))

    ga, gv = quabla.grad(loss, argnums=(0, 1))(qnp.asarray(a), qnp.asarray(v))
    assert_close(ga, central_diff(lambda x: float(loss(qnp.asarray(x), qnp.asarray(v))), a),
                 rtol=1e-7, atol=1e-9)
    assert_close(gv, central_diff(lambda y: float(loss(qnp.asarray(a), qnp.asarray(y))), v),
                 rtol=1e-7, atol=1e-9)
    batch = np.stack([a, 2 * a, -a])
    got = quabla.vmap(lambda x: qnp.convolve(x, qnp.asarray(v), "same"))(qnp.asarray(batch))
    assert_close(got, [np.convolve(r, v, "same") for r in batch], rtol=1e-14)


def test_erf_inv_gives_jaxs_bits_and_its_derivative():
    """The ``erf_inv`` primitive's CPU kernel is XLA's: the golden's bits exactly (float64 on
    v / 4; the float32 kernel is checked bit for bit in the CPU plugin's tests). Its JVP is
    ``sqrt(pi) / 2 exp(erf_inv(x)^2)``, checked against central differences."""
    got = np.asarray(surface_lax_cases(lax, qnp)["erf_inv"]())
    want = dec(G["lax_ops"]["erf_inv"])
    assert got.dtype == want.dtype == np.float64 and got.tobytes() == want.tobytes()
    x = np.array([-0.99, -0.5, -1e-3, 0.0, 0.3, 0.97])
    g = np.asarray(quabla.vmap(quabla.grad(lax.erf_inv))(qnp.asarray(x)))
    y = np.asarray(lax.erf_inv(qnp.asarray(x)))
    np.testing.assert_allclose(g, np.sqrt(np.pi) / 2 * np.exp(y * y), rtol=1e-15)
    h = 1e-6
    fd = (np.asarray(lax.erf_inv(qnp.asarray(x + h))) -
          np.asarray(lax.erf_inv(qnp.asarray(x - h)))) / (2 * h)
    np.testing.assert_allclose(g, fd, rtol=1e-6)
    assert np.asarray(lax.erf_inv(qnp.asarray([1.0, -1.0]))).tolist() == [np.inf, -np.inf]
    assert np.isnan(np.asarray(lax.erf_inv(qnp.asarray([1.5, np.nan])))).all()


def test_argwhere_matches_numpy_and_pads_with_size():
    x = np.array([[0, 1, 0], [2, 0, 3]])
    assert np.asarray(qnp.argwhere(x)).tolist() == np.argwhere(x).tolist()
    padded = quabla.jit(lambda y: qnp.argwhere(y, size=4, fill_value=-1))(qnp.asarray(x))
    assert np.asarray(padded).tolist() == [[0, 1], [1, 0], [1, 2], [-1, -1]]
    with pytest.raises(ValueError, match="at least one axis"):
        qnp.argwhere(qnp.asarray(1))


def test_lax_array_functions_match_jax():
    got = surface_lax_cases(lax, qnp)
    for name, want in G["lax_ops"].items():
        np.testing.assert_allclose(np.asarray(got[name]()), dec(want), rtol=1e-14, atol=1e-15,
                                   err_msg=name)
    # A traced start inside jit is clamped too.
    x = qnp.arange(10.0)
    assert np.asarray(quabla.jit(lambda i: lax.dynamic_slice(x, [i], [3]))(8)).tolist() == \
        [7.0, 8.0, 9.0]
    with pytest.raises(TypeError, match="start indices"):
        lax.dynamic_slice(x, [1, 2], [2])
    with pytest.raises(TypeError, match="int"):
        lax.integer_pow(x, 2.5)
