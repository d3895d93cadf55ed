"""Goldens for the programs Quabla's transformations emit (jvp, vjp, grad, vmap, hvp, and AD
through cond/while), dumped by `cargo run -p quabla --example dump_ad_programs` into
tools/ad_programs/. Expected values come from numpy: analytic derivatives and explicit
loops, never from Quabla."""
import os
import re

import numpy as np

from golden import case, tol_close

HERE = os.path.dirname(os.path.abspath(__file__))
RNG = np.random.default_rng(7)
TOL = tol_close(1e-13, 1e-13)
# The solvers stop at their tolerances: CG at 1e-13 relative, dopri5 at rtol = atol = 1e-10.
SOLVER_TOL = {"solver_cg_grad": tol_close(1e-11, 1e-12), "solver_odeint_decay_grad": tol_close(1e-8, 1e-9),
              # A second-order method's global error at rtol 1e-8 (1.5e-6 measured).
              "solver_rosenbrock_linear_grad": tol_close(1e-5, 1e-8)}


class Loaded:
    """A dumped program, quacking like qir.Program for golden.case."""

    def __init__(self, text):
        self.text = text
        self.ops = set(re.findall(r"= ([a-z_0-9]+)[\[(]", text))
        self.dtypes = set(re.findall(r"\b(f32|f64|i32|u32|bool)\[", text))
        header = text.split("{", 1)[0]
        self.inputs = [(d, [int(x) for x in s.split(",") if x]) for d, s in re.findall(r"%\d+: (\w+)\[([\d,]*)\]", header)]


