"""The problems of `cargo bench -p quabla --bench solvers`, solved with scipy (the reference
for the numbers in the numerics issue's note). Needs numpy and scipy:

    python -m venv /tmp/sp && /tmp/sp/bin/pip install numpy scipy
    /tmp/sp/bin/python benches/scipy_solvers.py

Prints one line per workload: best-of-5 wall time and the solver's own counts.
"""
import time

import numpy as np
import scipy
from scipy.integrate import solve_ivp
from scipy.sparse.linalg import LinearOperator, cg

N = 256


def best(f, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def laplacian(v):
    u = v.reshape(N, N)
    p = np.pad(u, 1)
    return (4 * u - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]).ravel()


def grid(seed):
    return np.sin(np.arange(N * N) * seed)


def main():
    print(f"scipy {scipy.__version__}, numpy {np.__version__}")
    op = LinearOperator((N * N, N * N), matvec=laplacian, dtype=np.float64)
    b = grid(0.0137)
    iters = []

    def solve():
        iters.clear()
        x, info = cg(op, b, rtol=1e-8, atol=0.0, maxiter=10_000, callback=lambda _: iters.append(1))
        return x, info

    t, (x, info) = best(solve)
    rel = np.linalg.norm(laplacian(x) - b) / np.linalg.norm(b)
    print(f"cg_laplacian_256/solve: {t * 1e3:.1f} ms, {len(iters)} iterations, info {info}, "
          f"relative residual {rel:.2e} (the gradient w.r.t. b is one more such solve)")

    rng = np.random.default_rng(0)
    del rng

    def layer(i, o, s):
        k = np.arange(i * o)
        w = (np.sin((k + s) * 0.7371) / np.sqrt(i)).reshape(i, o)
        bb = np.cos((np.arange(o) + s) * 1.31) * 0.1
        return w, bb

    (w1, b1), (w2, b2), (w3, b3) = layer(8, 64, 1.0), layer(64, 64, 2.0), layer(64, 8, 3.0)

    def field(t, y):
        h = np.tanh(y @ w1 + b1)
        h = np.tanh(h @ w2 + b2)
        return h @ w3 + b3

    y0 = np.array([0.5, -0.25, 0.15, 0.4, -0.5, 0.1, 0.0, 0.3])
    ts = np.linspace(0.0, 5.0, 11)
    t, sol = best(lambda: solve_ivp(field, (0.0, 5.0), y0, method="RK45", t_eval=ts,
                                    rtol=1e-6, atol=1e-6))
    print(f"neural_ode/forward (RK45): {t * 1e3:.2f} ms, {sol.nfev} evaluations "
          "(scipy has no gradient)")

    def rober(t, y):
        return [-0.04 * y[0] + 1e4 * y[1] * y[2],
                0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
                3e7 * y[1] ** 2]

    for method in ["Radau", "BDF", "LSODA"]:
        t, sol = best(lambda: solve_ivp(rober, (0.0, 1000.0), [1.0, 0.0, 0.0], method=method,
                                        rtol=1e-6, atol=1e-10))
        print(f"robertson/{method}: {t * 1e3:.1f} ms, {len(sol.t) - 1} steps, {sol.nfev} f "
              f"evaluations, {sol.njev} Jacobians, y(1000) = {sol.y[:, -1]}")


if __name__ == "__main__":
    main()
