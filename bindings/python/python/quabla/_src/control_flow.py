"""``lax`` control flow over pytrees: cond, switch, while_loop, fori_loop, scan.

Functions may close over traced values of an enclosing transformation; the core turns them
into region operands (so they receive gradients).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from .. import _quabla
from .array import Array
from .flat import OutStore, flat_function, flatten_to_raw, to_raw, unflatten_raw
from .tree_util import tree_flatten, tree_unflatten


def _branches_agree(stores, names):
    first = stores[0].tree
    for s, name in zip(stores[1:], names[1:]):
        if s.tree != first:
            raise TypeError(
                f"{names[0]} and {name} must return the same tree structure, got {first} "
                f"and {s.tree}")


def cond(pred, true_fun: Callable, false_fun: Callable, *operands):
    """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``; only the chosen branch
    runs (so a NaN in the other cannot leak into values or gradients)."""
    raws, in_tree = flatten_to_raw(operands)
    st, sf = OutStore(), OutStore()
    outs = _quabla.cond(to_raw(pred), flat_function(true_fun, in_tree, st),
                        flat_function(false_fun, in_tree, sf), raws)
    _branches_agree([st, sf], ["true_fun", "false_fun"])
    return unflatten_raw(st.tree, outs)


def switch(index, branches: Sequence[Callable], *operands):
    """``branches[clamp(index, 0, len - 1)](*operands)``; only that branch runs."""
    branches = list(branches)
    if not branches:
        raise ValueError("switch needs at least one branch")
    raws, in_tree = flatten_to_raw(operands)
    stores = [OutStore() for _ in branches]
    flats = [flat_function(b, in_tree, s) for b, s in zip(branches, stores)]
    outs = _quabla.switch(to_raw(index), flats, raws)
    _branches_agree(stores, [f"branch {i}" for i in range(len(branches))])
    return unflatten_raw(stores[0].tree, outs)


def while_loop(cond_fun: Callable, body_fun: Callable, init_val, max_steps: Optional[int] = None,
               checkpoints: Optional[int] = None):
    """Runs ``body_fun`` while ``cond_fun`` holds. Forward-mode differentiable.

    With ``max_steps`` (a keyword JAX does not have; equinox's checkpointed ``while_loop``
    has it) the loop stops after that many trips at the latest and is reverse-differentiable
    too, at a cost that follows the trips taken, never the bound: the forward pass runs the
    body once a trip; the backward pass runs the trips forward again keeping checkpoints,
    then walks them backward, last first. Without it, reverse mode raises, as in JAX.

    ``checkpoints`` (at least 1; needs ``max_steps``) is how many carries reverse mode may
    keep. ``checkpoints >= max_steps`` keeps every trip's carry. Down to about
    ``2 sqrt(max_steps)`` (the default) it keeps the carry every ``s`` trips and one
    segment of ``s`` carries, ``s`` as long as the budget allows, and recomputes each
    segment before the last from its checkpoint (a loop that ends within ``s`` trips
    recomputes nothing). Smaller budgets follow Griewank's binomial schedule ("revolve")
    over exactly ``checkpoints`` carries, placed once the trip count ``n`` is known: the
    fewest recomputed trips any schedule with ``k`` carries allows,
    ``t n - C(k + t, t - 1)`` with ``t`` the least such that ``C(k + t, t) >= n`` (one carry
    recomputes ``n (n - 1) / 2`` trips). Values, forward-mode results and gradients (bit for
    bit) do not depend on it.
    """
    if max_steps is not None and (not isinstance(max_steps, int) or max_steps < 0):
        raise ValueError(f"while_loop: max_steps must be a non-negative int, got {max_steps!r}")
    if checkpoints is not None and (isinstance(checkpoints, bool) or not isinstance(checkpoints, int)
                                    or checkpoints < 1):
        raise ValueError(f"while_loop: checkpoints must be an int >= 1, got {checkpoints!r}")
    raws, tree = flatten_to_raw(init_val)
    sc, sb = OutStore(), OutStore()
    body = flat_function(body_fun, tree, sb, call=lambda f, a: f(a))

    def checked_body(r):
        out = body(r)
        if sb.tree != tree:
            raise TypeError(f"while_loop: body_fun must return the carry's structure {tree}, "
                            f"got {sb.tree}")
        _same_types("while_loop: body_fun", r, out)
        return out

    cond_flat = flat_function(cond_fun, tree, sc, call=lambda f, a: f(a))
    outs = _quabla.while_loop(cond_flat, checked_body, raws, max_steps, checkpoints)
    return tree_unflatten(tree, [Array(r) for r in outs])


def _same_types(what: str, before, after) -> None:
    for k, (a, b) in enumerate(zip(before, after)):
        if (tuple(a.shape), a.dtype) != (tuple(b.shape), b.dtype):
            raise TypeError(
                f"{what} must keep each carry leaf's shape and dtype: leaf {k} went from "
                f"{a.dtype}{list(a.shape)} to {b.dtype}{list(b.shape)} (cast it with .astype)")


def _bound(b):
    if isinstance(b, Array):
        if not b.is_traced:
            return int(b)
        return b._raw
    return int(b)


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll: Optional[int] = None):
    """``body_fun(i, carry)`` for ``i`` in ``[lower, upper)``. Static bounds make it a scan
    (reverse-mode differentiable); traced bounds a while loop (forward mode only), as JAX."""
    if unroll not in (None, 1):
        raise NotImplementedError("fori_loop: use scan(..., unroll=k) to unroll")
    raws, tree = flatten_to_raw(init_val)

    def body(i_raw, c_raws):
        out = body_fun(Array(i_raw), tree_unflatten(tree, [Array(r) for r in c_raws]))
        leaves, t = tree_flatten(out)
        if t != tree:
            raise TypeError(f"fori_loop: body_fun must return the carry's structure {tree}, "
                            f"got {t}")
        raws_out = [to_raw(x) for x in leaves]
        _same_types("fori_loop: body_fun", c_raws, raws_out)
        return raws_out

    outs = _quabla.fori_loop(_bound(lower), _bound(upper), body, raws)
    return tree_unflatten(tree, [Array(r) for r in outs])


def scan(f: Callable, init, xs: Any = None, length: Optional[int] = None,
         reverse: bool = False, unroll: int = 1):
    """``jax.lax.scan``: ``f(carry, x) -> (carry, y)`` over the leading axis of ``xs``,
    returning ``(final carry, stacked ys)``."""
    c_raws, c_tree = flatten_to_raw(init)
    x_raws, x_tree = flatten_to_raw(xs)
    y_store = OutStore()

    def step(c, x):
        carry = tree_unflatten(c_tree, [Array(r) for r in c])
        xv = tree_unflatten(x_tree, [Array(r) for r in x])
        out = f(carry, xv)
        if not (isinstance(out, tuple) and len(out) == 2):
            raise TypeError("scan: f must return a pair (carry, y)")
        new_c, y = out
        cl, ct = tree_flatten(new_c)
        if ct != c_tree:
            raise TypeError(f"scan: f must return the carry's structure {c_tree}, got {ct}")
        yl, y_store.tree = tree_flatten(y)
        c_out = [to_raw(v) for v in cl]
        _same_types("scan: f", c, c_out)
        return c_out, [to_raw(v) for v in yl]

    if length is not None:
        length = int(length)
    carry, ys = _quabla.scan(step, c_raws, x_raws, length, bool(reverse), int(unroll))
    return (tree_unflatten(c_tree, [Array(r) for r in carry]),
            unflatten_raw(y_store.tree, ys))
