"""``quabla.ad_checkpoint``, as ``jax.ad_checkpoint``: ``checkpoint`` (remat),
``checkpoint_name`` and ``checkpoint_policies``.

>>> from quabla.ad_checkpoint import checkpoint, checkpoint_name, checkpoint_policies
"""

from ._src.api import checkpoint
from ._src.checkpoint_policies import checkpoint_name, checkpoint_policies

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies"]
