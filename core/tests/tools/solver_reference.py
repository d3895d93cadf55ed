"""Writes core/tests/goldens/solver_behaviour.json: how the solvers behave, not only how
accurate they are, from implementations independent of Quabla's.

- The adaptive ODE drivers (dopri5, tsit5, rosenbrock23): Quabla's controller (Hairer's
  starting step, PI control with beta = 0.04 on acceptance, pure shrink after a rejection,
  factor clipped to [0.2, 10], safety 0.9) re-implemented here in numpy, step by step, with
  the methods' published coefficients (Dormand & Prince 1980; Tsitouras 2011; Shampine &
  Reichelt's ode23s) and analytic Jacobians. Records accepted and rejected step counts, the
  accepted step times and the final state.
- cg and gmres: scipy.sparse.linalg's iteration counts on the same systems.
- L-BFGS: Quabla's algorithm (two-loop recursion over a ring buffer, the strong Wolfe line
  search of Nocedal & Wright's algorithms 3.5 and 3.6 with safeguarded quadratic
  interpolation) written here as plain scalar code from that description, branch by branch;
  records each step's value, accepted step length and line-search evaluations on
  Rosenbrock's function.

Run once (numpy and scipy needed, not in CI): python core/tests/tools/solver_reference.py
"""

import json
import math
import os

import numpy as np
import scipy
import scipy.sparse.linalg as spla

SAFETY, FAC_MIN, FAC_MAX, BETA = 0.9, 0.2, 10.0, 0.04

