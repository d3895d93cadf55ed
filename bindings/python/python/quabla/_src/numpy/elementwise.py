"""Elementwise functions, with numpy broadcasting and JAX promotion (weak Python scalars).

Derivative conventions follow JAX: ``x ** 2`` with a Python int exponent is an integer power
(exact derivative at 0); ``hypot`` has gradient (0.5, 0.5) at (0, 0); ``where`` passes
gradients only to the chosen side, so write the double-where idiom
(``where(ok, f(where(ok, x, safe)), other)``) when the other side is NaN or inf.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from .. import dtypes as _dt
from ..array import Array, _operand
from .creation import asarray


def _is_scalar(x) -> bool:
    return isinstance(x, (bool, int, float)) and not isinstance(x, np.generic)


def _arr(x) -> Array:
    return x if isinstance(x, Array) else asarray(x)


def binary(op: str, x, y) -> Array:
    """A core binary primitive on array-likes, the array side deciding the dtype of scalars."""
    x, y = widen_for_python_float(x, y)
    if isinstance(x, Array):
        return Array(x._raw.binary(op, _operand(y) if _is_scalar(y) else _arr(y)._raw))
    if isinstance(y, Array) and _is_scalar(x):
        return Array(y._raw.binary(op, x, True))
    x = _arr(x)
    return Array(x._raw.binary(op, _operand(y) if _is_scalar(y) else _arr(y)._raw))


def as_float(x) -> Array:
    """``x`` as an array of a float dtype: its own if it has one, else the default float
    (as JAX promotes integer and bool inputs of float functions)."""
    x = _arr(x)
    return x if x.dtype.kind == "f" else x.astype(_dt.default_float())


_float = as_float


def _unary(op: str, float_only: bool = True):
    def f(x) -> Array:
        x = _float(x) if float_only else _arr(x)
        return Array(x._raw.unary(op))
    f.__name__ = op
    return f


sin = _unary("sin")
cos = _unary("cos")
tan = _unary("tan")
arcsin = _unary("asin")
arccos = _unary("acos")
arctan = _unary("atan")
sinh = _unary("sinh")
cosh = _unary("cosh")
tanh = _unary("tanh")
arcsinh = _unary("asinh")
arccosh = _unary("acosh")
arctanh = _unary("atanh")
exp = _unary("exp")
exp2 = _unary("exp2")
expm1 = _unary("expm1")
log = _unary("log")
log1p = _unary("log1p")
sqrt = _unary("sqrt")
cbrt = _unary("cbrt")
floor = _unary("floor", float_only=False)
ceil = _unary("ceil", float_only=False)
sign = _unary("sign", float_only=False)
absolute = _unary("abs", float_only=False)
abs = absolute  # noqa: A001 - numpy's name
negative = _unary("neg", float_only=False)
isfinite = _unary("is_finite", float_only=False)
logical_not = _unary("logical_not", float_only=False)
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def _int_passthrough(f):
    def g(x):
        x = _arr(x)
        return x if x.dtype.kind in "iub" else f(x)
    g.__name__ = f.__name__
    return g


floor = _int_passthrough(floor)
ceil = _int_passthrough(ceil)


def log2(x) -> Array:
    x = _float(x)
    return log(x) / float(np.log(2.0))


def log10(x) -> Array:
    x = _float(x)
    return log(x) / float(np.log(10.0))


def square(x) -> Array:
    x = _arr(x)
    return x * x


def reciprocal(x) -> Array:
    return 1.0 / _float(x)


def add(x, y): return binary("add", x, y)
def subtract(x, y): return binary("sub", x, y)
def multiply(x, y): return binary("mul", x, y)
def _int_kind(v) -> bool:
    if isinstance(v, Array):
        return v.dtype.kind in "iub"
    return isinstance(v, (bool, int, np.integer, np.bool_)) or (
        isinstance(v, np.ndarray) and v.dtype.kind in "iub")


def divide(x, y):
    """True division: integer operands divide in the default float (float32, float64 with
    x64 on), as JAX's ``true_divide``."""
    if _int_kind(x) and _int_kind(y):
        x = _arr(x).astype(_dt.default_float())
    return binary("div", x, y)
true_divide = divide
def maximum(x, y): return binary("max", x, y)
def minimum(x, y): return binary("min", x, y)
def equal(x, y): return binary("eq", x, y)
def not_equal(x, y): return binary("ne", x, y)
def less(x, y): return binary("lt", x, y)
def less_equal(x, y): return binary("le", x, y)
def greater(x, y): return binary("gt", x, y)
def greater_equal(x, y): return binary("ge", x, y)
def logical_and(x, y): return binary("and", _arr(x).astype(bool), _arr(y).astype(bool))
def logical_or(x, y): return binary("or", _arr(x).astype(bool), _arr(y).astype(bool))
def logical_xor(x, y): return binary("xor", _arr(x).astype(bool), _arr(y).astype(bool))
def bitwise_and(x, y): return binary("and", x, y)
def bitwise_or(x, y): return binary("or", x, y)
def bitwise_xor(x, y): return binary("xor", x, y)


