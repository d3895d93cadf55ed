"""The ODE rows of `jax_suite.py`, twins of `examples/src/ode_workloads.rs`: forward solves
against `jax.experimental.ode.odeint` (dopri5), gradients against diffrax (Dopri5, or Kvaerno5
for the stiff Robertson problem, with its default recursive-checkpoint adjoint, the
differentiate-through-the-solver mode Quabla's "direct" gradient is), at the same tolerances
and bounds."""

import numpy as np

import jax
import jax.numpy as jnp
from jax.experimental.ode import odeint

import diffrax

LV_PARAMS = [1.5, 1.0, 3.0, 1.0]
LV_Y0 = [1.2, 0.8]
# Final times of about 5, 50 and 500 dopri5 steps at rtol = atol = 1e-6.
LV_SPANS = [(0.5, "5"), (5.0, "50"), (50.0, "500")]
LV_BOUNDS = [4096, 65536]
ROBERTSON_RATES = [0.04, 1e4, 3e7]
ROBERTSON_END = 100.0


def mlp_params(dtype):
    def layer(i, o, s):
        k = np.arange(i * o)
        wl = (np.sin((k + s) * 0.7371) / np.sqrt(i)).reshape(i, o)
        bl = np.cos((np.arange(o) + s) * 1.31) * 0.1
        return [jnp.asarray(wl, dtype), jnp.asarray(bl, dtype)]

    return layer(8, 64, 1.0) + layer(64, 64, 2.0) + layer(64, 8, 3.0)


def mlp_field(y, p, speed):
    h = jnp.tanh(y @ p[0] + p[1])
    h = jnp.tanh(h @ p[2] + p[3])
    return (h @ p[4] + p[5]) * speed


def neural_ode_times(dtype):
    y0 = jnp.asarray([0.5, -0.25, 0.15, 0.4, -0.5, 0.1, 0.0, 0.3], dtype)
    return y0, jnp.asarray(np.arange(11) * 0.5, dtype)


def neural_ode(speed, dtype):
    """Sum of y(t)^2 over 11 times in [0, 5], by jax.experimental.ode.odeint."""
    y0, ts = neural_ode_times(dtype)

    def loss(*p):
        ys = odeint(lambda y, t, *q: mlp_field(y, q, speed), y0, ts, *p, rtol=1e-6, atol=1e-6)
        return jnp.sum(ys * ys)

    return loss


def diffrax_solve(field, solver, y0, t1, saveat, args, max_steps, rtol, atol,
                  adjoint=diffrax.RecursiveCheckpointAdjoint()):
    return diffrax.diffeqsolve(
        diffrax.ODETerm(field), solver, t0=0.0, t1=t1, dt0=None, y0=y0, args=args,
        saveat=saveat, stepsize_controller=diffrax.PIDController(rtol=rtol, atol=atol),
        max_steps=max_steps, adjoint=adjoint).ys


def neural_ode_diffrax(speed, dtype):
    y0, ts = neural_ode_times(dtype)

    def loss(*p):
        ys = diffrax_solve(lambda t, y, q: mlp_field(y, q, speed), diffrax.Dopri5(), y0, 5.0,
                           diffrax.SaveAt(ts=ts), p, 4096, 1e-6, 1e-6)
        return jnp.sum(ys * ys)

    return loss


def lotka_volterra(y, p):
    return jnp.stack([p[0] * y[0] - p[1] * y[0] * y[1], p[3] * y[0] * y[1] - p[2] * y[1]])


def lv_odeint(t_end, dtype):
    ts, y0 = jnp.asarray([0.0, t_end], dtype), jnp.asarray(LV_Y0, dtype)
    return lambda p: jnp.sum(odeint(lambda y, t, q: lotka_volterra(y, q), y0, ts, p,
                                    rtol=1e-6, atol=1e-6)[-1])


