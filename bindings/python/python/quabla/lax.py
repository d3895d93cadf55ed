"""``quabla.lax``: structured control flow and a few primitives, as ``jax.lax``."""

from ._src.control_flow import cond, fori_loop, scan, switch, while_loop
from ._src.api import stop_gradient
from ._src.numpy.products import dot_general
from ._src.numpy.creation import iota
from ._src.lax_scans import associative_scan, map  # noqa: A004 - lax's name
from ._src.numpy.sorting import lax_sort as sort, sort_key_val, top_k
from ._src.lax_conv import (
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated,
    conv_general_dilated_local, conv_general_dilated_patches, conv_transpose,
    conv_with_general_padding,
)
from ._src.lax_gather import (
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather, scatter,
    scatter_add, scatter_apply, scatter_max, scatter_min, scatter_mul, scatter_sub,
)
from ._src.lax_windows import padtype_to_pads, reduce, reduce_window
from ._src.random_gamma_grad import igamma_grad_a, random_gamma_grad
from ._src.lax_implicit import custom_linear_solve, custom_root
from ._src.sharding import with_sharding_constraint
from ._src.lax_assorted import *  # noqa: F401,F403
from ._src.lax_assorted import __all__ as _assorted
from ._src.lax_collectives import *  # noqa: F401,F403  (over named vmap axes)
from ._src.lax_collectives import __all__ as _collectives
from ._src.lax_shape_rules import *  # noqa: F401,F403  (output shapes of convs, windows)
from ._src.lax_shape_rules import __all__ as _shape_rules
from ._src.lax_ops import *  # noqa: F401,F403,E402  (lax's array functions)
from ._src.lax_ops import __all__ as _ops
from ._src.lax_more import *  # noqa: F401,F403,E402  (lax's reductions, scans, comparisons)
from ._src.lax_more import __all__ as _more

__all__ = ["cond", "switch", "while_loop", "fori_loop", "scan", "stop_gradient", "dot_general",
           "iota", "associative_scan", "map", "sort", "sort_key_val", "top_k",
           "ConvDimensionNumbers", "conv", "conv_dimension_numbers", "conv_general_dilated",
           "conv_general_dilated_patches", "conv_general_dilated_local",
           "conv_transpose", "conv_with_general_padding", "GatherDimensionNumbers",
           "GatherScatterMode", "ScatterDimensionNumbers", "gather", "scatter", "scatter_add",
           "scatter_apply", "scatter_max", "scatter_min", "scatter_mul", "scatter_sub",
           "padtype_to_pads", "reduce", "reduce_window", "igamma_grad_a",
           "random_gamma_grad", "custom_linear_solve", "custom_root",
           "with_sharding_constraint"]
__all__ += list(_ops) + list(_more) + list(_shape_rules) + list(_assorted) + list(_collectives)
