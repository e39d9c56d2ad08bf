"""``lightning.pytorch.utilities.imports``' path: which optional packages and versions this environment has.

The flags live in :mod:`accelplug._optional`.

Lightning keeps these names private, so they are re-exported by name (``as``), not listed in ``__all__``.
"""

from __future__ import annotations

from .._optional import _OMEGACONF_AVAILABLE as _OMEGACONF_AVAILABLE
from .._optional import _PYTHON_GREATER_EQUAL_3_11_0 as _PYTHON_GREATER_EQUAL_3_11_0
from .._optional import _RICH_AVAILABLE as _RICH_AVAILABLE
from .._optional import _TORCH_EQUAL_2_8 as _TORCH_EQUAL_2_8
from .._optional import _TORCH_EQUAL_2_9 as _TORCH_EQUAL_2_9
from .._optional import _TORCH_GREATER_EQUAL_2_6 as _TORCH_GREATER_EQUAL_2_6
from .._optional import _TORCH_GREATER_EQUAL_2_8 as _TORCH_GREATER_EQUAL_2_8
from .._optional import _TORCHMETRICS_GREATER_EQUAL_0_8_0 as _TORCHMETRICS_GREATER_EQUAL_0_8_0
from .._optional import _TORCHMETRICS_GREATER_EQUAL_0_9_1 as _TORCHMETRICS_GREATER_EQUAL_0_9_1
from .._optional import _TORCHMETRICS_GREATER_EQUAL_0_11 as _TORCHMETRICS_GREATER_EQUAL_0_11
from .._optional import _TORCHMETRICS_GREATER_EQUAL_1_0_0 as _TORCHMETRICS_GREATER_EQUAL_1_0_0
from .._optional import _TORCHVISION_AVAILABLE as _TORCHVISION_AVAILABLE
from .._optional import _try_import_module as _try_import_module

__all__: list[str] = []  # private names, as in Lightning: reached by explicit import only
