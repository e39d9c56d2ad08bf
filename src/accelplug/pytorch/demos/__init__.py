"""``lightning.pytorch.demos``'s path: accelplug's demo models and datasets, the same objects."""

from __future__ import annotations

from ...demos import *  # noqa: F403 - the mirror follows whatever accelplug.demos exports
from ...demos import __all__ as __all__
