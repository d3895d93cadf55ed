"""Records JAX's `lax.erf_inv` on the CPU (XLA's kernel) for `vmath/erf_inv_jax.txt`, which
`vmath/tests_erf_inv.rs` compares bit for bit with the `erf_inv` kernels.

Run with JAX 0.10.2 (the benchmark venv has it: `cargo xtask bench` creates
`target/bench-venv`):

    target/bench-venv/bin/python backends/cpu/tools/erf_inv_jax.py

XLA fuses multiply-adds into FMA instructions where the CPU has them (x86-64 with FMA3,
aarch64); on a CPU without, its numbers differ and so would this file. Subnormal inputs and
results are left out: XLA flushes them to zero, Quabla keeps them.
"""
import os

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)
OUT = os.path.join(os.path.dirname(__file__), "..", "src", "vmath", "erf_inv_jax.txt")


def inputs(dt, rng):
    eps = np.finfo(dt).eps
    tiny = np.finfo(dt).tiny
    parts = [
        rng.uniform(-1, 1, 600),
        # The tail polynomials (w >= 5 in f32; w >= 6.25 and w >= 16 in f64).
        rng.choice([-1, 1], 300) * (1 - 10.0 ** -rng.uniform(2, -np.log10(eps) - 0.2, 300)),
        # Next to the ends, where -x^2 cancels against 1.
        np.array([s * (1 - k * eps / 2) for s in (1, -1) for k in range(1, 41)]),
        # Small magnitudes down to the smallest normal.
        rng.choice([-1, 1], 150) * 10.0 ** -rng.uniform(0, -np.log10(tiny) - 0.1, 150),
        np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2 * tiny, -2 * tiny]),
    ]
    x = np.concatenate(parts).astype(dt)
    # Inputs below 1.2 tiny have subnormal results, which XLA flushes to zero too.
    return x[(np.abs(x) >= 1.2 * tiny) | (x == 0)]


def main():
    rng = np.random.default_rng(20261205)
    f = jax.jit(jax.lax.erf_inv)
    lines = [f"# jax {jax.__version__} lax.erf_inv on the CPU: dtype, input bits, output bits"]
    for dt, name, width in [(np.float32, "f32", 8), (np.float64, "f64", 16)]:
        x = inputs(dt, rng)
        y = np.asarray(f(x))
        ubits = np.uint32 if dt == np.float32 else np.uint64
        for a, b in zip(x.view(ubits), y.view(ubits)):
            lines.append(f"{name} {int(a):0{width}x} {int(b):0{width}x}")
    with open(OUT, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines) - 1} pairs to {os.path.normpath(OUT)}")


if __name__ == "__main__":
    main()
