"""The PINN main job in Python (the twin of examples/src/bin/pinn_poisson.rs), written as it
would be with JAX + optax: -(u_xx + u_yy) = 2 pi^2 sin(pi x) sin(pi y) on [0, 1]^2, u = 0 on
the boundary, MLP 2 -> 64 -> 64 -> 64 -> 1 (tanh, Glorot-uniform from quabla.random), Adam
lr 1e-3 in float32, the Laplacian by vmap(hessian) per collocation point, one jitted step.

    python examples/python/pinn_poisson.py [--steps 2000] [--n 1024] [--device mlx]

``--device`` names a platform (``quabla.devices()`` lists those found; the MLX plugin, for
instance, through ``QUABLA_PLUGIN_PATH`` or its wheel): the parameters, optimizer state and
points are put there, and the jitted step runs where its inputs are.
"""

import argparse
import time

import numpy as np

import quabla
import quabla.numpy as qnp
from quabla import optim, random

LAYERS = [(2, 64), (64, 64), (64, 64), (64, 1)]


def init(key):
    params = []
    for fan_in, fan_out in LAYERS:
        key, sub = random.split(key)
        lim = float(np.sqrt(6.0 / (fan_in + fan_out)))
        params.append({"w": random.uniform(sub, (fan_in, fan_out), minval=-lim, maxval=lim),
                       "b": qnp.zeros(fan_out)})
    return params


def mlp(params, x):
    for layer in params[:-1]:
        x = qnp.tanh(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def points(n):
    a1, a2 = 0.7548776662466927, 0.5698402909980533
    i = np.arange(n)
    inner = np.stack([(0.5 + a1 * i) % 1.0, (0.5 + a2 * i) % 1.0], axis=1)
    t = (np.arange(64) + 0.5) / 64.0
    z, o = np.zeros(64), np.ones(64)
    bnd = np.concatenate([np.stack(p, axis=1) for p in ((t, z), (t, o), (z, t), (o, t))])
    return inner.astype(np.float32), bnd.astype(np.float32)


def loss(params, xs, xb):
    def u(p):
        return mlp(params, p.reshape(1, 2)).reshape(())

    h = quabla.vmap(quabla.hessian(u))(xs)
    lap = h[:, 0, 0] + h[:, 1, 1]
    f = 2 * np.pi ** 2 * qnp.sin(np.pi * xs[:, 0]) * qnp.sin(np.pi * xs[:, 1])
    res = lap + f
    ub = mlp(params, xb)
    return qnp.mean(res ** 2) + qnp.mean(ub ** 2)


def main(steps=2000, n=1024, log_every=200, device=None):
    platform = device or quabla.default_backend()
    print(f"PINN Poisson on `{platform}`: {n} collocation points, 256 boundary "
          f"points, {steps} Adam steps (float32)")
    inner, bnd = points(n)
    xs, xb = qnp.asarray(inner), qnp.asarray(bnd)
    params = init(random.PRNGKey(0))
    opt = optim.adam(1e-3)
    state = opt.init(params)
    if device is not None:
        params, state, xs, xb = quabla.device_put((params, state, xs, xb), device)

    @quabla.jit
    def step(params, state, xs, xb):
        value, grads = quabla.value_and_grad(loss)(params, xs, xb)
        updates, state = opt.update(grads, state, params)
        return optim.apply_updates(params, updates), state, value

    start = time.perf_counter()
    history = []
    for k in range(steps):
        params, state, value = step(params, state, xs, xb)
        if k == 0 or (k + 1) % log_every == 0 or k + 1 == steps:
            history.append(float(value))
            rate = (k + 1) / (time.perf_counter() - start)
            print(f"step {k + 1:>5}  loss {history[-1]:.6e}  {rate:.1f} steps/s")
    g = np.stack(np.meshgrid(np.linspace(0, 1, 101), np.linspace(0, 1, 101), indexing="ij"),
                 axis=-1).reshape(-1, 2)
    grid = quabla.device_put(qnp.asarray(g.astype(np.float32)), platform)
    pred = np.asarray(mlp(params, grid)).reshape(-1)
    exact = np.sin(np.pi * g[:, 0]) * np.sin(np.pi * g[:, 1])
    rel = float(np.sqrt(np.sum((pred - exact) ** 2) / np.sum(exact ** 2)))
    print(f"final loss {history[-1]:.6e}; relative L2 error {rel:.3e}; "
          f"{time.perf_counter() - start:.1f} s")
    return history, rel


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--device", default=None, help="a platform name, e.g. mlx")
    a = ap.parse_args()
    main(a.steps, a.n, device=a.device)
