"""``lightning.pytorch.utilities.memory``'s path: accelplug's own, the same objects."""

from __future__ import annotations

from ...utilities.memory import *  # noqa: F403 - the mirror follows accelplug.utilities.memory
from ...utilities.memory import __all__ as __all__
