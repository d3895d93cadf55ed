"""The workloads of examples/src/bin/bench_suite.rs in JAX (+ optax), for `cargo xtask bench
--compare-jax`: compile time (first call of a fresh jit) and steady time (median of repeated
calls), one JSON object per line. Nothing in the test command runs this.

    python benches/jax_suite.py --dtype f32|f64 [--quick] [--only ode|conv|pinn16384|gpu]
        [--platform cpu|gpu]
"""

import argparse
import json
import os
import statistics
import time

import numpy as np

import jax
import jax.numpy as jnp
import jax.scipy.linalg  # noqa: F401  (cho_solve)

jax.config.update("jax_enable_x64", True)
# `--platform gpu` (with `--only gpu`) runs the accelerator rows on JAX's CUDA backend;
# read before anything touches a device.
_PLATFORM = "gpu" if "--platform=gpu" in os.sys.argv or any(
    a == "--platform" and b == "gpu" for a, b in zip(os.sys.argv, os.sys.argv[1:])) else "cpu"
jax.config.update("jax_platforms", "cuda" if _PLATFORM == "gpu" else "cpu")
import optax  # noqa: E402

from jax_ode_rows import mlp_params, neural_ode, neural_ode_diffrax, ode_rows  # noqa: E402
from pinn_setup import init_arrays, points  # noqa: E402


def timed(f, args, reps):
    jf = jax.jit(f)
    t = time.perf_counter()
    jax.block_until_ready(jf(*args))
    compile_ms = (time.perf_counter() - t) * 1e3
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        jax.block_until_ready(jf(*args))
        times.append((time.perf_counter() - t) * 1e3)
    return compile_ms, statistics.median(times)


def data(shape, scale, dtype):
    n = int(np.prod(shape)) if shape else 1
    return jnp.asarray((np.sin(np.arange(n) * 0.618) * scale).reshape(shape), dtype)


def init(seed, dtype):
    return [jnp.asarray(a, dtype) for a in init_arrays(seed)]


def mlp(p, x):
    for k in range(3):
        x = jnp.tanh(x @ p[2 * k] + p[2 * k + 1])
    return x @ p[6] + p[7]



def pinn_loss(p, xs, xb):
    u = lambda q: mlp(p, q.reshape(1, 2)).reshape(())  # noqa: E731
    h = jax.vmap(jax.hessian(u))(xs)
    f = 2 * np.pi ** 2 * jnp.sin(np.pi * xs[:, 0]) * jnp.sin(np.pi * xs[:, 1])
    res = h[:, 0, 0] + h[:, 1, 1] + f
    ub = mlp(p, xb)
    return jnp.mean(res ** 2) + jnp.mean(ub ** 2)


def pinn_loss_jvp_of_grad(p, xs, xb):
    u = lambda q: mlp(p, q.reshape(1, 2)).reshape(())  # noqa: E731
    du = jax.grad(u)

    def laplacian(x):
        eye = jnp.eye(2, dtype=x.dtype)
        return sum(jax.jvp(du, (x,), (eye[k],))[1][k] for k in range(2))

    lap = jax.vmap(laplacian)(xs)
    f = 2 * np.pi ** 2 * jnp.sin(np.pi * xs[:, 0]) * jnp.sin(np.pi * xs[:, 1])
    res = lap + f
    ub = mlp(p, xb)
    return jnp.mean(res ** 2) + jnp.mean(ub ** 2)


def pinn_step(n, dtype, reps, loss=pinn_loss):
    inner, bnd = points(n)
    xs, xb = jnp.asarray(inner, dtype), jnp.asarray(bnd, dtype)
    params = init(0, dtype)
    opt = optax.adam(1e-3)
    state = opt.init(params)

    def step(p, s, xs, xb):
        v, g = jax.value_and_grad(loss)(p, xs, xb)
        u, s = opt.update(g, s, p)
        return optax.apply_updates(p, u), s, v

    return timed(step, (params, state, xs, xb), reps)


