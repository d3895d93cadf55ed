"""Cases for every primitive x every dtype it accepts, with edge values."""
import functools

import numpy as np

import reference as ref
from golden import NP, case, tol_close, tol_exact, tol_ulp
from qir import Program, lst, ty

RNG = np.random.default_rng(20261130)

FLOAT_EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0,
               -3.0, 0.1, 1e-3, 1e-30, 1e-40, 100.0, -100.0, 700.0, 710.0, -710.0, 1e10, 3.4e38]

# Domains for the random case of each unary function (where it is real and interesting).
DOMAIN = {
    "log": (1e-3, 50), "log1p": (-0.9, 50), "sqrt": (0, 100), "rsqrt": (1e-3, 100),
    "asin": (-1, 1), "acos": (-1, 1), "acosh": (1, 50), "atanh": (-0.99, 0.99),
    "exp": (-20, 20), "exp2": (-20, 20), "expm1": (-5, 5), "sinh": (-10, 10), "cosh": (-10, 10),
    "tan": (-1.5, 1.5), "erfc": (-3, 8),
}

FLOAT_UNARY = ["neg", "abs", "sign", "floor", "ceil", "round", "exp", "exp2", "expm1", "log",
               "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan",
               "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "logistic"]
EXACT_UNARY = {"neg", "abs", "sign", "floor", "ceil", "round", "sqrt"}
# f64 ulp bounds against the correctly rounded value (f32 is evaluated in f64: 1 ulp).
F64_ULP = {"logistic": 4, "rsqrt": 2, "sinh": 2, "cosh": 2, "tanh": 2, "asinh": 2, "acosh": 2,
           "atanh": 2, "erf": 2, "erfc": 2, "expm1": 2, "log1p": 2, "tan": 2, "cbrt": 2,
           "erf_inv": 24}
# erf_inv is Giles' polynomial as XLA's (the CPU backend gives JAX's bits), not a correctly
# rounded function: within 5 ulp in float32 and 17 in float64 on (-0.99, 0.99) (measured on
# every 64th float32 and 5 million float64 inputs against scipy), the bounds with a margin.
F32_ULP = {"erf_inv": 8}


def unary_tol(op, dtype):
    if op in EXACT_UNARY:
        return tol_exact()
    return tol_ulp(F32_ULP.get(op, 1)) if dtype == "f32" else tol_ulp(F64_ULP.get(op, 1))


def simple(op, in_types, out_type, attrs=None):
    p = Program(*in_types)
    r = p.op(op, [p.arg(i) for i in range(len(in_types))], out_type, attrs)
    return p.ret(r)


def unary_cases():
    out = []
    for op in FLOAT_UNARY + ["is_finite"]:
        for dt in ["f32", "f64"]:
            lo, hi = DOMAIN.get(op, (-4, 4))
            inputs = {
                "edges": np.array(FLOAT_EDGES, dtype=NP[dt]),
                "random": RNG.uniform(lo, hi, size=(4, 16)).astype(NP[dt]),
            }
            for label, x in inputs.items():
                if op == "is_finite":
                    if label == "random":
                        continue
                    p = simple(op, [ty(dt, x.shape)], ty("bool", x.shape))
                    out.append(case(f"{op}/{dt}_{label}", p, [(dt, x)], [("bool", ref.unary_float(op, dt, x))], tol_exact()))
                    continue
                p = simple(op, [ty(dt, x.shape)], ty(dt, x.shape))
                y = ref.unary_float(op, dt, x)
                out.append(case(f"{op}/{dt}_{label}", p, [(dt, x)], [(dt, y)], unary_tol(op, dt)))
    ints = {"i32": np.array([0, 1, -1, 7, -7, 2**31 - 1, -2**31, 12345], np.int32),
            "u32": np.array([0, 1, 7, 2**31, 2**32 - 1, 12345], np.uint32)}
    for dt, x in ints.items():
        for op in ["neg", "abs", "sign", "not"]:
            p = simple(op, [ty(dt, x.shape)], ty(dt, x.shape))
            xi = [int(v) for v in x]
            if op == "neg":
                y = [ref.wrap(-v, dt) for v in xi]
            elif op == "abs":
                y = [ref.wrap(abs(v), dt) for v in xi]
            elif op == "sign":
                y = [(v > 0) - (v < 0) for v in xi]
            else:
                y = [ref.wrap(~v, dt) for v in xi]
            out.append(case(f"{op}/{dt}", p, [(dt, x)], [(dt, np.array(y, np.int64).astype(NP[dt]))], tol_exact()))
    b = np.array([True, False, True], np.bool_)
    out.append(case("not/bool", simple("not", [ty("bool", [3])], ty("bool", [3])), [("bool", b)], [("bool", ~b)], tol_exact()))
    return out


def erf_inv_cases():
    """erf_inv on the edges, on (-0.99, 0.99) and next to +-1, from a generator of its own, so
    that the other cases' random inputs stayed as they were when it was added. Next to +-1,
    where 1 - x^2 cancels, XLA's polynomial is off by up to 64 ulp in float32 and 1.1e-10
    relative in float64 (measured as above): a relative bound there."""
    rng = np.random.default_rng(20261205)
    near_one = [0.999, -0.9999, 0.99999, 1 - 2.0**-20, -(1 - 2.0**-23)]
    out = []
    for dt in ["f32", "f64"]:
        inputs = {
            "edges": (np.array(FLOAT_EDGES, dtype=NP[dt]), unary_tol("erf_inv", dt)),
            "random": (rng.uniform(-0.99, 0.99, size=(4, 16)).astype(NP[dt]),
                       unary_tol("erf_inv", dt)),
            "near_one": (np.array(near_one, dtype=NP[dt]),
                         tol_close(1e-5 if dt == "f32" else 2e-10, 0)),
        }
        for label, (x, tol) in inputs.items():
            p = simple("erf_inv", [ty(dt, x.shape)], ty(dt, x.shape))
            y = ref.unary_float("erf_inv", dt, x)
            out.append(case(f"erf_inv/{dt}_{label}", p, [(dt, x)], [(dt, y)], tol))
    return out


def grid(vals, dt):
    a, b = np.meshgrid(np.array(vals, dtype=NP[dt]), np.array(vals, dtype=NP[dt]), indexing="ij")
    return a.ravel(), b.ravel()


BIN_EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -3.0, 3.0]
INT_EDGES = {"i32": [0, 1, -1, 2, -2, 3, 31, 32, 33, 2**31 - 1, -2**31, -7],
             "u32": [0, 1, 2, 3, 31, 32, 33, 2**31, 2**32 - 1, 7]}


