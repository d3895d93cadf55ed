"""Records the reference values the Python tests compare with, from JAX 0.10.2 (x64 on) and
optax 0.2.8, into tests/goldens/*.json. The tests themselves never import JAX.

Run by hand when a golden needs to change (never edit the JSON by hand):
    python -m venv /tmp/ref && /tmp/ref/bin/pip install jax==0.10.2 jaxlib==0.10.2 optax==0.2.8
    /tmp/ref/bin/python bindings/python/tests/tools/make_goldens.py
"""

import json
import os

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.optimize  # noqa: E402,F401  (programs read lib.scipy.optimize)
import jax.scipy.signal  # noqa: E402,F401  (and lib.scipy.signal)
import optax  # noqa: E402

from programs import (  # noqa: E402  (beside this file)
    custom_rule_programs, custom_transformation_program, minimize_programs,
    optimizer_state_program, surface_lax_cases,
    mlp_classifier_program, nondiff_jvp_program, stax_program,
    python_control_flow_program, softmax_family_cases, sorting_cases, convolution_cases,
    image_cases,
    lbfgs_toolbox_program, numpy_extras_cases, lax_more_cases, numpy_assorted_cases,
    static_argument_program, stats_family_cases, attention_cases, weighted_finite_sum)

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "goldens")


def enc(x):
    a = np.asarray(x)
    return {"dtype": str(a.dtype), "shape": list(a.shape), "hex": a.tobytes().hex()}


def _x64_off(thunk):
    with jax.enable_x64(False):
        return np.asarray(thunk())


def random_goldens():
    out = {"jax": jax.__version__, "seeds": {}}
    for seed in [0, 1, 42, 2**33 + 5, -7]:
        k = jax.random.PRNGKey(seed)
        out["seeds"][str(seed)] = {
            "key": enc(k),
            "split5": enc(jax.random.split(k, 5)),
            "split2x3": enc(jax.random.split(k, (2, 3))),
            "fold_in123": enc(jax.random.fold_in(k, 123)),
            "bits7": enc(jax.random.bits(k, (7,), jnp.uint32)),
            "uniform_f32_4x5": enc(jax.random.uniform(k, (4, 5), jnp.float32)),
            "uniform_f64_33": enc(jax.random.uniform(k, (33,), jnp.float64)),
            "uniform_f64_33_m1_4": enc(jax.random.uniform(k, (33,), jnp.float64, -1.0, 4.0)),
            "randint_50": enc(jax.random.randint(k, (50,), -20, 1000, jnp.int32)),
            "bernoulli_40": enc(jax.random.bernoulli(k, jnp.float32(0.3), (40,))),
            "permutation_37": enc(jax.random.permutation(k, 37).astype(np.int32)),
            "permutation_4x3_axis1": enc(jax.random.permutation(
                k, np.arange(12.0).reshape(4, 3), axis=1)),
        }
    k = jax.random.PRNGKey(9)
    r = jax.random
    out["distributions"] = {
        name: {"f64": enc(getattr(r, name)(k, (300,), jnp.float64)),
               "f32": enc(getattr(r, name)(k, (300,), jnp.float32))}
        for name in ["exponential", "laplace", "logistic", "cauchy", "gumbel"]}
    out["distributions"]["gumbel_high"] = {"f64": enc(r.gumbel(k, (300,), jnp.float64,
                                                               mode="high"))}
    logits = jnp.log(jnp.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]]))
    cov = jnp.array([[1.0, 0.5], [0.5, 2.0]])
    out["discrete"] = {
        "rademacher": enc(r.rademacher(k, (50,)).astype(jnp.int32)),
        "categorical": enc(r.categorical(k, logits, shape=(40, 2)).astype(jnp.int32)),
        "categorical_axis0": enc(r.categorical(k, logits.T, axis=0).astype(jnp.int32)),
        # JAX draws int64 indices with x64 on (Quabla has no int64): recorded with it off.
        "choice_int_x64_off": enc(_x64_off(lambda: r.choice(k, 7, (20,)))),
        "choice_noreplace": enc(r.choice(k, 9, (5,), replace=False).astype(jnp.int32)),
        "choice_p": enc(r.choice(k, jnp.arange(10.0) * 2, (4, 3),
                                 p=jnp.arange(10.0) / 45.0)),
        "choice_axis1_x64_off": enc(_x64_off(
            lambda: r.choice(k, jnp.arange(12.0).reshape(3, 4), (2,), axis=1))),
        "mvn": enc(r.multivariate_normal(k, jnp.array([1.0, -1.0]), cov, (50,))),
        "choice_p_noreplace": enc(r.choice(k, jnp.arange(10.0) * 2, (2, 3), replace=False,
                                           p=jnp.arange(1.0, 11.0) / 55.0)),
        "categorical_noreplace": enc(r.categorical(k, logits, shape=(3, 2),
                                                   replace=False).astype(jnp.int32)),
        "permutation_independent": enc(r.permutation(k, jnp.arange(12.0).reshape(3, 4),
                                                     axis=1, independent=True)),
        "permutation_jit": enc(jax.jit(lambda key: r.permutation(key, 20))(k)
                               .astype(jnp.int32)),
    }
    out["gamma_family"] = {
        "gamma": enc(r.gamma(k, jnp.array([0.3, 1.0, 2.5, 9.0] * 10), dtype=jnp.float64)),
        "loggamma": enc(r.loggamma(k, 1e-3, (20,), jnp.float64)),
        "beta": enc(r.beta(k, 2.0, 3.0, (30,), jnp.float64)),
        "dirichlet": enc(r.dirichlet(k, jnp.array([1.0, 2.0, 3.0]), (10,), jnp.float64)),
        "chisquare": enc(r.chisquare(k, 4.0, (30,), jnp.float64)),
        "t": enc(r.t(k, 5.0, (30,), jnp.float64)),
        "generalized_normal": enc(r.generalized_normal(k, 1.5, (30,), jnp.float64)),
        "ball": enc(r.ball(k, 3, 2, (10,), jnp.float64)),
        "orthogonal": enc(r.orthogonal(k, 4, (2,), jnp.float64)),
        "orthogonal_wide": enc(r.orthogonal(k, 2, (), jnp.float64, m=5)),
        "poisson": enc(r.poisson(k, jnp.array([0.0, 0.5, 3.0, 9.9, 10.0, 30.0, 1e3] * 4),
                                 dtype=jnp.int32)),
    }
    out["more_distributions"] = {
        "lognormal": enc(r.lognormal(k, 0.7, (30,), jnp.float64)),
        "pareto": enc(r.pareto(k, jnp.array([1.5, 3.0]), (20, 2), jnp.float64)),
        "weibull_min": enc(r.weibull_min(k, 2.0, 1.5, (30,), jnp.float64)),
        "rayleigh": enc(r.rayleigh(k, jnp.array([0.5, 2.0]), None, jnp.float64)),
        "maxwell": enc(r.maxwell(k, (20,), jnp.float64)),
        "double_sided_maxwell": enc(r.double_sided_maxwell(k, 1.0, 2.0, (20,), jnp.float64)),
        "geometric": enc(r.geometric(k, jnp.array([0.1, 0.5, 0.9]), (10, 3), jnp.int32)),
        "triangular": enc(r.triangular(k, -1.0, 0.5, 2.0, (30,), jnp.float64)),
        "wald": enc(r.wald(k, jnp.array([0.5, 1.0, 3.0]), (10, 3), jnp.float64)),
        "f": enc(r.f(k, 3.0, 7.0, (30,), jnp.float64)),
        "lognormal_f32": enc(r.lognormal(k, 1.0, (30,), jnp.float32)),
    }
    k = jax.random.PRNGKey(3)
    out["normal_f32_seed3"] = enc(jax.random.normal(k, (4000,), jnp.float32))
    out["normal_f64_seed3"] = enc(jax.random.normal(k, (4000,), jnp.float64))
    return out


