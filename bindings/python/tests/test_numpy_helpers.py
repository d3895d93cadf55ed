"""numpy's grid, functional and introspection helpers (issue 24's missing names) against
numpy itself, with JAX 0.10.2's differences from numpy (recorded by hand, x64 on): default
ints (int32 here, JAX's int64), ``isscalar`` of 0-d arrays, ``polydiv``'s untrimmed
remainder."""

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from conftest import assert_close


def test_grids_match_numpy_in_jaxs_default_dtypes():
    for key in [(slice(0, 3), slice(0, 2)), (slice(-1, 1, 5j), slice(0, 3)),
                (slice(0, 1, 0.25),), slice(2, 7)]:
        dense = qnp.mgrid[key]
        want = np.mgrid[key]
        assert_close(dense, want, rtol=0)
        assert dense.dtype == (qnp.float64 if want.dtype.kind == "f" else qnp.int32)
    open_ = qnp.ogrid[0:3, 0:1:4j]
    assert [o.shape for o in open_] == [(3, 1), (1, 4)]
    assert all(o.dtype == qnp.float64 for o in open_)  # one float axis makes both float
    for got, want in zip(open_, np.ogrid[0:3, 0:1:4j]):
        assert_close(got, want, rtol=0)
    assert_close(qnp.ogrid[0:4], np.arange(4), rtol=0)
    with pytest.raises(TypeError, match="slices"):
        qnp.mgrid[3]
    assert qnp.s_[1:2, ::-1] == np.s_[1:2, ::-1] and qnp.index_exp[1:2] == (slice(1, 2),)


def test_ix_fromfunction_and_mask_indices():
    a = np.arange(20.0).reshape(4, 5)
    rows, cols = qnp.ix_(qnp.asarray([0, 3]), [1, 2, 4])
    assert (rows.shape, cols.shape) == ((2, 1), (1, 3))
    assert_close(qnp.asarray(a)[rows, cols], a[np.ix_([0, 3], [1, 2, 4])], rtol=0)
    with pytest.raises(NotImplementedError, match="Boolean"):
        qnp.ix_(qnp.asarray([True, False]))
    with pytest.raises(ValueError, match="one-dimensional"):
        qnp.ix_(qnp.ones((2, 2)))
    f = qnp.fromfunction(lambda i, j: i * 10 + j, (2, 3))
    assert f.dtype == qnp.float64
    assert_close(f, np.fromfunction(lambda i, j: i * 10 + j, (2, 3)), rtol=0)
    g = qnp.fromfunction(lambda i, j: i - j, (3, 2), dtype=int)
    assert g.dtype == qnp.int32
    assert_close(g, np.fromfunction(lambda i, j: i - j, (3, 2), dtype=int), rtol=0)
    for got, want in zip(qnp.mask_indices(4, qnp.triu, 1), np.mask_indices(4, np.triu, 1)):
        assert_close(got, want, rtol=0)


def test_apply_along_and_over_axes_match_numpy():
    x = np.random.default_rng(3).normal(size=(2, 3, 4))
    q = qnp.asarray(x)
    for axis in (0, 1, 2, -1):
        assert_close(qnp.apply_along_axis(qnp.sum, axis, q), np.apply_along_axis(np.sum, axis, x),
                     rtol=1e-14)
        assert_close(qnp.apply_along_axis(lambda v: v * v[0], axis, q),
                     np.apply_along_axis(lambda v: v * v[0], axis, x), rtol=1e-14)
        assert_close(qnp.apply_along_axis(lambda v: qnp.outer(v, v), axis, q),
                     np.apply_along_axis(lambda v: np.outer(v, v), axis, x), rtol=1e-14)
    # Extra arguments reach the function; under jit too.
    scaled = quabla.jit(lambda a: qnp.apply_along_axis(lambda v, s: qnp.max(v) * s, 1, a, 2.0))
    assert_close(scaled(q), 2.0 * x.max(axis=1), rtol=1e-14)
    with pytest.raises(ValueError, match="out of range"):
        qnp.apply_along_axis(qnp.sum, 3, q)
    for axes in ([0, 2], 1, [2, 0]):
        assert_close(qnp.apply_over_axes(qnp.sum, q, axes), np.apply_over_axes(np.sum, x, axes),
                     rtol=1e-14)
    with pytest.raises(ValueError, match="rank"):
        qnp.apply_over_axes(lambda a, ax: qnp.sum(a), q, [0])