DOPRI5 = dict(
    c=[0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1],
    a=[[], [1 / 5], [3 / 40, 9 / 40], [44 / 45, -56 / 15, 32 / 9],
       [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
       [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
       [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]],
    b=[35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0],
    # b - b_hat of the embedded fourth-order solution.
    e=[71 / 57600, 0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40],
)

TSIT5 = dict(
    c=[0, 0.161, 0.327, 0.9, 0.9800255409045097, 1, 1],
    a=[[], [0.161], [-0.008480655492356989, 0.335480655492357],
       [2.8971530571054935, -6.359448489975075, 4.3622954328695815],
       [5.325864828439257, -11.748883564062828, 7.4955393428898365, -0.09249506636175525],
       [5.86145544294642, -12.92096931784711, 8.159367898576159, -0.071584973281401,
        -0.028269050394068383],
       [0.09646076681806523, 0.01, 0.4798896504144996, 1.379008574103742,
        -3.290069515436081, 2.324710524099774]],
    b=[0.09646076681806523, 0.01, 0.4798896504144996, 1.379008574103742,
       -3.290069515436081, 2.324710524099774, 0],
    e=[-0.00178001105222577714, -0.0008164344596567469, 0.007880878010261995,
       -0.1447110071732629, 0.5823571654525552, -0.45808210592918697, 1 / 66],
)


def rms(v):
    return math.sqrt(float(np.sum(v * v)) / v.size)


def initial_step(f, y0, f0, t0, rtol, atol, order):
    scale = atol + np.abs(y0) * rtol
    d0, d1 = rms(y0 / scale), rms(f0 / scale)
    h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    f1 = f(y0 + h0 * f0, t0 + h0)
    d2 = rms((f1 - f0) / scale) / h0
    dm = max(d1, d2)
    h1 = max(h0 * 1e-3, 1e-6) if dm <= 1e-15 else (0.01 / dm) ** (1 / (order + 1))
    return min(100 * h0, h1)


def explicit_step(tab, f, y, f0, t, h):
    ks = [f0]
    for i in range(1, 6):
        yi = y + h * sum(aij * k for aij, k in zip(tab["a"][i], ks))
        ks.append(f(yi, t + tab["c"][i] * h))
    y_new = y + h * sum(bj * k for bj, k in zip(tab["b"], ks))
    f_new = f(y_new, t + h)
    ks.append(f_new)
    err = h * sum(ej * k for ej, k in zip(tab["e"], ks))
    return y_new, f_new, err


def rosenbrock23_step(prob, y, f0, t, h):
    f, jac, dfdt = prob["f"], prob["jac"], prob["dfdt"]
    d = 1 / (2 + math.sqrt(2))
    e32 = 6 + math.sqrt(2)
    w = np.eye(y.size) - h * d * jac(y, t)
    hdft = h * d * dfdt(y, t)
    k1 = np.linalg.solve(w, f0 + hdft)
    f1 = f(y + 0.5 * h * k1, t + 0.5 * h)
    k2 = np.linalg.solve(w, f1 - k1) + k1
    y_new = y + h * k2
    f2 = f(y_new, t + h)
    k3 = np.linalg.solve(w, f2 - e32 * (k2 - f1) - 2 * (k1 - f0) + hdft)
    err = h / 6 * (k1 - 2 * k2 + k3)
    return y_new, f2, err


def solve(prob, method, rtol, atol, max_steps=4096):
    f = prob["f"]
    y = np.array(prob["y0"], dtype=float)
    t, t_end = prob["t"]
    order = 2 if method == "rosenbrock23" else 4
    fy = f(y, t)
    dt = initial_step(f, y, fy, t, rtol, atol, order)
    err_prev, steps, accepted, rejected, times = 1.0, 0, 0, 0, []
    while t < t_end and steps < max_steps:
        room = t_end - t
        clipped = dt >= room
        h = room if clipped else dt
        if method == "rosenbrock23":
            y_new, f_new, err = rosenbrock23_step(prob, y, fy, t, h)
        else:
            tab = DOPRI5 if method == "dopri5" else TSIT5
            y_new, f_new, err = explicit_step(tab, f, y, fy, t, h)
        tol = atol + rtol * np.maximum(np.abs(y), np.abs(y_new))
        ratio = rms(err / tol)
        accept = ratio <= 1.0
        expo = 1 / (order + 1)
        safe = max(ratio, 1e-10)
        if accept:
            fac = min(safe ** -(expo - 0.75 * BETA) * err_prev ** BETA * SAFETY, FAC_MAX)
        else:
            fac = min(safe ** -expo * SAFETY, 1.0)
        fac = max(fac, FAC_MIN) if math.isfinite(ratio) else FAC_MIN
        steps += 1
        if accept:
            err_prev = max(ratio, 1e-4)
            t = t_end if clipped else t + h
            y, fy = y_new, f_new
            accepted += 1
            times.append(t)
        else:
            rejected += 1
        dt = h * fac
    return dict(accepted=accepted, rejected=rejected, accepted_times=times, y_end=list(y))


MU = 5.0
PROBLEMS = {
    # Van der Pol with mu = 5: stiff stretches, so the controller rejects steps.
    "van_der_pol": dict(
        y0=[2.0, 0.0], t=(0.0, 10.0),
        f=lambda y, t: np.array([y[1], MU * (1 - y[0] ** 2) * y[1] - y[0]]),
        jac=lambda y, t: np.array([[0.0, 1.0], [-2 * MU * y[0] * y[1] - 1, MU * (1 - y[0] ** 2)]]),
        dfdt=lambda y, t: np.zeros(2),
    ),
    # A forced linear decay: the time derivative enters the Rosenbrock stages.
    "forced_decay": dict(
        y0=[1.0], t=(0.0, 5.0),
        f=lambda y, t: np.array([-2.0 * y[0] + math.sin(3.0 * t)]),
        jac=lambda y, t: np.array([[-2.0]]),
        dfdt=lambda y, t: np.array([3.0 * math.cos(3.0 * t)]),
    ),
    "robertson": dict(
        y0=[1.0, 0.0, 0.0], t=(0.0, 40.0),
        f=lambda y, t: np.array([
            -0.04 * y[0] + 1e4 * y[1] * y[2],
            0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2,
            3e7 * y[1] ** 2]),
        jac=lambda y, t: np.array([
            [-0.04, 1e4 * y[2], 1e4 * y[1]],
            [0.04, -1e4 * y[2] - 6e7 * y[1], -1e4 * y[1]],
            [0.0, 6e7 * y[1], 0.0]]),
        dfdt=lambda y, t: np.zeros(3),
    ),
}

RUNS = [
    ("van_der_pol", "dopri5", 1e-6, 1e-8),
    ("van_der_pol", "tsit5", 1e-6, 1e-8),
    ("van_der_pol", "rosenbrock23", 1e-4, 1e-7),
    ("forced_decay", "dopri5", 1e-8, 1e-10),
    ("forced_decay", "tsit5", 1e-8, 1e-10),
    ("forced_decay", "rosenbrock23", 1e-5, 1e-8),
    ("robertson", "rosenbrock23", 1e-4, 1e-8),
]


def krylov():
    rng = np.random.default_rng(2026)
    # Sizes and spectra keep the counts well below n, where cg's rounding has not yet
    # decoupled the two implementations' residuals (checked: the residual misses the
    # tolerance by more than 3x one iteration early and meets it with 3x to spare).
    n = 60
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    well = q @ np.diag(np.geomspace(1.0, 20.0, n)) @ q.T
    well = (well + well.T) / 2
    # A badly scaled version of it, which the Jacobi preconditioner undoes.
    scale = np.diag(np.sqrt(np.geomspace(1.0, 1e3, n)))
    badly_scaled = scale @ well @ scale
    general = 2.0 * np.eye(n) + rng.standard_normal((n, n)) / math.sqrt(n)
    b = rng.standard_normal(n)
    out = []

    def cg_residuals(m, precond, rtol):
        residuals = []
        x, info = spla.cg(m, b, rtol=rtol, atol=0.0, maxiter=10 * n, M=precond,
                          callback=lambda xk: residuals.append(np.linalg.norm(b - m @ xk)))
        return residuals, x, info

    for m, jacobi in ((well, False), (badly_scaled, True)):
        precond = np.diag(1 / np.diag(m)) if jacobi else None
        # A tolerance midway (geometrically) between the residuals of iterations 19 and 20,
        # so that rounding differences between two correct implementations cannot move the
        # count.
        history, _, _ = cg_residuals(m, precond, 1e-14)
        tol = math.sqrt(history[18] * history[19]) / np.linalg.norm(b)
        residuals, x, info = cg_residuals(m, precond, tol)
        assert info == 0 and len(residuals) == 20, (info, len(residuals))
        out.append(dict(solver="cg", jacobi=jacobi, a=m.tolist(), b=b.tolist(), tol=tol,
                        restart=None, iterations=len(residuals), x=x.tolist()))
    for restart in (4, 8):
        cycles = []
        x, info = spla.gmres(general, b, rtol=1e-8, atol=0.0, restart=restart, maxiter=200,
                             callback=lambda xk: cycles.append(1), callback_type="x")
        assert info == 0
        out.append(dict(solver="gmres", jacobi=False, a=general.tolist(), b=b.tolist(),
                        tol=1e-8, restart=restart, iterations=len(cycles), x=x.tolist()))
    return out


def rosenbrock(x):
    f = float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))
    g = np.zeros_like(x)
    g[:-1] = -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return f, g