def optax_goldens():
    def loss(p):
        return jnp.sum((p["a"] - 3.0) ** 2) + jnp.sum(p["b"] ** 4)

    cases = {
        "adam": optax.adam(0.05),
        "sgd_nesterov": optax.sgd(0.01, 0.9, nesterov=True),
        "rmsprop": optax.rmsprop(0.01),
        "adamw_expdecay": optax.adamw(optax.exponential_decay(0.05, 10, 0.9), weight_decay=0.01),
        "clip_adam_warmup_cosine": optax.chain(optax.clip_by_global_norm(0.5), optax.adam(
            optax.warmup_cosine_decay_schedule(0.0, 0.1, 10, 100))),
    }
    out = {"optax": optax.__version__, "trajectories": {}, "schedules": {}}
    for name, opt in cases.items():
        params = {"a": jnp.array([0.5, -1.0, 2.0]), "b": jnp.array([1.5])}
        state = opt.init(params)
        traj = []
        for _ in range(120):
            g = jax.grad(loss)(params)
            updates, state = opt.update(g, state, params)
            params = jax.tree_util.tree_map(lambda p, u: p + u, params, updates)
            traj.append(np.concatenate([np.asarray(params["a"]), np.asarray(params["b"])]))
        out["trajectories"][name] = enc(np.array(traj))
    steps = [0, 3, 10, 15, 20, 49, 80]
    scheds = {
        "exponential_staircase": optax.exponential_decay(1.0, 5, 0.5, staircase=True),
        "cosine": optax.cosine_decay_schedule(2.0, 50, 0.1),
        "piecewise": optax.piecewise_constant_schedule(1.0, {10: 0.5, 20: 0.1}),
    }
    for name, s in scheds.items():
        out["schedules"][name] = enc(np.array([float(s(t)) for t in steps]))
    out["schedule_steps"] = steps
    out["custom_chain_losses"] = custom_transformation_program(jax, jnp, optax)
    out["piecewise_dict"] = [float(optax.piecewise_constant_schedule(1.0, {10: 0.5, 20: 0.1})(k))
                             for k in (0, 9, 10, 19, 20, 40)]
    out["named_states"] = {
        name: [[path, enc(leaf)] for path, leaf in optimizer_state_program(jax, jnp, optax, name)]
        for name in ["adam", "adam_schedule", "sgd_momentum", "rmsprop", "adamw", "chain"]}
    return out


EDGE = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-300, 0.5]
UNARY = ["sin", "cos", "tanh", "exp", "log", "log1p", "expm1", "sqrt", "cbrt", "abs", "sign",
         "arctan", "arcsinh", "floor", "round", "square", "log2", "arctanh", "arcsin"]
BINARY = ["maximum", "minimum", "hypot", "logaddexp", "arctan2", "power", "mod"]
PAIRS = [(0.0, 0.0), (1.0, 1.0), (-np.inf, -np.inf), (2.0, 0.0), (0.0, 2.0), (-0.0, 0.0),
         (np.inf, 1.0), (3.0, -2.0)]


def convention_goldens():
    out = {"edge": EDGE, "pairs": PAIRS, "unary": {}, "binary": {}}
    for name in UNARY:
        f = getattr(jnp, name)
        out["unary"][name] = {"value": enc(np.array([f(x) for x in EDGE])),
                              "grad": enc(np.array([jax.grad(f)(x) for x in EDGE]))}
    for name in BINARY:
        f = getattr(jnp, name)
        pts = [(a, b) for a, b in PAIRS if not (name == "power" and a < 0)]
        out["binary"][name] = {
            "points": pts,
            "value": enc(np.array([f(a, b) for a, b in pts])),
            "grad": enc(np.array([np.array(jax.grad(f, argnums=(0, 1))(a, b)) for a, b in pts])),
        }
    xp, fp = jnp.array([0.0, 1.0, 2.0]), jnp.array([0.0, 1.0, 3.0])
    reductions = {
        "max_tie": (lambda x: jnp.max(x), [1.0, 3.0, 3.0, 2.0]),
        "prod_two_zeros": (lambda x: jnp.prod(x), [2.0, 0.0, 3.0, 0.0]),
        "prod_one_zero": (lambda x: jnp.prod(x), [2.0, 0.0, 3.0, 4.0]),
        "std_constant": (lambda x: jnp.std(x), [2.0, 2.0, 2.0]),
        "sqrt_at_zero": (lambda x: jnp.sum(jnp.sqrt(x)), [0.0, 4.0]),
        "interp_knots": (lambda x: jnp.interp(x, xp, fp).sum(), [1.0, 0.5, 2.0]),
        "double_where": (lambda x: jnp.sum(jnp.where(x > 0, jnp.sqrt(jnp.where(x > 0, x, 1.0)),
                                                     0.0)), [-1.0, 0.0, 4.0]),
        "single_where": (lambda x: jnp.sum(jnp.where(x > 0, jnp.sqrt(x), 0.0)),
                         [-1.0, 0.0, 4.0]),
        "clip_bounds": (lambda x: jnp.sum(jnp.clip(x, 0.0, 1.0)), [0.0, 0.5, 1.0, 2.0]),
        "abs_zeros": (lambda x: jnp.sum(jnp.abs(x)), [0.0, -0.0, -2.0]),
    }
    out["reductions"] = {k: {"x": x, "value": enc(f(jnp.array(x))),
                             "grad": enc(jax.grad(f)(jnp.array(x)))}
                         for k, (f, x) in reductions.items()}
    return out


def ode_goldens():
    """Lotka-Volterra by jax.experimental.ode.odeint (dopri5, tight tolerances) and the
    gradient of a trajectory loss by its continuous adjoint."""
    from jax.experimental.ode import odeint

    def lv(y, t, p):
        a, b, c, d = p[0], p[1], p[2], p[3]
        return jnp.stack([a * y[0] - b * y[0] * y[1], d * y[0] * y[1] - c * y[1]])

    y0 = jnp.array([1.2, 0.8])
    p = jnp.array([1.5, 1.0, 3.0, 1.0])
    t = jnp.linspace(0.0, 4.0, 9)

    def loss(y0, p):
        ys = odeint(lv, y0, t, p, rtol=1e-11, atol=1e-11)
        return jnp.sum(ys[:, 0] ** 2 + jnp.sin(ys[:, 1]))

    ys = odeint(lv, y0, t, p, rtol=1e-11, atol=1e-11)
    g_y0, g_p = jax.grad(loss, argnums=(0, 1))(y0, p)
    return {"jax": jax.__version__, "y0": enc(y0), "p": enc(p), "t": enc(t), "ys": enc(ys),
            "grad_y0": enc(g_y0), "grad_p": enc(g_p)}


def odenet_goldens():
    """The ODE-Net of the JAX-era tutorials (an MLP field 2-20-1 over (y, t), tanh hidden
    layer, ten inputs on [-2, 2], targets x^3 + x/10, parameters from RandomState(0)), in
    float32: the loss and its gradient by jax.experimental.ode.odeint's adjoint, at its
    default tolerances."""
    from jax.experimental.ode import odeint

    rs = np.random.RandomState(0)
    params = [(rs.randn(m, n).astype(np.float32), rs.randn(n).astype(np.float32))
              for m, n in zip([2, 20], [20, 1])]

    def mlp(params, inputs):
        for w, b in params:
            outputs = jnp.dot(inputs, w) + b
            inputs = jnp.tanh(outputs)
        return outputs

    def dynamics(state, time, params):
        return mlp(params, jnp.hstack([state, jnp.array(time)]))

    t = jnp.array([0.0, 1.0], dtype=jnp.float32)
    inputs = jnp.reshape(jnp.linspace(-2.0, 2.0, 10, dtype=jnp.float32), (10, 1))
    targets = inputs ** 3 + jnp.float32(0.1) * inputs

    def loss(params):
        preds = jax.vmap(lambda x: odeint(dynamics, x, t, params)[1])(inputs)
        return jnp.mean(jnp.sum((preds - targets) ** 2, axis=1))

    (w1, b1), (w2, b2) = params
    (g1, gb1), (g2, gb2) = jax.grad(loss)(params)
    return {"jax": jax.__version__, "w1": enc(w1), "b1": enc(b1), "w2": enc(w2), "b2": enc(b2),
            "inputs": enc(inputs), "targets": enc(targets), "loss": enc(loss(params)),
            "grad_w1": enc(g1), "grad_b1": enc(gb1), "grad_w2": enc(g2), "grad_b2": enc(gb2)}