def test_introspection_as_jax():
    assert qnp.isscalar(1.0) and qnp.isscalar(np.float32(1)) and qnp.isscalar("a")
    # JAX (unlike numpy) counts zero-dimensional arrays as scalars.
    assert qnp.isscalar(qnp.asarray(1.0)) and qnp.isscalar(np.array(1.0))
    assert not qnp.isscalar([1]) and not qnp.isscalar(qnp.ones(2))
    assert qnp.iterable([1]) and qnp.iterable(qnp.ones(2)) and not qnp.iterable(1)
    assert qnp.promote_types("int32", "float32") == np.float32
    assert qnp.promote_types("float32", "float64") == np.float64
    assert qnp.promote_types(bool, "int32") == np.int32
    assert qnp.promote_types(qnp.int32, qnp.uint32) == np.int32  # JAX: int64, which Quabla lacks
    assert qnp.issubdtype(qnp.float32, qnp.floating)
    assert not qnp.issubdtype(qnp.int32, qnp.floating)
    assert qnp.issubdtype(qnp.ones(2, qnp.int32).dtype, qnp.integer)


def test_copy_matvec_vecmat():
    x = qnp.asarray([1.0, 2.0])
    c = qnp.copy(x)
    assert c is not x and c.dtype == x.dtype
    assert_close(c, [1.0, 2.0], rtol=0)
    with pytest.raises(NotImplementedError, match="order"):
        qnp.copy(x, order="F")
    rng = np.random.default_rng(4)
    a, v, w = rng.normal(size=(2, 3, 4)), rng.normal(size=4), rng.normal(size=(5, 3))
    assert_close(qnp.matvec(a, v), np.einsum("...mn,...n->...m", a, v), rtol=1e-14)
    assert_close(qnp.vecmat(w, a[0]), np.einsum("...n,...nm->...m", w, a[0]), rtol=1e-14)
    w2 = rng.normal(size=(2, 3))
    assert_close(qnp.vecmat(w2, a), np.einsum("...n,...nm->...m", w2, a), rtol=1e-14)
    assert qnp.matvec(a, v).shape == (2, 3) and qnp.vecmat(w2, a).shape == (2, 4)
    with pytest.raises(ValueError, match="matvec"):
        qnp.matvec(v, v)


def test_poly_and_polydiv():
    roots = np.array([1.0, -2.0, 0.5])
    assert_close(qnp.poly(roots), np.poly(roots), rtol=1e-14)
    assert qnp.poly(np.array([1, 2])).dtype == qnp.float64  # float for integer roots
    assert_close(qnp.poly(np.array([1, 2])), np.poly([1, 2]), rtol=0)
    with pytest.raises(NotImplementedError, match="eigensolver"):
        qnp.poly(np.eye(2))
    u, v = np.array([1.0, -3.0, 2.0, 5.0]), np.array([2.0, -1.0])
    q, r = qnp.polydiv(u, v)
    nq, nr = np.polydiv(u, v)
    assert_close(q, nq, rtol=1e-14)
    # JAX keeps the remainder at u's length (leading zeros), where numpy trims it.
    assert r.shape == (4,)
    assert_close(r, np.concatenate([np.zeros(3), nr]), rtol=1e-14, atol=1e-15)
    assert_close(qnp.polydiv(u, v, trim_leading_zeros=True)[1], nr, rtol=1e-14)
    # A divisor of higher degree: quotient 0, remainder u (JAX's [0.], [1., 2.]).
    q, r = qnp.polydiv([1.0, 2.0], [1.0, -1.0, 3.0])
    assert_close(q, [0.0], rtol=0)
    assert_close(r, [1.0, 2.0], rtol=0)
    # Differentiable in both polynomials: d quotient / d u against central differences.
    g = quabla.grad(lambda u: qnp.sum(qnp.polydiv(u, qnp.asarray(v))[0]))(qnp.asarray(u))
    h = 1e-6
    fd = [(np.polydiv(u + h * e, v)[0].sum() - np.polydiv(u - h * e, v)[0].sum()) / (2 * h)
          for e in np.eye(4)]
    assert_close(g, fd, rtol=1e-8, atol=1e-10)