def chain(x):
    for i in range(50):
        k = i % 5
        x = jnp.sin(x) if k == 0 else x * 1.0001 if k == 1 else x + 0.5 if k == 2 else \
            jnp.tanh(x) if k == 3 else x - 0.25
    return x


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (x[:-1] - 1.0) ** 2)


def conv_rows(dtype, reps):
    """A 3x3 SAME convolution of a 64-channel 128x128 image (NCHW, OIHW) and the gradient
    of the sum of its squares in both operands (XLA's own convolution)."""
    x, w = data([1, 64, 128, 128], 1.0, dtype), data([64, 64, 3, 3], 1.0 / 24.0, dtype)

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")

    def loss(x, w):
        y = conv(x, w)
        return jnp.sum(y * y)

    return [("conv2d_3x3_c64_128x128",) + timed(conv, (x, w), reps),
            ("conv2d_3x3_c64_128x128_grad",) + timed(jax.grad(loss, argnums=(0, 1)), (x, w),
                                                     reps)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="f32")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["ode", "conv", "pinn16384", "gpu"],
                    help="run only the ODE, conv, large-PINN (jvp of grad) or accelerator rows")
    ap.add_argument("--platform", choices=["cpu", "gpu"], default="cpu")
    a = ap.parse_args()
    dtype = jnp.float64 if a.dtype == "f64" else jnp.float32
    reps = 3 if a.quick else 15
    threads = len(os.sched_getaffinity(0))
    rows = []
    if a.only == "ode":
        rows += ode_rows(dtype, reps, timed)
        emit(rows, a.dtype, threads)
        return
    if a.only == "pinn16384":
        rows.append(("pinn_step_jvp_grad_n16384",)
                    + pinn_step(16384, dtype, reps, pinn_loss_jvp_of_grad))
        emit(rows, a.dtype, threads)
        return
    if a.only == "gpu":
        gpu_rows(dtype, a.dtype, threads)
        return
    if a.only == "conv":
        rows += conv_rows(dtype, reps)
        emit(rows, a.dtype, threads)
        return
    for suffix, loss in (("", pinn_loss), ("_jvp_grad", pinn_loss_jvp_of_grad)):
        rows.append((f"pinn_step{suffix}_n1024",) + pinn_step(1024, dtype, reps, loss))
        if not a.quick:
            rows.append((f"pinn_step{suffix}_n16384",) + pinn_step(16384, dtype, 3, loss))
    x, y = data([10**6], 1.0, dtype), data([10**6], 0.5, dtype)
    rows.append(("mul_1e6",) + timed(lambda a, b: a * b, (x, y), reps))
    rows.append(("tanh_1e6",) + timed(jnp.tanh, (x,), reps))
    rows.append(("exp_1e6",) + timed(jnp.exp, (x,), reps))
    rows.append(("elementwise_chain50_1e6",) + timed(chain, (data([10**6], 1.0, dtype),), reps))
    rows.append(("matmul_1024",) + timed(lambda x, y: x @ y, (data([1024, 1024], 1.0, dtype),
                                                              data([1024, 1024], 0.5, dtype)),
                                         reps))
    rows += conv_rows(dtype, reps)
    params = init(1, dtype)

    def per_example(p, x, y):
        def loss(q, xi, yi):
            r = mlp(q, xi.reshape(1, 2)).reshape(()) - yi
            return r * r
        return jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(p, x, y)

    rows.append(("per_example_grads_mlp_b1024",) + timed(
        per_example, (params, data([1024, 2], 1.0, dtype), data([1024], 1.0, dtype)), reps))

    def mlp_loss(p, x, y):
        h = x
        for k in range(3):
            h = h @ p[2 * k] + p[2 * k + 1]
            if k < 2:
                h = jnp.tanh(h)
        r = h.reshape(-1) - y
        return jnp.mean(r * r)

    mlp_args = []
    for k, (fi, fo) in enumerate([(32, 128), (128, 128), (128, 1)]):
        mlp_args += [data([fi, fo], 1.0 / np.sqrt(fi), dtype), data([fo], 0.1 * (k + 1), dtype)]
    rows.append(("mlp_batch_grad_b1024",) + timed(
        jax.grad(mlp_loss), (mlp_args, data([1024, 32], 1.0, dtype), data([1024], 1.0, dtype)),
        reps))

    def fori(c, a):
        return jax.lax.fori_loop(0, 10_000, lambda i, v: v * 0.999 + a, c)

    def rnn(w, u, h0, xs):
        h, _ = jax.lax.scan(lambda h, x: (jnp.tanh(w @ h + u @ x), None), h0, xs)
        return jnp.sum(h)

    fargs = (data([], 1.0, dtype), data([], 0.001, dtype))
    rargs = (data([64, 64], 0.1, dtype), data([64, 8], 0.1, dtype), data([64], 0.0, dtype),
             data([10_000, 8], 1.0, dtype))
    rows.append(("fori_10k_scalar",) + timed(fori, fargs, reps))
    rows.append(("fori_10k_scalar_grad",) + timed(jax.grad(fori, argnums=(0, 1)), fargs, reps))
    rows.append(("scan_10k_rnn64",) + timed(rnn, rargs, reps))
    rows.append(("scan_10k_rnn64_grad",) + timed(jax.grad(rnn, argnums=(0, 1)), rargs,
                                                 min(reps, 5)))
    rows.append(("hessian_rosenbrock_n100",) + timed(jax.hessian(rosenbrock),
                                                     (data([100], 1.0, dtype),), reps))

    def hvp(x, v):
        return jax.jvp(jax.grad(rosenbrock), (x,), (v,))[1]

    rows.append(("hvp_rosenbrock_n1000",) + timed(hvp, (data([1000], 1.0, dtype),
                                                        data([1000], 0.3, dtype)), reps))
    # CG on the 256x256 Laplacian (examples/src/solver_problems.rs).
    grid = 256

    def laplacian(u):
        p = jnp.pad(u, 1)
        return 4 * u - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]

    def grid_values(seed):
        return jnp.asarray(np.sin(np.arange(grid * grid) * seed).reshape(grid, grid), dtype)

    tol = 1e-5 if a.dtype == "f32" else 1e-8

    def cg_solve(b):
        return jax.scipy.sparse.linalg.cg(laplacian, b, tol=tol, maxiter=10_000)[0]

    def cg_loss(b, w):
        return jnp.sum(cg_solve(b) * w)

    b, w = grid_values(0.0137), grid_values(0.071)
    rows.append(("cg_laplacian256",) + timed(cg_solve, (b,), min(reps, 3)))
    rows.append(("cg_laplacian256_grad_b",) + timed(jax.grad(cg_loss), (b, w), min(reps, 3)))

    rows += ode_rows(dtype, reps, timed)
    emit(rows, a.dtype, threads)