def linalg_goldens():
    """Gradients of scalar functions of the jnp.linalg factorizations (JAX's conventions:
    symmetrized cholesky/eigh input, sign-invariant uses of singular/eigen vectors)."""
    rng = np.random.default_rng(5)
    g = rng.uniform(-1, 1, (4, 4)) + 3 * np.eye(4)
    m = rng.uniform(-1, 1, (4, 4))
    spd = m @ m.T + 4 * np.eye(4)
    tall = rng.uniform(-1, 1, (5, 3))
    b = rng.uniform(-1, 1, (4, 2))
    w1 = rng.uniform(-1, 1, 64)

    def wsum(x, k=0):
        x = x.reshape(-1)
        return jnp.sum(x * w1[k:k + x.size])

    fns = {
        "det": (lambda a: jnp.linalg.det(a), g),
        "slogdet": (lambda a: jnp.linalg.slogdet(a)[1], g),
        "inv": (lambda a: wsum(jnp.linalg.inv(a)), g),
        "solve": (lambda a: wsum(jnp.linalg.solve(a, b)), g),
        "cholesky": (lambda a: wsum(jnp.linalg.cholesky(a)), spd),
        "eigh": (lambda a: wsum(jnp.linalg.eigh(a)[0]) + wsum(jnp.linalg.eigh(a)[1] ** 2, 4), spd),
        "svd": (lambda a: wsum(jnp.linalg.svd(a, full_matrices=False)[1])
                + wsum(jnp.linalg.svd(a, full_matrices=False)[0] ** 2, 3)
                + wsum(jnp.linalg.svd(a, full_matrices=False)[2] ** 2, 20), tall),
        "qr": (lambda a: wsum(jnp.linalg.qr(a)[0]) + wsum(jnp.linalg.qr(a)[1], 15), tall),
        "pinv": (lambda a: wsum(jnp.linalg.pinv(a)), tall),
        "norm_nuc": (lambda a: jnp.linalg.norm(a, "nuc"), tall),
        "norm_2": (lambda a: jnp.linalg.norm(a, 2), tall),
        "matrix_power_3": (lambda a: wsum(jnp.linalg.matrix_power(a, 3)), g),
    }
    out = {"jax": jax.__version__, "w": enc(w1), "b": enc(b), "cases": {}}
    for name, (f, x) in fns.items():
        out["cases"][name] = {"x": enc(x), "value": enc(f(jnp.array(x))),
                              "grad": enc(jax.grad(f)(jnp.array(x)))}
    return out


# Issue 20's items 4, 8 and 9: printing and formatting, jit's keywords, pytrees.
FORMAT_CASES = [(1.2345678, "float32", ".3e"), (3, "int32", "5d"), (True, "bool", ""),
                (2.5, "float64", ".2f"), (-0.0, "float32", "+.1f"), (float("nan"), "float32", ".3g"),
                (float("inf"), "float64", "e"), (12345.678, "float32", ",.1f"),
                (0.1, "float64", ""), (7, "int32", "")]
PRINT_CASES = [([1.5, 2.5], "float32"), ([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], "float64"),
               ([1, 2, 3], "int32"), ([True, False], "bool"), (2.5, "float32")]


# Calls whose exception type JAX code may catch: written once, evaluated with `xp` the numpy
# module and `lib` the package (jax.numpy and jax here, quabla.numpy and quabla in the test).
ERROR_CASES = {
    "add_shapes": "xp.ones(3) + xp.ones(4)",
    "matmul_shapes": "xp.ones((2, 3)) @ xp.ones((4, 5))",
    "reshape_size": "xp.ones(6).reshape(4, 2)",
    "concatenate_shapes": "xp.concatenate([xp.ones((2, 3)), xp.ones((2, 4))])",
    "sum_axis_out_of_bounds": "xp.sum(xp.ones(3), axis=2)",
    "where_shapes": "xp.where(xp.ones(3) > 0, xp.ones(4), 0.0)",
    "broadcast_to_shape": "xp.broadcast_to(xp.ones(3), (4,))",
    "broadcast_to_fewer_axes": "xp.broadcast_to(xp.ones((2, 3)), (3,))",
    "broadcast_shapes": "xp.broadcast_shapes((3,), (4,))",
    "broadcast_arrays": "xp.broadcast_arrays(xp.ones(3), xp.ones(4))",
    "stack_shapes": "xp.stack([xp.ones(3), xp.ones(4)])",
    "transpose_axes": "xp.transpose(xp.ones((2, 3)), (0, 0))",
    "astype_unknown": "xp.ones(3).astype('foo')",
    "float_of_vector": "float(xp.ones(3))",
    "grad_of_vector_output": "lib.grad(lambda x: x)(xp.ones(3))",
    "grad_of_int_input": "lib.grad(lambda x: x)(xp.asarray(1))",
    "vmap_sizes": "lib.vmap(lambda a, b: a + b)(xp.ones(3), xp.ones(4))",
    "solve_stacked_vectors": "xp.linalg.solve(xp.ones((5, 3, 3)), xp.ones((5, 3)))",
    "solve_rows": "xp.linalg.solve(xp.ones((3, 3)), xp.ones(4))",
}


# Item 5: index modes. `x` is arange(5.0), `m` arange(12.0) as 3x4, `i` an index array.
INDEX_CASES = {
    "read_static_past_end": "x[7]",
    "read_static_before_start": "x[-7]",
    "read_array_clamps": "x[xp.array([7, -7, -1])]",
    "get_default_clamps": "x.at[xp.array([7, -7])].get()",
    "get_fill": "x.at[xp.array([1, 7, -7])].get(mode='fill', fill_value=-1.0)",
    "get_fill_default_nan": "x.at[7].get(mode='fill')",
    "get_drop": "x.at[xp.array([1, 7])].get(mode='drop')",
    "get_fill_int": "xp.arange(5, dtype=xp.int32).at[xp.array([7])].get(mode='fill')",
    "get_fill_uint": "xp.arange(5, dtype=xp.uint32).at[9].get(mode='fill')",
    "get_fill_bool": "xp.array([True]).at[3].get(mode='fill')",
    "get_fill_2d_index": "x.at[xp.array([[1, 7], [2, -9]])].get(mode='fill', fill_value=-1.0)",
    "get_fill_two_arrays": "m.at[xp.array([0, 5]), xp.array([1, 2])].get(mode='fill', "
                           "fill_value=-1.0)",
    "get_fill_slice_and_array": "m.at[1:, xp.array([0, 9])].get(mode='fill', fill_value=-1.0)",
    "get_fill_ellipsis": "m.at[..., 9].get(mode='fill', fill_value=-1.0)",
    "set_static_drops": "x.at[7].set(100.0)",
    "set_drops_out_of_range": "x.at[xp.array([1, 7, -7, -1])].set(100.0)",
    "set_clip": "x.at[7].set(100.0, mode='clip')",
    "add_clip": "x.at[xp.array([1, 7, -7])].add(1.0, mode='clip')",
    "set_fill": "x.at[xp.array([1, 7])].set(9.0, mode='fill')",
    "set_rows_drop": "m.at[xp.array([0, 5]), 1:3].set(7.0)",
    "set_row_static_drop": "m.at[5].set(7.0)",
    "add_columns_drop": "xp.zeros((3, 4)).at[:, xp.array([1, 9])].add(1.0)",
    "mul_drop": "x.at[xp.array([2, 8])].mul(3.0)",
    "min_max_drop": "x.at[xp.array([3, 11])].min(-1.0).at[xp.array([0, -6])].max(9.0)",
    "take_default_fill": "xp.take(x, xp.array([1, 7, -7]))",
    "take_clip": "xp.take(x, xp.array([1, 7, -7]), mode='clip')",
    "take_fill_value": "xp.take(x, xp.array([1, 7]), mode='fill', fill_value=9.0)",
    "take_wrap": "xp.take(x, xp.array([1, 7, -7]), mode='wrap')",
    "take_axis": "xp.take(m, xp.array([3, 5]), axis=1)",
    "unknown_mode": "x.at[1].set(2.0, mode='bogus')",
    "take_raise": "xp.take(x, xp.array([1]), mode='raise')",
}


