"""``lightning.pytorch.callbacks``'s path: every name of ``accelplug.callbacks``, the same objects."""

from __future__ import annotations

from ...callbacks import *  # noqa: F403 - the mirror follows whatever accelplug.callbacks exports
from ...callbacks import __all__ as __all__
