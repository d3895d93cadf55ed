"""Programs written once for JAX and for Quabla (``lib`` the package, ``xp`` its numpy):
make_goldens.py records JAX's results from them and the tests run them on Quabla, so both
sides run the same code, changed only by the import."""


def custom_rule_programs(lib, xp):
    """Item 2's programs, written once for JAX (`lib` = jax) and Quabla: JAX's documented
    fixed-point custom_vjp (its rules call the function itself, with a nondiff function
    argument), defjvps, and a custom_vjp over dicts and tuples."""
    import functools

    @functools.partial(lib.custom_vjp, nondiff_argnums=(0,))
    def fixed_point(f, a, x_guess):
        def cond_fun(carry):
            x_prev, x = carry
            return xp.abs(x_prev - x) > 1e-10

        def body_fun(carry):
            _, x = carry
            return x, f(a, x)

        _, x_star = lib.lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
        return x_star

    def fixed_point_fwd(f, a, x_init):
        x_star = fixed_point(f, a, x_init)
        return x_star, (a, x_star)

    def rev_iter(f, packed, u):
        a, x_star, x_star_bar = packed
        _, vjp_x = lib.vjp(lambda x: f(a, x), x_star)
        return x_star_bar + vjp_x(u)[0]

    def fixed_point_rev(f, res, x_star_bar):
        a, x_star = res
        _, vjp_a = lib.vjp(lambda a: f(a, x_star), a)
        (a_bar,) = vjp_a(fixed_point(functools.partial(rev_iter, f), (a, x_star, x_star_bar),
                                     x_star_bar))
        return a_bar, xp.zeros_like(x_star)

    fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)

    def newton_sqrt(a):
        return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)

    @lib.custom_jvp
    def sin_times(x, y):
        return xp.sin(x) * y

    sin_times.defjvps(lambda x_dot, out, x, y: xp.cos(x) * x_dot * y,
                      lambda y_dot, out, x, y: xp.sin(x) * y_dot)

    @lib.custom_vjp
    def scaled(p, pair):
        return {"s": p["w"] * pair[0], "t": pair[1] * 2.0}

    def scaled_fwd(p, pair):
        return scaled(p, pair), (p, pair)

    def scaled_bwd(res, g):
        p, (a, b) = res
        return {"w": g["s"] * a * 10.0}, (g["s"] * p["w"], g["t"] * 2.0)

    scaled.defvjp(scaled_fwd, scaled_bwd)

    def scaled_loss(w, a, b):
        out = scaled({"w": w}, (a, b))
        return xp.sum(out["s"]) + xp.sum(out["t"] ** 2)

    return newton_sqrt, sin_times, scaled_loss


def nondiff_jvp_program(lib, xp):
    """custom_jvp with nondiff_argnums: JAX hands its rule the nondiff arguments first, then
    the tuples of the other primals and their tangents. One function argument (JAX's
    documented ``app``) and one static number in the middle of the signature."""
    import functools

    @functools.partial(lib.custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    def app_jvp(f, primals, tangents):
        (x,), (x_dot,) = primals, tangents
        return f(x), 2.0 * x_dot

    app.defjvp(app_jvp)

    @functools.partial(lib.custom_jvp, nondiff_argnums=(1,))
    def affine(x, k, y):
        return x * k + y

    def affine_jvp(k, primals, tangents):
        (x, y), (x_dot, y_dot) = primals, tangents
        return x * k + y, 3.0 * k * x_dot + y_dot

    affine.defjvp(affine_jvp)

    def loss(x, y):
        return app(lambda v: v ** 3, x) * affine(x, 2.0, y)

    return loss


def static_argument_program(lib, xp):
    """Item 3: a loss taking a function, a string and a dict of options beside its array;
    JAX passes the arguments outside ``argnums`` through untouched."""

    def loss(x, act, name, opts):
        assert isinstance(name, str)
        return xp.sum(act(x)) * opts["scale"]

    x = xp.linspace(-1.0, 1.0, 3).astype(xp.float32)
    args = (x, xp.tanh, "run", {"scale": 2.0})
    return {
        "grad": lambda: lib.grad(loss)(*args),
        "value": lambda: lib.value_and_grad(loss)(*args)[0],
        "jacfwd": lambda: lib.jacfwd(loss)(*args),
        "jacrev": lambda: lib.jacrev(loss)(*args),
        "hessian": lambda: lib.hessian(loss)(*args),
        "grad_of_the_function": lambda: lib.grad(loss, argnums=1)(*args),
    }


def python_control_flow_program(lib, xp):
    """Item 3: Python control flow on primal values under transformations called outside
    jit (an if on the sign, a Newton loop until converged, a length read with int()), and
    the same under jit, where it must fail."""

    def piecewise(x):
        if x > 0:
            return xp.sin(x) * 2.0
        return x ** 3

    def newton_sqrt(a):
        x = a
        while abs(x * x - a) > 1e-6:
            x = 0.5 * (x + a / x)
        return x

    def leading_positive_squares(x):
        n = int(xp.sum(x > 0))
        return xp.sum(x[:n] ** 2)

    pos, neg = xp.asarray(0.5), xp.asarray(-0.5)
    v = xp.asarray([1.0, 2.0, -1.0, 3.0])
    return {
        "grad_pos": lambda: lib.grad(piecewise)(pos),
        "grad_neg": lambda: lib.grad(piecewise)(neg),
        "value_and_grad": lambda: lib.value_and_grad(piecewise)(neg)[0],
        "jvp": lambda: lib.jvp(piecewise, (neg,), (xp.asarray(2.0),))[1],
        "vjp": lambda: lib.vjp(piecewise, pos)[1](xp.asarray(1.0))[0],
        "jacfwd": lambda: lib.jacfwd(piecewise)(pos),
        "jacrev": lambda: lib.jacrev(piecewise)(neg),
        "hessian_pos": lambda: lib.hessian(piecewise)(pos),
        "hessian_neg": lambda: lib.hessian(piecewise)(neg),
        "grad_of_grad": lambda: lib.grad(lib.grad(piecewise))(pos),
        "newton": lambda: newton_sqrt(xp.asarray(2.0)),
        "newton_grad": lambda: lib.grad(newton_sqrt)(xp.asarray(2.0)),
        "int_length_grad": lambda: lib.grad(leading_positive_squares)(v),
        "jit_grad_fails": lambda: lib.jit(lib.grad(piecewise))(pos),
        "jit_fails": lambda: lib.jit(piecewise)(pos),
        "vmap_grad_fails": lambda: lib.vmap(lib.grad(piecewise))(xp.asarray([0.5, -0.5])),
    }


def mlp_classifier_program(lib, xp):
    """JAX's examples/mnist_classifier_fromscratch.py on synthetic data (three classes of
    10-feature points), changed only by the imports: numpy parameters, ``logsumexp`` from
    ``scipy.special``, a jitted update over a list of tuples, and ``f"{loss:.3e}"`` logging.
    Returns the log lines, the final accuracy and the parameters."""
    import numpy.random as npr
    logsumexp = lib.scipy.special.logsumexp

    def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):
        return [(scale * rng.randn(m, n), scale * rng.randn(n))
                for m, n, in zip(layer_sizes[:-1], layer_sizes[1:])]

    def predict(params, inputs):
        activations = inputs
        for w, b in params[:-1]:
            outputs = xp.dot(activations, w) + b
            activations = xp.tanh(outputs)
        final_w, final_b = params[-1]
        logits = xp.dot(activations, final_w) + final_b
        return logits - logsumexp(logits, axis=1, keepdims=True)

    def loss(params, batch):
        inputs, targets = batch
        preds = predict(params, inputs)
        return -xp.mean(xp.sum(preds * targets, axis=1))

    def accuracy(params, batch):
        inputs, targets = batch
        target_class = xp.argmax(targets, axis=1)
        predicted_class = xp.argmax(predict(params, inputs), axis=1)
        return xp.mean(predicted_class == target_class)

    step_size = 0.1

    @lib.jit
    def update(params, batch):
        grads = lib.grad(loss)(params, batch)
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    rng = npr.RandomState(1)
    inputs = rng.randn(96, 10)
    labels = (inputs[:, 0] > 0).astype(int) + (inputs[:, 1] > 0.5).astype(int)
    targets = (labels[:, None] == xp.arange(3)).astype(inputs.dtype)
    batch = (inputs, targets)
    params = init_random_params(0.3, [10, 32, 3])
    log = []
    for epoch in range(30):
        params = update(params, batch)
        if epoch % 5 == 0:
            log.append(f"epoch {epoch}: loss {loss(params, batch):.3e}")
    return log, float(accuracy(params, batch)), params