def index_env(xp):
    return {"xp": xp, "x": xp.arange(5.0, dtype=xp.float32),
            "m": xp.arange(12.0, dtype=xp.float32).reshape(3, 4)}


# Item 1: default dtypes with x64 on (the recorder runs with it on), `i` an array of the
# default int (int64 in JAX with x64; Quabla's int32 stands for it).
X64_CASES = [
    "xp.asarray(1.0)", "xp.asarray([1.0, 2.0])", "xp.zeros(2)", "xp.ones(2)", "xp.eye(2)",
    "xp.arange(3.0)", "xp.linspace(0, 1, 3)", "xp.full(2, 1.5)", "i * 0.1", "0.1 * i",
    "xp.multiply(i, 0.5)", "xp.mean(i)", "xp.sqrt(i)", "xp.ones(2, dtype=xp.float32) * 0.1",
    "xp.arange(3)", "i + 1", "lib.random.normal(lib.random.PRNGKey(0), (2,))",
    "lib.random.uniform(lib.random.PRNGKey(0), (2,))", "i / 2", "2 / i", "i / i",
    "xp.divide(i, 2)", "xp.true_divide(i, i)", "lib.jit(lambda k: k / 10)(i)",
    "lib.jit(lambda k: 0.5 ** (k / 10))(i)", "xp.ones(2, dtype=xp.float32) / 2",
]
X64_VALUE = "xp.sum(xp.sin(xp.linspace(0.0, 1.0, 5)) * 0.1) + xp.mean(xp.arange(4)) / 3.0"

# Item 1, x64 off: float64 inputs become float32, silently for numpy values and with a
# warning for an explicitly requested dtype (`np` is numpy).
X64_OFF_CASES = [
    "xp.asarray(np.ones(2))", "xp.asarray(np.ones(2), dtype=np.float64)",
    "xp.array(np.ones(2), dtype=np.float64)", "xp.asarray(np.float64(1.5))",
    "xp.zeros(2, dtype=xp.float64)", "xp.ones(2, dtype=xp.float64)",
    "xp.full(2, 1.0, dtype=np.float64)", "xp.arange(3, dtype=xp.float64)",
    "xp.linspace(0, 1, 3, dtype='float64')", "xp.eye(2, dtype=xp.float64)",
    "xp.ones(2).astype(xp.float64)", "xp.zeros_like(np.ones(2))",
    "xp.zeros_like(xp.ones(2), dtype=xp.float64)", "xp.ones(2, dtype=float)",
    "xp.ones(2, xp.float32) + np.ones(2)", "xp.ones(2) * np.float64(2.0)",
    "xp.asarray(np.arange(3))", "lib.jit(lambda x: x * 2)(np.ones(2))",
    "lib.grad(lambda x: (x ** 2).sum())(np.ones(2))",
    "lib.random.normal(lib.random.PRNGKey(0), (2,), dtype=xp.float64)",
    "lib.random.uniform(lib.random.PRNGKey(0), (2,), dtype=xp.float64)",
]


def x64_off_goldens():
    """Each X64_OFF_CASES dtype and warnings (their text before JAX's link), x64 off."""
    import warnings

    jax.config.update("jax_enable_x64", False)
    out = {}
    try:
        for code in X64_OFF_CASES:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = eval(code, {"xp": jnp, "lib": jax, "np": np})
            out[code] = {"dtype": str(got.dtype),
                         "warnings": [str(w.message).split(" See ")[0] for w in caught]}
    finally:
        jax.config.update("jax_enable_x64", True)
    return out


def outcome(thunk):
    """What a call gives: its value, or the exception's type name (and its bases', for
    JAX's subclasses of the classes Quabla raises)."""
    try:
        return {"value": thunk()}
    except Exception as e:  # noqa: BLE001 - the type is what is recorded
        return {"raises": type(e).__name__, "bases": [t.__name__ for t in type(e).__mro__]}


def linalg_broadcast_goldens():
    """Item 6: numpy 2's solve and JAX's scipy solves, broadcasting b against a[5, 3, 3]."""
    import jax.scipy.linalg as sl

    m = np.sin(np.arange(45.0) * 0.7).reshape(5, 3, 3)
    a = m @ np.swapaxes(m, -1, -2) + 3.0 * np.eye(3)
    low = np.tril(m) + 3.0 * np.eye(3)
    c = np.linalg.cholesky(a)
    out = {"a": enc(a), "low": enc(low), "cases": {}}
    for shape in [(3,), (3, 2), (2, 1, 3, 4), (5, 3, 2), (5, 3)]:
        b = np.cos(np.arange(float(np.prod(shape))) * 0.3).reshape(shape)
        key = "x".join(map(str, shape))
        out["cases"][key] = {
            "b": enc(b),
            "solve": outcome(lambda: enc(jnp.linalg.solve(a, b))),
            "cho_solve": outcome(lambda: enc(sl.cho_solve((c, True), b))),
            "solve_triangular": outcome(lambda: enc(sl.solve_triangular(low, b, lower=True))),
        }
    return out


def custom_rule_goldens():
    newton_sqrt, sin_times, scaled_loss = custom_rule_programs(jax, jnp)
    pts = [2.0, 9.0, 0.25]
    return {
        "sqrt": [float(newton_sqrt(a)) for a in pts],
        "sqrt_grad": [float(jax.grad(newton_sqrt)(a)) for a in pts],
        "sqrt_grad_jit": [float(jax.jit(jax.grad(newton_sqrt))(a)) for a in pts],
        "defjvps_grad": [float(g) for g in jax.grad(sin_times, argnums=(0, 1))(2.0, 3.0)],
        "defjvps_jvp": float(jax.jvp(sin_times, (2.0, 3.0), (1.0, 0.5))[1]),
        "pytree_grad": [float(g) for g in jax.grad(scaled_loss, argnums=(0, 1, 2))(
            0.5, 1.5, -2.0)],
        "nondiff_jvp": [float(v) for v in jax.value_and_grad(
            nondiff_jvp_program(jax, jnp), argnums=(0, 1))(1.5, -0.5)[1]]
        + [float(nondiff_jvp_program(jax, jnp)(1.5, -0.5))],
    }


def ported_program_goldens():
    """Whole programs from JAX's examples, run as written (the tests change the imports)."""
    import jax.scipy  # noqa: F401  (the program reads lib.scipy.special)
    import jax.example_libraries.optimizers  # noqa: F401  (read through lib by name)
    import jax.example_libraries.stax  # noqa: F401
    log, acc, params = mlp_classifier_program(jax, jnp)
    w0, out_shape, losses = stax_program(jax, jnp)
    return {"mlp_classifier": {"log": log, "accuracy": acc,
                               "params": [[enc(w), enc(b)] for w, b in params]},
            "stax": {"w0": enc(w0), "out_shape": list(out_shape), "losses": losses}}


