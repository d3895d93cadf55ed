"""``quabla.Array``: operators, indexing, ``.at`` updates and conversion to numpy, over the
Rust ``RawArray`` that holds the core array (concrete or traced)."""

from __future__ import annotations

import numbers
import operator
from typing import TYPE_CHECKING, Optional, Tuple

import numpy as np

from .. import _quabla
from . import dtypes as _dt
from . import tree_util

RawArray = _quabla.RawArray

if TYPE_CHECKING:
    from .runtime import Device


class Array:
    """An n-dimensional array on a device, or a traced value inside a transformation.

    >>> import quabla.numpy as qnp
    >>> x = qnp.arange(3.0)
    >>> (x * 2 + 1).tolist()
    [1.0, 3.0, 5.0]
    """

    __slots__ = ("_raw", "__weakref__")
    __array_priority__ = 100

    def __init__(self, raw: RawArray):
        if not isinstance(raw, RawArray):
            raise TypeError("construct arrays with quabla.numpy.asarray / array")
        self._raw = raw

    # ---- metadata -------------------------------------------------------------------
    @property
    def shape(self) -> Tuple[int, ...]:
        return tuple(self._raw.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._raw.dtype)

    @property
    def ndim(self) -> int:
        return len(self._raw.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self._raw.shape:
            n *= d
        return n

    @property
    def device(self) -> "Device":
        from .runtime import Device
        return Device(self._raw.platform)

    @property
    def sharding(self):
        """Where the array lives, as ``jax.Array.sharding``: its one device."""
        from .sharding import SingleDeviceSharding
        return SingleDeviceSharding(self.device)

    @property
    def is_traced(self) -> bool:
        return self._raw.is_traced

    @property
    def T(self) -> "Array":
        return self.transpose()

    @property
    def at(self) -> "_IndexUpdateHelper":
        """Functional updates: ``x.at[idx].set(v)`` / ``add`` / ``mul`` / ``min`` / ``max``."""
        return _IndexUpdateHelper(self)

    # ---- conversion -----------------------------------------------------------------
    def __array_namespace__(self, *, api_version: Optional[str] = None):
        """``quabla.numpy``, the Array API namespace of these arrays (version 2024.12)."""
        if api_version not in (None, "2023.12", "2024.12"):
            raise ValueError(f"unsupported Array API version {api_version!r}; quabla.numpy "
                             "implements 2024.12")
        from .. import numpy as namespace
        return namespace

    def __array__(self, dtype=None, copy=None):
        # The downloaded bytes, viewed without a second copy: read-only, as numpy views of
        # JAX arrays are. `np.array(x)` (copy=True) and a dtype change copy, and write.
        try:
            data = self._raw.to_bytes()
        except _quabla.ConcretizationTypeError as e:
            from ..errors import TracerArrayConversionError
            raise TracerArrayConversionError(str(e)) from None
        a = np.frombuffer(data, dtype=self.dtype).reshape(self.shape)
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        # A DLPack 1.0 consumer (numpy 2.1+, PyTorch, JAX) gets the array's own memory,
        # marked read-only, when its plugin exports host memory (the CPU plugin's): no copy.
        # DLPack before 1.0 cannot say read-only, so older consumers get a writable copy
        # (numpy's DLPack of the downloaded bytes), as do other devices' arrays.
        wants_cpu = dl_device is None or tuple(dl_device) == (1, 0)
        if max_version is not None and tuple(max_version) >= (1, 0) and not copy and wants_cpu:
            capsule = _quabla.dlpack_versioned(self._raw)
            if capsule is not None:
                return capsule
        if copy is False:
            raise BufferError(
                "this array can be exported without a copy only to a DLPack 1.0 consumer, and "
                "only when its backend exports host memory (the CPU backend does); pass "
                "copy=None")
        host = self.__array__(copy=True)
        if max_version is None:
            return host.__dlpack__(stream=stream)
        # A versioned capsule of the (writable) copy, as numpy 2.1+ makes one.
        return host.__dlpack__(stream=stream, max_version=max_version, copy=copy)

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU

    def block_until_ready(self) -> "Array":
        self._raw.block_until_ready()
        return self

    def copy_to_host_async(self) -> None:
        """Starts copying the value to the host and returns at once, as JAX's does: the
        next read (``np.asarray(x)``, ``x.item()``) takes these bytes, so a loop can start
        the copy of one step's loss and queue the next step before reading it.

        >>> x = quabla.numpy.arange(3.0)
        >>> x.copy_to_host_async()
        >>> np.asarray(x)
        array([0., 1., 2.], dtype=float32)
        """
        # A traced value has nothing to copy yet (as `block_until_ready` has nothing to wait
        # for); JAX's tracers raise AttributeError here.
        if not self.is_traced:
            self._raw.copy_to_host_async()

    def item(self):
        return np.asarray(self).item()

    def tolist(self):
        return np.asarray(self).tolist()

    def _concrete(self, what: str, error: type = _quabla.ConcretizationTypeError):
        if self.is_traced:
            # A transformation called outside jit (grad, jvp, jacfwd, ...) knows the primal
            # values, as JAX's does: Python control flow on them works.
            try:
                return np.asarray(self)
            except _quabla.ConcretizationTypeError:
                pass
            from .flat import tracing
            where = f" while tracing `{tracing[-1]}`" if tracing else ""
            raise error(
                f"{what} of a traced array{where}: its value is not known while tracing. Use "
                "quabla.lax.cond / while_loop / fori_loop for control flow on traced values, "
                "or mark the argument static (jit(static_argnums=...)).")
        return np.asarray(self)

    def __bool__(self) -> bool:
        from ..errors import TracerBoolConversionError
        return bool(self._concrete("bool()", TracerBoolConversionError))

    def __float__(self) -> float:
        return float(self._concrete("float()"))

    def __int__(self) -> int:
        from ..errors import TracerIntegerConversionError
        return int(self._concrete("int()", TracerIntegerConversionError))

    def __index__(self) -> int:
        if self.dtype.kind not in "iu":
            raise TypeError("only integer arrays can be used as Python indices")
        from ..errors import TracerIntegerConversionError
        return int(self._concrete("__index__", TracerIntegerConversionError))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __repr__(self) -> str:
        if self.is_traced:
            return f"Traced<{self.dtype}{list(self.shape)}>"
        body = np.array2string(np.asarray(self), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype})"

    def __str__(self) -> str:
        """The values as numpy prints them (``print(x)``), as JAX does; ``repr`` keeps the
        ``Array(..., dtype=...)`` form. A traced array shows its type."""
        if self.is_traced:
            return repr(self)
        return str(np.asarray(self))

    def __format__(self, spec: str) -> str:
        """``format(x, ".3e")`` and f-strings: a 0-d array formats as its scalar, a larger
        one as its numpy array (which takes an empty spec only), as JAX does. A traced array
        formats its type with an empty spec and raises TypeError with any other."""
        if self.is_traced:
            if spec:
                raise TypeError("unsupported format string passed to a traced Array.__format__"
                                f" ({spec!r}): its value is not known while tracing")
            return repr(self)
        value = np.asarray(self)
        return format(value[()] if value.ndim == 0 else value, spec)

    def __hash__(self):
        raise TypeError("arrays are not hashable")

    def __reduce__(self):
        return (_rebuild, (np.asarray(self),))

    # ---- methods mirroring numpy ----------------------------------------------------
    def astype(self, dtype) -> "Array":
        return Array(self._raw.astype(_dt.SUPPORTED[_dt.canonicalize(dtype, "astype")]))

    def reshape(self, *shape, order: str = "C") -> "Array":
        if order != "C":
            raise NotImplementedError("only C order reshapes are supported")
        if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
            shape = tuple(shape[0])
        return Array(self._raw.reshape([int(d) for d in shape]))

    def transpose(self, *axes) -> "Array":
        if len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        return Array(self._raw.transpose([_axis(a, self.ndim) for a in axes]))

    def ravel(self) -> "Array":
        return self.reshape(-1)

    flatten = ravel

    def __getattr__(self, name: str):
        # Reductions and other numpy methods come from quabla.numpy (x.sum(), x.mean(1), ...).
        if name in _METHODS_FROM_NUMPY:
            from .. import numpy as qnp
            fn = getattr(qnp, name)
            return lambda *a, **k: fn(self, *a, **k)
        raise AttributeError(f"'Array' object has no attribute '{name}'")

    # ---- operators ------------------------------------------------------------------
    def _bin(self, op: str, other, reflected: bool = False) -> "Array":
        if _dt.is_python_float(other) and _dt.default_float() == np.float64 \
                and self.dtype.kind in "iub":
            # x64: `i * 0.1` is float64, as in JAX (the core would make it float32).
            return self.astype(np.float64)._bin(op, other, reflected)
        o = _operand(other)
        if o is NotImplemented:
            return NotImplemented
        return Array(self._raw.binary(op, o, reflected))

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o):
        from .numpy.elementwise import divide
        return divide(self, o)

    def __rtruediv__(self, o):
        from .numpy.elementwise import divide
        return divide(o, self)

    def __pow__(self, o): return _power(self, o)
    def __rpow__(self, o): return _power(o, self)
    def __mod__(self, o):
        from .. import numpy as qnp
        return qnp.mod(self, o)

    def __rmod__(self, o):
        from .. import numpy as qnp
        return qnp.mod(o, self)

    def __floordiv__(self, o):
        from .. import numpy as qnp
        return qnp.floor_divide(self, o)

    def __rfloordiv__(self, o):
        from .. import numpy as qnp
        return qnp.floor_divide(o, self)

    def __matmul__(self, o):
        from .. import numpy as qnp
        return qnp.matmul(self, o)

    def __rmatmul__(self, o):
        from .. import numpy as qnp
        return qnp.matmul(o, self)

    def __and__(self, o): return self._bin("and", o)
    def __rand__(self, o): return self._bin("and", o, True)
    def __or__(self, o): return self._bin("or", o)
    def __ror__(self, o): return self._bin("or", o, True)
    def __xor__(self, o): return self._bin("xor", o)
    def __rxor__(self, o): return self._bin("xor", o, True)
    def __lshift__(self, o): return self._bin("shift_left", o)
    def __rshift__(self, o):
        op = "shift_right_logical" if self.dtype.kind == "u" else "shift_right_arithmetic"
        return self._bin(op, o)

    def __rlshift__(self, o):
        from .. import numpy as qnp
        return qnp.left_shift(o, self)

    def __rrshift__(self, o):
        from .. import numpy as qnp
        return qnp.right_shift(o, self)

    def __lt__(self, o): return self._bin("lt", o)
    def __le__(self, o): return self._bin("le", o)
    def __gt__(self, o): return self._bin("gt", o)
    def __ge__(self, o): return self._bin("ge", o)
    def __eq__(self, o): return self._bin("eq", o)  # type: ignore[override]
    def __ne__(self, o): return self._bin("ne", o)  # type: ignore[override]

    def __neg__(self): return Array(self._raw.unary("neg"))
    def __pos__(self): return self
    def __abs__(self): return Array(self._raw.unary("abs"))

    def __invert__(self):
        if self.dtype == np.bool_:
            return Array(self._raw.unary("logical_not"))
        return Array(self._raw.binary("xor", -1 if self.dtype.kind == "i" else 0xFFFFFFFF))

    # ---- indexing -------------------------------------------------------------------
    def __getitem__(self, idx) -> "Array":
        from .indexing import getitem
        return getitem(self, idx)

    def __setitem__(self, idx, value):
        raise TypeError(
            "Quabla arrays are immutable; use x = x.at[idx].set(value) (or .add, .mul, ...)")