def softmax_family_cases(nn, special, xp, mask, b):
    """jax.nn's softmax family over a matrix, by name: axes, masks (``where``) and weights
    (``b``), shared by the recorder and the tests."""
    return {
        "softmax_axis1": lambda v: nn.softmax(v, axis=1),
        "softmax_axis0": lambda v: nn.softmax(v, axis=0),
        "softmax_where": lambda v: nn.softmax(v, axis=1, where=mask),
        "log_softmax_axis1": lambda v: nn.log_softmax(v, axis=1),
        "log_softmax_where": lambda v: nn.log_softmax(v, axis=1, where=mask),
        "logsumexp_all": lambda v: nn.logsumexp(v),
        "logsumexp_axis1": lambda v: nn.logsumexp(v, axis=1),
        "logsumexp_keepdims": lambda v: nn.logsumexp(v, axis=0, keepdims=True),
        "logsumexp_b": lambda v: special.logsumexp(v, axis=1, b=b),
        "logsumexp_where": lambda v: nn.logsumexp(v, axis=1, where=mask),
        "standardize": lambda v: nn.standardize(xp.where(xp.isfinite(v), v, 0.0), axis=1),
        "glu": lambda v: nn.glu(v, axis=1),
    }


def weighted_finite_sum(xp, f, w):
    """A scalar loss over ``f``'s finite outputs, weighted by ``w`` when 2-D."""
    def loss(v):
        y = f(v)
        y = xp.where(xp.isfinite(y), y, 0.0)
        return xp.sum(y * w[:, :y.shape[1]]) if y.ndim == 2 else xp.sum(y)
    return loss


def minimize_programs(lib, xp):
    """jax.scipy.optimize.minimize(method="BFGS") runs by name: Rosenbrock from the classic
    start (where JAX's zoom fails: status 3), a 4-d Rosenbrock, a weighted quadratic with
    ``args`` and ``maxiter=2``, and the same under ``jit`` in float32."""
    import numpy as np
    minimize = lib.scipy.optimize.minimize

    def rosen(x):
        return xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    def quad(x, a):
        return xp.sum((x - a) ** 2 * xp.arange(1.0, 4.0, dtype=x.dtype))

    return {
        "rosen2": lambda: minimize(rosen, xp.asarray(np.array([-1.2, 1.0])), method="BFGS"),
        "rosen4": lambda: minimize(rosen, xp.asarray(np.array([0.5, -0.3, 1.7, 0.2])),
                                   method="BFGS"),
        "quad_maxiter": lambda: minimize(quad, xp.zeros(3), (xp.asarray([1.0, 2.0, 3.0]),),
                                         method="BFGS", options={"maxiter": 2}),
        "quad_gtol_jit_f32": lambda: lib.jit(lambda x0: minimize(
            quad, x0, (xp.asarray(np.array([1.0, 2.0, 3.0], np.float32)),), method="BFGS",
            options={"gtol": 1e-3}))(xp.asarray(np.zeros(3, np.float32))),
    }


def custom_transformation_program(lib, xp, optim, steps=15):
    """An optax-style GradientTransformation written in Python (a sign-blend of the
    updates), chained with built-in ones and a scheduled scale, trained on a small
    regression; ``optim`` is optax or quabla.optim. Returns the loss after each step."""
    import numpy as np

    def sign_blend(weight):
        def init(params):
            return optim.EmptyState()

        def update(updates, state, params=None):
            return lib.tree_util.tree_map(
                lambda u: weight * xp.sign(u) + (1 - weight) * u, updates), state

        return optim.GradientTransformation(init, update)

    opt = optim.chain(optim.clip_by_global_norm(1.0), optim.scale_by_adam(), sign_blend(0.3),
                      optim.scale_by_schedule(optim.exponential_decay(0.1, 5, 0.5)),
                      optim.scale(-1.0))
    rng = np.random.RandomState(4)
    x, y = xp.asarray(rng.randn(16, 3)), xp.asarray(rng.randn(16))
    params = {"w": xp.asarray(rng.randn(3) * 0.1), "b": xp.asarray(0.2)}

    def loss(p):
        return xp.mean((x @ p["w"] + p["b"] - y) ** 2)

    init, update = opt
    state = init(params)
    losses = []
    for _ in range(steps):
        grads = lib.grad(loss)(params)
        updates, state = update(grads, state, params)
        params = optim.apply_updates(params, updates)
        losses.append(float(loss(params)))
    return losses


def stax_program(lib, xp, steps=12):
    """JAX's example libraries as their examples use them: a stax MLP (Dense, Relu, Tanh,
    LogSoftmax; FanOut/parallel/FanInSum in a residual block) trained by
    ``optimizers.adam`` with a jitted update; returns the initial parameters' first leaf, the
    output shape and the losses."""
    import numpy as np
    from importlib import import_module
    stax = import_module(lib.__name__ + ".example_libraries.stax")
    optimizers = import_module(lib.__name__ + ".example_libraries.optimizers")
    block = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(16), stax.Identity),
                        stax.FanInSum, stax.Tanh)
    init, apply = stax.serial(stax.Dense(16), stax.Relu, block, stax.Dense(3), stax.LogSoftmax)
    out_shape, params = init(lib.random.PRNGKey(0), (-1, 5))
    rng = np.random.RandomState(2)
    x = xp.asarray(rng.randn(32, 5))
    y = xp.asarray(np.eye(3)[rng.randint(0, 3, 32)])

    def loss(p):
        return -xp.mean(xp.sum(apply(p, x) * y, axis=1))

    opt_init, opt_update, get_params = optimizers.adam(
        optimizers.exponential_decay(0.05, 10, 0.5))

    @lib.jit
    def update(i, state):
        return opt_update(i, lib.grad(loss)(get_params(state)), state)

    state = opt_init(params)
    losses = []
    for i in range(steps):
        state = update(i, state)
        losses.append(float(loss(get_params(state))))
    return np.asarray(params[0][0]), tuple(out_shape), losses