def semantics_goldens():
    import collections
    from jax import tree_util as tu

    out = {"jax": jax.__version__, "format": [], "print": [], "errors": {}, "index": {},
           "custom_rules": custom_rule_goldens(), "linalg": linalg_broadcast_goldens(),
           "static_args": {name: outcome(lambda: enc(call())) for name, call in
                           static_argument_program(jax, jnp).items()},
           "python_control_flow": {name: outcome(lambda: enc(call())) for name, call in
                                   python_control_flow_program(jax, jnp).items()},
           "x64": {"dtypes": {code: str(eval(code, {"xp": jnp, "lib": jax,
                                                    "i": jnp.arange(3)}).dtype)
                              for code in X64_CASES},
                   "value": {"code": X64_VALUE,
                             "value": enc(eval(X64_VALUE, {"xp": jnp}))},
                   "off": x64_off_goldens()}}
    for name, code in INDEX_CASES.items():
        got = outcome(lambda: enc(eval(code, index_env(jnp))))
        out["index"][name] = {"code": code, **got}
    for name, code in ERROR_CASES.items():
        out["errors"][name] = {"code": code, **outcome(
            lambda: eval(code, {"xp": jnp, "lib": jax}))}
    for v, dt, spec in FORMAT_CASES:
        x = jnp.asarray(v, dtype=dt)
        out["format"].append({"v": repr(v), "dtype": dt, "spec": spec, "str": str(x),
                              "format": format(x, spec), "fstring": f"{x}",
                              "float": float(x), "bool": bool(x)})
    for v, dt in PRINT_CASES:
        x = jnp.asarray(v, dtype=dt)
        out["print"].append({"v": v, "dtype": dt, "str": str(x), "fstring": f"{x}",
                             "format_spec": outcome(lambda: format(x, ".2f"))})

    def traced_spec(x):
        out["traced_spec"] = outcome(lambda: f"{x:.3e}")
        return x

    jax.jit(traced_spec)(1.0)

    def f(x, n, *, scale=1.0):
        return x * n * scale

    out["jit"] = {
        "unknown_keyword": outcome(lambda: jax.jit(f, foo=1)),
        "device_and_backend": outcome(lambda: jax.jit(f, device=jax.devices()[0],
                                                      backend="cpu")),
        "static_argnames_positional": float(jax.jit(f, static_argnames="n")(2.0, 3)),
        "static_argnames_keyword": float(jax.jit(f, static_argnames="n")(2.0, n=3)),
        "static_argnums_keyword": float(jax.jit(f, static_argnums=1)(2.0, n=4)),
        "static_kwonly": float(jax.jit(f, static_argnames=("n", "scale"))(2.0, 3, scale=2.0)),
        "backend_inline_keep_unused": float(jax.jit(f, backend="cpu", inline=True,
                                                    keep_unused=True)(1.0, 2.0)),
        "unhashable_static": outcome(lambda: jax.jit(f, static_argnames="n")(1.0, n=[3])),
        "donate_argnames": [float(v) for v in jax.jit(lambda p, q: p + q,
                                                      donate_argnames="q")(jnp.ones(2),
                                                                           q=jnp.ones(2))],
    }
    point = collections.namedtuple("Point", ["w", "b"])
    tree = {"a": [1, (2, None)], "b": point(3, 4)}
    with_path, _ = tu.tree_flatten_with_path(tree)
    part = tu.Partial(lambda a, b, c=0: a + b + c, 1, c=2)
    out["pytree"] = {
        "keystr": [tu.keystr(p) for p, _ in with_path],
        "keystr_simple": [tu.keystr(p, simple=True, separator="/") for p, _ in with_path],
        "leaves": [leaf for _, leaf in with_path],
        "prefix_map": repr(tu.tree_map(lambda x, y: (x, y), {"a": 1, "b": 2},
                                       {"a": [1, 2], "b": (3,)})),
        "none_is_empty": repr(tu.tree_map(lambda x, y: x + y, [1, None], [2, None])),
        "map_with_path": repr(tu.tree_map_with_path(lambda p, x: tu.keystr(p), {"a": [1, 2]})),
        "mismatch_keys": outcome(lambda: tu.tree_map(lambda x, y: x, {"a": 1}, {"b": 1})),
        "mismatch_length": outcome(lambda: tu.tree_map(lambda x, y: x, [1, 2], [1])),
        "mismatch_none": outcome(lambda: tu.tree_map(lambda x, y: x, [1, None], [2, 3])),
        "partial_leaves": tu.tree_leaves(part),
        "partial_call": part(3),
    }
    return out


NN_ACTIVATIONS = ["relu", "relu6", "sigmoid", "softplus", "soft_sign", "log_sigmoid", "silu",
                  "elu", "selu", "celu", "leaky_relu", "hard_tanh", "hard_sigmoid", "hard_silu",
                  "gelu", "gelu_exact"]
NN_INPUTS = [-np.inf, -30.0, -7.0, -6.0, -3.0, -1.0, -0.5, -1e-8, -0.0, 0.0, 1e-8, 0.5, 1.0,
             3.0, 6.0, 7.0, 30.0, np.inf, np.nan]
NN_INITIALIZERS = ["glorot_uniform", "glorot_normal", "lecun_uniform", "lecun_normal",
                   "he_uniform", "he_normal", "orthogonal"]


def nn_goldens():
    """jax.nn's activations and their derivatives at kinks and edge inputs, its softmax
    family (axis, where, b, return_sign), and its initializers' draws."""
    import jax.nn as nn
    x = jnp.array(NN_INPUTS)
    out = {"inputs": enc(x), "activations": {}}
    for name in NN_ACTIVATIONS:
        f = (lambda v: nn.gelu(v, approximate=False)) if name == "gelu_exact" else \
            getattr(nn, name)
        out["activations"][name] = {"value": enc(f(x)),
                                    "grad": enc(jax.vmap(jax.grad(f))(x))}
    m = jnp.array([[1.0, 2.0, 3.0, -1.0], [0.0, 0.0, 0.0, 0.0], [-np.inf, 5.0, 1.0, 2.0]])
    w = jnp.array([[0.3, -1.0, 2.0, 0.5], [1.0, 2.0, 3.0, 4.0], [0.1, 0.2, -0.3, 0.4]])
    mask = jnp.array([[True, True, False, True], [True, False, True, True],
                      [False, True, True, True]])
    b = jnp.array([[1.0, -2.0, 0.5, 0.0], [1.0, 1.0, 1.0, 1.0], [2.0, 0.0, 1.0, 3.0]])
    cases = softmax_family_cases(nn, jax.scipy.special, jnp, mask, b)
    out["matrix"], out["weights"], out["softmax_family"] = enc(m), enc(w), {}
    for name, f in cases.items():
        loss = weighted_finite_sum(jnp, f, w)
        out["softmax_family"][name] = {"value": enc(f(m)), "grad": enc(jax.grad(loss)(m))}
    sign = jax.scipy.special.logsumexp(m, axis=1, b=b, return_sign=True)
    out["logsumexp_sign"] = [enc(sign[0]), enc(sign[1])]
    out["mask"], out["b"] = enc(mask), enc(b)
    out["one_hot"] = enc(nn.one_hot(jnp.array([0, 2, 5, -1, 1]), 3))
    out["one_hot_axis0_i32"] = enc(nn.one_hot(jnp.array([0, 2, 1]), 4, dtype=jnp.int32, axis=0))
    k = jax.random.PRNGKey(7)
    out["initializers"] = {}
    for name in NN_INITIALIZERS:
        init = getattr(jax.nn.initializers, name)()
        out["initializers"][name] = {
            "4x3_f64": enc(init(k, (4, 3), jnp.float64)),
            "3x5_f32": enc(init(k, (3, 5), jnp.float32)),
            "3x3x4x2_f64": enc(init(k, (3, 3, 4, 2), jnp.float64)),
        }
    out["truncated_normal_f64"] = enc(jax.random.truncated_normal(k, -1.5, 2.5, (200,),
                                                                  jnp.float64))
    out["truncated_normal_f32"] = enc(jax.random.truncated_normal(k, -2.0, 2.0, (200,),
                                                                  jnp.float32))
    return out