def rosenbrock_hessian(x):
    n = len(x)
    h = np.zeros((n, n))
    for i in range(n - 1):
        h[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        h[i, i + 1] = h[i + 1, i] = -400 * x[i]
    for i in range(1, n):
        h[i, i] += 200
    return h


def cumprod_grad(x):
    n = len(x)
    g = np.zeros(n)
    for i in range(n):
        for j in range(i, n):
            g[i] += np.prod([x[k] for k in range(j + 1) if k != i])
    return g


def while_ref(x, n):
    t = np.ones_like(x)
    for _ in range(n):
        t = t * (1 + np.cos(x))
        x = x + np.sin(x)
    return x, t


def mlp_grads(w1, w2, x, y):
    h = np.tanh(x @ w1)
    d = h @ w2 - y
    gw2 = np.outer(h, 2 * d)
    gh = (2 * d) @ w2.T
    gw1 = np.outer(x, gh * (1 - h * h))
    return gw1, gw2


def conv_windows(x_shape, k_shape, stride, pads, rhs_dil):
    """For a cross-correlation over a zero-padded input: yields (output index, the padded
    input positions of each kernel tap) for every output position of each spatial axis."""
    outs = []
    for i in range(2):
        padded = x_shape[2 + i] + pads[i][0] + pads[i][1]
        eff = (k_shape[2 + i] - 1) * rhs_dil[i] + 1
        outs.append((padded - eff) // stride[i] + 1)
    for p in range(outs[0]):
        for q in range(outs[1]):
            rows = [p * stride[0] + a * rhs_dil[0] for a in range(k_shape[2])]
            cols = [q * stride[1] + b * rhs_dil[1] for b in range(k_shape[3])]
            yield (p, q), np.ix_(rows, cols), outs


def conv_ref(x, w, stride, pads, rhs_dil, groups):
    """NCHW x OIHW, from the definition: each output a sum over its window and group."""
    xp_ = np.pad(x, ((0, 0), (0, 0), pads[0], pads[1]))
    n, o, ig = x.shape[0], w.shape[0], w.shape[1]
    og = o // groups
    out = None
    for (p, q), win, outs in conv_windows(x.shape, w.shape, stride, pads, rhs_dil):
        if out is None:
            out = np.zeros((n, o) + tuple(outs))
        for f in range(o):
            g = f // og
            patch = xp_[:, g * ig:(g + 1) * ig][:, :, win[0], win[1]]
            out[:, f, p, q] = np.sum(patch * w[f], axis=(1, 2, 3))
    return out


def conv_grads(x, w, ct, stride, pads):
    """Gradients of sum(conv(x, w) * ct) by accumulating each output's window, by hand."""
    xp_ = np.pad(x, ((0, 0), (0, 0), pads[0], pads[1]))
    gxp, gw = np.zeros_like(xp_), np.zeros_like(w)
    for (p, q), win, _ in conv_windows(x.shape, w.shape, stride, pads, (1, 1)):
        for f in range(w.shape[0]):
            c = ct[:, f, p, q][:, None, None, None]
            gxp[:, :, win[0], win[1]] += c * w[f][None]
            gw[f] += np.sum(c * xp_[:, :, win[0], win[1]], axis=0)
    h, wd = x.shape[2], x.shape[3]
    return gxp[:, :, pads[0][0]:pads[0][0] + h, pads[1][0]:pads[1][0] + wd], gw


def same_pads(size, k, stride, dil):
    out = -(-size // stride)
    total = max((out - 1) * stride + (k - 1) * dil + 1 - size, 0)
    return (total // 2, total - total // 2)


def references():
    """name -> (inputs, expected outputs)."""
    r = {}
    x = RNG.uniform(-2, 2, 5)
    r["grad_sin_times_x"] = ([x], [np.sin(x) + x * np.cos(x)])
    x, w, t = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 2)), RNG.normal(size=(3, 4))
    y = np.tanh(x @ w)
    r["jvp_tanh_matmul"] = ([x, w, t], [y, (1 - y * y) * (t @ w)])
    x, ct = RNG.normal(size=5), RNG.normal(size=5)
    s = np.exp(x) / np.exp(x).sum()
    r["vjp_softmax"] = ([x, ct], [s * (ct - (ct * s).sum())])
    a, xs = RNG.normal(size=(3, 4)), RNG.normal(size=(6, 4))
    r["vmap_matvec"] = ([a, xs], [xs @ a.T])
    w1, w2, xb, yb = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 1)), RNG.normal(size=(5, 3)), RNG.normal(size=(5, 1))
    grads = [mlp_grads(w1, w2, xb[i], yb[i]) for i in range(5)]
    r["vmap_grad_mlp"] = ([w1, w2, xb, yb], [np.stack([g[0] for g in grads]), np.stack([g[1] for g in grads])])
    x, v = RNG.uniform(0.5, 1.5, 6), RNG.normal(size=6)
    r["hvp_rosenbrock"] = ([x, v], [rosenbrock_hessian(x) @ v])
    x = RNG.uniform(0.5, 2, 4)
    r["grad_cond"] = ([np.int32(1), x], [np.sin(x) + x * np.cos(x)])
    x, t = RNG.normal(size=3), RNG.normal(size=3)
    xf, tf = while_ref(x, 4)
    r["jvp_while"] = ([x, np.int32(4), t], [xf, tf * t])
    x = np.array([0.5, -1.5, 0.0, 2.0, 0.0, 1.25])
    r["grad_cumprod"] = ([x], [cumprod_grad(x)])
    x = np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 5.0, 4.0, 5.0]])
    g = (x == x.max(axis=1, keepdims=True)).astype(float)
    r["grad_max_ties"] = ([x], [g / g.sum(axis=1, keepdims=True)])
    solver_rng = np.random.default_rng(77)  # its own stream: the other cases keep their data
    m = solver_rng.uniform(-1, 1, (4, 4))
    spd = m @ m.T + 4 * np.eye(4)
    b, c = solver_rng.normal(size=4), solver_rng.normal(size=4)
    r["solver_cg_grad"] = ([spd, b, c], [np.linalg.solve(spd, b), np.linalg.solve(spd, c)])
    y0, k = np.array([1.5]), np.float64(0.8)
    ts = np.array([0.0, 0.5, 1.0])
    r["solver_odeint_decay_grad"] = ([y0, k], [y0[None, :] * np.exp(-k * ts)[:, None],
                                              -1.0 * y0[0] * np.exp(-k)])
    # y' = -k A y, A symmetric: y(t) = V exp(-k L t) V^T y0, and d/dk sum y(1) in closed form.
    y0, k, t = np.array([1.0, -0.5]), np.float64(0.8), np.array([0.0, 0.5, 1.0])
    lam, vec = np.linalg.eigh(np.array([[2.0, 1.0], [1.0, 3.0]]))
    c = vec.T @ y0
    ys = np.stack([vec @ (np.exp(-k * lam * s) * c) for s in t])
    r["solver_rosenbrock_linear_grad"] = ([y0, k], [ys, (vec @ (-lam * np.exp(-k * lam) * c)).sum()])
    x = RNG.normal(size=6)
    g = np.zeros(6)
    for i in [3, 0, 3, 9, -2]:
        j = min(max(i, 0), 5)  # gather clamps
        g[j] += np.cos(x[j])
    r["grad_take"] = ([x], [g])
    xs, ns = RNG.normal(size=(4, 3)), np.array([0, 3, 1, 5], np.int32)
    r["vmap_while_trip_counts"] = ([xs, ns], [np.stack([while_ref(xs[i], ns[i])[0] for i in range(4)])])
    w, h0, xs = RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=3), RNG.normal(size=(5, 3))
    hs = []
    h = h0
    for t in range(5):
        h = np.tanh(w @ h + xs[t])
        hs.append(h)
    r["scan_rnn_lowered"] = ([w, h0, xs], [h, np.array([v.sum() for v in hs])])
    # Backpropagation through time by hand: loss = sum_t sum(h_t).
    gw, gxs, gh = np.zeros((3, 3)), np.zeros((5, 3)), np.zeros(3)
    for t in reversed(range(5)):
        gh = gh + 1.0
        pre = 1 - hs[t] ** 2
        gz = gh * pre
        prev = hs[t - 1] if t > 0 else h0
        gw += np.outer(gz, prev)
        gxs[t] = gz
        gh = w.T @ gz
    r["grad_scan_rnn_lowered"] = ([w, h0, xs], [gw, gh, gxs])
    x = RNG.normal(size=3)
    r["fori_lowered"] = ([x], [sum(x * np.sin(i) for i in range(5))])
    r["grad_fori_lowered"] = ([x], [np.full(3, sum(np.sin(i) for i in range(5)))])
    conv_rng = np.random.default_rng(31)  # its own stream: the other cases keep their data
    x, w = conv_rng.normal(size=(1, 4, 6, 5)), conv_rng.normal(size=(4, 2, 3, 3))
    pads = (same_pads(6, 3, 2, 1), same_pads(5, 3, 1, 2))
    r["conv2d_grouped_lowered"] = ([x, w], [conv_ref(x, w, (2, 1), pads, (1, 2), 2)])
    x, w = conv_rng.normal(size=(2, 3, 5, 4)), conv_rng.normal(size=(2, 3, 3, 2))
    ct = conv_rng.normal(size=(2, 2, 3, 4))
    r["grad_conv2d_lowered"] = ([x, w, ct], list(conv_grads(x, w, ct, (2, 1), ((1, 1), (0, 1)))))
    x = np.round(conv_rng.normal(size=(3, 5)) * 2) / 2  # ties: the stable order decides
    wts = conv_rng.normal(size=(3, 5))
    perm = np.argsort(x, axis=1, kind="stable")
    g = np.zeros_like(x)
    np.put_along_axis(g, perm, wts, axis=1)
    r["grad_sort_lowered"] = ([x, wts], [g])
    for label, xv in [("pos", 0.7), ("neg", -0.4)]:
        w = 1.3
        g = np.cos(w * xv) * xv if xv > 0 else 2 * w
        r[f"grad_cond_capture_lowered/{label}"] = ([np.float64(w), np.float64(xv)], [np.float64(g)])
    return r