def gpu_rows(dtype, dtype_name, threads):
    """The accelerator rows, named as `bench_suite --only gpu`'s, each printed when
    measured. Matrix products at "highest" precision: Quabla's f32 products do not use TF32,
    and XLA's default on NVIDIA GPUs does."""
    reps = 5
    with jax.default_matmul_precision("highest"):
        def rnn(w, u, h0, xs):
            h, _ = jax.lax.scan(lambda h, x: (jnp.tanh(w @ h + u @ x), None), h0, xs)
            return jnp.sum(h)

        p = mlp_params(dtype)
        argnums = tuple(range(len(p)))
        rows = [
            ("pinn_step_jvp_grad_n1024", lambda: pinn_step(1024, dtype, reps,
                                                           pinn_loss_jvp_of_grad)),
            ("pinn_step_jvp_grad_n16384", lambda: pinn_step(16384, dtype, reps,
                                                            pinn_loss_jvp_of_grad)),
            ("matmul_4096", lambda: timed(lambda x, y: x @ y, (data([4096, 4096], 1.0, dtype),
                                                               data([4096, 4096], 0.5, dtype)),
                                          reps)),
            ("cholesky_solve_2048", lambda: timed(cholesky_solve, spd(2048, dtype), reps)),
            ("elementwise_chain50_1e7", lambda: timed(chain, (data([10**7], 1.0, dtype),), reps)),
            ("scan_10k_rnn64", lambda: timed(rnn, (
                data([64, 64], 0.1, dtype), data([64, 8], 0.1, dtype), data([64], 0.0, dtype),
                data([10_000, 8], 1.0, dtype)), reps)),
            ("neural_ode_mlp64", lambda: timed(neural_ode(1.0, dtype), p, reps)),
            ("neural_ode_mlp64_grad_direct_vs_diffrax",
             lambda: timed(jax.grad(neural_ode_diffrax(1.0, dtype), argnums=argnums), p, reps)),
            # Rows beyond the list last, as bench_suite orders them.
            ("cholesky_solve_batch4096_n16", lambda: timed(cholesky_solve,
                                                           spd(16, dtype, batch=(4096,)), reps)),
            ("eigh_svd_batch4096_n16", lambda: timed(eigh_svd, (
                spd(16, dtype, batch=(4096,))[0], data([4096, 16, 16], 1.0, dtype)), reps)),
            ("embedding_grad_v10000_n100000_d64", lambda: timed(
                jax.grad(lambda t, i, w: jnp.sum(t[i] * w)),
                (data([10_000, 64], 1.0, dtype),
                 jnp.asarray(np.arange(100_000) * 7919 % 10_000, jnp.int32),
                 data([100_000, 64], 0.5, dtype)), reps)),
            ("sort_1000000", lambda: timed(jnp.sort, (data([1_000_000], 1.0, dtype),), reps)),
            ("scan_trajectory_1000x65536", lambda: timed(trajectory(1000),
                                                         (data([65_536], 1.0, dtype),), reps)),
        ]
        # Substrings of the rows' names, `|` between alternatives.
        only = os.environ.get("QUABLA_BENCH_ROWS", "").replace(" ", "_").split("|")
        for name, row in rows:
            if any(o in name for o in only):
                emit([(name,) + row()], dtype_name, threads)


