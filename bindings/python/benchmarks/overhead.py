"""Python-level overhead of an eager op and of a cached jit call on tiny inputs (issue 5 asks
< 10 us and < 20 us). The raw-extension rows show how much of it is the Rust side.

    python bindings/python/benchmarks/overhead.py
"""

import time

import quabla
import quabla.numpy as qnp


def per_call(fn, n=20000):
    for _ in range(200):
        fn()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - start) / n)
    return best * 1e6


def main():
    x, y = qnp.ones(4), qnp.ones(4)
    f = quabla.jit(lambda a, b: a * b + 1.0)
    f(x, y)
    raw_jit = quabla._quabla.Jit(lambda r: [r[0]])
    rows = [
        ("eager x + y (4 elements)", lambda: x + y),
        ("  of which the extension", lambda: x._raw.binary("add", y._raw)),
        ("jit call, 2 array args (cached)", lambda: f(x, y)),
        ("  of which the extension", lambda: raw_jit([x._raw, y._raw])),
    ]
    for name, fn in rows:
        print(f"{name:36s} {per_call(fn):7.2f} us")


if __name__ == "__main__":
    main()