_METHODS_FROM_NUMPY = {
    "sum", "mean", "prod", "max", "min", "any", "all", "var", "std", "argmax", "argmin",
    "cumsum", "cumprod", "squeeze", "clip", "round", "dot", "swapaxes", "repeat", "trace",
    "diagonal", "conj", "conjugate", "nonzero", "sort", "argsort", "searchsorted", "partition",
    "argpartition",
}


tree_util.leaf_types.add(Array)


def _rebuild(a):
    from .. import numpy as qnp
    return qnp.asarray(a)


def _axis(a: int, ndim: int) -> int:
    a = operator.index(a)
    if not -ndim <= a < max(ndim, 1):
        raise ValueError(f"axis {a} is out of bounds for an array of rank {ndim}")
    return a % max(ndim, 1)


def _operand(x):
    """The core's other operand: a RawArray or a weak Python scalar."""
    if isinstance(x, Array):
        return x._raw
    if isinstance(x, (bool, int, float)) and not isinstance(x, np.generic):
        return x
    if isinstance(x, (np.ndarray, np.generic, list, tuple)):
        from .. import numpy as qnp
        return qnp.asarray(x)._raw
    return NotImplemented


def _power(a, b):
    from .. import numpy as qnp
    return qnp.power(a, b)


class _IndexUpdateHelper:
    __slots__ = ("_x",)

    def __init__(self, x: Array):
        self._x = x

    def __getitem__(self, idx) -> "_IndexUpdateRef":
        return _IndexUpdateRef(self._x, idx)


