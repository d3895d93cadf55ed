"""The MLX plugin's anchor for `cargo xtask bench --mlx`: the same workloads as the plugin's
rows of `bench_suite --only mlx`, written in MLX's own Python API the fastest way MLX offers
(`mx.compile` of a pure step, the Laplacian as jvp of grad, Adam written out as optax's),
on MLX's CPU stream. One JSON object per row, as `jax_suite.py` prints.

    python benches/mlx_suite.py --dtype f32|f64 [--quick]
"""

import argparse
import json
import os
import statistics
import time

import mlx.core as mx
import numpy as np

from pinn_setup import init_arrays, points


def timed(f, args, reps):
    """MLX's faster way of the two, by steady time: `mx.compile` (whose CPU path JIT-compiles
    C++, not always faster: measured slower on the elementwise chain) or eager calls. For
    each, the first call (tracing and compiling included), then the median of `reps` calls,
    each evaluated (`mx.eval`, MLX's block_until_ready). Returns (compile ms, steady ms,
    which)."""
    best = None
    for variant, g in (("mx.compile", mx.compile(f)), ("eager", f)):
        t = time.perf_counter()
        mx.eval(g(*args))
        compile_ms = (time.perf_counter() - t) * 1e3
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            mx.eval(g(*args))
            times.append((time.perf_counter() - t) * 1e3)
        run = (compile_ms, statistics.median(times), variant)
        if best is None or run[1] < best[1]:
            best = run
    return best


def data(shape, scale, dtype):
    n = int(np.prod(shape)) if shape else 1
    return mx.array((np.sin(np.arange(n) * 0.618) * scale).reshape(shape)).astype(dtype)


def init(seed, dtype):
    return [mx.array(a).astype(dtype) for a in init_arrays(seed)]


def mlp(p, x):
    for k in range(3):
        x = mx.tanh(x @ p[2 * k] + p[2 * k + 1])
    return x @ p[6] + p[7]



def pinn_loss(p, xs, xb):
    def u(q):
        return mlp(p, q.reshape(1, 2)).reshape(())

    du = mx.grad(u)

    def laplacian(x):
        eye = mx.eye(2, dtype=x.dtype)
        return sum(mx.jvp(du, [x], [eye[k]])[1][0][k] for k in range(2))

    lap = mx.vmap(laplacian)(xs)
    f = 2 * np.pi ** 2 * mx.sin(np.pi * xs[:, 0]) * mx.sin(np.pi * xs[:, 1])
    res = lap + f
    ub = mlp(p, xb)
    return mx.mean(res ** 2) + mx.mean(ub ** 2)


def pinn_step(n, dtype, reps):
    inner, bnd = points(n)
    xs, xb = mx.array(inner).astype(dtype), mx.array(bnd).astype(dtype)
    params = init(0, dtype)
    m = [mx.zeros_like(q) for q in params]
    v = [mx.zeros_like(q) for q in params]
    count = mx.array(0, dtype=mx.int32)
    k = len(params)
    value_and_grad = mx.value_and_grad(pinn_loss)

    def step(*a):
        p, m, v, count, xs, xb = a[:k], a[k:2 * k], a[2 * k:3 * k], a[3 * k], a[-2], a[-1]
        loss, g = value_and_grad(list(p), xs, xb)
        # optax.adam(1e-3): b1 0.9, b2 0.999, eps 1e-8, bias-corrected moments.
        count = count + 1
        c = count.astype(dtype)
        m = [0.9 * mi + 0.1 * gi for mi, gi in zip(m, g)]
        v = [0.999 * vi + 0.001 * gi * gi for vi, gi in zip(v, g)]
        p = [pi - 1e-3 * (mi / (1 - 0.9 ** c)) / (mx.sqrt(vi / (1 - 0.999 ** c)) + 1e-8)
             for pi, mi, vi in zip(p, m, v)]
        return (*p, *m, *v, count, loss)

    return timed(step, (*params, *m, *v, count, xs, xb), reps)


def chain(x):
    for i in range(50):
        k = i % 5
        x = mx.sin(x) if k == 0 else x * 1.0001 if k == 1 else x + 0.5 if k == 2 else \
            mx.tanh(x) if k == 3 else x - 0.25
    return x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    mx.set_default_device(mx.cpu)
    dtype = mx.float64 if a.dtype == "f64" else mx.float32
    reps = 3 if a.quick else 15
    threads = len(os.sched_getaffinity(0))
    rows = [("pinn_step_jvp_grad_n1024",) + pinn_step(1024, dtype, reps),
            ("elementwise_chain50_1e6",) + timed(chain, (data([1_000_000], 1.0, dtype),), reps),
            ("matmul_1024",) + timed(lambda x, y: x @ y, (data([1024, 1024], 1.0, dtype),
                                                          data([1024, 1024], 0.5, dtype)), reps)]
    for name, c, s, variant in rows:
        print(json.dumps({"system": "mlx", "name": name, "dtype": a.dtype, "threads": threads,
                          "compile_ms": round(c, 3), "steady_ms": round(s, 4),
                          "variant": variant}))


if __name__ == "__main__":
    main()