def test_put_and_place_as_jax():
    # Values recorded from JAX 0.10.2: v cycles over ind, out-of-range indices clip (the
    # default) or wrap; place cycles vals over the true elements.
    a = qnp.arange(6.0).reshape(2, 3)
    assert_close(qnp.put(a, qnp.asarray([0, 4]), qnp.asarray([10.0, 20.0]), inplace=False),
                 [[10, 1, 2], [3, 20, 5]], rtol=0)
    assert_close(qnp.put(a, [0, 4, 5], [10.0, 20.0], inplace=False),
                 [[10, 1, 2], [3, 20, 10]], rtol=0)
    assert_close(qnp.put(a, [0, 7], 9.0, mode="wrap", inplace=False), [[9, 9, 2], [3, 4, 5]],
                 rtol=0)
    assert_close(qnp.put(a, [0, 7], 9.0, inplace=False), [[9, 1, 2], [3, 4, 9]], rtol=0)
    with pytest.raises(ValueError, match="immutable"):
        qnp.put(a, 0, 1.0)
    assert_close(qnp.place(a, a > 2, qnp.asarray([1.0, 2.0]), inplace=False),
                 [[0, 1, 2], [1, 2, 1]], rtol=0)
    # Traceable: under jit, and differentiable in the values placed.
    g = quabla.grad(lambda v: qnp.sum(qnp.place(a, a > 2, v, inplace=False) ** 2))(
        qnp.asarray([1.0, 2.0]))
    assert_close(g, [2 * (1 + 1), 2 * 2], rtol=0)  # vals[0] lands twice, vals[1] once
    with pytest.raises(ValueError, match="immutable"):
        qnp.place(a, a > 2, 1.0)


def test_block_matches_numpy():
    a, b, c = np.ones((2, 2)), np.zeros((2, 1)), np.full((1, 3), 5.0)
    assert_close(qnp.block([[a, b], [c]]), np.block([[a, b], [c]]), rtol=0)
    assert_close(qnp.block([np.ones(2), np.zeros(3)]), np.block([np.ones(2), np.zeros(3)]),
                 rtol=0)
    assert_close(qnp.block([[1.0, 2.0], [3.0, 4.0]]), np.block([[1.0, 2.0], [3.0, 4.0]]),
                 rtol=0)
    cube = [[[np.ones((1, 1, 2))], [np.zeros((1, 1, 2))]]]
    assert_close(qnp.block(cube), np.block(cube), rtol=0)
    with pytest.raises(ValueError, match="depths"):
        qnp.block([[a], b])
    with pytest.raises(ValueError, match="empty"):
        qnp.block([[]])
    with pytest.raises(TypeError, match="lists"):
        qnp.block([(a, b)])


def test_vectorize_as_jax():
    v = qnp.vectorize(lambda x, y: x * y + 1)
    assert_close(v(qnp.arange(3.0), qnp.ones((2, 1))), [[1, 2, 3], [1, 2, 3]], rtol=0)
    m = qnp.vectorize(lambda a, b: a @ b, signature="(n,m),(m)->(n)")
    x, w = np.random.default_rng(5).normal(size=(4, 2, 3)), np.arange(3.0)
    got = m(x, w)
    assert got.shape == (4, 2)
    assert_close(got, x @ w, rtol=1e-14)
    e = qnp.vectorize(lambda x, p: x ** p, excluded={1})
    assert_close(e(qnp.arange(3.0), 2), [0, 1, 4], rtol=0)
    # Two outputs, and a function with Python control flow on a static argument.
    two = qnp.vectorize(lambda x: (x + 1, x * 2), signature="()->(),()")
    s, d = two(qnp.arange(3.0))
    assert_close(s, [1, 2, 3], rtol=0)
    assert_close(d, [0, 2, 4], rtol=0)
    with pytest.raises(ValueError, match="signature"):
        qnp.vectorize(lambda a: a, signature="(n)->(")
    with pytest.raises(ValueError, match="core dimension"):
        m(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ValueError, match="outputs"):
        qnp.vectorize(lambda a: a, signature="(n)->()")(np.ones((2, 3)))