def lv_diffrax(t_end, max_steps, dtype, adjoint=diffrax.RecursiveCheckpointAdjoint()):
    y0 = jnp.asarray(LV_Y0, dtype)
    return lambda p: jnp.sum(diffrax_solve(lambda t, y, q: lotka_volterra(y, q),
                                           diffrax.Dopri5(), y0, t_end,
                                           diffrax.SaveAt(t1=True), p, max_steps,
                                           1e-6, 1e-6, adjoint)[-1])


def robertson(y, k):
    a = -k[0] * y[0] + k[1] * y[1] * y[2]
    c = k[2] * y[1] * y[1]
    return jnp.stack([a, -a - c, c])


def robertson_diffrax(dtype):
    """y1(T) + 1e4 y2(T) for relative rate constants `s` (k = s * ROBERTSON_RATES)."""
    y0 = jnp.asarray([1.0, 0.0, 0.0], dtype)
    rates = jnp.asarray(ROBERTSON_RATES, dtype)

    def loss(s):
        y = diffrax_solve(lambda t, y, q: robertson(y, q * rates), diffrax.Kvaerno5(), y0,
                          ROBERTSON_END, diffrax.SaveAt(t1=True), s, 4096, 1e-6, 1e-10)[-1]
        return y[0] + 1e4 * y[1]

    return loss


# `odeint`'s `checkpoints` values with rows of their own (`bench_suite`'s list).
NEURAL_ODE_CHECKPOINTS = (4, 8, 64, 4107)


def ode_rows(dtype, reps, timed):
    """(name, compile ms, steady ms) rows, named as `bench_suite`'s."""
    rows = []
    p = mlp_params(dtype)
    argnums = tuple(range(len(p)))
    for speed, tag in ((1.0, ""), (10.0, "_x10")):
        rows.append((f"neural_ode_mlp64{tag}",) + timed(neural_ode(speed, dtype), p, reps))
        if speed == 1.0:
            rows.append(("neural_ode_mlp64_grad_adjoint",)
                        + timed(jax.grad(neural_ode(speed, dtype), argnums=argnums), p, reps))
        grad = jax.grad(neural_ode_diffrax(speed, dtype), argnums=argnums)
        direct = timed(grad, p, reps)
        rows.append((f"neural_ode_mlp64{tag}_grad_direct_vs_diffrax",) + direct)
        if speed == 1.0:
            # Quabla's direct gradient under other checkpoint counts: the same computation,
            # so the same diffrax measurement stands beside each.
            for k in NEURAL_ODE_CHECKPOINTS:
                rows.append((f"neural_ode_mlp64_grad_direct_checkpoints{k}_vs_diffrax",) + direct)
    if dtype != jnp.float64:
        return rows
    lv = jnp.asarray(LV_PARAMS, dtype)
    for t_end, steps in LV_SPANS:
        forward = timed(lv_odeint(t_end, dtype), (lv,), reps)
        for bound in LV_BOUNDS:
            rows.append((f"lv_{steps}steps_max{bound}",) + forward)
            grad = jax.grad(lv_diffrax(t_end, bound, dtype))
            rows.append((f"lv_{steps}steps_max{bound}_grad_vs_diffrax",)
                        + timed(grad, (lv,), reps))
        # Forward mode: the Jacobian of the end state's sum by columns (jacfwd), through
        # diffrax's forward-mode solve.
        jac = jax.jacfwd(lv_diffrax(t_end, 4096, dtype, diffrax.ForwardMode()))
        rows.append((f"lv_{steps}steps_jacfwd_vs_diffrax_forward",) + timed(jac, (lv,), reps))
    s = jnp.ones(3, dtype)
    rows.append(("robertson_rosenbrock23_vs_kvaerno5",) + timed(robertson_diffrax(dtype), (s,), reps))
    rows.append(("robertson_rosenbrock23_grad_vs_kvaerno5",)
                + timed(jax.grad(robertson_diffrax(dtype)), (s,), reps))
    return rows