def optimizer_state_program(lib, xp, optim, name):
    """Three updates of a named optax optimizer on fixed gradients; the state's leaves with
    their key paths (``keystr``), as ``tree_flatten_with_path`` gives them."""
    import numpy as np
    makers = {
        "adam": lambda: optim.adam(0.1),
        "adam_schedule": lambda: optim.adam(optim.exponential_decay(0.1, 10, 0.5)),
        "sgd_momentum": lambda: optim.sgd(0.1, momentum=0.9),
        "rmsprop": lambda: optim.rmsprop(0.1),
        "adamw": lambda: optim.adamw(0.1, weight_decay=0.01),
        "chain": lambda: optim.chain(optim.clip_by_global_norm(1.0), optim.scale_by_adam(),
                                     optim.scale(-0.1)),
    }
    opt = makers[name]()
    params = {"w": xp.asarray(np.array([1.0, -2.0, 0.5])), "b": xp.asarray(np.array(0.3))}
    state = opt.init(params)
    for k in range(3):
        grads = {"w": xp.asarray(np.array([0.2, -0.1, 0.4]) * (k + 1)),
                 "b": xp.asarray(np.array(-0.3))}
        updates, state = opt.update(grads, state, params)
        params = optim.apply_updates(params, updates)
    flat, _ = lib.tree_util.tree_flatten_with_path(state)
    return [(lib.tree_util.keystr(path), np.asarray(leaf)) for path, leaf in flat]


def surface_lax_cases(lax, xp):
    """``jax.lax`` array functions by name, as programs call them (clamped dynamic slices,
    lax's rounding, argument orders)."""
    import numpy as np
    x = xp.asarray(np.arange(12.0).reshape(3, 4))
    v = xp.asarray(np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 3.7]))
    return {
        "dynamic_slice_clamped": lambda: lax.dynamic_slice(x, (2, 3), (2, 2)),
        "dynamic_update_slice_clamped": lambda: lax.dynamic_update_slice(
            x, xp.ones((2, 2)), (-1, 3)),
        "dynamic_slice_in_dim": lambda: lax.dynamic_slice_in_dim(x, 1, 2, axis=0),
        "dynamic_update_slice_in_dim": lambda: lax.dynamic_update_slice_in_dim(
            x, xp.zeros((3, 1)), 2, axis=1),
        "slice": lambda: lax.slice(x, (0, 1), (3, 4), (2, 2)),
        "slice_in_dim": lambda: lax.slice_in_dim(x, -3, None, 2, axis=1),
        "round_away": lambda: lax.round(v),
        "round_even": lambda: lax.round(v, 1),
        "rsqrt": lambda: lax.rsqrt(xp.abs(v)),
        "clamp": lambda: lax.clamp(-1.0, v, 2.0),
        "select": lambda: lax.select(v > 0, v, -v * 10),
        "integer_pow": lambda: lax.integer_pow(v, 3),
        "lgamma": lambda: lax.lgamma(xp.abs(v)),
        "digamma": lambda: lax.digamma(xp.abs(v)),
        "erf_inv": lambda: lax.erf_inv(v / 4),
        "logistic": lambda: lax.logistic(v),
        "convert_element_type": lambda: lax.convert_element_type(v, np.int32),
        "broadcast_in_dim": lambda: lax.broadcast_in_dim(v[:3], (2, 3, 4), (1,)),
        "reshape_dims": lambda: lax.reshape(x, (2, 6), (1, 0)),
        "rem": lambda: lax.rem(v, 1.0),
    }


def sorting_cases(lib, xp):
    """Sorting, order statistics and set routines by name, written once for JAX and
    Quabla: ties, NaN, -0 and inf in the data; gradients through the permutation; vmap and
    jit (unique with a static size)."""
    import numpy as np
    r = np.random.RandomState(11)
    v = np.round(r.randn(3, 7) * 2) / 2
    v[0, 2], v[1, 1], v[2, 5], v[2, 0] = np.nan, np.inf, -0.0, 0.0
    x = xp.asarray(v)
    s = xp.asarray(r.randn(8))
    ints = xp.asarray(r.randint(-3, 4, size=(4, 6)))  # the default int: int64 in JAX with x64
    knots = xp.asarray(np.array([-1.0, 0.0, 0.0, 0.5, 2.0, 2.0, 2.0, 3.0, np.nan]))
    queries = xp.asarray(np.array([-2.0, 0.0, 0.25, 2.0, 3.0, 5.0, np.nan]))
    lax = lib.lax
    weights = xp.arange(8.0) - 2.0

    def sort_loss(z):
        return xp.sum(xp.sort(z) * weights) + xp.sum(xp.sort(z, descending=True)[:3] ** 2)

    def order_statistics_loss(z):
        return (xp.median(z) + xp.quantile(z, 0.3) + xp.percentile(z, 80.0, method="lower")
                + xp.sum(xp.quantile(z.reshape(2, 4), xp.asarray([0.25, 0.9]), axis=1)))

    def top_k_loss(z):
        values, _ = lax.top_k(z, 3)
        return xp.sum(values * xp.arange(1.0, 4.0))

    return {
        "sort_axis1": lambda: xp.sort(x, axis=1),
        "sort_axis0_descending": lambda: xp.sort(x, axis=0, descending=True),
        "sort_flat": lambda: xp.sort(x, axis=None),
        "argsort_axis1": lambda: xp.argsort(x, axis=1),
        "argsort_descending": lambda: xp.argsort(ints, axis=1, descending=True),
        "argsort_axis0": lambda: xp.argsort(ints, axis=0),
        "lexsort": lambda: xp.lexsort([ints[0], ints[1] % 2]),
        "lax_sort_two_keys": lambda: lax.sort((ints[:2], ints[2:], x[:2, :6]), num_keys=2),
        "sort_key_val": lambda: lax.sort_key_val(x[:, :6], ints[:3], dimension=0),
        "top_k": lambda: lax.top_k(x, 4),
        "top_k_ints": lambda: lax.top_k(ints, 2),
        "partition": lambda: xp.partition(ints, 2, axis=1),
        "argpartition": lambda: xp.argpartition(s, 3),
        "median_axis1": lambda: xp.median(x, axis=1),
        "median_flat": lambda: xp.median(s),
        "nanmedian_keepdims": lambda: xp.nanmedian(x, axis=1, keepdims=True),
        "quantile_methods": lambda: tuple(
            xp.nanquantile(x, xp.asarray([0.1, 0.5, 0.75]), axis=1, method=m)
            for m in ["linear", "lower", "higher", "midpoint", "nearest"]),
        "quantile_axes": lambda: xp.quantile(s.reshape(2, 2, 2), 0.3, axis=(0, 2),
                                             keepdims=True),
        "percentile_ints": lambda: xp.percentile(ints, 37.5, axis=0),
        "nanpercentile": lambda: xp.nanpercentile(x, xp.asarray([10.0, 90.0])),
        "searchsorted_left": lambda: xp.searchsorted(knots, queries),
        "searchsorted_right": lambda: xp.searchsorted(knots, queries, side="right"),
        "searchsorted_sort": lambda: xp.searchsorted(knots, queries, method="sort"),
        "searchsorted_compare_all": lambda: xp.searchsorted(knots, queries, side="right",
                                                            method="compare_all"),
        "searchsorted_sorter": lambda: xp.searchsorted(
            s, xp.asarray([0.0, 1.0]), sorter=xp.argsort(s)),
        "unique_all_outputs": lambda: xp.unique(ints, return_index=True, return_inverse=True,
                                                return_counts=True),
        "unique_rows": lambda: xp.unique(ints[:, :2] % 2, axis=0, return_index=True,
                                         return_inverse=True, return_counts=True),
        "unique_nan": lambda: xp.unique(x, return_counts=True),
        "unique_nan_distinct": lambda: xp.unique(x, equal_nan=False),
        "unique_size_fill": lambda: xp.unique(ints[0], size=8, fill_value=-9,
                                              return_index=True, return_inverse=True,
                                              return_counts=True),
        "unique_size_default_fill": lambda: xp.unique(ints[0], size=8),
        "unique_jit": lambda: lib.jit(lambda z: xp.unique(z, size=5, return_counts=True))(
            ints[1]),
        "unique_counts": lambda: tuple(xp.unique_counts(x)),
        "isin": lambda: xp.isin(ints, xp.asarray([0, 2, 5])),
        "isin_sort_invert": lambda: xp.isin(ints, xp.asarray([0, 2, 5]), method="sort",
                                            invert=True),
        "isin_binary_search": lambda: xp.isin(x, x[1], method="binary_search"),
        "sort_grad": lambda: lib.grad(sort_loss)(s),
        "order_statistics_grad": lambda: lib.grad(order_statistics_loss)(s),
        "top_k_grad": lambda: lib.grad(top_k_loss)(s),
        "sort_jvp": lambda: lib.jvp(lambda z: xp.sort(z.reshape(2, 4), axis=1),
                                    (s,), (weights,)),
        "vmap_argsort": lambda: lib.vmap(lambda z: xp.argsort(z, descending=True))(ints),
        "vmap_median": lambda: lib.vmap(xp.median, in_axes=1)(x),
        "jit_top_k": lambda: lib.jit(lambda z: lax.top_k(z, 2))(s),
    }