def test_modf_and_the_complex_predicates_as_jax(tmp_path):
    # JAX 0.10.2: frac = x - trunc(x), so inf gives NaN (numpy: 0) and -0 gives +0.
    x = qnp.asarray([-2.5, -0.0, 0.0, 1.75, np.inf, -np.inf, np.nan, 3.0])
    frac, whole = qnp.modf(x)
    want_frac = np.array([-0.5, 0.0, 0.0, 0.75, np.nan, np.nan, np.nan, 0.0])
    want_whole = np.array([-2.0, -0.0, 0.0, 1.0, np.inf, -np.inf, np.nan, 3.0])
    assert np.array_equal(np.asarray(frac), want_frac, equal_nan=True)
    num = ~np.isnan(want_frac)  # a NaN's sign bit carries no meaning
    assert np.array_equal(np.signbit(np.asarray(frac))[num], np.signbit(want_frac)[num])
    assert np.array_equal(np.asarray(whole), want_whole, equal_nan=True)
    assert np.array_equal(np.signbit(np.asarray(whole)), np.signbit(want_whole))
    assert qnp.modf(qnp.asarray([3, -2]))[0].dtype == qnp.float64
    assert float(quabla.grad(lambda x: qnp.modf(x)[0])(2.3)) == 1.0
    assert float(quabla.grad(lambda x: qnp.modf(x)[1])(2.3)) == 0.0
    assert not qnp.iscomplexobj(qnp.ones(2)) and qnp.isrealobj(qnp.ones(2))
    assert qnp.iscomplexobj(1j) and not qnp.isrealobj(np.ones(2, complex))
    assert_close(qnp.iscomplex(qnp.ones(2)), [False, False], rtol=0)
    assert_close(qnp.isreal(qnp.ones((2, 2))), np.ones((2, 2), bool), rtol=0)
    # numpy's files: save writes a Quabla array through __array__, load gives one back.
    path = tmp_path / "x.npy"
    qnp.save(path, qnp.arange(4.0))
    back = qnp.load(path)
    assert isinstance(back, quabla.Array)
    assert_close(back, np.arange(4.0), rtol=0)
    qnp.savez(tmp_path / "xs.npz", a=qnp.ones(2))
    with qnp.load(tmp_path / "xs.npz") as archive:
        assert_close(archive["a"], np.ones(2), rtol=0)


def test_histograms_in_two_and_more_dimensions_match_numpy():
    rng = np.random.default_rng(6)
    pts = rng.normal(size=(200, 3))
    pts[0] = [3.0, 3.0, 3.0]  # on the last edge of the explicit range below: counted
    pts[1] = [9.0, 0.0, 0.0]  # outside it: dropped
    for kw in [{}, {"bins": [4, 5, 3]}, {"bins": 4, "range": [(-3, 3)] * 3},
               {"bins": [np.linspace(-2, 2, 5)] * 3}, {"bins": 3, "density": True},
               {"bins": 3, "weights": rng.uniform(size=200)}]:
        got, edges = qnp.histogramdd(pts, **kw)
        want, want_edges = np.histogramdd(pts, **kw)
        assert_close(got, want, rtol=1e-12, atol=1e-15)
        for e, we in zip(edges, want_edges):
            assert_close(e, we, rtol=1e-14)
    x, y = pts[:, 0], pts[:, 1]
    for bins in (5, [3, 4], np.linspace(-3, 3, 7), [np.linspace(-1, 1, 3), 4]):
        got, ex, ey = qnp.histogram2d(x, y, bins=bins)
        want, wx, wy = np.histogram2d(x, y, bins=bins)
        assert_close(got, want, rtol=0)
        assert_close(ex, wx, rtol=1e-14)
        assert_close(ey, wy, rtol=1e-14)
    with pytest.raises(ValueError, match="3 dimensions"):
        qnp.histogramdd(pts, bins=[2, 2])


def test_lax_collapse_broadcast_to_rank_and_the_barrier_as_jax():
    # Shapes recorded from JAX 0.10.2.
    x = qnp.arange(24.0).reshape(2, 3, 4)
    assert quabla.lax.collapse(x, 1).shape == (2, 12)
    assert quabla.lax.collapse(x, 0, 2).shape == (6, 4)
    assert quabla.lax.collapse(x, -2).shape == (2, 12)
    assert_close(quabla.lax.collapse(x, 0, 2), np.arange(24.0).reshape(6, 4), rtol=0)
    with pytest.raises(ValueError, match="rank 3"):
        quabla.lax.collapse(x, 2, 1)
    assert quabla.lax.broadcast_to_rank(qnp.ones(3), 3).shape == (1, 1, 3)
    assert quabla.lax.broadcast_to_rank(x, 2).shape == (2, 3, 4)
    assert quabla.lax.optimization_barrier((x, 1.0))[1] == 1.0
    assert float(quabla.grad(lambda v: qnp.sum(quabla.lax.optimization_barrier(v * 2.0)))(
        1.0)) == 2.0