class Lbfgs:
    def __init__(self, n, memory=10, max_ls=20, c1=1e-4, c2=0.9, amax=1e3):
        self.m, self.max_ls, self.c1, self.c2, self.amax = memory, max_ls, c1, c2, amax
        self.s = np.zeros((memory, n))
        self.y = np.zeros((memory, n))
        self.rho = np.zeros(memory)
        self.count = 0

    def direction(self, g):
        q, pairs = g.copy(), []
        for i in range(self.m):
            k = (self.count - 1 - i) % self.m  # newest first; unwritten slots have rho = 0
            a = self.rho[k] * (self.s[k] @ q)
            q = q - self.y[k] * a
            pairs.append((k, a))
        k0 = pairs[0][0]
        yy = self.y[k0] @ self.y[k0]
        gamma = (self.s[k0] @ self.y[k0]) / yy if self.count > 0 and yy > 0 else 1.0
        r = q * gamma
        for k, a in reversed(pairs):
            b = self.rho[k] * (self.y[k] @ r)
            r = r + self.s[k] * (a - b)
        return -r

    def line_search(self, fg, x0, d, f0, g0, dphi0, a1):
        c1, c2 = self.c1, self.c2
        a_prev, f_prev, dp_prev = 0.0, f0, dphi0
        lo = hi = None
        best = (0.0, f0, g0)
        a, i, stage = a1, 0, "bracket"
        while stage != "done" and i < self.max_ls:
            f, g = fg(x0 + d * a)
            dp = g @ d
            armijo_fail = f > f0 + c1 * a * dphi0 or math.isnan(f)
            curvature_ok = abs(dp) <= -c2 * dphi0
            done = False
            if stage == "bracket":
                if armijo_fail or (i > 0 and f >= f_prev):
                    lo, hi, stage = (a_prev, f_prev, dp_prev), (a, f), "zoom"
                elif curvature_ok:
                    done = True
                elif dp >= 0:
                    lo, hi, stage = (a, f, dp), (a_prev, f_prev), "zoom"
            else:
                if armijo_fail or f >= lo[1]:
                    hi = (a, f)
                elif curvature_ok:
                    done = True
                else:
                    if dp * (hi[0] - lo[0]) >= 0:
                        hi = (lo[0], lo[1])
                    lo = (a, f, dp)
            if not armijo_fail and (f < best[1] or done):
                best = (a, f, g)
            i += 1
            a_prev, f_prev, dp_prev = a, f, dp
            if done:
                stage = "done"
            elif stage == "zoom":
                # The minimiser of the quadratic through (lo, f_lo, dp_lo) and (hi, f_hi),
                # if it lies 10% inside the bracket; else the midpoint.
                delta = hi[0] - lo[0]
                denom = 2.0 * ((hi[1] - lo[1]) - lo[2] * delta)
                trial = None
                if denom > 0:
                    q = lo[0] - lo[2] * delta * delta / denom
                    margin = 0.1 * abs(delta)
                    if min(lo[0], hi[0]) + margin <= q <= max(lo[0], hi[0]) - margin:
                        trial = q
                a = trial if trial is not None else 0.5 * (lo[0] + hi[0])
            else:
                a = min(2.0 * a, self.amax)
        return best[0], best[1], best[2], i

    def step(self, fg, x):
        f0, g0 = fg(x)
        d = self.direction(g0)
        if not g0 @ d < 0:
            d = -g0
        dphi0 = g0 @ d
        a1 = 1.0 / max(math.sqrt(g0 @ g0), 1.0) if self.count == 0 else 1.0
        alpha, f1, g1, evals = self.line_search(fg, x, d, f0, g0, dphi0, a1)
        s, y = d * alpha, g1 - g0
        sy = s @ y
        if sy > math.sqrt(s @ s) * math.sqrt(y @ y) * 1e-10:
            slot = self.count % self.m
            self.s[slot], self.y[slot], self.rho[slot] = s, y, 1.0 / sy
            self.count += 1
        if alpha == 0.0:
            self.s[:], self.y[:], self.rho[:], self.count = 0.0, 0.0, 0.0, 0
        return x + d * alpha, f1, alpha, evals