F = np.float32


def f32_pow(b, c):
    """b**c evaluated in f64 and rounded once (the f32 rounding every backend is held to)."""
    return F(np.float64(F(b)) ** np.float64(c))


def adam_trajectory(p, t, w, steps, clip=None, lr=lambda k: F(1e-2), wd=None):
    """optax's rule in numpy f32: [clip_by_global_norm] -> scale_by_adam ->
    [add_decayed_weights] -> scale_by_learning_rate, in optax's order of operations."""
    b1, b2, eps = F(0.9), F(0.999), F(1e-8)
    one_b1, one_b2 = F(1 - 0.9), F(1 - 0.999)
    mu, nu = np.zeros(4, F), np.zeros(4, F)
    out = []
    for k in range(steps):
        d = p - t
        g = (w * d) + (w * d)
        if clip is not None:
            sq = g * g
            norm = np.sqrt(F(((F(0) + sq[0]) + sq[1] + sq[2]) + sq[3]))
            if not norm < F(clip):
                g = (g / norm) * F(clip)
        mu = g * one_b1 + mu * b1
        nu = (g * g) * one_b2 + nu * b2
        c = k + 1
        m_hat = mu / (-f32_pow(0.9, c) + F(1))
        v_hat = nu / (-f32_pow(0.999, c) + F(1))
        u = m_hat / (np.sqrt(v_hat + F(0)) + eps)
        if wd is not None:
            u = u + p * F(wd)
        u = u * (-lr(k))
        p = p + u
        out.append(p.copy())
    return np.stack(out)