SPECIAL_INPUTS = {
    "expit": [-np.inf, -40.0, -1.0, -0.0, 0.0, 0.5, 3.0, 40.0, np.inf, np.nan],
    "logit": [-0.5, 0.0, 1e-300, 1e-10, 0.25, 0.5, 0.75, 1.0 - 1e-10, 1.0, 1.5, np.nan],
    "erf": [-np.inf, -6.0, -1.0, -1e-9, -0.0, 0.0, 0.3, 2.0, 6.0, np.inf, np.nan],
    "erfc": [-np.inf, -6.0, -1.0, -0.0, 0.0, 0.3, 2.0, 6.0, 27.0, np.inf, np.nan],
    "erfinv": [-1.5, -1.0, -0.999999, -0.5, -1e-9, -0.0, 0.0, 0.3, 0.9, 0.999999, 1.0, np.nan],
    "ndtr": [-np.inf, -40.0, -20.0, -8.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 8.0, 40.0, np.inf],
    "ndtri": [-0.1, 0.0, 1e-300, 1e-100, 1e-20, 1e-8, 0.025, 0.3, 0.5, 0.7, 0.975,
              1.0 - 1e-8, 1.0, 1.1],
    "log_ndtr": [-np.inf, -1e5, -40.0, -20.5, -20.0, -19.5, -10.0, -3.0, -0.0, 0.0, 1.0, 7.9,
                 8.1, 30.0, np.inf],
    "gammaln": [-np.inf, -2.5, -1.0, -0.5, -0.0, 0.0, 1e-300, 0.5, 1.0, 1.5, 2.0, 5.0, 10.5,
                171.0, 1e10, np.inf, np.nan],
    # (Not +inf: JAX's polygamma(1, inf), digamma's derivative, is NaN where Quabla's is 0.)
    "digamma": [-2.5, -1.0, -0.5, 0.0, 1e-8, 0.5, 1.0, 1.5, 2.0, 5.0, 10.5, 171.0, 1e10,
                np.nan],
    "gamma": [-2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.0, 5.0, 10.5, 171.0, 172.0, np.inf],
    "gammasgn": [-np.inf, -2.5, -1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 3.0, np.inf, np.nan],
}
SPECIAL_PAIRS = {
    "xlogy": ([0.0, 0.0, 0.0, 1.0, -2.0, 3.0, 0.5, 2.0], [0.0, 1.0, -1.0, 0.0, 2.0, 0.5, np.inf, -1.0]),
    "xlog1py": ([0.0, 0.0, 1.0, -2.0, 3.0, 0.5], [-1.0, 0.0, -1.0, 2.0, -0.5, np.inf]),
}