def trajectory(steps):
    """A scan storing every state of `h <- 0.999 h + 0.001 sin h`, their sum, as
    bench_suite's `scan_trajectory` row."""
    def step(h, _):
        h = h * 0.999 + jnp.sin(h) * 0.001
        return h, h

    def f(h0):
        return jnp.sum(jax.lax.scan(step, h0, None, length=steps)[1])

    return f


def spd(n, dtype, batch=()):
    """`x xᵀ / n + I` and an `n x 8` right-hand side (`batch` of each), as bench_suite's
    rows."""
    x = data([*batch, n, n], 1.0, dtype)
    return (x @ jnp.swapaxes(x, -1, -2) / n + jnp.eye(n, dtype=dtype),
            data([*batch, n, 8], 1.0, dtype))


def cholesky_solve(a, b):
    c = jnp.linalg.cholesky(a)
    return jnp.sum(jax.scipy.linalg.cho_solve((c, True), b))


def eigh_svd(a, x):
    """bench_suite's `eigh_svd_batch` row: `sum(w) + sum(|v|) + sum(s) + sum(|u|)`."""
    w, v = jnp.linalg.eigh(a)
    u, s, _ = jnp.linalg.svd(x, full_matrices=False)
    return jnp.sum(w) + jnp.sum(jnp.abs(v)) + jnp.sum(s) + jnp.sum(jnp.abs(u))


def emit(rows, dtype, threads):
    for name, c, s in rows:
        print(json.dumps({"system": "jax", "name": name, "dtype": dtype, "threads": threads,
                          "compile_ms": round(c, 3), "steady_ms": round(s, 4)}), flush=True)


if __name__ == "__main__":
    main()