class _IndexUpdateRef:
    """``x.at[idx]``: each method returns a new array (x is unchanged).

    Updates at a repeated index combine in their order, as JAX's on CPU: ``add`` sums them,
    ``mul`` multiplies them, ``min``/``max`` take the extreme, and the last ``set`` wins
    (JAX documents the winner as unspecified). ``mode`` as JAX: updates at out-of-range
    indices are dropped by default (``"drop"``, ``"fill"``, ``"promise_in_bounds"``) or
    clamped onto the edge (``"clip"``); negative indices count from the end.
    """

    __slots__ = ("_x", "_idx")

    def __init__(self, x: Array, idx):
        self._x = x
        self._idx = idx

    def get(self, *, mode=None, fill_value=None) -> Array:
        """``x[idx]``; ``mode="fill"`` (or ``"drop"``) reads ``fill_value`` (default NaN,
        the least signed or largest unsigned integer, True) at out-of-range indices, other
        modes clamp them, as JAX."""
        from .indexing import gather
        return gather(self._x, self._idx, mode, fill_value)

    def set(self, values, *, mode=None) -> Array:
        from .indexing import scatter
        return scatter(self._x, self._idx, values, "set", mode)

    def add(self, values, *, mode=None) -> Array:
        from .indexing import scatter
        return scatter(self._x, self._idx, values, "add", mode)

    def mul(self, values, *, mode=None) -> Array:
        from .indexing import scatter
        return scatter(self._x, self._idx, values, "mul", mode)

    def multiply(self, values, *, mode=None) -> Array:
        return self.mul(values, mode=mode)

    def min(self, values, *, mode=None) -> Array:
        from .indexing import scatter
        return scatter(self._x, self._idx, values, "min", mode)

    def max(self, values, *, mode=None) -> Array:
        from .indexing import scatter
        return scatter(self._x, self._idx, values, "max", mode)

    def divide(self, values, *, mode=None) -> Array:
        """``x[idx] /= values``: ``x`` divided by the product of the updates at each
        position, as JAX's."""
        from .indexing import scatter
        from .numpy.creation import ones_like
        return self._x / scatter(ones_like(self._x), self._idx, values, "mul", mode)

    def power(self, values, *, mode=None) -> Array:
        """``x[idx] **= values``: ``x`` to the power of the product of the updates at each
        position, as JAX's."""
        from .indexing import scatter
        from .numpy.creation import ones_like
        return self._x ** scatter(ones_like(self._x), self._idx, values, "mul", mode)

    def apply(self, func, *, mode=None) -> Array:
        """``func`` (elementwise) applied to ``x`` at ``idx``, once per occurrence of an
        index (a repeated index applies it again), as JAX's; unlike JAX's, differentiable."""
        from .indexing import apply
        return apply(self._x, self._idx, func, mode)