def lbfgs_runs():
    runs = []
    for x0, memory, steps in (([-1.2, 1.0], 10, 30), ([-1.2, 1.0, -0.5, 0.8, 1.1, 0.3], 4, 40)):
        x = np.array(x0)
        opt = Lbfgs(x.size, memory=memory)
        record = []
        for _ in range(steps):
            x, f, alpha, evals = opt.step(rosenbrock, x)
            record.append(dict(value=f, step_size=alpha, evaluations=evals))
        runs.append(dict(x0=x0, memory=memory, steps=record, x=x.tolist()))
    return runs


def main():
    ode = []
    for name, method, rtol, atol in RUNS:
        r = solve(PROBLEMS[name], method, rtol, atol)
        r.update(problem=name, method=method, rtol=rtol, atol=atol,
                 y0=PROBLEMS[name]["y0"], t=list(PROBLEMS[name]["t"]))
        ode.append(r)
        print(f"{name:13s} {method:13s} accepted {r['accepted']:4d} rejected {r['rejected']:3d}")
    kr = krylov()
    for k in kr:
        print(f"{k['solver']} jacobi={k['jacobi']} restart={k['restart']}: {k['iterations']}")
    lb = lbfgs_runs()
    for r in lb:
        print(f"lbfgs n={len(r['x0'])} memory={r['memory']}: evaluations "
              f"{sum(s['evaluations'] for s in r['steps'])}, final {r['steps'][-1]['value']:.3e}")
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "goldens", "solver_behaviour.json")
    with open(path, "w") as fh:
        json.dump(dict(generator="core/tests/tools/solver_reference.py",
                       numpy=np.__version__, scipy=scipy.__version__, ode=ode, krylov=kr,
                       lbfgs=lb),
                  fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
