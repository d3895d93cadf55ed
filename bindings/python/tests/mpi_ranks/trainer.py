"""One rank of `test_distributed.py`'s training check: `Trainer(data_parallel=True)` on this
rank's half of the batch against the single-process full-batch `Trainer`, both for 200 steps."""

import numpy as np

import quabla.numpy as qnp
from quabla import distributed
from quabla.optim import Trainer, adam

N, H = 64, 16


def loss(p, x, y):
    h = qnp.tanh(x @ p["w1"] + p["b1"])
    return qnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


def params(seed):
    rng = np.random.default_rng(seed)
    # No symmetry makes a gradient component vanish: Adam's first steps move each parameter by
    # about the learning rate in the direction of its gradient's sign, and a component that is
    # zero up to rounding would take its sign from the rounding.
    return {"w1": qnp.asarray(rng.standard_normal((1, H)).astype(np.float32)),
            "b1": qnp.asarray(0.5 * rng.standard_normal(H).astype(np.float32)),
            "w2": qnp.asarray(0.3 * rng.standard_normal((H, 1)).astype(np.float32)),
            "b2": qnp.full((1,), 0.1)}


def main():
    distributed.initialize()
    r, n = distributed.process_index(), distributed.process_count()
    x = np.linspace(-1, 1, N, dtype=np.float32)[:, None]
    y = np.sin(3 * x) + 0.5
    rows = slice(r * N // n, (r + 1) * N // n)
    # Each rank starts from other numbers: the trainer starts every replica from rank 0's.
    dp = Trainer(loss, params(seed=r), adam(1e-2), data_parallel=True)
    single = Trainer(loss, params(seed=0), adam(1e-2))
    for _ in range(200):
        dp.step(qnp.asarray(x[rows]), qnp.asarray(y[rows]))
        single.step(qnp.asarray(x), qnp.asarray(y))
    assert abs(dp.loss() - single.loss()) <= 1e-5 * single.loss() + 1e-7, (dp.loss(), single.loss())
    worst = 0.0
    for k, v in single.params().items():
        a, b = np.asarray(dp.params()[k]), np.asarray(v)
        # The test_distributed.py docstring says why 2e-5.
        assert np.all(np.abs(a - b) <= 2e-5 * (1 + np.abs(b))), (k, np.max(np.abs(a - b)))
        worst = max(worst, float(np.max(np.abs(a - b))))
        gathered = np.asarray(distributed.all_gather(dp.params()[k]))
        assert all(np.array_equal(gathered[0], g) for g in gathered), "replicas differ"
    print(f"RANK_OK {r} loss {single.loss():.3e} worst {worst:.2e}", flush=True)


if __name__ == "__main__":
    main()
