"""``lightning.pytorch.callbacks.spike``'s path: the same objects as :mod:`accelplug.callbacks.spike`."""

from __future__ import annotations

from ...callbacks.spike import *  # noqa: F403 - the same names
from ...callbacks.spike import __all__ as __all__