def convolution_cases(lib, xp):
    """``lax.conv_general_dilated`` and its wrappers by name, written once for JAX and
    Quabla: layouts, strides, every padding form, both dilations, feature and batch groups,
    1-3 spatial axes, ``conv_transpose``, gradients in both operands, vmap and jit."""
    import numpy as np
    lax = lib.lax
    r = np.random.RandomState(21)
    x = xp.asarray(r.randn(2, 4, 7, 6))          # NCHW
    w = xp.asarray(r.randn(6, 4, 3, 2))          # OIHW
    x1 = xp.asarray(r.randn(3, 2, 11))
    w1 = xp.asarray(r.randn(4, 2, 3))
    x3 = xp.asarray(r.randn(1, 2, 4, 5, 3))
    w3 = xp.asarray(r.randn(3, 2, 2, 3, 2))
    nhwc = xp.asarray(r.randn(2, 6, 5, 4))
    hwio = xp.asarray(r.randn(3, 3, 4, 5))
    depthwise = xp.asarray(r.randn(8, 1, 3, 3))  # feature groups = 4, two outputs each
    grouped = xp.asarray(r.randn(6, 2, 2, 2))    # feature groups = 2
    bg_rhs = xp.asarray(r.randn(4, 4, 3, 3))     # batch groups = 2
    cotangent = xp.asarray(r.randn(2, 6, 4, 5))
    # Locally connected kernels: (out, in x window, output spatial...) in their layouts.
    local_w = xp.asarray(np.random.RandomState(22).randn(5, 24, 4, 6))
    local_hwio = xp.asarray(np.random.RandomState(23).randn(6, 3, 24, 7))

    def conv_loss(a, b):
        y = lax.conv_general_dilated(a, b, (2, 1), ((1, 2), (0, 1)), rhs_dilation=(1, 2))
        return xp.sum(xp.tanh(y) * cotangent)

    def nhwc_loss(a, b):
        y = lax.conv_general_dilated(a, b, (1, 1), ((1, 1), (2, 0)), lhs_dilation=(2, 1),
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return xp.sum(y ** 2)

    return {
        "valid": lambda: lax.conv_general_dilated(x, w, (1, 1), "VALID"),
        "same_strided": lambda: lax.conv_general_dilated(x, w, (2, 2), "SAME"),
        "same_lower": lambda: lax.conv_general_dilated(x, w, (2, 3), "SAME_LOWER"),
        "explicit_negative": lambda: lax.conv_general_dilated(x, w, (1, 1),
                                                              ((2, -1), (-1, 3))),
        "dilations": lambda: lax.conv_general_dilated(x, w, (1, 2), ((1, 1), (2, 0)),
                                                      lhs_dilation=(2, 1),
                                                      rhs_dilation=(2, 2)),
        "nhwc": lambda: lax.conv_general_dilated(nhwc, hwio, (1, 2), "SAME",
                                                 dimension_numbers=("NHWC", "HWIO", "NHWC")),
        "mixed_layouts": lambda: lax.conv_general_dilated(
            nhwc, hwio, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NCHW")),
        "depthwise": lambda: lax.conv_general_dilated(x, depthwise, (1, 1), "SAME",
                                                      feature_group_count=4),
        "feature_groups": lambda: lax.conv_general_dilated(x, grouped, (1, 1), "VALID",
                                                           feature_group_count=2),
        "batch_groups": lambda: lax.conv_general_dilated(x, bg_rhs, (1, 1), "VALID",
                                                         batch_group_count=2),
        "one_dim": lambda: lax.conv_general_dilated(x1, w1, (2,), "SAME"),
        "three_dim": lambda: lax.conv_general_dilated(x3, w3, (1, 2, 1), "SAME"),
        "conv": lambda: lax.conv(x, w, (1, 1), "SAME"),
        "conv_with_general_padding": lambda: lax.conv_with_general_padding(
            x, w, (1, 1), ((1, 0), (0, 1)), (1, 2), (2, 1)),
        "conv_transpose_same": lambda: lax.conv_transpose(nhwc, hwio, (2, 2), "SAME"),
        "conv_transpose_valid_flipped": lambda: lax.conv_transpose(
            nhwc, xp.swapaxes(hwio, 2, 3)[..., :4], (2, 1), "VALID", transpose_kernel=True),
        "grads": lambda: lib.grad(conv_loss, argnums=(0, 1))(x, w),
        "nhwc_grads": lambda: lib.grad(nhwc_loss, argnums=(0, 1))(nhwc, hwio),
        "jvp": lambda: lib.jvp(lambda a: lax.conv(a, w, (1, 1), "SAME"), (x,), (x * 0.5,)),
        "vmap_kernels": lambda: lib.vmap(
            lambda b: lax.conv_general_dilated(x1, b, (1,), "VALID"))(xp.stack([w1, -w1])),
        "jit": lambda: lib.jit(lambda a, b: lax.conv_general_dilated(a, b, (1, 1), "SAME",
                                                                     feature_group_count=4))(
            x, depthwise),
        "signal": lambda: tuple(
            f(p, q, mode) for mode in ["full", "same", "valid"]
            for f in [lib.scipy.signal.convolve, lib.scipy.signal.correlate]
            for p, q in [(x1[0, 0], w1[0, 0]), (w1[0, 0], x1[0, 0]), (x3[0, 0], w3[0, 0])]),
        "signal_2d": lambda: tuple(
            f(p, q, mode) for mode in ["full", "same", "valid"]
            for f in [lib.scipy.signal.convolve2d, lib.scipy.signal.correlate2d]
            for p, q in [(x[0, 0], w[0, 0]), (w[0, 0], x[0, 0]), (x[0, 0], x[1, 1])]),
        "signal_grad": lambda: lib.grad(
            lambda p: xp.sum(lib.scipy.signal.correlate2d(p, x[0, 0], "same") ** 2))(w[0, 0]),
        "fftconvolve": lambda: tuple(
            lib.scipy.signal.fftconvolve(p, q, mode) for mode in ["full", "same", "valid"]
            for p, q in [(x[0], w[0, :2]), (x1[0, 0], w1[0, 0]), (w[0, 0], x[0, 0])]),
        "fftconvolve_axes": lambda: tuple(
            lib.scipy.signal.fftconvolve(p, q, mode, axes=ax) for mode in ["full", "same"]
            for p, q, ax in [(x[0], w[:4, 0], (1, 2)), (x[:, 0], x[:, 1, :3], 1),
                             (x[0, :2], x[1, :2, :, :3], -1)]),
        "fftconvolve_grad": lambda: lib.grad(lambda p: xp.sum(lib.scipy.signal.fftconvolve(
            p, x[0, 0], "same", axes=(0, 1)) ** 2))(w[0, 0]),
        "patches": lambda: lax.conv_general_dilated_patches(x, (3, 2), (2, 1), "SAME",
                                                            rhs_dilation=(1, 2)),
        "patches_layouts": lambda: lax.conv_general_dilated_patches(
            nhwc, (2, 3), (1, 2), ((1, 0), (0, 2)), lhs_dilation=(2, 1),
            dimension_numbers=("NHWC", "OIHW", "NCHW")),
        "patches_grad": lambda: lib.grad(lambda a: xp.sum(xp.sin(
            lax.conv_general_dilated_patches(a, (2, 2), (1, 1), "VALID")) ** 2))(x),
        "local": lambda: lax.conv_general_dilated_local(
            x, local_w, (2, 1), "SAME", (3, 2), rhs_dilation=(1, 2)),
        "local_layouts": lambda: lax.conv_general_dilated_local(
            nhwc, local_hwio, (1, 2), ((1, 0), (0, 2)), (2, 3),
            dimension_numbers=("NHWC", "HWIO", "NCHW")),
        "local_grads": lambda: lib.grad(lambda a, b: xp.sum(xp.tanh(
            lax.conv_general_dilated_local(a, b, (2, 1), "SAME", (3, 2),
                                           rhs_dilation=(1, 2)))), argnums=(0, 1))(x, local_w),
    }


def lbfgs_toolbox_program(lib, xp, opt, tree_get):
    """optax's L-BFGS toolbox as its L-BFGS notebook uses it (``value_and_grad_from_state``,
    ``update(..., value=, grad=, value_fn=)``, a ``while_loop`` reading the state by name),
    with the backtracking line search, and ``scale_by_lbfgs`` chained by hand; ``opt`` is
    optax or quabla.optim. Returns the iterates' values and final parameters."""
    def rosenbrock(p):
        x, y = p["x"], p["y"]
        return (xp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)
                + xp.sum((y - 0.5) ** 2 * xp.arange(1.0, 3.0)))

    start = {"x": xp.asarray([-1.2, 1.0, -0.5, 0.8]), "y": xp.asarray([2.0, -1.0])}

    def run(solver, steps):
        value_and_grad = opt.value_and_grad_from_state(rosenbrock)
        params, state, values = start, solver.init(start), []
        for _ in range(steps):
            value, grad = value_and_grad(params, state=state)
            updates, state = solver.update(grad, state, params, value=value, grad=grad,
                                           value_fn=rosenbrock)
            params = opt.apply_updates(params, updates)
            values.append(value)
        return xp.stack(values), params["x"], params["y"]

    def run_in_loop(solver, max_iter, tol):
        value_and_grad = opt.value_and_grad_from_state(rosenbrock)

        def step(carry):
            params, state = carry
            value, grad = value_and_grad(params, state=state)
            updates, state = solver.update(grad, state, params, value=value, grad=grad,
                                           value_fn=rosenbrock)
            return opt.apply_updates(params, updates), state

        def keep_going(carry):
            _, state = carry
            k = tree_get(state, "count")
            err = xp.sqrt(sum(xp.sum(g * g) for g in lib.tree.leaves(tree_get(state, "grad"))))
            return (k == 0) | ((k < max_iter) & (err >= tol))

        params, state = lib.lax.while_loop(keep_going, step, (start, solver.init(start)))
        return params["x"], tree_get(state, "count")

    backtracking = opt.scale_by_backtracking_linesearch(max_backtracking_steps=25,
                                                        store_grad=True)
    quad_target = xp.asarray([1.0, -2.0, 3.0])

    def quadratic(p):
        return xp.sum((p - quad_target) ** 2 * xp.asarray([1.0, 10.0, 100.0]))

    def by_hand(steps):
        solver = opt.chain(opt.scale_by_lbfgs(memory_size=3), opt.scale(-0.004))
        p, state, out = xp.zeros(3), None, []
        state = solver.init(p)
        for _ in range(steps):
            g = lib.grad(quadratic)(p)
            u, state = solver.update(g, state, p)
            p = opt.apply_updates(p, u)
            out.append(p)
        return xp.stack(out)

    return {
        "backtracking": lambda: run(opt.lbfgs(linesearch=backtracking), 25),
        "backtracking_memory_3": lambda: run(
            opt.lbfgs(memory_size=3, scale_init_precond=False, linesearch=backtracking), 25),
        "learning_rate_no_linesearch": lambda: run(
            opt.lbfgs(learning_rate=0.02, linesearch=opt.scale_by_backtracking_linesearch(
                max_backtracking_steps=6, store_grad=True, decrease_factor=0.5)), 12),
        "while_loop": lambda: run_in_loop(opt.lbfgs(linesearch=backtracking), 60, 1e-6),
        "scale_by_lbfgs_by_hand": lambda: by_hand(8),
    }


def numpy_extras_cases(lib, xp):
    """jax.numpy's nan-reductions, statistics and binning, index helpers, spacings and the
    1-D set operations by name, written once for JAX and Quabla."""
    import numpy as np
    r = np.random.RandomState(17)
    v = r.randn(4, 6)
    v[0, 1] = v[2, 3] = v[2, 4] = np.nan
    v[3, :] = np.nan
    x = xp.asarray(v)
    data = xp.asarray(r.randn(3, 9))
    w = xp.asarray(r.rand(9) + 0.5)
    counts = xp.asarray(r.randint(0, 5, size=20))
    a1, a2 = xp.asarray([5, 1, 3, 3, 9, 7, 1]), xp.asarray([3, 4, 5, 8, 1, 1])
    sample = xp.asarray(r.randn(40))
    return {
        "nansum": lambda: (xp.nansum(x), xp.nansum(x, axis=1)),
        "nanprod": lambda: xp.nanprod(x, axis=0),
        "nanmax_nanmin": lambda: (xp.nanmax(x, axis=1), xp.nanmin(x, axis=0, keepdims=True)),
        "nanmean": lambda: (xp.nanmean(x), xp.nanmean(x, axis=1)),
        "nanvar_nanstd": lambda: (xp.nanvar(x, axis=1), xp.nanstd(x, axis=1, ddof=1),
                                  xp.nanvar(x)),
        "nanargmax_nanargmin": lambda: (xp.nanargmax(x[:3], axis=1),
                                        xp.nanargmin(x[:3], axis=1), xp.nanargmax(x[:3])),
        "nancumsum_nancumprod": lambda: (xp.nancumsum(x, axis=1), xp.nancumprod(x[:2])),
        "average": lambda: (xp.average(data), xp.average(data, axis=1, weights=w),
                            xp.average(data, axis=0, weights=data * data, returned=True)),
        "ptp": lambda: (xp.ptp(data), xp.ptp(data, axis=1, keepdims=True)),
        "cov": lambda: (xp.cov(data), xp.cov(data.T, rowvar=False, bias=True),
                        xp.cov(data[0], data[1]), xp.cov(data, aweights=w),
                        xp.cov(data, fweights=xp.asarray([1, 2, 1, 3, 1, 1, 2, 1, 1]),
                               ddof=2)),
        "corrcoef": lambda: (xp.corrcoef(data), xp.corrcoef(data[0], data[2])),
        "bincount": lambda: (xp.bincount(counts), xp.bincount(counts, minlength=7),
                             xp.bincount(counts, weights=sample[:20], length=4)),
        "digitize": lambda: (xp.digitize(sample, xp.asarray([-1.0, 0.0, 0.5, 2.0])),
                             xp.digitize(sample, xp.asarray([2.0, 0.5, 0.0, -1.0]),
                                         right=True)),
        "histogram": lambda: (xp.histogram(sample), xp.histogram(sample, 5, range=(-1.0, 1.0)),
                              xp.histogram(sample, xp.asarray([-2.0, -0.5, 0.0, 3.0]),
                                           weights=sample * sample, density=True)),
        "tril_triu_indices": lambda: (xp.tril_indices(4), xp.triu_indices(3, 1, 5),
                                      xp.tril_indices_from(data, -1),
                                      xp.triu_indices_from(data)),
        "diag_indices": lambda: (xp.diag_indices(3), xp.diag_indices(2, 3)),
        "unravel_ravel": lambda: (xp.unravel_index(xp.asarray([0, 7, 23, 30, -1, -9]),
                                                   (2, 3, 4)),
                                  xp.ravel_multi_index((xp.asarray([1, 0, 2]),
                                                        xp.asarray([3, 1, 0])), (3, 4)),
                                  xp.ravel_multi_index((xp.asarray([1, 5]),
                                                        xp.asarray([7, -1])), (3, 4),
                                                       mode="wrap"),
                                  xp.ravel_multi_index((xp.asarray([1, 5]),
                                                        xp.asarray([7, -1])), (3, 4),
                                                       mode="clip", order="F")),
        "vander": lambda: (xp.vander(data[0, :4]), xp.vander(data[0, :3], 5, increasing=True)),
        "logspace_geomspace": lambda: (xp.logspace(0.0, 2.0, 5), xp.logspace(1.0, 3.0, 4,
                                                                            base=2.0,
                                                                            endpoint=False),
                                       xp.geomspace(1.0, 1000.0, 4),
                                       xp.geomspace(-2.0, -32.0, 5)),
        "rot90": lambda: (xp.rot90(data), xp.rot90(data, 2), xp.rot90(data, 3),
                          xp.rot90(x.reshape(2, 3, 4), 1, axes=(1, 2))),
        "set_operations": lambda: (xp.union1d(a1, a2), xp.setdiff1d(a1, a2),
                                   xp.intersect1d(a1, a2), xp.setxor1d(a1, a2),
                                   xp.intersect1d(a1, a2, return_indices=True),
                                   xp.union1d(a1, a2, size=9, fill_value=-1),
                                   xp.setdiff1d(a1, a2, size=4, fill_value=0)),
        "gradient": lambda: (xp.gradient(data), xp.gradient(data[0], 0.5),
                             xp.gradient(data, 2.0, data[0] ** 2 + xp.arange(9.0)),
                             xp.gradient(data, axis=1), xp.ediff1d(data[0]),
                             xp.ediff1d(data, to_begin=xp.asarray([7.0]), to_end=-1.0)),
        "polynomials": lambda: (xp.polyder(data[0, :5]), xp.polyder(data[0, :5], 3),
                                xp.polyint(data[1, :4]), xp.polyint(data[1, :4], 2, k=xp.asarray([1.0, 2.0])),
                                xp.polyadd(data[0, :3], data[1, :5]),
                                xp.polysub(data[0, :5], data[1, :2]),
                                xp.polymul(data[0, :3], data[1, :4]),
                                xp.polyfit(data[0], data[1], 3),
                                xp.polyfit(data[0], data[1:].T, 2, w=w)),
        "windows": lambda: (xp.hamming(7), xp.hanning(6), xp.blackman(5), xp.bartlett(8),
                            xp.hamming(1), xp.bartlett(0)),
        "heaviside_divmod": lambda: (xp.heaviside(xp.asarray([-1.5, 0.0, -0.0, 2.0]), 0.5),
                                     xp.divmod(xp.asarray([7, -7, 7, -7]),
                                               xp.asarray([2, 2, -2, -2]))),
        "grads": lambda: lib.grad(lambda d: xp.nanmean(d) + xp.average(d, axis=1, weights=w)[0]
                                  + xp.sum(xp.cov(d)) + xp.sum(xp.corrcoef(d)))(data),
    }


def lax_more_cases(lib, xp):
    """More of ``jax.lax``'s user-facing functions by name, written once for JAX and
    Quabla."""
    import numpy as np
    lax = lib.lax
    r = np.random.RandomState(23)
    x = xp.asarray(r.randn(3, 5))
    ints = xp.asarray(np.array([[0, 1, -1, 7, 255], [-2**31, 2**31 - 1, 16, 3, 1024]],
                               np.int32))
    shifts = xp.asarray(np.array([[0, 1, 2, 3, 31], [4, 5, 0, 1, 2]], np.int32))
    which = xp.asarray(np.array([0, 2, 1, 3, 2], np.int32))
    return {
        "comparisons": lambda: (lax.eq(x, x), lax.ne(x, 0.0), lax.lt(x, x[::-1]),
                                lax.le(x, 0.5), lax.gt(x, -0.5), lax.ge(x, x[::-1])),
        "bitwise": lambda: (lax.bitwise_and(ints, shifts), lax.bitwise_or(ints, shifts),
                            lax.bitwise_xor(ints, ints[::-1]), lax.bitwise_not(ints),
                            lax.shift_left(ints, shifts),
                            lax.shift_right_arithmetic(ints, shifts),
                            lax.shift_right_logical(ints, shifts),
                            lax.population_count(ints), lax.clz(ints)),
        "elementwise": lambda: (lax.reciprocal(x), lax.cbrt(x), lax.exp2(x)),
        "reductions": lambda: (lax.reduce_sum(x, (1,)), lax.reduce_prod(x, (0,)),
                               lax.reduce_max(x, (0, 1)), lax.reduce_min(x, (1,)),
                               lax.reduce_and(x > 0, (1,)), lax.reduce_or(x > 1, (0,))),
        "cumulative": lambda: (lax.cumsum(x, 1), lax.cumprod(x, 0, reverse=True),
                               lax.cummax(x, 1), lax.cummin(x, 1, reverse=True),
                               lax.cumlogsumexp(x, 1), lax.cumlogsumexp(x, 0, reverse=True)),
        "argmax_argmin": lambda: (lax.argmax(x, 1, np.int32), lax.argmin(x, 0, np.int32)),
        "pad": lambda: (lax.pad(x, 0.0, [(1, 2, 0), (0, -1, 1)]),
                        lax.pad(x, -1.0, [(0, 0, 2), (-2, 1, 0)])),
        "rev_full_broadcast": lambda: (lax.rev(x, (0, 1)), lax.rev(x, (1,)),
                                       lax.full((2, 3), 1.5), lax.full_like(x, 2.0),
                                       lax.broadcast(x[0], (2,)),
                                       lax.broadcasted_iota(np.int32, (3, 4), 1)),
        "dot": lambda: (lax.dot(x, x.T), lax.dot(x[0], x[1]),
                        lax.batch_matmul(xp.stack([x, x * 2]), xp.stack([x.T, x.T]))),
        "index_in_dim": lambda: (lax.index_in_dim(x, 1, 0), lax.index_in_dim(x, -1, 1, False),
                                 lax.dynamic_index_in_dim(x, 7, 1),
                                 lax.dynamic_index_in_dim(x, 1, 0, False),
                                 lax.dynamic_update_index_in_dim(x, x[0] * 0, 2, 0)),
        "select_n_tile_split": lambda: (lax.select_n(which, x[0], x[1], x[2]),
                                        lax.select_n(x[0] > 0, x[1], x[2]),
                                        lax.tile(x, (2, 1)),
                                        lax.split(x, (1, 3, 1), axis=1)),
        "stack_unstack": lambda: (lax.stack([x, x * 2, -x]), lax.stack([x[0], x[1]], axis=-1),
                                  lax.stack([ints, shifts], axis=1), lax.unstack(x),
                                  lax.unstack(ints, axis=-1), lax.unstack(x[:, :0], axis=0)),
        "special": lambda: (lax.zeta(xp.abs(x) + 1.5, 2.0),
                            lax.polygamma(1.0, xp.abs(x) + 0.5),
                            lax.igamma(xp.abs(x) + 0.1, 1.0), lax.igammac(2.0, xp.abs(x)),
                            lax.betainc(2.0, 3.0, xp.abs(x) / 3.0)),
    }


def numpy_assorted_cases(lib, xp):
    """numpy's small conveniences by name, written once for JAX and Quabla."""
    import numpy as np
    r = np.random.RandomState(29)
    x = xp.asarray(r.randn(4, 6))
    v = xp.asarray(np.array([1.0, np.nan, -0.0, 0.0, 3.0, -np.inf, np.nan]))
    u = xp.asarray(np.array([2.0, 1.0, 0.0, -0.0, np.nan, 5.0, np.nan]))
    ints = xp.asarray(np.array([12, -18, 0, 7, 21, 0]))
    jnts = xp.asarray(np.array([8, 12, 5, 0, -14, 0]))
    phase = xp.asarray(np.cumsum(r.rand(12) * 2.5))
    return {
        "stacking": lambda: (xp.atleast_3d(x[0]), xp.atleast_3d(x), xp.column_stack(
            [x[0], x[1]]), xp.dstack([x, x * 2]), xp.array_split(x[0], 4),
            xp.array_split(x, [1, 3], axis=1), xp.hsplit(x, 3), xp.vsplit(x, 2),
            xp.dsplit(xp.dstack([x, x, x]), 3)),
        "matrices": lambda: (xp.tri(3, 5, 1), xp.tri(4), xp.diagflat(x[:2, :2]),
                             xp.diagflat(x[0, :3], -1)),
        "elementwise": lambda: (xp.fmax(v, u), xp.fmin(v, u), xp.fabs(v), xp.rint(x * 3),
                                xp.degrees(x), xp.radians(x), xp.float_power(xp.abs(x), x),
                                xp.logaddexp2(v, u), xp.logaddexp2(x, x * 2)),
        "integers": lambda: (xp.gcd(ints, jnts), xp.lcm(ints, jnts), xp.invert(ints),
                             xp.bitwise_not(ints), xp.left_shift(ints, 2),
                             xp.right_shift(ints, 1)),
        "selection": lambda: (xp.choose(xp.asarray([0, 2, 1, 0, 1, 2]), [x[0], x[1], x[2]]),
                              xp.choose(xp.asarray([3, -1, 5, 0, 1, 2]), [x[0], x[1], x[2]],
                                        mode="clip"),
                              xp.compress(xp.asarray([True, False, True, True]), x, axis=0),
                              xp.compress(x[0] > 0, x, axis=1),
                              xp.extract(x > 0.5, x),
                              xp.fill_diagonal(x, 9.0, inplace=False),
                              xp.fill_diagonal(x[:4, :4], xp.asarray([1.0, 2.0]),
                                               inplace=False),
                              xp.put_along_axis(x, xp.asarray([[1], [0], [5], [2]]), -1.0,
                                                axis=1, inplace=False)),
        "index_helpers": lambda: (xp.indices((2, 3)), xp.indices((2, 3), sparse=True),
                                  xp.array_equiv(x[0], x[:1]), xp.array_equiv(x, x + 1),
                                  xp.array_equiv(x[0], x[:, :1]),
                                  xp.trim_zeros(xp.asarray([0, 0, 3, 0, 4, 0])),
                                  xp.trim_zeros(xp.asarray([0, 1, 0]), "f"),
                                  xp.rollaxis(x.reshape(2, 3, 4), 2),
                                  xp.rollaxis(x.reshape(2, 3, 4), 0, 3)),
        "unwrap_resize": lambda: (xp.unwrap(phase), xp.unwrap(phase, period=4.0),
                                  xp.resize(x[0], (3, 4)), xp.resize(x, 7)),
        "nn_more": lambda: (lib.nn.mish(x), lib.nn.squareplus(x), lib.nn.squareplus(x, 0.5),
                            lib.nn.sparse_plus(x), lib.nn.sparse_sigmoid(x),
                            lib.nn.log1mexp(xp.abs(x) + 1e-3), lib.nn.logmeanexp(x),
                            lib.nn.logmeanexp(x, axis=1, keepdims=True), lib.nn.identity(x),
                            lib.grad(lambda z: xp.sum(lib.nn.mish(z) + lib.nn.log1mexp(
                                xp.abs(z) + 0.5) + lib.nn.squareplus(z)
                                + lib.nn.sparse_plus(z * 2)))(x)),
    }


def stats_family_cases(lib, xp):
    """jax.scipy.stats's families beyond norm/t/gamma/beta/chi2/poisson/bernoulli: every
    function of each at points inside, at and outside the support, written once for JAX and
    Quabla."""
    import numpy as np
    st = lib.scipy.stats
    x = xp.asarray(np.array([-3.0, -1.0, -0.0, 0.0, 0.3, 1.0, 1.5, 2.5, 7.0, 40.0, np.inf,
                             -np.inf, np.nan]))
    q = xp.asarray(np.array([0.0, 1e-12, 0.01, 0.25, 0.5, 0.9, 1.0 - 1e-9, 1.0, -0.1, 1.1]))
    k = xp.asarray(np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 10.0, 2.5]))
    angles = xp.asarray(np.array([-4.0, -3.0, -0.5, 0.0, 1.0, 3.0, 3.2, 6.0, 6.5]))

    def every(family, names, *params, at=x):
        return tuple(getattr(family, n)(at, *params) for n in names)

    loc_scale = ("logpdf", "pdf", "cdf")
    return {
        "expon": lambda: (every(st.expon, loc_scale + ("sf", "logcdf", "logsf")),
                          every(st.expon, ("logpdf", "cdf", "sf"), 0.5, 2.0),
                          st.expon.ppf(q), st.expon.ppf(q, 1.0, 3.0)),
        "laplace": lambda: (every(st.laplace, loc_scale), every(st.laplace, loc_scale, 1.0, 0.5)),
        "logistic": lambda: (every(st.logistic, loc_scale + ("sf",)),
                             every(st.logistic, loc_scale + ("sf",), -1.0, 2.0),
                             st.logistic.ppf(q), st.logistic.isf(q, 1.0, 2.0)),
        "uniform": lambda: (every(st.uniform, loc_scale), every(st.uniform, loc_scale, -1.0, 3.0),
                            st.uniform.ppf(q, 2.0, 4.0)),
        "cauchy": lambda: (every(st.cauchy, loc_scale + ("sf", "logcdf", "logsf")),
                           every(st.cauchy, ("logpdf", "cdf"), 1.0, 0.5),
                           st.cauchy.ppf(q[1:7]), st.cauchy.isf(q[1:7], 1.0, 2.0)),
        "pareto": lambda: (every(st.pareto, loc_scale + ("sf", "logcdf", "logsf"), 2.5),
                           every(st.pareto, ("logpdf", "cdf"), 1.5, -1.0, 2.0),
                           st.pareto.ppf(q, 2.5), st.pareto.ppf(q, 1.5, -1.0, 2.0)),
        "gumbel_r": lambda: (every(st.gumbel_r, loc_scale + ("sf", "logcdf", "logsf")),
                             every(st.gumbel_r, ("logpdf", "cdf"), 1.0, 2.0),
                             st.gumbel_r.ppf(q)),
        "gumbel_l": lambda: (every(st.gumbel_l, loc_scale + ("sf", "logcdf", "logsf")),
                             every(st.gumbel_l, ("logpdf", "cdf"), 1.0, 2.0),
                             st.gumbel_l.ppf(q)),
        "truncnorm": lambda: (every(st.truncnorm, ("logpdf", "pdf", "cdf", "sf", "logcdf",
                                                   "logsf"), -1.0, 2.0),
                              every(st.truncnorm, ("logpdf", "cdf", "sf"), 2.0, 6.0),
                              every(st.truncnorm, ("logpdf", "cdf"), -8.0, -3.0, 1.0, 0.5)),
        "vonmises": lambda: (st.vonmises.logpdf(angles, 2.0), st.vonmises.pdf(angles, 0.5),
                             st.vonmises.logpdf(angles, 800.0)),
        "wrapcauchy": lambda: (st.wrapcauchy.logpdf(angles, 0.3), st.wrapcauchy.pdf(angles, 0.9)),
        "gennorm": lambda: (every(st.gennorm, loc_scale, 1.0), every(st.gennorm, loc_scale, 2.0),
                            every(st.gennorm, loc_scale, 0.7)),
        "geom": lambda: (st.geom.logpmf(k, 0.3), st.geom.pmf(k, 0.8), st.geom.logpmf(k, 0.3, 2.0)),
        "binom": lambda: (st.binom.logpmf(k, 5.0, 0.3), st.binom.pmf(k, 10.0, 0.5),
                          st.binom.logpmf(k, 5.0, 0.0), st.binom.logpmf(k, 5.0, 1.0),
                          st.binom.logpmf(k, 4.0, 0.3, 1.0)),
        "nbinom": lambda: (st.nbinom.logpmf(k, 3.0, 0.4), st.nbinom.pmf(k, 2.5, 0.7),
                           st.nbinom.logpmf(k, 3.0, 0.4, 1.0)),
        "betabinom": lambda: (st.betabinom.logpmf(k, 5.0, 2.0, 3.0),
                              st.betabinom.pmf(k, 10.0, 0.5, 0.5),
                              st.betabinom.logpmf(k, 5.0, 2.0, 3.0, 1.0),
                              st.betabinom.logpmf(k, 5.0, -1.0, 3.0)),
        "dirichlet": lambda: (
            st.dirichlet.logpdf(xp.asarray([0.2, 0.3, 0.5]), xp.asarray([1.5, 2.0, 3.0])),
            st.dirichlet.logpdf(xp.asarray([0.2, 0.3]), xp.asarray([1.5, 2.0, 3.0])),
            st.dirichlet.logpdf(xp.asarray([[0.2, 0.1], [0.3, 0.4], [0.5, 0.5]]),
                                xp.asarray([0.5, 2.0, 1.0])),
            st.dirichlet.pdf(xp.asarray([0.2, 0.3, 0.6]), xp.asarray([1.5, 2.0, 3.0])),
            st.dirichlet.logpdf(xp.asarray([-0.2, 0.7, 0.5]), xp.asarray([1.5, 2.0, 3.0])),
            st.dirichlet.logpdf(xp.asarray([0.2, 0.3, 0.5]), xp.asarray([1.5, -2.0, 3.0]))),
        "multinomial": lambda: (
            st.multinomial.logpmf(xp.asarray([1, 2, 3]), 6, xp.asarray([0.2, 0.3, 0.5])),
            st.multinomial.logpmf(xp.asarray([1, 2, 3]), 7, xp.asarray([0.2, 0.3, 0.5])),
            st.multinomial.pmf(xp.asarray([1, 0, 3]), 4, xp.asarray([0.2, 0.0, 0.8])),
            st.multinomial.logpmf(xp.asarray([0, 1, 3]), 4, xp.asarray([0.2, 0.0, 0.8]))),
    }