def scipy_goldens():
    """jax.scipy.special (values and derivatives at the edges), stats.norm, and
    jax.scipy.linalg's scipy signatures."""
    import jax.scipy as jsp
    out = {"special": {}, "pairs": {}, "norm": {}, "linalg": {}}
    for name, xs in SPECIAL_INPUTS.items():
        f = getattr(jsp.special, name)
        x = jnp.array(xs)
        out["special"][name] = {"x": enc(x), "value": enc(f(x)),
                                "grad": enc(jax.vmap(jax.grad(f))(x)),
                                "value_f32": enc(f(x.astype(jnp.float32)))}
    for name, (xs, ys) in SPECIAL_PAIRS.items():
        f = getattr(jsp.special, name)
        x, y = jnp.array(xs), jnp.array(ys)
        gx, gy = jax.vmap(jax.grad(f, argnums=(0, 1)))(x, y)
        out["pairs"][name] = {"x": enc(x), "y": enc(y), "value": enc(f(x, y)),
                              "gx": enc(gx), "gy": enc(gy)}
    x = jnp.array([-3.0, -0.5, 0.0, 1.2, 4.0])
    for name in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
        f = getattr(jsp.stats.norm, name)
        g = lambda v, loc, scale, f=f: f(v, loc, scale)  # noqa: E731
        out["norm"][name] = {
            "value": enc(f(x, 0.5, 2.0)),
            "grads": [enc(a) for a in jax.vmap(jax.grad(g, argnums=(0, 1, 2)),
                                               (0, None, None))(x, 0.5, 2.0)]}
    q = jnp.array([1e-12, 0.05, 0.5, 0.8, 1.0 - 1e-9])
    for name in ["ppf", "isf"]:
        f = getattr(jsp.stats.norm, name)
        out["norm"][name] = {"value": enc(f(q, 0.5, 2.0)),
                             "grads": [enc(jax.vmap(jax.grad(lambda v, f=f: f(v, 0.5, 2.0)))(q))]}
    out["norm"]["x"], out["norm"]["q"] = enc(x), enc(q)
    mvn = jsp.stats.multivariate_normal
    pts = jnp.array([[0.5, -1.0, 0.2], [0.0, 0.0, 0.0], [2.0, 1.0, -3.0]])
    mu = jnp.array([0.1, 0.2, -0.3])
    cov = jnp.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]])

    def mvn_loss(p, m, c):
        return jnp.sum(mvn.logpdf(p, m, c) * jnp.array([1.0, 2.0, 3.0]))

    rs = np.random.RandomState(11)
    mats = {"tiny": rs.randn(3, 3) * 0.003, "small": rs.randn(3, 3) * 0.1,
            "mid": rs.randn(4, 4) * 0.5, "big": rs.randn(4, 4) * 3, "huge": rs.randn(3, 3) * 40}
    out["expm"] = {name: {"a": enc(a), "f64": enc(jsp.linalg.expm(a)),
                          "f32": enc(jsp.linalg.expm(a.astype(np.float32)))}
                   for name, a in mats.items()}
    out["expm"]["upper"] = enc(jsp.linalg.expm(np.triu(mats["mid"]), upper_triangular=True))
    out["expm"]["grad"] = enc(jax.grad(lambda a: jnp.sum(jsp.linalg.expm(a) * jnp.arange(16.0)
                                                          .reshape(4, 4)))(mats["big"]))
    out["expm"]["overflow"] = enc(jsp.linalg.expm(mats["huge"] * 1e5))
    ab = (jnp.array([0.5, 3.0, 10.0, 1e6, 7.9, 8.1]), jnp.array([2.0, 9.0, 30.0, 2e6, 0.3, 8.0]))
    out["betaln"] = {"a": enc(ab[0]), "b": enc(ab[1]), "value": enc(jsp.special.betaln(*ab))}
    xs = jnp.array([-1.0, 0.0, 0.3, 1.0, 2.5, 7.0])
    st = jsp.stats
    out["more_stats"] = {
        "x": enc(xs),
        "t": enc(st.t.logpdf(xs, 3.0, 0.5, 2.0)),
        "t_grad": enc(jax.vmap(jax.grad(lambda v, d: st.t.logpdf(v, d), argnums=(0, 1)),
                               (0, None))(xs, 3.0)[1]),
        "gamma": enc(st.gamma.logpdf(xs, 2.5, -0.5, 1.5)),
        "beta": enc(st.beta.logpdf(xs / 3.0, 2.0, 3.0)),
        "beta_bad": enc(st.beta.logpdf(xs / 3.0, -1.0, 3.0)),
        "poisson": enc(st.poisson.logpmf(jnp.array([-1.0, 0.0, 1.0, 2.5, 3.0, 40.0]), 2.0)),
        "bernoulli": enc(st.bernoulli.logpmf(jnp.array([-1.0, 0.0, 1.0, 2.0]), 0.3)),
        "bernoulli_cdf": enc(st.bernoulli.cdf(jnp.array([-jnp.inf, -1.0, 0.0, 0.5, 1.0, 2.0,
                                                         jnp.nan]), 0.3)),
    }
    out["minimize"] = {}
    for name, run in minimize_programs(jax, jnp).items():
        r = run()
        out["minimize"][name] = {"x": enc(r.x), "fun": enc(r.fun), "jac": enc(r.jac),
                                 "counts": [int(r.nit), int(r.nfev), int(r.njev),
                                            int(r.status), bool(r.success)]}
    ga = jnp.array([0.5, 1.0, 3.0, 10.0, 100.0, 0.0, 2.0, 2.0, 1e-3, 50.0])
    gx = jnp.array([0.1, 1.0, 2.5, 12.0, 90.0, 1.0, 0.0, jnp.inf, 1e-5, 80.0])
    out["igamma"] = {
        "a": enc(ga), "x": enc(gx),
        "p": enc(jsp.special.gammainc(ga, gx)), "q": enc(jsp.special.gammaincc(ga, gx)),
        "grads": [enc(g) for g in jax.vmap(jax.grad(jsp.special.gammainc, argnums=(0, 1)))(
            ga[:5], gx[:5])],
        "gamma_cdf": enc(st.gamma.cdf(xs, 2.5, -0.5, 1.5)),
        "gamma_sf": enc(st.gamma.sf(xs, 2.5, -0.5, 1.5)),
        "poisson_cdf": enc(st.poisson.cdf(jnp.array([-1.0, 0.0, 1.0, 2.5, 3.0, 40.0]), 2.0)),
        "chi2_logpdf": enc(st.chi2.logpdf(xs, 3.0)),
        "chi2_cdf": enc(st.chi2.cdf(xs, 3.0)),
        "chi2_sf": enc(st.chi2.sf(xs, 3.0)),
    }
    ba = jnp.array([0.5, 2.0, 3.0, 10.0, 100.0, 1.0, 1.0, 1.0, 2.0])
    bb = jnp.array([0.5, 3.0, 1.0, 20.0, 50.0, 1.0, 1.0, 1.0, 0.5])
    bx = jnp.array([0.1, 0.4, 0.9, 0.3, 0.7, 0.25, 0.0, 1.0, 0.999])
    pe = jnp.array([-1.0, 0.0, 0.0, 0.5, 2.0, 1.0, 3.0])
    qe = jnp.array([0.5, 0.0, 2.0, 0.0, 1.5, 1.0, -1.0])
    out["entropy"] = {
        "p": enc(pe), "q": enc(qe), "entr": enc(jsp.special.entr(pe)),
        "rel_entr": enc(jsp.special.rel_entr(pe, qe)), "kl_div": enc(jsp.special.kl_div(pe, qe)),
        "entr_grad": enc(jax.vmap(jax.grad(jsp.special.entr))(jnp.array([0.5, 1.0, 3.0]))),
        "factorial": enc(jsp.special.factorial(jnp.array([-1.0, 0.0, 1.0, 4.0, 10.5]))),
        "multigammaln": enc(jsp.special.multigammaln(jnp.array([2.0, 3.5, 10.0]), 3)),
        "beta": enc(jsp.special.beta(jnp.array([0.5, 2.0, -0.5, 3.0]),
                                     jnp.array([0.5, 3.0, 1.0, 0.25]))),
    }
    zs = jnp.array([2.0, 3.0, 1.5, 10.0, 1.0, 0.5, 2.0, 2.0, 2.0, 4.0, 1.0001, 30.0])
    zq = jnp.array([1.0, 0.5, 2.0, 3.0, 1.0, 1.0, -1.0, -1.5, 0.0, 1e-3, 2.0, 0.7])
    pn = jnp.array([1, 2, 3, 0, 1, 1, 4, 2])
    px = jnp.array([1.0, 0.5, 2.5, 3.0, -0.5, 0.0, 7.0, 100.0])
    out["zeta"] = {
        "s": enc(zs), "q": enc(zq), "value": enc(jsp.special.zeta(zs, zq)),
        "dq": enc(jax.vmap(jax.grad(jsp.special.zeta, argnums=1))(zs[:4], zq[:4])),
        "n": enc(pn.astype(jnp.int32)), "x": enc(px),
        "polygamma": enc(jsp.special.polygamma(pn, px)),
        "polygamma_grad": enc(jax.vmap(jax.grad(jsp.special.polygamma, argnums=1))(
            pn[:4], px[:4])),
    }
    out["ibeta"] = {
        "a": enc(ba), "b": enc(bb), "x": enc(bx),
        "value": enc(jsp.special.betainc(ba, bb, bx)),
        "grad_x": enc(jax.vmap(jax.grad(jsp.special.betainc, argnums=2))(ba[:6], bb[:6],
                                                                          bx[:6])),
        "beta_cdf": enc(st.beta.cdf(xs / 3.0, 2.0, 3.0)),
        "beta_sf": enc(st.beta.sf(xs / 3.0, 2.0, 3.0)),
    }
    out["mvn"] = {
        "pts": enc(pts), "mu": enc(mu), "cov": enc(cov),
        "logpdf": enc(mvn.logpdf(pts, mu, cov)), "pdf": enc(mvn.pdf(pts, mu, cov)),
        "batched_cov": enc(mvn.logpdf(pts[:2], mu, jnp.stack([cov, 2 * cov]))),
        "scalar_cov": enc(mvn.logpdf(pts, mu, 0.7)),
        "univariate": enc(mvn.logpdf(pts[:, 0], 0.5, 2.0)),
        "grads": [enc(g) for g in jax.grad(mvn_loss, argnums=(0, 1, 2))(pts, mu, cov)],
    }
    rng = np.random.RandomState(3)
    m = rng.randn(4, 4)
    spd = m @ m.T + 4 * np.eye(4)
    lopsided = np.tril(spd) + np.triu(rng.randn(4, 4), 1) * 5  # the upper triangle is noise
    b, bm = rng.randn(4), rng.randn(4, 2)
    la = jsp.linalg
    lu_f, piv = la.lu_factor(m)
    p, l, u = la.lu(m)

    def pos_loss(a, rhs):
        return jnp.sum(la.solve(a, rhs, assume_a="pos") * jnp.arange(1.0, 5.0)[:, None])

    ga, gb = jax.grad(pos_loss, argnums=(0, 1))(spd, bm)
    out["linalg"] = {
        "m": enc(m), "spd": enc(spd), "lopsided": enc(lopsided), "b": enc(b), "bm": enc(bm),
        "cholesky_upper": enc(la.cholesky(spd)),
        "cholesky_lower": enc(la.cholesky(spd, lower=True)),
        "solve_pos_vec": enc(la.solve(spd, b, assume_a="pos")),
        "solve_pos_lower": enc(la.solve(lopsided, bm, assume_a="pos", lower=True)),
        "solve_pos_grads": [enc(ga), enc(gb)],
        "solve_gen": enc(la.solve(m, bm)),
        "lu": [enc(p), enc(l), enc(u)],
        "lu_factor": [enc(lu_f), enc(piv)],
        "lu_solve_0": enc(la.lu_solve((lu_f, piv), bm)),
        "lu_solve_1": enc(la.lu_solve((lu_f, piv), b, trans=1)),
        "eigh_lower": [enc(v) for v in la.eigh(lopsided)],
        "eigvals_upper": enc(la.eigh(lopsided.T, lower=False, eigvals_only=True)),
        "svd_s": enc(la.svd(m, compute_uv=False)),
        "det": enc(la.det(m)), "inv": enc(la.inv(m)),
        "block_diag": enc(la.block_diag(jnp.ones((2, 2)), 3.0, jnp.array([4.0, 5.0]))),
    }
    return out