def arctan2(y, x) -> Array:
    """Four-quadrant arctangent of ``y / x`` (signed zeros respected)."""
    if not isinstance(y, Array) and isinstance(x, Array):
        y = asarray(y, x.dtype if x.dtype.kind == "f" else _dt.default_float())
    return binary("atan2", _float(y), x)


atan2 = arctan2


def power(x, y) -> Array:
    """``x ** y``; a Python int exponent is an integer power (repeated multiplication), as
    ``lax.integer_pow``; otherwise ``pow`` (whose gradient at x = 0 with y = 0. is NaN, as JAX)."""
    if isinstance(y, (int, np.integer)) and not isinstance(y, bool) and isinstance(x, Array):
        return _integer_pow(x, int(y))
    return binary("pow", x, y)


def _integer_pow(x: Array, n: int) -> Array:
    if n == 0:
        return ones_like_(x)
    if n < 0:
        if x.dtype.kind != "f":
            raise ValueError("integers cannot be raised to negative integer powers")
        return 1.0 / _integer_pow(x, -n)
    acc: Optional[Array] = None
    base = x
    while n:
        if n & 1:
            acc = base if acc is None else acc * base
        n >>= 1
        if n:
            base = base * base
    assert acc is not None
    return acc


def ones_like_(x: Array) -> Array:
    from .creation import ones_like
    return ones_like(x)


def where(condition, x=None, y=None):
    """``x`` where ``condition`` else ``y`` (broadcast). With one argument, :func:`nonzero`."""
    if x is None and y is None:
        from .misc import nonzero
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("where takes either one argument or three")
    c = _arr(condition)
    if c.dtype != np.bool_:
        c = c != 0
    if not isinstance(x, Array) and isinstance(y, Array):
        # select takes the scalar only on the false side: flip the predicate.
        return where(logical_not(c), y, x)
    x = _arr(x) if not _is_scalar(x) or not isinstance(y, Array) else asarray(x, y.dtype)
    yo = _operand(y) if _is_scalar(y) else _arr(y)._raw
    from .shape import broadcast_shapes, broadcast_to
    if not _is_scalar(y):
        shape = broadcast_shapes(c.shape, x.shape, _arr(y).shape)
    else:
        shape = broadcast_shapes(c.shape, x.shape)
    c = broadcast_to(c, shape)
    return Array(c._raw.select(x._raw, yo))


def clip(a, a_min=None, a_max=None, *, min=None, max=None) -> Array:  # noqa: A002
    """``minimum(maximum(a, a_min), a_max)`` (either bound may be None)."""
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    out = _arr(a)
    if lo is not None:
        out = maximum(out, lo)
    if hi is not None:
        out = minimum(out, hi)
    return out


def round(a, decimals: int = 0) -> Array:  # noqa: A001 - numpy's name
    """Round half to even, to ``decimals`` places."""
    a = _arr(a)
    if a.dtype.kind != "f":
        return a
    if decimals == 0:
        return Array(a._raw.unary("round"))
    f = 10.0 ** decimals
    return Array((a * f)._raw.unary("round")) / f


around = round


def fmod(x, y) -> Array:
    """Remainder with the sign of the dividend (C ``fmod``)."""
    return binary("rem", x, y)


def mod(x, y) -> Array:
    """Remainder with the sign of the divisor (numpy ``mod`` / Python ``%``)."""
    r = binary("rem", x, y)
    yy = _arr(y) if not _is_scalar(y) else y
    flip = (r != 0) & ((r < 0) != (yy < 0 if isinstance(yy, Array) else bool(yy < 0)))
    return where(flip, r + y, r)


remainder = mod


def floor_divide(x, y) -> Array:
    """Division rounded toward -inf."""
    xa = _arr(x) if not _is_scalar(x) else x
    if (isinstance(xa, Array) and xa.dtype.kind == "f") or isinstance(x, float) or (
            isinstance(y, Array) and y.dtype.kind == "f") or isinstance(y, float):
        return floor(divide(x, y))
    q = binary("div_promoted", x, y)
    r = binary("rem", x, y)
    yy = y if _is_scalar(y) else _arr(y)
    neg = (r < 0) != (yy < 0 if isinstance(yy, Array) else bool(yy < 0))
    return where((r != 0) & neg, q - 1, q)


def isnan(x) -> Array:
    x = _arr(x)
    if x.dtype.kind != "f":
        from .creation import zeros_like
        return zeros_like(x, dtype=bool)
    return x != x


def isinf(x) -> Array:
    x = _arr(x)
    if x.dtype.kind != "f":
        return isnan(x)
    return absolute(x) == float("inf")


def isposinf(x) -> Array:
    return _arr(x) == float("inf")


