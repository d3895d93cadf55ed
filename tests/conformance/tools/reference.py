"""Independent reference semantics: mpmath at 120 bits for transcendental functions, numpy
for IEEE arithmetic, and plain Python integers for the integer conventions."""
import math

import mpmath
import numpy as np

mpmath.mp.prec = 120

F = {"f32": np.float32, "f64": np.float64}


def _mp(fn):
    def ref(x):
        r = fn(mpmath.mpf(float(x)))
        if isinstance(r, mpmath.mpc):
            return None
        return float(r)

    return ref


def _cbrt(x):
    return mpmath.sign(x) * mpmath.cbrt(abs(x)) if x != 0 else x


UNARY_MP = {
    "exp": mpmath.exp,
    "exp2": lambda x: mpmath.power(2, x),
    "expm1": mpmath.expm1,
    "log": mpmath.log,
    "log1p": mpmath.log1p,
    "sqrt": mpmath.sqrt,
    "rsqrt": lambda x: 1 / mpmath.sqrt(x),
    "cbrt": _cbrt,
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "asin": mpmath.asin,
    "acos": mpmath.acos,
    "atan": mpmath.atan,
    "sinh": mpmath.sinh,
    "cosh": mpmath.cosh,
    "tanh": mpmath.tanh,
    "asinh": mpmath.asinh,
    "acosh": mpmath.acosh,
    "atanh": mpmath.atanh,
    "erf": mpmath.erf,
    "erfc": mpmath.erfc,
    "erf_inv": mpmath.erfinv,
    "logistic": lambda x: 1 / (1 + mpmath.exp(-x)),
}

# C99 / IEEE special values, used where mpmath has no real answer (NaN, inf, domain errors).
UNARY_NP = {
    "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log, "log1p": np.log1p,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "cbrt": np.cbrt, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh,
    "erf": np.vectorize(lambda v: math.erf(v) if not math.isnan(v) else v),
    "erfc": np.vectorize(lambda v: math.erfc(v) if not math.isnan(v) else v),
    # mpmath answers inside (-1, 1); the ends are infinities, outside and NaN give NaN.
    "erf_inv": lambda x: np.where(np.abs(x) == 1, np.copysign(np.inf, x), np.nan),
    "logistic": lambda x: 1 / (1 + np.exp(-x)),
}


def unary_float(op, dtype, x):
    x = np.asarray(x, dtype=F[dtype])
    if op == "neg":
        return -x
    if op == "abs":
        return np.abs(x)
    if op == "sign":  # JAX: sign(-0) = -0, sign(nan) = nan
        return np.where((x == 0) | np.isnan(x), x, np.sign(x)).astype(x.dtype)
    if op == "floor":
        return np.floor(x)
    if op == "ceil":
        return np.ceil(x)
    if op == "round":  # half to even
        return np.round(x)
    if op == "is_finite":
        return np.isfinite(x)
    if op == "sqrt":  # correctly rounded in IEEE, sqrt(-0) = -0
        return np.sqrt(x)
    out = np.empty(x.shape, dtype=np.float64)
    with np.errstate(all="ignore"):
        fallback = np.asarray(UNARY_NP[op](x.astype(np.float64)), dtype=np.float64)
    for i, v in enumerate(x.astype(np.float64).ravel()):
        r = None
        if math.isfinite(v):
            try:
                r = _mp(UNARY_MP[op])(v)
            except (ValueError, ZeroDivisionError):
                r = None
        out.ravel()[i] = fallback.ravel()[i] if r is None else r
    with np.errstate(all="ignore"):
        return out.astype(F[dtype])


def ieee_max(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b:
        return b if math.copysign(1, a) < 0 else a
    return max(a, b)


def ieee_min(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if a == b:
        return a if math.copysign(1, a) < 0 else b
    return min(a, b)


def binary_float(op, dtype, x, y):
    t = F[dtype]
    x, y = np.asarray(x, t), np.asarray(y, t)
    with np.errstate(all="ignore"):
        if op == "add":
            return x + y
        if op == "sub":
            return x - y
        if op == "mul":
            return x * y
        if op == "div":
            return x / y
        if op == "rem":
            return np.fmod(x, y)
        if op == "pow":
            return np.power(x.astype(np.float64), y.astype(np.float64)).astype(t)
        if op == "atan2":
            return np.arctan2(x.astype(np.float64), y.astype(np.float64)).astype(t)
    fn = ieee_max if op == "max" else ieee_min
    return np.array([fn(float(a), float(b)) for a, b in zip(x.ravel(), y.ravel())], t).reshape(x.shape)


BITS = 32
MASK = (1 << BITS) - 1


def wrap(v, dtype):
    v &= MASK
    if dtype == "i32" and v >= 1 << 31:
        v -= 1 << 32
    return v


def _trunc_div(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int_binary_scalar(op, dtype, a, b):
    a, b = int(a), int(b)
    if op == "add":
        return wrap(a + b, dtype)
    if op == "sub":
        return wrap(a - b, dtype)
    if op == "mul":
        return wrap(a * b, dtype)
    if op == "div":
        return wrap(-1, dtype) if b == 0 else wrap(_trunc_div(a, b), dtype)
    if op == "rem":
        return a if b == 0 else wrap(a - _trunc_div(a, b) * b, dtype)
    if op == "pow":
        if b < 0:
            return 1 if a == 1 else ((1 if b % 2 == 0 else -1) if a == -1 else 0)
        return wrap(pow(a, b, 1 << 32), dtype)
    if op == "max":
        return max(a, b)
    if op == "min":
        return min(a, b)
    if op == "and":
        return wrap(a & b, dtype)
    if op == "or":
        return wrap(a | b, dtype)
    if op == "xor":
        return wrap(a ^ b, dtype)
    s = b & MASK  # shift amounts are read as unsigned
    if op == "shift_left":
        return 0 if s >= 32 else wrap(a << s, dtype)
    if op == "shift_right_logical":
        return 0 if s >= 32 else wrap((a & MASK) >> s, dtype)
    if op == "shift_right_arithmetic":
        signed = wrap(a, "i32")
        return wrap(signed >> min(s, 31), dtype)
    raise KeyError(op)


def int_binary(op, dtype, x, y):
    t = np.int32 if dtype == "i32" else np.uint32
    return np.array([int_binary_scalar(op, dtype, a, b) for a, b in zip(np.ravel(x), np.ravel(y))], dtype=np.int64).astype(t).reshape(np.shape(x))


def convert_scalar(v, src, dst):
    if dst == "bool":
        return bool(v != 0) or (src in F and math.isnan(v))
    if src == "bool":
        v = int(v)
    if dst in F:
        return float(v) if src in F else int(v)
    if src in F:
        if math.isnan(v):
            return 0
        lo, hi = (-(1 << 31), (1 << 31) - 1) if dst == "i32" else (0, (1 << 32) - 1)
        if math.isinf(v):
            return hi if v > 0 else lo
        return max(lo, min(hi, int(v)))
    return wrap(int(v), dst)


def convert(x, src, dst):
    from golden import NP

    vals = [convert_scalar(v.item() if hasattr(v, "item") else v, src, dst) for v in np.ravel(x)]
    if dst in F:
        # int -> float: exact in f64, then one rounding to f32.
        arr = np.array(vals, dtype=np.float64)
        with np.errstate(all="ignore"):
            return arr.astype(NP[dst]).reshape(np.shape(x))
    if dst == "bool":
        return np.array(vals, dtype=np.bool_).reshape(np.shape(x))
    return np.array(vals, dtype=np.int64).astype(NP[dst]).reshape(np.shape(x))