def surface_goldens():
    """lax.associative_scan and lax.map, jnp.select/piecewise/append/insert/delete/
    cumulative_sum, jax.tree's reduce/all/transpose, and flatten_util.ravel_pytree."""
    from jax import lax
    from jax.flatten_util import ravel_pytree
    x = jnp.array([0.5, -1.0, 2.0, 0.25, 3.0, -0.5, 1.5])
    mats = jnp.asarray(np.random.RandomState(5).randn(6, 2, 2))

    def affine(a, b):  # (scale, shift) pairs compose: not commutative
        return (a[0] * b[0], a[1] * b[0] + b[1])

    def scan_loss(v):
        s, t = lax.associative_scan(affine, (v, v * v + 1.0))
        return jnp.sum(s * jnp.arange(7.0)) + jnp.sum(jnp.sin(t))

    out = {
        "x": enc(x), "mats": enc(mats),
        "cumsum_odd": enc(lax.associative_scan(jnp.add, x)),
        "cumsum_even_reverse": enc(lax.associative_scan(jnp.add, x[:6], reverse=True)),
        "affine": [enc(a) for a in lax.associative_scan(affine, (x, x * x + 1.0))],
        "affine_reverse": [enc(a) for a in lax.associative_scan(affine, (x, x * x + 1.0),
                                                               reverse=True)],
        "matmul_axis0": enc(lax.associative_scan(jnp.matmul, mats)),
        "max_axis1": enc(lax.associative_scan(jnp.maximum, mats.reshape(3, 8), axis=1)),
        "scan_grad": enc(jax.grad(scan_loss)(x)),
        "lax_map": enc(lax.map(lambda v: jnp.sin(v) * v, x)),
        "lax_map_batched": [enc(a) for a in lax.map(lambda v: (v.sum(), v * 2),
                                                    mats.reshape(6, 4), batch_size=4)],
        "select": enc(jnp.select([x < 0, x > 1], [x * 10, -x], default=7.0)),
        "piecewise": enc(jnp.piecewise(x, [x < 0, x > 1], [lambda v: v ** 2, lambda v: -v,
                                                          lambda v: v + 100])),
        "piecewise_consts": enc(jnp.piecewise(x, [x < 0], [3.0, 4.0])),
        "append_flat": enc(jnp.append(mats[0], x[:3])),
        "append_axis": enc(jnp.append(mats[0], mats[1], axis=1)),
        "insert_row": enc(jnp.insert(mats[0], 1, jnp.array([7.0, 8.0]), axis=0)),
        "insert_many": enc(jnp.insert(x, jnp.array([1, 3, 7]), jnp.array([10.0, 11.0, 12.0]))),
        "insert_col_scalar": enc(jnp.insert(mats[0], 0, 5.0, axis=1)),
        "delete": enc(jnp.delete(x, jnp.array([0, 2, -1]))),
        "delete_axis": enc(jnp.delete(mats[:2], 1, axis=1)),
        "cumulative_sum": enc(jnp.cumulative_sum(mats[0], axis=0, include_initial=True)),
    }
    lax_cases = surface_lax_cases(lax, jnp)
    out["lax_ops"] = {name: enc(f()) for name, f in lax_cases.items()}
    tree = {"b": [1.0, (2.0, 3.0)], "a": 4.0}
    flat, unravel = ravel_pytree({"w": mats[0], "b": x[:3], "n": jnp.arange(2)})
    out["tree"] = {
        "reduce": jax.tree.reduce(lambda a, b: a * 10 + b, tree, 0.0),
        "all": [bool(jax.tree.all([1, True, 2])), bool(jax.tree.all({"a": 1, "b": 0}))],
        "transpose": repr(jax.tree.transpose(jax.tree.structure([0, 0, 0]),
                                             jax.tree.structure({"p": 0, "q": 0}),
                                             [{"p": 1, "q": 2}, {"p": 3, "q": 4},
                                              {"p": 5, "q": 6}])),
        "ravel": enc(flat),
        "unravel_dtypes": [str(v.dtype) for v in jax.tree.leaves(unravel(flat))],
    }
    return out


def _enc_tree(out):
    if isinstance(out, (tuple, list)):
        return [_enc_tree(o) for o in out]
    return enc(out)


def sorting_goldens():
    """jnp.sort/argsort/lexsort/partition, lax.sort/sort_key_val/top_k, the quantile family,
    searchsorted's methods, unique and isin, with gradients, vmap and jit."""
    return {name: _enc_tree(f()) for name, f in sorting_cases(jax, jnp).items()}


def image_goldens():
    import jax.image  # noqa: F401  (programs read lib.image)
    return {name: _enc_tree(f()) for name, f in image_cases(jax, jnp).items()}


def convolution_goldens():
    """lax.conv_general_dilated in its forms, conv, conv_with_general_padding and
    conv_transpose, with gradients, jvp, vmap and jit."""
    return {name: _enc_tree(f()) for name, f in convolution_cases(jax, jnp).items()}


def lbfgs_goldens():
    """optax 0.2.8's L-BFGS with its backtracking line search (the notebook's loop, a
    while_loop reading the state), and scale_by_lbfgs chained by hand."""
    import optax.tree_utils as otu
    cases = lbfgs_toolbox_program(jax, jnp, optax, otu.tree_get)
    return {name: _enc_tree(f()) for name, f in cases.items()}


def numpy_extras_goldens():
    """jax.numpy's nan-reductions, statistics, binning, index helpers, spacings and set
    operations."""
    return {name: _enc_tree(f()) for name, f in numpy_extras_cases(jax, jnp).items()}


def lax_more_goldens():
    """More of jax.lax's user-facing functions."""
    return {name: _enc_tree(f()) for name, f in lax_more_cases(jax, jnp).items()}


def numpy_assorted_goldens():
    """numpy's small conveniences (stacking, matrices, elementwise names, selection)."""
    return {name: _enc_tree(f()) for name, f in numpy_assorted_cases(jax, jnp).items()}


def stats_family_goldens():
    """jax.scipy.stats's other families, every function at and around the support."""
    return {name: _enc_tree(f()) for name, f in stats_family_cases(jax, jnp).items()}


def attention_goldens():
    """jax.nn.dot_product_attention under each of its options."""
    return {name: _enc_tree(f()) for name, f in attention_cases(jax, jnp).items()}


def main():
    """Records every golden file, or those named on the command line (``jax_stats``)."""
    import sys
    only = set(sys.argv[1:])
    os.makedirs(OUT, exist_ok=True)
    for name, make in [("jax_random", random_goldens), ("optax", optax_goldens),
                       ("jax_conventions", convention_goldens), ("jax_ode", ode_goldens),
                       ("jax_linalg", linalg_goldens), ("jax_odenet", odenet_goldens),
                       ("jax_semantics", semantics_goldens),
                       ("jax_nn", nn_goldens), ("jax_scipy", scipy_goldens),
                       ("jax_ported_programs", ported_program_goldens),
                       ("jax_surface", surface_goldens),
                       ("jax_sorting", sorting_goldens),
                       ("jax_convolution", convolution_goldens),
                       ("jax_image", image_goldens),
                       ("optax_lbfgs", lbfgs_goldens),
                       ("jax_numpy_extras", numpy_extras_goldens),
                       ("jax_lax_more", lax_more_goldens),
                       ("jax_numpy_assorted", numpy_assorted_goldens),
                       ("jax_stats", stats_family_goldens),
                       ("jax_attention", attention_goldens)]:
        if only and name not in only:
            continue
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(make(), f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