def isneginf(x) -> Array:
    return _arr(x) == float("-inf")


def signbit(x) -> Array:
    """True where the sign bit is set (so for -0.0 and negative NaNs too)."""
    x = _float(x)
    if x.dtype == np.float32:
        return (Array(x._raw.bitcast("uint32")) >> 31) == 1
    # No 64-bit integers to bitcast to: -0.0 is told apart by the sign of 1 / x.
    return (x < 0) | ((x == 0) & (1.0 / where(x == 0, x, 1.0) < 0))


def nan_to_num(x, copy: bool = True, nan: float = 0.0, posinf=None, neginf=None) -> Array:
    """NaN to ``nan``, +inf to ``posinf`` (default: the largest finite value), -inf to
    ``neginf`` (default: the most negative finite value)."""
    x = _arr(x)
    if x.dtype.kind != "f":
        return x
    info = np.finfo(x.dtype)
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    out = where(isnan(x), nan, x)
    out = where(isposinf(out), hi, out)
    return where(isneginf(out), lo, out)


def hypot(x, y) -> Array:
    """``sqrt(x**2 + y**2)`` without overflow; gradient (0.5, 0.5) at (0, 0) as JAX."""
    x, y = _float(x), _arr(y)
    if y.dtype.kind != "f":
        y = y.astype(x.dtype)
    a, b = absolute(x), absolute(y)
    hi, lo = maximum(a, b), minimum(a, b)
    zero = hi == 0
    safe = where(zero, 1.0, hi)
    r = where(zero, hi, hi * sqrt(1.0 + square(lo / safe)))
    return where(isposinf(a) | isposinf(b), float("inf"), r)


def _logaddexp_value(x, y) -> Array:
    amax = maximum(x, y)
    delta = x - y
    return where(isnan(delta), x + y, amax + log1p(exp(-absolute(delta))))


def _replace_posinf(x: Array) -> Array:
    return where(isposinf(x), 0.0, x)


def _logaddexp_rule(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = _logaddexp_value(x, y)
    o = _replace_posinf(out)
    return out, tx * exp(_replace_posinf(x) - o) + ty * exp(_replace_posinf(y) - o)


_logaddexp = None


def logaddexp(x, y) -> Array:
    """``log(exp(x) + exp(y))`` without overflow. Its derivative is JAX's custom rule
    ``exp(x - out)``, ``exp(y - out)`` (so 0.5 each at ties; NaN at (-inf, -inf))."""
    global _logaddexp
    if _logaddexp is None:
        from ..api import custom_jvp
        _logaddexp = custom_jvp(_logaddexp_value)
        _logaddexp.defjvp(_logaddexp_rule)
    x, y = _float(x), _arr(y)
    if y.dtype != x.dtype:
        from .. import dtypes as _dt
        d = _dt.result_type(x.dtype, y.dtype)
        x, y = x.astype(d), y.astype(d)
    from .shape import broadcast_arrays
    x, y = broadcast_arrays(x, y)
    return _logaddexp(x, y)


def sigmoid(x) -> Array:
    return Array(_float(x)._raw.unary("logistic"))


def erf(x) -> Array:
    return Array(_float(x)._raw.unary("erf"))


def erfc(x) -> Array:
    return Array(_float(x)._raw.unary("erfc"))


def deg2rad(x) -> Array:
    return _float(x) * float(np.pi / 180.0)


def rad2deg(x) -> Array:
    return _float(x) * float(180.0 / np.pi)


def sinc(x) -> Array:
    x = _float(x)
    zero = x == 0
    px = float(np.pi) * where(zero, 1.0, x)
    return where(zero, 1.0, sin(px) / px)


def copysign(x, y) -> Array:
    x = _float(x)
    return where(signbit(_arr(y).astype(x.dtype)), -absolute(x), absolute(x))


def isclose(a, b, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Array:
    a, b = _float(a), _arr(b)
    close = absolute(a - b) <= atol + rtol * absolute(b)
    close = close | (a == b)
    if equal_nan:
        close = close | (isnan(a) & isnan(b))
    return close


def allclose(a, b, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Array:
    from .reductions import all as all_
    return all_(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a, b) -> bool:
    a, b = _arr(a), _arr(b)
    if a.shape != b.shape:
        return False
    from .reductions import all as all_
    return bool(all_(a == b))




def widen_for_python_float(x, y):
    """With x64 on, an integer or bool array meeting a Python float becomes float64 first:
    the core promotes ``int32 * 0.1`` to float32, JAX with x64 to float64."""
    if _dt.default_float() != np.float64:
        return x, y
    if isinstance(x, Array) and x.dtype.kind in "iub" and _dt.is_python_float(y):
        return x.astype(np.float64), y
    if isinstance(y, Array) and y.dtype.kind in "iub" and _dt.is_python_float(x):
        return x, y.astype(np.float64)
    return x, y
