"""The PINN workload's data, shared by the framework suites (`jax_suite.py`,
`mlx_suite.py`) so that each gets the same parameters and points as the Rust suite's
`pinn::init` and `pinn::points`: numpy arrays, converted by each suite."""

import numpy as np

LAYERS = [(2, 64), (64, 64), (64, 64), (64, 1)]


def init_arrays(seed):
    """Weights (Glorot-uniform from the Rust suite's LCG) and zero biases, float32, in the
    order w0, b0, w1, b1, ..."""
    s = seed
    params = []
    for fi, fo in LAYERS:
        lim = np.sqrt(6.0 / (fi + fo))
        w = np.empty(fi * fo, np.float32)
        for i in range(fi * fo):
            s = (s * 6364136223846793005 + 1442695040888963407) % 2**64
            w[i] = ((s >> 11) / 2.0**53 * 2.0 - 1.0) * lim
        params += [w.reshape(fi, fo), np.zeros(fo, np.float32)]
    return params


def points(n):
    """`n` quasi-random collocation points in the unit square and 256 on its boundary."""
    a1, a2 = 0.7548776662466927, 0.5698402909980533
    i = np.arange(n)
    inner = np.stack([(0.5 + a1 * i) % 1.0, (0.5 + a2 * i) % 1.0], 1).astype(np.float32)
    t = ((np.arange(64) + 0.5) / 64.0).astype(np.float32)
    z, o = np.zeros(64, np.float32), np.ones(64, np.float32)
    bnd = np.stack([np.stack(v, 1) for v in ((t, z), (t, o), (z, t), (o, t))], 1).reshape(-1, 2)
    return inner, bnd
