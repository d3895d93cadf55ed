"""``jax.checkpoint_policies`` and ``jax.ad_checkpoint.checkpoint_name``: a policy chooses
which values a checkpointed function keeps for the backward pass and which it recomputes.
It never changes a value or a gradient, only memory against time, so Quabla accepts every
JAX policy: ``everything_saveable`` keeps everything (no recomputation), every other one
recomputes everything inside the checkpoint (the most memory-saving choice; Quabla's
checkpoint does not keep a chosen subset such as the matrix products)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Callable


class Policy:
    """A named JAX checkpoint policy (JAX's are callables over primitives; Quabla reads
    only which one it is)."""

    def __init__(self, name: str, keeps_everything: bool = False):
        self.name = name
        self.keeps_everything = keeps_everything

    def __repr__(self) -> str:
        return f"checkpoint_policies.{self.name}"


def _names(kind: str) -> Callable[..., Policy]:
    def policy(*names: str) -> Policy:
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"{kind} takes names (strings), got {names!r}")
        return Policy(f"{kind}{names!r}")
    policy.__name__ = kind
    return policy


def _both(a: Policy, b: Policy) -> Policy:
    return Policy(f"save_from_both_policies({a!r}, {b!r})",
                  a.keeps_everything or b.keeps_everything)


def _offload(*args: Any, **kwargs: Any) -> Policy:
    # Offloading to host memory: values are recomputed here instead.
    return Policy("offload_dot_with_no_batch_dims")


checkpoint_policies = SimpleNamespace(
    everything_saveable=Policy("everything_saveable", keeps_everything=True),
    nothing_saveable=Policy("nothing_saveable"),
    dots_saveable=Policy("dots_saveable"),
    checkpoint_dots=Policy("checkpoint_dots"),
    dots_with_no_batch_dims_saveable=Policy("dots_with_no_batch_dims_saveable"),
    checkpoint_dots_with_no_batch_dims=Policy("checkpoint_dots_with_no_batch_dims"),
    save_anything_except_these_names=_names("save_anything_except_these_names"),
    save_any_names_but_these=_names("save_any_names_but_these"),
    save_only_these_names=_names("save_only_these_names"),
    save_and_offload_only_these_names=lambda **kw: Policy(
        "save_and_offload_only_these_names"),
    save_from_both_policies=_both,
    offload_dot_with_no_batch_dims=_offload,
)


def checkpoint_name(x: Any, name: str) -> Any:
    """``x``, named for the policies that save values by name (``save_only_these_names``):
    the name changes no value.

    >>> checkpoint_name(3.0, "h")
    3.0
    """
    if not isinstance(name, str):
        raise TypeError(f"checkpoint_name: the name must be a string, got {type(name).__name__}")
    return x