def binary_cases():
    out = []
    for op in ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2"]:
        for dt in ["f32", "f64"]:
            x, y = grid(BIN_EDGES, dt)
            rx = RNG.uniform(-10, 10, 48).astype(NP[dt])
            ry = RNG.uniform(-10, 10, 48).astype(NP[dt])
            if op == "pow":
                rx = np.abs(rx)
            exact = op in {"add", "sub", "mul", "div", "rem", "max", "min"}
            tol = tol_exact() if exact else tol_ulp(1)
            for label, (a, b) in {"edges": (x, y), "random": (rx, ry)}.items():
                p = simple(op, [ty(dt, a.shape)] * 2, ty(dt, a.shape))
                out.append(case(f"{op}/{dt}_{label}", p, [(dt, a), (dt, b)], [(dt, ref.binary_float(op, dt, a, b))], tol))
    int_ops = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "and", "or", "xor",
               "shift_left", "shift_right_logical", "shift_right_arithmetic"]
    for op in int_ops:
        for dt in ["i32", "u32"]:
            vals = INT_EDGES[dt]
            if op == "pow":
                vals = [0, 1, 2, 3, 7, 16, 31, 33] + ([-1, -2, -3] if dt == "i32" else [])
            a, b = grid(vals, dt)
            p = simple(op, [ty(dt, a.shape)] * 2, ty(dt, a.shape))
            out.append(case(f"{op}/{dt}", p, [(dt, a), (dt, b)], [(dt, ref.int_binary(op, dt, a, b))], tol_exact()))
    a, b = grid([True, False], "bool")
    for op, fn in [("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)]:
        p = simple(op, [ty("bool", a.shape)] * 2, ty("bool", a.shape))
        out.append(case(f"{op}/bool", p, [("bool", a), ("bool", b)], [("bool", fn(a, b))], tol_exact()))
    return out


def compare_cases():
    out = []
    fns = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}
    data = {"f32": BIN_EDGES, "f64": BIN_EDGES, "i32": INT_EDGES["i32"], "u32": INT_EDGES["u32"], "bool": [False, True]}
    for d, fn in fns.items():
        for dt, vals in data.items():
            a, b = grid(vals, dt)
            p = simple("compare", [ty(dt, a.shape)] * 2, ty("bool", a.shape), [("dir", d)])
            with np.errstate(all="ignore"):
                out.append(case(f"compare_{d}/{dt}", p, [(dt, a), (dt, b)], [("bool", fn(a, b))], tol_exact()))
    return out


def sample(dt, shape):
    n = int(np.prod(shape))
    if dt in ("f32", "f64"):
        return RNG.normal(size=shape).astype(NP[dt])
    if dt == "i32":
        return RNG.integers(-100, 100, size=shape).astype(np.int32)
    if dt == "u32":
        return RNG.integers(0, 200, size=shape).astype(np.uint32)
    return (RNG.integers(0, 2, size=n) == 1).reshape(shape)


ALL = ["f32", "f64", "i32", "u32", "bool"]
NUMERIC = ["f32", "f64", "i32", "u32"]


def select_convert_cases():
    out = []
    for dt in ALL:
        pred = sample("bool", [2, 5])
        a, b = sample(dt, [2, 5]), sample(dt, [2, 5])
        p = simple("select", [ty("bool", [2, 5]), ty(dt, [2, 5]), ty(dt, [2, 5])], ty(dt, [2, 5]))
        out.append(case(f"select/{dt}", p, [("bool", pred), (dt, a), (dt, b)], [(dt, np.where(pred, a, b))], tol_exact()))
    src_vals = {
        "f32": [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 2.5, -2.7, 1e10, -1e10, 3e9, 16777217.0, 0.1],
        "f64": [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 2.5, -2.7, 1e10, -1e10, 3e9, 16777217.0, 0.1, 1e300, 1e-300],
        "i32": [0, 1, -1, 2**31 - 1, -2**31, 16777217, 123456789],
        "u32": [0, 1, 2**31, 2**32 - 1, 16777217, 123456789],
        "bool": [True, False],
    }
    for src in ALL:
        for dst in ALL:
            x = np.array(src_vals[src], dtype=NP[src])
            p = simple("convert", [ty(src, x.shape)], ty(dst, x.shape))
            out.append(case(f"convert/{src}_to_{dst}", p, [(src, x)], [(dst, ref.convert(x, src, dst))], tol_exact()))
    bits = {"f32": np.array([1.0, -0.0, np.inf, np.nan, 1e-40], np.float32),
            "i32": np.array([0, -1, 2**31 - 1, -2**31, 1065353216], np.int32),
            "u32": np.array([0, 1, 2**32 - 1, 2**31, 0x7FC00001], np.uint32)}
    for src in bits:
        for dst in bits:
            if src == dst:
                continue
            x = bits[src]
            p = simple("bitcast", [ty(src, x.shape)], ty(dst, x.shape))
            out.append(case(f"bitcast/{src}_to_{dst}", p, [(src, x)], [(dst, x.view(NP[dst]))], tol_exact()))
    return out


def movement_cases():
    out = []
    for dt in ["f32", "i32", "u32", "f64"]:
        p = Program()
        r = p.op("iota", [], ty(dt, [3, 4]), [("dim", 1)])
        p.ret(r)
        out.append(case(f"iota/{dt}_dim1", p, [], [(dt, np.broadcast_to(np.arange(4), (3, 4)).astype(NP[dt]))], tol_exact()))
    p = Program()
    p.ret(p.op("iota", [], ty("i32", [3, 2]), [("dim", 0)]))
    out.append(case("iota/i32_dim0", p, [], [("i32", np.broadcast_to(np.arange(3)[:, None], (3, 2)).astype(np.int32))], tol_exact()))

    for dt in ["f32", "bool", "f64"]:
        x = sample(dt, [3])
        p = simple("broadcast_in_dim", [ty(dt, [3])], ty(dt, [2, 3]), [("dims", lst([1]))])
        out.append(case(f"broadcast_in_dim/{dt}_row", p, [(dt, x)], [(dt, np.broadcast_to(x, (2, 3)))], tol_exact()))
    x = sample("i32", [3, 1])
    p = simple("broadcast_in_dim", [ty("i32", [3, 1])], ty("i32", [2, 3, 4]), [("dims", lst([1, 2]))])
    out.append(case("broadcast_in_dim/i32_size1", p, [("i32", x)], [("i32", np.broadcast_to(x, (2, 3, 4)))], tol_exact()))
    x = sample("f32", [])
    p = simple("broadcast_in_dim", [ty("f32", [])], ty("f32", [0, 2]), [("dims", lst([]))])
    out.append(case("broadcast_in_dim/f32_scalar_to_empty", p, [("f32", x)], [("f32", np.zeros((0, 2), np.float32))], tol_exact()))

    x = sample("f32", [2, 6])
    p = simple("reshape", [ty("f32", [2, 6])], ty("f32", [3, 1, 4]))
    out.append(case("reshape/f32", p, [("f32", x)], [("f32", x.reshape(3, 1, 4))], tol_exact()))
    x = sample("bool", [4])
    p = simple("reshape", [ty("bool", [4])], ty("bool", [2, 2]))
    out.append(case("reshape/bool", p, [("bool", x)], [("bool", x.reshape(2, 2))], tol_exact()))

    for dt, shape, perm in [("f32", [2, 3], [1, 0]), ("i32", [2, 3, 4], [2, 0, 1]), ("f64", [1, 3, 1], [2, 1, 0]), ("u32", [0, 3], [1, 0])]:
        x = sample(dt, shape)
        y = np.transpose(x, perm)
        p = simple("transpose", [ty(dt, shape)], ty(dt, list(y.shape)), [("perm", lst(perm))])
        out.append(case(f"transpose/{dt}_{'x'.join(map(str, shape))}", p, [(dt, x)], [(dt, y)], tol_exact()))

    x = sample("f32", [5, 7])
    for label, start, limit, strides in [("strided", [1, 0], [5, 7], [2, 3]), ("unit", [0, 2], [3, 5], [1, 1]),
                                         ("empty", [2, 2], [2, 5], [1, 1]), ("full", [0, 0], [5, 7], [1, 1])]:
        y = x[tuple(slice(a, b, s) for a, b, s in zip(start, limit, strides))]
        p = simple("slice", [ty("f32", [5, 7])], ty("f32", list(y.shape)),
                   [("start", lst(start)), ("limit", lst(limit)), ("strides", lst(strides))])
        out.append(case(f"slice/f32_{label}", p, [("f32", x)], [("f32", y)], tol_exact()))
    xi = sample("i32", [6])
    p = simple("slice", [ty("i32", [6])], ty("i32", [2]), [("start", lst([1])), ("limit", lst([6])), ("strides", lst([3]))])
    out.append(case("slice/i32_strided", p, [("i32", xi)], [("i32", xi[1:6:3])], tol_exact()))

    def pad_ref(x, v, low, high, interior):
        res = x
        for d in range(x.ndim):
            n = res.shape[d]
            core = 0 if n == 0 else n + (n - 1) * interior[d]
            shape = list(res.shape)
            shape[d] = core
            tmp = np.full(shape, v, dtype=x.dtype)
            idx = [slice(None)] * x.ndim
            idx[d] = slice(0, core, interior[d] + 1)
            tmp[tuple(idx)] = res
            lo, hi = low[d], high[d]
            if lo < 0:
                tmp = np.take(tmp, range(-lo, tmp.shape[d]), axis=d)
            else:
                shp = list(tmp.shape)
                shp[d] = lo
                tmp = np.concatenate([np.full(shp, v, x.dtype), tmp], axis=d)
            if hi < 0:
                tmp = np.take(tmp, range(0, tmp.shape[d] + hi), axis=d)
            else:
                shp = list(tmp.shape)
                shp[d] = hi
                tmp = np.concatenate([tmp, np.full(shp, v, x.dtype)], axis=d)
            res = tmp
        return res

    for dt, shape, low, high, interior in [("f32", [2, 3], [1, 0], [0, 2], [0, 0]), ("f64", [3], [2], [1], [1]),
                                          ("i32", [2, 3], [-1, 1], [1, -1], [1, 0]), ("bool", [2], [1], [1], [0])]:
        x = sample(dt, shape)
        v = sample(dt, [])
        y = pad_ref(x, v, low, high, interior)
        p = simple("pad", [ty(dt, shape), ty(dt, [])], ty(dt, list(y.shape)),
                   [("low", lst(low)), ("high", lst(high)), ("interior", lst(interior))])
        out.append(case(f"pad/{dt}_{'_'.join(map(str, low + high + interior))}", p, [(dt, x), (dt, v)], [(dt, y)], tol_exact()))

    for dt, shapes, dim in [("f32", [[2, 3], [2, 1], [2, 0]], 1), ("i32", [[1, 2], [3, 2]], 0), ("bool", [[2], [3]], 0)]:
        xs = [sample(dt, s) for s in shapes]
        y = np.concatenate(xs, axis=dim)
        p = Program(*[ty(dt, s) for s in shapes])
        p.ret(p.op("concatenate", [p.arg(i) for i in range(len(shapes))], ty(dt, list(y.shape)), [("dim", dim)]))
        out.append(case(f"concatenate/{dt}_dim{dim}", p, [(dt, x) for x in xs], [(dt, y)], tol_exact()))

    for dt, shape, dims in [("f32", [3, 4], [1]), ("u32", [2, 3, 2], [0, 2])]:
        x = sample(dt, shape)
        p = simple("reverse", [ty(dt, shape)], ty(dt, shape), [("dims", lst(dims))])
        out.append(case(f"reverse/{dt}", p, [(dt, x)], [(dt, np.flip(x, axis=tuple(dims)))], tol_exact()))
    return out


def reduce_ref(x, kind, axes, dt):
    """Reference reductions: exact-in-f64 sums/products and IEEE-2019 max/min."""
    axes = tuple(axes)
    if kind in ("sum", "prod") and dt in ("f32", "f64"):
        fn = np.sum if kind == "sum" else np.prod
        return fn(x.astype(np.float64), axis=axes).astype(NP[dt])
    if kind in ("sum", "prod"):
        fn = np.sum if kind == "sum" else np.prod
        r = fn(x.astype(object), axis=axes)
        return np.vectorize(lambda v: ref.wrap(int(v), dt), otypes=[np.int64])(r).astype(NP[dt])
    if kind in ("and", "or"):
        return (np.all if kind == "and" else np.any)(x, axis=axes)
    moved = np.moveaxis(x, axes, range(x.ndim - len(axes), x.ndim))
    kept = moved.shape[: x.ndim - len(axes)]
    rows = moved.reshape(int(np.prod(kept)), -1)
    if dt in ("f32", "f64"):
        fn, init = (ref.ieee_max, -np.inf) if kind == "max" else (ref.ieee_min, np.inf)
        vals = [functools.reduce(fn, map(float, r), init) for r in rows]
    else:
        info = np.iinfo(NP[dt])
        init = int(info.min) if kind == "max" else int(info.max)
        vals = [functools.reduce(max if kind == "max" else min, map(int, r), init) for r in rows]
    return np.array(vals, dtype=NP[dt]).reshape(kept)


def reduce_cases():
    out = []
    for kind in ["sum", "prod", "max", "min"]:
        for dt in NUMERIC:
            for shape, axes in [([3, 4], [1]), ([2, 3, 4], [0, 2]), ([5], [0])]:
                if dt in ("f32", "f64"):
                    x = RNG.integers(-3, 4, size=shape).astype(NP[dt]) if kind != "prod" else RNG.choice([0.5, 1.0, -1.0, 2.0], size=shape).astype(NP[dt])
                else:
                    x = sample(dt, shape) if kind != "prod" else RNG.integers(1, 4, size=shape).astype(NP[dt])
                y = reduce_ref(x, kind, axes, dt)
                out_shape = [s for i, s in enumerate(shape) if i not in axes]
                p = simple("reduce", [ty(dt, shape)], ty(dt, out_shape), [("kind", kind), ("axes", lst(axes))])
                out.append(case(f"reduce_{kind}/{dt}_{'x'.join(map(str, shape))}_axes{''.join(map(str, axes))}", p, [(dt, x)], [(dt, y)], tol_exact()))
    for kind in ["and", "or"]:
        x = sample("bool", [3, 5])
        p = simple("reduce", [ty("bool", [3, 5])], ty("bool", [3]), [("kind", kind), ("axes", lst([1]))])
        out.append(case(f"reduce_{kind}/bool", p, [("bool", x)], [("bool", reduce_ref(x, kind, [1], "bool"))], tol_exact()))
        p = simple("reduce", [ty("bool", [0])], ty("bool", []), [("kind", kind), ("axes", lst([0]))])
        out.append(case(f"reduce_{kind}/bool_empty", p, [("bool", np.zeros(0, bool))], [("bool", np.array(kind == "and"))], tol_exact()))
    for kind in ["sum", "prod", "max", "min"]:
        for dt in ["f32", "i32"]:
            x = np.zeros((2, 0), NP[dt])
            p = simple("reduce", [ty(dt, [2, 0])], ty(dt, [2]), [("kind", kind), ("axes", lst([1]))])
            out.append(case(f"reduce_{kind}/{dt}_empty", p, [(dt, x)], [(dt, reduce_ref(x, kind, [1], dt))], tol_exact()))
    for kind in ["max", "min", "sum"]:
        x = np.array([[1.0, np.nan, 3.0], [-0.0, 0.0, -1.0], [np.inf, -np.inf, 2.0]], np.float32)
        p = simple("reduce", [ty("f32", [3, 3])], ty("f32", [3]), [("kind", kind), ("axes", lst([1]))])
        out.append(case(f"reduce_{kind}/f32_nan_signed_zero", p, [("f32", x)], [("f32", reduce_ref(x, kind, [1], "f32"))], tol_exact()))
    for dt, rtol in [("f32", 1e-5), ("f64", 1e-13)]:
        x = RNG.normal(size=(3, 5000)).astype(NP[dt])
        p = simple("reduce", [ty(dt, [3, 5000])], ty(dt, [3]), [("kind", "sum"), ("axes", lst([1]))])
        out.append(case(f"reduce_sum/{dt}_random_large", p, [(dt, x)], [(dt, reduce_ref(x, "sum", [1], dt))], tol_close(rtol, rtol)))
    return out


def cumulative_ref(x, kind, axis, reverse, dt):
    x = np.asarray(x)
    if reverse:
        x = np.flip(x, axis)
    moved = np.moveaxis(x, axis, -1)
    res = np.empty_like(moved)
    if dt in ("f32", "f64"):
        t = NP[dt]
        fn = {"sum": lambda a, b: t(a + b), "prod": lambda a, b: t(a * b),
              "max": lambda a, b: t(ref.ieee_max(float(a), float(b))), "min": lambda a, b: t(ref.ieee_min(float(a), float(b)))}[kind]
    else:
        fn = {"sum": lambda a, b: ref.wrap(int(a) + int(b), dt), "prod": lambda a, b: ref.wrap(int(a) * int(b), dt),
              "max": lambda a, b: max(int(a), int(b)), "min": lambda a, b: min(int(a), int(b))}[kind]
    for idx in np.ndindex(moved.shape[:-1]):
        acc = None
        for j in range(moved.shape[-1]):
            v = moved[idx + (j,)]
            acc = v if acc is None else fn(acc, v)
            res[idx + (j,)] = acc
    res = np.moveaxis(res, -1, axis)
    return np.flip(res, axis) if reverse else res


def cumulative_cases():
    out = []
    for kind in ["sum", "prod", "max", "min"]:
        for dt in NUMERIC:
            for shape, axis, reverse in [([7], 0, False), ([3, 4], 1, True), ([3, 4], 0, False)]:
                x = RNG.normal(size=shape).astype(NP[dt]) if dt in ("f32", "f64") else sample(dt, shape)
                if kind == "prod" and dt in ("f32", "f64"):
                    x = RNG.uniform(0.5, 1.5, size=shape).astype(NP[dt])
                p = simple("cumulative", [ty(dt, shape)], ty(dt, shape), [("kind", kind), ("axis", axis), ("reverse", str(reverse).lower())])
                name = f"cumulative_{kind}/{dt}_{'x'.join(map(str, shape))}_axis{axis}{'_rev' if reverse else ''}"
                out.append(case(name, p, [(dt, x)], [(dt, cumulative_ref(x, kind, axis, reverse, dt))], tol_exact()))
    x = np.array([1.0, np.nan, 3.0, -np.inf], np.float32)
    for kind in ["max", "sum"]:
        p = simple("cumulative", [ty("f32", [4])], ty("f32", [4]), [("kind", kind), ("axis", 0), ("reverse", "false")])
        out.append(case(f"cumulative_{kind}/f32_nan", p, [("f32", x)], [("f32", cumulative_ref(x, kind, 0, False, "f32"))], tol_exact()))
    return out


def dot_cases():
    out = []
    specs = [
        ("matmul", [4, 5], [5, 3], [], [], [1], [0]),
        ("matvec", [4, 5], [5], [], [], [1], [0]),
        ("vecvec", [6], [6], [], [], [0], [0]),
        ("batched", [2, 3, 4], [2, 4, 5], [0], [0], [2], [1]),
        ("transposed_lhs", [5, 4], [5, 3], [], [], [0], [0]),
        ("two_contract", [2, 3, 4], [3, 4, 2], [], [], [1, 2], [0, 1]),
        ("outer", [3], [2], [], [], [], []),
        ("k0", [3, 0], [0, 2], [], [], [1], [0]),
        ("large", [130, 70], [70, 90], [], [], [1], [0]),
    ]
    for dt in NUMERIC:
        for name, ls, rs, lb, rb, lc, rc in specs:
            if name == "large" and dt not in ("f32", "f64"):
                continue
            a, b = sample(dt, ls), sample(dt, rs)
            lf = [i for i in range(len(ls)) if i not in lb + lc]
            rf = [i for i in range(len(rs)) if i not in rb + rc]
            labels = (list(range(len(ls))), _rhs_labels(len(ls), rs, lb, rb, lc, rc), [*lb, *lf, *[len(ls) + i for i in rf]])
            if dt in ("f32", "f64"):
                y = np.einsum(a.astype(np.float64), labels[0], b.astype(np.float64), labels[1], labels[2]).astype(NP[dt])
                tol = tol_close(1e-5, 1e-5) if dt == "f32" else tol_close(1e-12, 1e-12)
            else:
                # Small operands: the int64 result is exact, then wrapped to 32 bits.
                y = np.einsum(a.astype(np.int64), labels[0], b.astype(np.int64), labels[1], labels[2])
                y = np.vectorize(lambda v: ref.wrap(int(v), dt), otypes=[np.int64])(y).astype(NP[dt])
                tol = tol_exact()
            attrs = [("lhs_batch", lst(lb)), ("rhs_batch", lst(rb)), ("lhs_contract", lst(lc)), ("rhs_contract", lst(rc))]
            p = simple("dot_general", [ty(dt, ls), ty(dt, rs)], ty(dt, list(np.shape(y))), attrs)
            out.append(case(f"dot_general/{dt}_{name}", p, [(dt, a), (dt, b)], [(dt, y)], tol))
    return out


def _rhs_labels(lrank, rs, lb, rb, lc, rc):
    labels = [lrank + i for i in range(len(rs))]
    for l_, r_ in zip(lb + lc, rb + rc):
        labels[r_] = l_
    return labels


def gather_ref(x, idx, offset_dims, collapsed, start_map, sizes):
    batch_shape = idx.shape[:-1]
    window = [d for d in range(x.ndim) if d not in collapsed]
    out_rank = len(batch_shape) + len(offset_dims)
    out_shape, bi, oi = [], 0, 0
    for d in range(out_rank):
        if d in offset_dims:
            out_shape.append(sizes[window[oi]])
            oi += 1
        else:
            out_shape.append(batch_shape[bi])
            bi += 1
    out = np.zeros(out_shape, x.dtype)
    for o in np.ndindex(*out_shape):
        b = tuple(o[d] for d in range(out_rank) if d not in offset_dims)
        off = [o[d] for d in offset_dims]
        start = [0] * x.ndim
        for k, od in enumerate(start_map):
            start[od] = int(np.clip(idx[b + (k,)], 0, x.shape[od] - sizes[od]))
        for w, od in enumerate(window):
            start[od] += off[w]
        out[o] = x[tuple(start)]
    return out


def scatter_ref(x, idx, upd, uwd, iwd, sdod):
    res = x.copy()
    wod = [d for d in range(x.ndim) if d not in iwd]
    wsize = [1] * x.ndim
    for w, od in zip(uwd, wod):
        wsize[od] = upd.shape[w]
    for u in np.ndindex(*upd.shape):
        b = tuple(u[d] for d in range(upd.ndim) if d not in uwd)
        win = [u[d] for d in uwd]
        full = [0] * x.ndim
        for k, od in enumerate(sdod):
            full[od] = int(idx[b + (k,)])
        if not all(0 <= full[d] and full[d] + wsize[d] <= x.shape[d] for d in range(x.ndim)):
            continue
        for w, od in enumerate(wod):
            full[od] += win[w]
        t = tuple(full)
        if x.dtype.kind in "iu":
            res[t] = ref.wrap(int(res[t]) + int(upd[u]), "i32" if x.dtype == np.int32 else "u32")
        else:
            res[t] = res[t] + upd[u]
    return res


def indexing_cases():
    out = []
    # x[idx] on rows (with out-of-bounds indices that clamp), and a 2-D window gather.
    for dt in ["f32", "i32"]:
        x = sample(dt, [5, 3])
        idx = np.array([[0], [4], [7], [-2], [2]], np.int32)
        g = ([1], [0], [0], [1, 3])
        y = gather_ref(x, idx, *g)
        p = simple("gather", [ty(dt, [5, 3]), ty("i32", [5, 1])], ty(dt, list(y.shape)),
                   [("offset_dims", lst(g[0])), ("collapsed_slice_dims", lst(g[1])), ("start_index_map", lst(g[2])), ("slice_sizes", lst(g[3]))])
        out.append(case(f"gather/{dt}_rows_clamped", p, [(dt, x), ("i32", idx)], [(dt, y)], tol_exact()))
    x = sample("f64", [4, 5])
    idx = np.array([[[0, 1], [2, 3]], [[3, 4], [1, 0]]], np.int32)
    g = ([2, 3], [], [0, 1], [2, 2])
    y = gather_ref(x, idx, *g)
    p = simple("gather", [ty("f64", [4, 5]), ty("i32", [2, 2, 2])], ty("f64", list(y.shape)),
               [("offset_dims", lst(g[0])), ("collapsed_slice_dims", lst(g[1])), ("start_index_map", lst(g[2])), ("slice_sizes", lst(g[3]))])
    out.append(case("gather/f64_windows", p, [("f64", x), ("i32", idx)], [("f64", y)], tol_exact()))
    x = sample("u32", [3, 4])
    idx = np.array([[0, 1], [2, 3], [1, 1]], np.int32)
    g = ([], [0, 1], [0, 1], [1, 1])
    y = gather_ref(x, idx, *g)
    p = simple("gather", [ty("u32", [3, 4]), ty("i32", [3, 2])], ty("u32", list(y.shape)),
               [("offset_dims", lst(g[0])), ("collapsed_slice_dims", lst(g[1])), ("start_index_map", lst(g[2])), ("slice_sizes", lst(g[3]))])
    out.append(case("gather/u32_points", p, [("u32", x), ("i32", idx)], [("u32", y)], tol_exact()))

    for dt in NUMERIC:
        x = sample(dt, [5, 3])
        idx = np.array([[0], [4], [0], [9], [-1], [2]], np.int32)
        upd = sample(dt, [6, 3])
        s = ([1], [0], [0])
        y = scatter_ref(x, idx, upd, *s)
        p = simple("scatter_add", [ty(dt, [5, 3]), ty("i32", [6, 1]), ty(dt, [6, 3])], ty(dt, [5, 3]),
                   [("update_window_dims", lst(s[0])), ("inserted_window_dims", lst(s[1])), ("scatter_dims_to_operand_dims", lst(s[2]))])
        out.append(case(f"scatter_add/{dt}_rows_dups_oob", p, [(dt, x), ("i32", idx), (dt, upd)], [(dt, y)], tol_exact()))
    x = sample("f32", [4, 4])
    idx = np.array([[0, 0], [1, 2], [3, 3], [3, 2]], np.int32)
    upd = sample("f32", [4, 2, 2])
    s = ([1, 2], [], [0, 1])
    y = scatter_ref(x, idx, upd, *s)
    p = simple("scatter_add", [ty("f32", [4, 4]), ty("i32", [4, 2]), ty("f32", [4, 2, 2])], ty("f32", [4, 4]),
               [("update_window_dims", lst(s[0])), ("inserted_window_dims", lst(s[1])), ("scatter_dims_to_operand_dims", lst(s[2]))])
    out.append(case("scatter_add/f32_windows_partial_oob", p, [("f32", x), ("i32", idx), ("f32", upd)], [("f32", y)], tol_exact()))
    # Many windows (past the CUDA plugin's 256, where it sums by sorted keys), with repeats
    # and rows out of range; values in eighths, so every order of the sums is exact.
    rng = np.random.default_rng(22)
    x = (rng.integers(-64, 64, size=[50, 6]) / 8).astype(np.float32)
    idx = rng.integers(-4, 55, size=[1000, 1]).astype(np.int32)
    upd = (rng.integers(-64, 64, size=[1000, 6]) / 8).astype(np.float32)
    s = ([1], [0], [0])
    y = scatter_ref(x, idx, upd, *s)
    p = simple("scatter_add", [ty("f32", [50, 6]), ty("i32", [1000, 1]), ty("f32", [1000, 6])], ty("f32", [50, 6]),
               [("update_window_dims", lst(s[0])), ("inserted_window_dims", lst(s[1])), ("scatter_dims_to_operand_dims", lst(s[2]))])
    out.append(case("scatter_add/f32_many_rows_dups_oob", p, [("f32", x), ("i32", idx), ("f32", upd)], [("f32", y)], tol_exact()))
    # Two indexed axes named in reverse order, a window over part of the free axis, i32.
    x = rng.integers(-2**31, 2**31, size=[9, 13, 4]).astype(np.int32)
    idx = np.stack([rng.integers(-2, 15, size=700), rng.integers(-2, 11, size=700)], axis=1).astype(np.int32)
    upd = rng.integers(-2**31, 2**31, size=[700, 2]).astype(np.int32)
    s = ([1], [0, 1], [1, 0])
    y = scatter_ref(x, idx, upd, *s)
    p = simple("scatter_add", [ty("i32", [9, 13, 4]), ty("i32", [700, 2]), ty("i32", [700, 2])], ty("i32", [9, 13, 4]),
               [("update_window_dims", lst(s[0])), ("inserted_window_dims", lst(s[1])), ("scatter_dims_to_operand_dims", lst(s[2]))])
    out.append(case("scatter_add/i32_two_axes_many_points", p, [("i32", x), ("i32", idx), ("i32", upd)], [("i32", y)], tol_exact()))
    # Windows wider than one element along the indexed axes: 600 row pairs (some hanging
    # over an end, so dropped) in f32 eighths, and 600 overlapping 3 x 2 patches of a grid
    # indexed by a 2-d batch, in i32 (wrapping).
    x = (rng.integers(-64, 64, size=[40, 6]) / 8).astype(np.float32)
    idx = rng.integers(-3, 42, size=[600, 1]).astype(np.int32)
    upd = (rng.integers(-64, 64, size=[600, 2, 6]) / 8).astype(np.float32)
    s = ([1, 2], [], [0])
    y = scatter_ref(x, idx, upd, *s)
    p = simple("scatter_add", [ty("f32", [40, 6]), ty("i32", [600, 1]), ty("f32", [600, 2, 6])], ty("f32", [40, 6]),
               [("update_window_dims", lst(s[0])), ("inserted_window_dims", lst(s[1])), ("scatter_dims_to_operand_dims", lst(s[2]))])
    out.append(case("scatter_add/f32_many_wide_windows", p, [("f32", x), ("i32", idx), ("f32", upd)], [("f32", y)], tol_exact()))
    x = rng.integers(-2**31, 2**31, size=[12, 15, 2]).astype(np.int32)
    idx = np.stack([rng.integers(-1, 12, size=[20, 30]), rng.integers(-1, 16, size=[20, 30])], axis=2).astype(np.int32)
    upd = rng.integers(-2**31, 2**31, size=[20, 30, 3, 2, 2]).astype(np.int32)
    s = ([2, 3, 4], [], [0, 1])
    y = scatter_ref(x, idx, upd, *s)
    p = simple("scatter_add", [ty("i32", [12, 15, 2]), ty("i32", [20, 30, 2]), ty("i32", [20, 30, 3, 2, 2])], ty("i32", [12, 15, 2]),
               [("update_window_dims", lst(s[0])), ("inserted_window_dims", lst(s[1])), ("scatter_dims_to_operand_dims", lst(s[2]))])
    out.append(case("scatter_add/i32_many_patches", p, [("i32", x), ("i32", idx), ("i32", upd)], [("i32", y)], tol_exact()))
    # An empty operand: every window is dropped, and the result is empty.
    x = np.zeros([0, 6], np.float32)
    idx = np.arange(-2, 3, dtype=np.int32).reshape(5, 1)
    upd = np.ones([5, 6], np.float32)
    s = ([1], [0], [0])
    y = scatter_ref(x, idx, upd, *s)
    p = simple("scatter_add", [ty("f32", [0, 6]), ty("i32", [5, 1]), ty("f32", [5, 6])], ty("f32", [0, 6]),
               [("update_window_dims", lst(s[0])), ("inserted_window_dims", lst(s[1])), ("scatter_dims_to_operand_dims", lst(s[2]))])
    out.append(case("scatter_add/f32_empty_operand", p, [("f32", x), ("i32", idx), ("f32", upd)], [("f32", y)], tol_exact()))

    for dt in ["f32", "i32", "bool"]:
        x = sample(dt, [4, 6])
        for label, starts in [("inside", [1, 2]), ("clamped", [3, -5]), ("far", [100, 100])]:
            cl = [int(np.clip(s, 0, d - z)) for s, d, z in zip(starts, [4, 6], [2, 3])]
            y = x[cl[0]:cl[0] + 2, cl[1]:cl[1] + 3]
            p = simple("dynamic_slice", [ty(dt, [4, 6]), ty("i32", []), ty("i32", [])], ty(dt, [2, 3]), [("sizes", lst([2, 3]))])
            out.append(case(f"dynamic_slice/{dt}_{label}", p, [(dt, x), ("i32", np.int32(starts[0])), ("i32", np.int32(starts[1]))], [(dt, y)], tol_exact()))
            u = sample(dt, [2, 3])
            z = x.copy()
            z[cl[0]:cl[0] + 2, cl[1]:cl[1] + 3] = u
            p = simple("dynamic_update_slice", [ty(dt, [4, 6]), ty(dt, [2, 3]), ty("i32", []), ty("i32", [])], ty(dt, [4, 6]))
            out.append(case(f"dynamic_update_slice/{dt}_{label}", p, [(dt, x), (dt, u), ("i32", np.int32(starts[0])), ("i32", np.int32(starts[1]))], [(dt, z)], tol_exact()))
    return out


def constant_and_fusion_cases():
    out = []
    p = Program()
    c = p.op("constant", [], ty("f32", [5]), [("value", "[1.5, -0.0, inf, nan, 1e-45]")])
    p.ret(c)
    out.append(case("constant/f32_specials", p, [], [("f32", np.array([1.5, -0.0, np.inf, np.nan, 1e-45], np.float32))], tol_exact()))
    p = Program()
    c = p.op("constant", [], ty("i32", [2, 2]), [("value", "[1, -2, 2147483647, -2147483648]")])
    p.ret(c)
    out.append(case("constant/i32", p, [], [("i32", np.array([[1, -2, 2**31 - 1, -2**31]], np.int32).reshape(2, 2))], tol_exact()))
    # A long elementwise chain over more than one tile, with an exported intermediate:
    # y = tanh(x * w + b); z = y * y + x; both returned. Exact IEEE ops except tanh (1 ulp).
    for n, dt in [(10000, "f32"), (5, "f64"), (20000, "f64")]:
        x, w, b = (RNG.normal(size=n).astype(NP[dt]) for _ in range(3))
        p = Program(ty(dt, [n]), ty(dt, [n]), ty(dt, [n]))
        m = p.op("mul", ["%0", "%1"], ty(dt, [n]))
        a = p.op("add", [m, "%2"], ty(dt, [n]))
        y = p.op("tanh", [a], ty(dt, [n]))
        yy = p.op("mul", [y, y], ty(dt, [n]))
        z = p.op("add", [yy, "%0"], ty(dt, [n]))
        cmp_ = p.op("compare", [z, "%0"], ty("bool", [n]), [("dir", "gt")])
        s = p.op("select", [cmp_, z, y], ty(dt, [n]))
        p.ret(y, s)
        t = NP[dt]
        yr = ref.unary_float("tanh", dt, (x * w + b).astype(t))
        zr = (yr * yr + x).astype(t)
        sr = np.where(zr > x, zr, yr)
        tol = tol_ulp(1) if dt == "f32" else tol_ulp(2)
        out.append(case(f"fusion/{dt}_chain_{n}", p, [(dt, x), (dt, w), (dt, b)], [(dt, yr), (dt, sr)], [tol, tol_close(1e-6, 1e-6) if dt == "f32" else tol_close(1e-14, 1e-14)]))
    # A broadcast that only adds leading axes of length 1 to a value computed in the same
    # elementwise chain keeps every element (a fused plan once repeated the first one);
    # the transpose after it reads the chain's result as a column. Exact ops only.
    # Its own generator: drawing from RNG would move every later group's inputs.
    own = np.random.default_rng(2026)
    for n, dt in [(7, "f32"), (5000, "f64")]:
        x = own.normal(size=n).astype(NP[dt])
        p = Program(ty(dt, [n]))
        sq = p.op("mul", ["%0", "%0"], ty(dt, [n]))
        row = p.op("broadcast_in_dim", [sq], ty(dt, [1, n]), [("dims", "[1]")])
        twice = p.op("add", [row, row], ty(dt, [1, n]))
        col = p.op("transpose", [twice], ty(dt, [n, 1]), [("perm", "[1,0]")])
        p.ret(col, row)
        t = NP[dt]
        sqr = (x * x).astype(t)
        out.append(case(f"fusion/{dt}_leading_axis_broadcast_{n}", p, [(dt, x)], [(dt, (sqr + sqr).reshape(n, 1)), (dt, sqr.reshape(1, n))], [tol_exact(), tol_exact()]))
    return out


def sort_ref(arrays, axis, num_keys, descending):
    """numpy's stable lexsort line by line (NaN last, -0 ties +0); descending as the
    reverse of an ascending sort of the reversed line, which keeps ties in order."""
    moved = [np.moveaxis(np.asarray(a), axis, -1) for a in arrays]
    out = [np.empty_like(m) for m in moved]
    n = moved[0].shape[-1]
    for idx in np.ndindex(moved[0].shape[:-1]):
        keys = [m[idx] for m in moved[:num_keys]]
        if descending:
            keys = [k[::-1] for k in keys]
        perm = np.lexsort(keys[::-1])
        if descending:
            perm = (n - 1 - perm)[::-1]
        for o, m in zip(out, moved):
            o[idx] = m[idx][perm]
    return [np.moveaxis(o, -1, axis) for o in out]


def sort_case(name, arrays, axis, num_keys, descending):
    dts = [d for d, _ in arrays]
    shape = list(arrays[0][1].shape)
    p = Program(*[ty(d, shape) for d in dts])
    r = p.op("sort", [p.arg(i) for i in range(len(dts))], [ty(d, shape) for d in dts],
             [("axis", axis), ("num_keys", num_keys), ("descending", str(descending).lower())])
    p.ret(*(r if isinstance(r, list) else [r]))
    want = sort_ref([a for _, a in arrays], axis, num_keys, descending)
    return case(name, p, arrays, list(zip(dts, want)), tol_exact())


def sort_cases():
    out = []
    ties = lambda dt, shape: (RNG.integers(0, 4, size=shape) - (0 if dt in ("u32", "bool") else 2)).astype(NP[dt])
    for dt in ALL:
        for shape, axis in [([3, 5], 1), ([6, 2], 0), ([2, 3, 4], 1)]:
            x = ties(dt, shape)
            for desc in [False, True]:
                tag = f"{'x'.join(map(str, shape))}_axis{axis}{'_desc' if desc else ''}"
                out.append(sort_case(f"sort/{dt}_{tag}", [(dt, x)], axis, 1, desc))
    for dt in ["f32", "f64"]:
        x = np.array([[np.nan, 1.0, -0.0, 0.0, -np.inf, np.inf, -1.0, np.nan, 0.0, -0.0, 1e-40, -3.0]], NP[dt])
        iota = np.arange(12, dtype=np.int32).reshape(1, 12)
        for desc in [False, True]:
            # The index payload shows where each NaN and signed zero went.
            out.append(sort_case(f"sort/{dt}_nan_signed_zero_inf{'_desc' if desc else ''}",
                                 [(dt, x), ("i32", iota)], 1, 1, desc))
    k1 = ties("i32", [4, 9])
    k2 = RNG.integers(0, 3, size=[4, 9]).astype(np.float32)
    pay_u, pay_b = RNG.integers(0, 2**32, size=[4, 9], dtype=np.uint64).astype(np.uint32), RNG.integers(0, 2, size=[4, 9]).astype(np.bool_)
    pay_f = RNG.normal(size=[4, 9])
    for desc in [False, True]:
        out.append(sort_case(f"sort/two_keys_three_payloads{'_desc' if desc else ''}",
                             [("i32", k1), ("f32", k2), ("u32", pay_u), ("bool", pay_b), ("f64", pay_f)], 1, 2, desc))
        out.append(sort_case(f"sort/one_key_of_two{'_desc' if desc else ''}",
                             [("i32", k1), ("f32", k2)], 1, 1, desc))
    big = RNG.integers(-500, 500, size=[4, 5000]).astype(np.float32)
    out.append(sort_case("sort/f32_4x5000_duplicates", [("f32", big), ("i32", np.broadcast_to(np.arange(5000, dtype=np.int32), (4, 5000)).copy())], 1, 1, False))
    out.append(sort_case("sort/f32_5000x3_axis0_desc", [("f32", big.reshape(5000, 4)[:, :3].copy())], 0, 1, True))
    out.append(sort_case("sort/f32_empty_axis", [("f32", np.zeros((2, 0), np.float32))], 1, 1, False))
    return out


def empty_movement_cases():
    """Movement ops where an operand or the result has no elements (a local RNG, so no
    other case's values move)."""
    rng = np.random.default_rng(2027)
    out = []
    # Padding an empty operand gives the padding value alone (interior padding of nothing
    # is nothing).
    v = np.float32(rng.normal())
    p = simple("pad", [ty("f32", [0, 2]), ty("f32", [])], ty("f32", [3, 2]),
               [("low", lst([2, 0])), ("high", lst([1, 0])), ("interior", lst([3, 0]))])
    out.append(case("pad/f32_empty_operand", p, [("f32", np.zeros((0, 2), np.float32)), ("f32", v)],
                    [("f32", np.full((3, 2), v, np.float32))], tol_exact()))
    p = simple("reverse", [ty("i32", [3, 0])], ty("i32", [3, 0]), [("dims", lst([0, 1]))])
    out.append(case("reverse/i32_empty", p, [("i32", np.zeros((3, 0), np.int32))], [("i32", np.zeros((3, 0), np.int32))], tol_exact()))
    return out


def empty_cumulative_cases():
    """Cumulative ops along an axis of no elements."""
    out = []
    for kind in ["sum", "max"]:
        p = simple("cumulative", [ty("f32", [3, 0])], ty("f32", [3, 0]), [("kind", kind), ("axis", 1), ("reverse", "true")])
        out.append(case(f"cumulative_{kind}/f32_empty_axis", p, [("f32", np.zeros((3, 0), np.float32))],
                        [("f32", np.zeros((3, 0), np.float32))], tol_exact()))
    return out


def empty_indexing_cases():
    """Gathers, dynamic slices and updates where indices, a slice or an update have no
    elements (a local RNG, so no other case's values move)."""
    rng = np.random.default_rng(2028)
    out = []
    x = rng.normal(size=[5, 3]).astype(np.float32)
    g = ([1], [0], [0], [1, 3])
    p = simple("gather", [ty("f32", [5, 3]), ty("i32", [0, 1])], ty("f32", [0, 3]),
               [("offset_dims", lst(g[0])), ("collapsed_slice_dims", lst(g[1])), ("start_index_map", lst(g[2])), ("slice_sizes", lst(g[3]))])
    out.append(case("gather/f32_no_indices", p, [("f32", x), ("i32", np.zeros((0, 1), np.int32))],
                    [("f32", np.zeros((0, 3), np.float32))], tol_exact()))
    x = rng.normal(size=[4, 6]).astype(np.float64)
    p = simple("dynamic_slice", [ty("f64", [4, 6]), ty("i32", []), ty("i32", [])], ty("f64", [0, 2]), [("sizes", lst([0, 2]))])
    out.append(case("dynamic_slice/f64_zero_rows", p, [("f64", x), ("i32", np.int32(9)), ("i32", np.int32(5))],
                    [("f64", np.zeros((0, 2), np.float64))], tol_exact()))
    # An empty update leaves the operand as it was, wherever it is placed.
    p = simple("dynamic_update_slice", [ty("f64", [4, 6]), ty("f64", [0, 3]), ty("i32", []), ty("i32", [])], ty("f64", [4, 6]))
    out.append(case("dynamic_update_slice/f64_empty_update", p,
                    [("f64", x), ("f64", np.zeros((0, 3), np.float64)), ("i32", np.int32(2)), ("i32", np.int32(5))],
                    [("f64", x)], tol_exact()))
    return out


def computed_operand_update_cases():
    """Dynamic updates of a value the program computes (which a backend may write in place
    where nothing else reads it), chained, and of one the program also returns (which it
    must not); local RNGs, so no other case's values move."""
    rng = np.random.default_rng(2029)
    out = []
    x = rng.normal(size=[64, 40]).astype(np.float32)
    u = rng.normal(size=[3, 40]).astype(np.float32)
    v = rng.normal(size=[2, 5]).astype(np.float32)
    t = [ty("f32", [64, 40]), ty("f32", [3, 40]), ty("f32", [2, 5]), ty("i32", []), ty("i32", [])]
    for label, (a, b) in [("inside", (7, 30)), ("clamped", (62, -3))]:
        p = Program(*t)
        n = p.op("neg", [p.arg(0)], ty("f32", [64, 40]))
        y = p.op("dynamic_update_slice", [n, p.arg(1), p.arg(3), p.arg(4)], ty("f32", [64, 40]))
        z = p.op("dynamic_update_slice", [y, p.arg(2), p.arg(4), p.arg(3)], ty("f32", [64, 40]))
        p.ret(z)
        want = -x
        r0, c0 = int(np.clip(a, 0, 61)), int(np.clip(b, 0, 0))
        want[r0:r0 + 3, c0:c0 + 40] = u
        r1, c1 = int(np.clip(b, 0, 62)), int(np.clip(a, 0, 35))
        want[r1:r1 + 2, c1:c1 + 5] = v
        args = [("f32", x), ("f32", u), ("f32", v), ("i32", np.int32(a)), ("i32", np.int32(b))]
        out.append(case(f"dynamic_update_slice/f32_computed_operand_{label}", p, args,
                        [("f32", want)], tol_exact()))
    # The computed operand is returned too: the update must leave it as it was.
    p = Program(*t)
    n = p.op("neg", [p.arg(0)], ty("f32", [64, 40]))
    y = p.op("dynamic_update_slice", [n, p.arg(1), p.arg(3), p.arg(4)], ty("f32", [64, 40]))
    p.ret(n, y)
    want = -x
    want[5:8, :] = u
    out.append(case("dynamic_update_slice/f32_computed_operand_also_returned", p,
                    [("f32", x), ("f32", u), ("f32", v), ("i32", np.int32(5)), ("i32", np.int32(9))],
                    [("f32", -x), ("f32", want)], tol_exact()))
    return out


def build():
    groups = {
        "ops/unary": unary_cases() + erf_inv_cases(),
        "ops/binary": binary_cases(),
        "ops/compare": compare_cases(),
        "ops/select_convert_bitcast": select_convert_cases(),
        "ops/movement": movement_cases() + empty_movement_cases(),
        "ops/reduce": reduce_cases(),
        "ops/cumulative": cumulative_cases() + empty_cumulative_cases(),
        "ops/sort": sort_cases(),
        "ops/dot_general": dot_cases(),
        "ops/indexing": indexing_cases() + empty_indexing_cases() + computed_operand_update_cases(),
        "ops/constant_fusion": constant_and_fusion_cases(),
    }
    return groups
