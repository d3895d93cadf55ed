"""``jax.nn.dot_product_attention`` (the ``'xla'`` implementation): scaled dot-product
attention over ``(batch, sequence, heads, head_dim)`` arrays, with bias, boolean mask, causal
masking, sequence lengths, a local window, and grouped-query heads (fewer key/value heads
than query heads, each shared by a group)."""

from __future__ import annotations

import math
from typing import Optional, Tuple, Union

import numpy as np

from ..array import Array
from ..numpy import elementwise as el
from ..numpy.creation import arange, asarray

__all__ = ["dot_product_attention"]


def _batched(x, name: str) -> Tuple[Array, bool]:
    x = asarray(x)
    if x.ndim == 3:
        return x[None], True
    if x.ndim != 4:
        raise ValueError(f"dot_product_attention: {name} must be (batch, length, heads, "
                         f"head_dim) or (length, heads, head_dim), got shape {x.shape}")
    return x, False


def dot_product_attention(query, key, value, bias=None, mask=None, *,
                          scale: Optional[float] = None, is_causal: bool = False,
                          query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size: Union[int, Tuple[int, int], None] = None,
                          implementation: Optional[str] = None,
                          return_residual: bool = False) -> Array:
    """``softmax(q k^T * scale + bias, masked) v`` per head, as
    ``jax.nn.dot_product_attention``: ``query`` ``(B, T, N, H)``, ``key``/``value``
    ``(B, S, K, H)`` with ``N`` a multiple of ``K`` (grouped-query attention; the batch axis
    may be left out). ``scale`` defaults to ``1/sqrt(H)``; ``bias`` and ``mask`` (True
    keeps) broadcast to ``(B, N, T, S)``; ``is_causal``, ``query_seq_lengths`` /
    ``key_value_seq_lengths`` (``(B,)``) and ``local_window_size`` (``w`` or ``(left,
    right)``) mask further. A query row with every key masked gives zeros, not NaN. The
    softmax runs in the inputs' precision (JAX's rounds float64 logits to float32).

    >>> q = qnp.ones((4, 2, 8))  # (T, N, H)
    >>> dot_product_attention(q, q, q).shape
    (4, 2, 8)
    """
    from .functions import softmax
    from ..numpy.products import einsum
    from ..numpy.shape import broadcast_to, repeat
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: implementation {implementation!r} is not "
                         "available here; use None or 'xla'")
    if return_residual:
        raise NotImplementedError("dot_product_attention: return_residual=True is not supported")
    q, unbatched = _batched(query, "query")
    k, _ = _batched(key, "key")
    v, _ = _batched(value, "value")
    b, t, n, h = q.shape
    s, kv_heads = k.shape[1], k.shape[2]
    if k.shape != v.shape or k.shape[0] != b or k.shape[3] != h:
        raise ValueError(f"dot_product_attention: key {k.shape} and value {v.shape} must match "
                         f"each other and query {q.shape} in batch and head_dim")
    if n % kv_heads:
        raise ValueError(f"dot_product_attention: {n} query heads are not a multiple of "
                         f"{kv_heads} key/value heads")
    if kv_heads != n:
        k, v = repeat(k, n // kv_heads, axis=2), repeat(v, n // kv_heads, axis=2)
    scale = 1.0 / math.sqrt(h) if scale is None else float(scale)
    logits = einsum("btnh,bsnh->bnts", q, k) * scale
    if bias is not None:
        logits = logits + asarray(bias).astype(logits.dtype)
    keep = _mask(b, n, t, s, mask, is_causal, query_seq_lengths, key_value_seq_lengths,
                 local_window_size)
    if keep is not None:
        keep = broadcast_to(keep, logits.shape)
        # A large negative value rather than -inf keeps fully masked rows finite; they are
        # zeroed after the softmax.
        logits = el.where(keep, logits, float(np.finfo(np.dtype(str(logits.dtype))).min))
    probs = softmax(logits, axis=-1)
    if keep is not None:
        from ..numpy.reductions import any as any_
        probs = el.where(any_(keep, axis=-1, keepdims=True), probs, 0.0)
    out = einsum("bnts,bsnh->btnh", probs.astype(v.dtype), v)
    return out[0] if unbatched else out


def _mask(b, n, t, s, mask, is_causal, q_lengths, kv_lengths, window) -> Optional[Array]:
    """The positions kept, broadcastable to ``(b, n, t, s)``; None when nothing is masked."""
    keep: Optional[Array] = None

    def both(m: Array) -> Array:
        return m if keep is None else (keep & m)

    if mask is not None:
        m = asarray(mask)
        if m.dtype != np.bool_:
            raise TypeError(f"dot_product_attention: mask must be boolean, got {m.dtype}")
        keep = both(m)
    i = arange(t).reshape(t, 1)
    j = arange(s).reshape(1, s)
    if is_causal:
        keep = both(j <= i)
    if window is not None:
        left, right = (window, window) if isinstance(window, int) else window
        keep = both((j >= i - int(left)) & (j <= i + int(right)))
    if q_lengths is not None:
        ql = asarray(q_lengths).reshape(b, 1, 1, 1)
        keep = both(i.reshape(1, 1, t, 1) < ql)
    if kv_lengths is not None:
        kl = asarray(kv_lengths).reshape(b, 1, 1, 1)
        keep = both(j.reshape(1, 1, 1, s) < kl)
    return keep