def mlp_adam_losses(w1, b1, w2, b2, x, y, steps=100, lr=1e-2):
    """Adam (optax's rule) on a 2-8-1 tanh MLP regression, by hand-written backpropagation in
    float64 from the float32 inputs: the loss before each step."""
    ps = [a.astype(np.float64) for a in (w1, b1, w2, b2)]
    x, y = x.astype(np.float64), y.astype(np.float64)
    mu = [np.zeros_like(p) for p in ps]
    nu = [np.zeros_like(p) for p in ps]
    losses = []
    for k in range(steps):
        w1, b1, w2, b2 = ps
        h = np.tanh(x @ w1 + b1)
        r = h @ w2 + b2 - y
        losses.append(np.mean(r * r))
        dout = 2.0 * r / r.size
        dh = (dout @ w2.T) * (1.0 - h * h)
        grads = [x.T @ dh, dh.sum(0), h.T @ dout, dout.sum(0)]
        c = k + 1
        for i, g in enumerate(grads):
            mu[i] = 0.1 * g + 0.9 * mu[i]
            nu[i] = 0.001 * g * g + 0.999 * nu[i]
            m_hat = mu[i] / (1 - 0.9 ** c)
            v_hat = nu[i] / (1 - 0.999 ** c)
            ps[i] = ps[i] - lr * m_hat / (np.sqrt(v_hat) + 1e-8)
    return np.array(losses)


def adam_references():
    r = {}
    p0, t, w = np.array([1.0, 1.0, -1.0, 0.3], F), np.array([0.5, -1.0, 2.0, 0.0], F), np.array([1.0, 10.0, 0.1, 3.0], F)
    r["adam_quadratic"] = ([p0, t, w], [adam_trajectory(p0, t, w, 120)])

    def sched(k):
        e = F(F(k) / F(20))
        return f32_pow(0.5, e) * F(2e-2)

    r["adamw_clip_schedule_quadratic"] = ([p0, t, w], [adam_trajectory(p0, t, w, 120, clip=1.0, lr=sched, wd=1e-2)])
    rng = np.random.default_rng(7)
    w1 = (rng.normal(size=(2, 8)) * 0.8).astype(F)
    b1 = np.zeros(8, F)
    w2 = (rng.normal(size=(8, 1)) * 0.5).astype(F)
    b2 = np.zeros(1, F)
    x = rng.uniform(-1, 1, size=(16, 2)).astype(F)
    y = (np.sin(2.0 * x[:, :1]) * np.cos(x[:, 1:])).astype(F)
    r["adam_mlp_regression"] = ([w1, b1, w2, b2, x, y], [mlp_adam_losses(w1, b1, w2, b2, x, y)])
    return r


def build():
    folder = os.path.join(HERE, "ad_programs")
    cases = []
    refs = references()
    regions = []
    for name in sorted(refs):
        path = os.path.join(folder, name.split("/")[0] + ".qir")
        if not os.path.exists(path):
            raise SystemExit(f"{path} is missing: run `cargo run -p quabla --example dump_ad_programs` first")
        prog = Loaded(open(path).read())
        inputs, expected = refs[name]
        ins = [(d, np.asarray(a)) for (d, _), a in zip(prog.inputs, inputs)]
        outs = [("f64", np.asarray(e, dtype=np.float64)) for e in expected]
        tol = SOLVER_TOL.get(name, TOL)
        c = case(name.replace("/", "_"), prog, ins, outs, tol, note="QIR emitted by Quabla's transformations")
        # What cond/while/scan/fori and their JVP/VJP lower to is the regions group.
        region = any(k in name for k in ("cond", "while", "scan", "fori"))
        (regions if region else cases).append(c)
    adam, mlp = [], []
    for name, (inputs, expected) in sorted(adam_references().items()):
        prog = Loaded(open(os.path.join(folder, name + ".qir")).read())
        ins = [("f32", np.asarray(a, F)) for a in inputs]
        outs = [("f32", np.asarray(e, F)) for e in expected]
        if name == "adam_mlp_regression":
            # float32 program against a float64 reference: 100 steps of rounding drift.
            mlp.append(case(name, prog, ins, outs, tol_close(1e-4, 1e-7),
                            note="100 Adam steps on a 2-8-1 tanh MLP; ys are the loss before each"))
        else:
            adam.append(case(name, prog, ins, outs, tol_close(1e-6, 1e-7),
                             note="120 optimizer steps; ys are the parameters after each"))
    return {"transforms/ad": cases, "regions/lowered": regions, "adam/quadratic": adam,
            "adam/mlp_regression": mlp}
