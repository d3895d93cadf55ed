"""Sorting, order statistics and set routines against JAX 0.10.2 goldens (the programs in
tools/programs.py run on both), plus what JAX cannot be asked: numpy's reference on random
data, derivatives against finite differences, and the errors."""

import os
import sys

import numpy as np
import pytest

import quabla
import quabla.numpy as qnp
from quabla import lax

from conftest import central_diff, golden, program_outputs

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from programs import sorting_cases  # noqa: E402

G = golden("jax_sorting")

# XLA's CPU backend fuses `a * w + b * v` into a fused multiply-add; Quabla rounds each
# operation, as IEEE and numpy do, so blends of two order statistics differ in the last bit.
# Where that happens here: recorded, so a new difference fails the bit-for-bit check.
FMA_BLENDS = {"quantile_axes"}


def test_every_sorting_program_matches_jax():
    for name, k, o, w in program_outputs(sorting_cases(quabla, qnp), G):
        if w.dtype.kind in "iub":
            # JAX's x64 indices are int64; Quabla's are int32 (it has no int64).
            np.testing.assert_array_equal(o.astype(w.dtype), w, err_msg=f"{name}[{k}]")
        elif name in FMA_BLENDS:
            np.testing.assert_allclose(o, w, rtol=4e-16, atol=1e-300, equal_nan=True,
                                       err_msg=f"{name}[{k}]")
        else:
            assert o.dtype == w.dtype, (name, k)
            # Bit for bit: signed zeros and NaN positions included.
            assert o.tobytes() == w.tobytes(), f"{name}[{k}]: {o} != {w}"


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint32, np.bool_])
def test_sort_and_argsort_match_numpys_stable_sort(dtype):
    r = np.random.RandomState(3)
    for shape, axis in [((50,), 0), ((4, 33), 1), ((17, 5, 3), 0), ((3, 4, 9), -2)]:
        v = (r.randint(-5, 6, size=shape) if dtype != np.bool_ else r.randint(0, 2, size=shape))
        v = v.astype(dtype)
        if dtype in (np.float32, np.float64):
            v = v * 0.5
            v.flat[::7] = np.nan
        got = qnp.argsort(qnp.asarray(v), axis=axis)
        want = np.argsort(v, axis=axis, kind="stable")
        np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(np.asarray(qnp.sort(qnp.asarray(v), axis=axis)),
                                      np.sort(v, axis=axis, kind="stable"))
        # Descending keeps ties in order: numpy's stable argsort of the negated keys.
        if dtype in (np.int32, np.float64):
            down = qnp.argsort(qnp.asarray(v), axis=axis, descending=True)
            key = np.where(np.isnan(v), -np.inf, -v) if dtype == np.float64 else -v
            np.testing.assert_array_equal(np.asarray(down),
                                          np.argsort(key, axis=axis, kind="stable"))


def test_gradients_through_the_permutation_match_finite_differences():
    r = np.random.RandomState(8)
    x0 = r.randn(2, 6)
    w = r.randn(2, 6)

    def f(x):
        x = qnp.asarray(x)
        return (qnp.sum(qnp.sort(x, axis=1) * w) + qnp.median(x)
                + qnp.sum(lax.top_k(x, 2)[0]) + qnp.quantile(x, 0.37))

    g = np.asarray(quabla.grad(f)(x0))
    num = central_diff(lambda z: float(f(z)), x0)
    np.testing.assert_allclose(g, num, rtol=1e-6, atol=1e-8)
    # Forward mode agrees with reverse mode.
    t = r.randn(2, 6)
    _, jt = quabla.jvp(f, (qnp.asarray(x0),), (qnp.asarray(t),))
    np.testing.assert_allclose(float(jt), float(np.sum(g * t)), rtol=1e-12)


def test_sort_under_jit_vmap_and_on_traced_values():
    r = np.random.RandomState(2)
    x = r.randn(5, 8)
    jitted = quabla.jit(lambda z: qnp.sort(z, axis=0, descending=True))
    np.testing.assert_array_equal(np.asarray(jitted(x)), -np.sort(-x, axis=0))
    batched = quabla.vmap(lambda z: lax.sort((z, qnp.arange(8)), num_keys=1)[1])(x)
    np.testing.assert_array_equal(np.asarray(batched), np.argsort(x, axis=1, kind="stable"))
    # Unbatched payloads next to a batched key are broadcast, not refused.
    idx = quabla.vmap(lambda z: lax.sort_key_val(z, qnp.arange(8.0))[1])(x)
    np.testing.assert_array_equal(np.asarray(idx), np.argsort(x, axis=1, kind="stable"))


def test_unique_and_isin_against_numpy():
    r = np.random.RandomState(4)
    v = r.randint(0, 6, size=40).astype(np.int32)
    vals, idx, inv, cnt = qnp.unique(qnp.asarray(v), return_index=True, return_inverse=True,
                                     return_counts=True)
    wv, wi, winv, wc = np.unique(v, return_index=True, return_inverse=True, return_counts=True)
    for a, b in [(vals, wv), (idx, wi), (inv, winv), (cnt, wc)]:
        np.testing.assert_array_equal(np.asarray(a), b)
    t = np.array([1, 3, 9], np.int32)
    for method in ["compare_all", "binary_search", "sort"]:
        np.testing.assert_array_equal(
            np.asarray(qnp.isin(qnp.asarray(v), qnp.asarray(t), method=method)), np.isin(v, t))
    res = qnp.unique_inverse(qnp.asarray(v.reshape(5, 8)))
    np.testing.assert_array_equal(np.asarray(res.values)[np.asarray(res.inverse_indices)],
                                  v.reshape(5, 8))


def test_errors_say_what_to_do():
    x = qnp.arange(5.0)
    with pytest.raises(ValueError, match="static `size`"):
        quabla.jit(lambda z: qnp.unique(z))(x)
    with pytest.raises(ValueError, match="larger than the last axis"):
        lax.top_k(x, 6)
    with pytest.raises(ValueError, match="num_keys"):
        lax.sort((x, x), num_keys=3)
    with pytest.raises(ValueError, match="one shape"):
        lax.sort((x, qnp.arange(4.0)))
    with pytest.raises(ValueError, match="method"):
        qnp.quantile(x, 0.5, method="hazen")
    with pytest.raises(ValueError, match="axis must be None"):
        qnp.sort(qnp.asarray(1.0))
    with pytest.raises(ValueError, match="side"):
        qnp.searchsorted(x, 1.0, side="middle")
    with pytest.raises(ValueError, match="order"):
        qnp.sort(x, order="f")
