"""``lightning.pytorch.callbacks.gradient_accumulation_scheduler``'s path: the objects of
:mod:`accelplug.callbacks.gradient_accumulation_scheduler`."""

from __future__ import annotations

from ...callbacks.gradient_accumulation_scheduler import *  # noqa: F403 - the same names
from ...callbacks.gradient_accumulation_scheduler import __all__ as __all__
