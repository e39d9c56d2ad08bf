"""``lightning.pytorch.callbacks.pruning``'s path: the same objects as :mod:`accelplug.callbacks.pruning`."""

from __future__ import annotations

from ...callbacks.pruning import *  # noqa: F403 - the same names
from ...callbacks.pruning import __all__ as __all__