def attention_cases(lib, xp):
    """jax.nn.dot_product_attention under each of its options, written once for JAX and
    Quabla."""
    import numpy as np
    r = np.random.RandomState(41)
    q = xp.asarray(r.randn(2, 5, 4, 8))
    k = xp.asarray(r.randn(2, 7, 2, 8))
    v = xp.asarray(r.randn(2, 7, 2, 8))
    kf = xp.asarray(r.randn(2, 7, 4, 8))
    vf = xp.asarray(r.randn(2, 7, 4, 8))
    bias = xp.asarray(r.randn(1, 4, 5, 7) * 0.5)
    mask = xp.asarray(r.rand(2, 1, 5, 7) > 0.3)
    att = lib.nn.dot_product_attention
    return {
        "plain": lambda: (att(q, kf, vf), att(q[0], kf[0], vf[0])),
        "grouped_heads": lambda: att(q, k, v),
        "bias_and_scale": lambda: att(q, kf, vf, bias, scale=0.2),
        "mask": lambda: att(q, kf, vf, mask=mask),
        "causal": lambda: att(q, kf, vf, is_causal=True),
        "lengths": lambda: att(q, kf, vf, query_seq_lengths=xp.asarray([3, 5], dtype="int32"),
                               key_value_seq_lengths=xp.asarray([4, 7], dtype="int32")),
        "window": lambda: (att(q, kf, vf, local_window_size=1),
                           att(q, kf, vf, local_window_size=(2, 0))),
    }


