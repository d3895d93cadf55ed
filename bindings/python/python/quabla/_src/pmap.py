"""``pmap``: JAX's per-device map, run as a named ``vmap`` under ``jit`` on one device."""

from typing import Any, Callable, Iterable, Optional, Sequence, Union

from .api import jit, vmap


def _indices(v: Union[int, Iterable[int]]) -> tuple:
    return (v,) if isinstance(v, int) else tuple(v)


def pmap(fun: Callable, axis_name: Optional[str] = None, *, in_axes: Any = 0,
         out_axes: Any = 0, static_broadcasted_argnums: Union[int, Iterable[int]] = (),
         devices: Optional[Sequence[Any]] = None, backend: Optional[str] = None,
         axis_size: Optional[int] = None, donate_argnums: Union[int, Iterable[int]] = ()
         ) -> Callable:
    """``fun`` mapped over the leading axis (``in_axes``/``out_axes`` as ``vmap``'s) with
    the mapped axis named ``axis_name`` for ``lax.psum`` and the other collectives, as
    ``jax.pmap``: compiled once per signature (``static_broadcasted_argnums`` hashed, not
    traced; ``donate_argnums`` given to the computation).

    Quabla maps on one device (``devices``' platform, or ``backend``, else the default):
    the results are what ``pmap`` over that many devices computes, and the axis may be
    longer than the device count, which JAX refuses. Code written as
    ``pmap(f)(x.reshape(local_device_count(), ...))`` runs unchanged.

    >>> import quabla, quabla.numpy as qnp
    >>> f = pmap(lambda x: x * 2 + quabla.lax.psum(x, "i"), axis_name="i")
    >>> f(qnp.ones((1, 3))).tolist()
    [[3.0, 3.0, 3.0]]
    """
    static = _indices(static_broadcasted_argnums)
    platforms = {getattr(d, "platform", d) for d in devices or ()}
    if len(platforms) > 1:
        raise ValueError(f"pmap: devices of one platform are supported, got {sorted(platforms)}")
    device = backend if backend is not None else next(iter(platforms), None)

    def mapped(*args):
        n = len(args)
        fixed = {i % n: args[i % n] for i in static}
        dynamic = [a for i, a in enumerate(args) if i not in fixed]
        axes = in_axes
        if fixed and isinstance(in_axes, (tuple, list)) and len(in_axes) == n:
            axes = type(in_axes)(a for i, a in enumerate(in_axes) if i not in fixed)

        def inner(*dyn):
            it = iter(dyn)
            return fun(*[fixed[i] if i in fixed else next(it) for i in range(n)])
        return vmap(inner, in_axes=axes, out_axes=out_axes, axis_name=axis_name,
                    axis_size=axis_size)(*dynamic)

    return jit(mapped, static_argnums=static, donate_argnums=_indices(donate_argnums),
               device=device)
