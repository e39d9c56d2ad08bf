"""``lightning.pytorch.demos``'s path: the demo models accelplug has (``accelplug.demos``), the same objects."""

from __future__ import annotations

from ..demos import *  # noqa: F403 - the mirror follows whatever accelplug.demos exports
from ..demos import __all__ as __all__