def image_cases(lib, xp):
    """``image.resize`` in every method, up and down, with and without antialiasing, on
    2-D and batched images, ``scale_and_translate`` with a gradient in the image and in a
    traced scale."""
    import numpy as np
    image = lib.image
    r = np.random.RandomState(31)
    x = xp.asarray(r.randn(7, 9))
    batch = xp.asarray(r.randn(2, 5, 6, 3))
    ints = xp.asarray(np.arange(12).reshape(3, 4).astype(np.int32))
    methods = ["nearest", "linear", "cubic", "cubic-pytorch", "lanczos3", "lanczos5", "area"]
    cases = {}
    for method in methods:
        for shape, tag in [((11, 16), "up"), ((4, 5), "down"), ((7, 3), "mixed"),
                           ((1, 1), "to_one")]:
            cases[f"{method}_{tag}"] = (lambda m=method, s=shape: image.resize(x, s, m))
            if method != "nearest" and tag == "down":
                cases[f"{method}_{tag}_no_antialias"] = (
                    lambda m=method, s=shape: image.resize(x, s, m, antialias=False))
    cases["batched_nhwc"] = lambda: image.resize(batch, (2, 9, 4, 3), "bicubic")
    cases["nearest_ints"] = lambda: image.resize(ints, (5, 7), "nearest")
    cases["linear_ints"] = lambda: image.resize(ints, (5, 7), "linear")
    cases["scale_translate"] = lambda: image.scale_and_translate(
        x, (10, 6), (0, 1), xp.asarray([1.5, 0.7]), xp.asarray([-0.5, 1.25]), "linear")
    cases["scale_translate_lanczos"] = lambda: image.scale_and_translate(
        batch, (2, 8, 8, 3), (1, 2), xp.asarray([1.7, 1.2]), xp.asarray([0.3, -0.4]), "lanczos3",
        antialias=False)
    cases["grad_image"] = lambda: lib.grad(
        lambda a: xp.sum(xp.sin(image.resize(a, (5, 12), "cubic")) ** 2))(x)
    cases["grad_scale"] = lambda: lib.grad(
        lambda s: xp.sum(image.scale_and_translate(x, (9, 9), (0, 1), s, xp.asarray([0.2, -0.3]),
                                                   "linear") ** 2))(xp.asarray([1.3, 0.8]))
    return cases
