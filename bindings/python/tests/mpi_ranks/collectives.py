"""One rank of `test_distributed.py`'s collectives check: every collective, dtype and op on
this rank's data against numpy's result over every rank's data (each rank can make every
rank's data: it depends only on the seed and the rank)."""

import numpy as np

import quabla
from quabla import distributed


def rank_data(rank, dtype, shape):
    rng = np.random.default_rng(1000 + rank)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 1000, shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if rank == 1:
        x.flat[0] = np.nan  # NaN wins max and min, as jnp.maximum/minimum
    x.flat[1] = -0.0 if rank % 2 else 0.0
    return x


def ieee_max(a, b):
    # numpy keeps the first of equal values; Quabla's max (IEEE 754-2019 maximum, as its
    # `max` primitive) orders -0 below +0. NaN wins in both.
    if not np.issubdtype(a.dtype, np.floating):
        return np.maximum(a, b)
    return np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b))


def ieee_min(a, b):
    if not np.issubdtype(a.dtype, np.floating):
        return np.minimum(a, b)
    return np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b))


def reduce_in_rank_order(parts, op):
    acc = parts[0].copy()
    for p in parts[1:]:
        if op in ("sum", "mean"):
            acc = acc + p
        elif op == "max":
            acc = np.logical_or(acc, p) if acc.dtype == np.bool_ else ieee_max(acc, p)
        else:
            acc = np.logical_and(acc, p) if acc.dtype == np.bool_ else ieee_min(acc, p)
    if op == "mean":
        acc = acc / acc.dtype.type(len(parts))
    return acc


def same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype,
                                                                 got.shape, want.shape)
    if np.issubdtype(want.dtype, np.floating):
        # Bit for bit, NaN and the sign of zero included.
        assert np.array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8)), (
            got, want)
    else:
        assert np.array_equal(got, want), (got, want)


def main():
    quabla.config.update("jax_enable_x64", True)  # float64 stays float64
    distributed.initialize()
    r, n = distributed.process_index(), distributed.process_count()
    shape = (2 * n, 3)
    for dtype in (np.float32, np.float64, np.int32, np.uint32, np.bool_):
        parts = [rank_data(k, dtype, shape) for k in range(n)]
        mine = quabla.numpy.asarray(parts[r])
        ops = ["max", "min"] + ([] if dtype == np.bool_ else ["sum"])
        ops += ["mean"] if np.issubdtype(dtype, np.floating) else []
        for op in ops:
            want = reduce_in_rank_order(parts, op)
            same(distributed.all_reduce(mine, op), want)
            rows = shape[0] // n
            same(distributed.reduce_scatter(mine, op), want[r * rows:(r + 1) * rows])
        same(distributed.all_gather(mine), np.stack(parts))
        same(distributed.broadcast(mine, root=n - 1), parts[n - 1])
    # Pytrees go leaf by leaf.
    tree = {"a": quabla.numpy.ones(2), "b": (quabla.numpy.full((), float(r)),)}
    out = distributed.all_reduce(tree, "sum")
    same(out["a"], np.full(2, n, np.float64))
    same(out["b"][0], np.asarray(sum(range(n)), np.float64))
    print(f"RANK_OK {r}", flush=True)


if __name__ == "__main__":
    main()
