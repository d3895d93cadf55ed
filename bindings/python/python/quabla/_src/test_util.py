"""``check_grads``: a function's JVP against central differences and its VJP against the
JVP by inner products, to any order, as ``jax.test_util.check_grads``."""

from __future__ import annotations

from functools import partial
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .array import Array
from .numpy.creation import asarray
from .tree_util import tree_leaves, tree_map

EPS = 1e-4
# JAX's default_gradient_tolerance.
_TOLERANCE = {np.dtype(np.float32): 1e-2, np.dtype(np.float64): 1e-5}


def _tol(x, given: Optional[float]) -> float:
    if given is not None:
        return given
    return _TOLERANCE.get(np.asarray(x).dtype, 1e-5)


def _rand_like(rng: np.random.RandomState, x) -> Any:
    a = x if isinstance(x, Array) else asarray(x)
    return asarray(np.asarray(rng.randn(*a.shape)).astype(a.dtype))


def _check_close(xs, ys, atol, rtol, err_msg: str) -> None:
    def close(x, y):
        x, y = np.asarray(x), np.asarray(y)
        np.testing.assert_allclose(x, y, rtol=_tol(x, rtol), atol=_tol(x, atol),
                                   err_msg=err_msg)
    tree_map(close, xs, ys)


def numerical_jvp(f: Callable, primals: Sequence, tangents: Sequence, eps: float = EPS):
    """``(f(x + eps t) - f(x - eps t)) / (2 eps)``, leaf by leaf."""
    pos = f(*tree_map(lambda x, t: x + eps * t, tuple(primals), tuple(tangents)))
    neg = f(*tree_map(lambda x, t: x - eps * t, tuple(primals), tuple(tangents)))
    return tree_map(lambda a, b: (a - b) * (0.5 / eps), pos, neg)


def _inner(xs, ys):
    return sum(float(np.vdot(np.asarray(x), np.asarray(y)))
               for x, y in zip(tree_leaves(xs), tree_leaves(ys)))


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence, atol=None, rtol=None,
              eps: float = EPS, err_msg: str = "") -> None:
    """``f_jvp(args, tangents)`` against ``f`` and central differences."""
    rng = np.random.RandomState(0)
    tangent = tree_map(partial(_rand_like, rng), tuple(args))
    v_out, t_out = f_jvp(tuple(args), tangent)
    _check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    _check_close(t_out, numerical_jvp(f, args, tangent, eps), atol, rtol,
                 f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence, atol=None, rtol=None,
              eps: float = EPS, err_msg: str = "") -> None:
    """``f_vjp(*args)`` against ``f``, and ``<t, vjp(c)> == <jvp(t), c>`` with the JVP by
    central differences."""
    rng = np.random.RandomState(0)
    v_out, vjp_fun = f_vjp(*args)
    _check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    tangent = tree_map(partial(_rand_like, rng), tuple(args))
    tangent_out = numerical_jvp(f, args, tangent, eps)
    cotangent = tree_map(partial(_rand_like, rng), v_out)
    cotangent_out = vjp_fun(cotangent)
    ip, ip_expected = _inner(tangent, cotangent_out), _inner(tangent_out, cotangent)
    leaf = tree_leaves(v_out)[0]
    _check_close(np.asarray(ip, np.asarray(leaf).dtype),
                 np.asarray(ip_expected, np.asarray(leaf).dtype), atol, rtol,
                 f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def check_grads(f: Callable, args: Sequence, order: int, modes=("fwd", "rev"),
                atol: Optional[float] = None, rtol: Optional[float] = None,
                eps: Optional[float] = None) -> None:
    """Checks ``f``'s derivatives at ``args`` up to ``order``: forward mode against central
    differences, reverse mode by ``<t, vjp(c)> == <jvp(t), c>``; higher orders check the
    JVP and VJP functions themselves. Raises AssertionError naming what disagreed.

    >>> check_grads(qnp.sin, (qnp.array(0.5),), order=2)
    """
    from .api import jvp, vjp
    if order < 1:
        raise ValueError(f"check_grads: order must be at least 1, got {order}")
    bad = set(modes) - {"fwd", "rev"}
    if bad:
        raise ValueError(f"check_grads: modes are 'fwd' and 'rev', got {sorted(bad)}")
    eps = eps or EPS

    def check(fun, fargs, k: int, err_msg: str = "") -> None:
        if "fwd" in modes:
            msg = f"JVP of {err_msg}" if err_msg else "JVP"
            check_jvp(fun, partial(jvp, fun), fargs, atol, rtol, eps, msg)
            if k > 1:
                check(partial(jvp, fun), (tuple(fargs), tuple(fargs)), k - 1, msg)
        if "rev" in modes:
            msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_vjp(fun, partial(vjp, fun), fargs, atol, rtol, eps, msg)
            if k > 1:
                def f_vjp(*a):
                    out, pullback = vjp(fun, *a)
                    return pullback(out)
                check(f_vjp, fargs, k - 1, msg)

    check(f, tuple(args), order)
