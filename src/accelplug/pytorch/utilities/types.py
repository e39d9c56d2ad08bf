"""``lightning.pytorch.utilities.types``'s path: ``accelplug.utilities.types``, the same objects."""

from __future__ import annotations

from ...utilities.types import *  # noqa: F403 - the mirror follows whatever the module exports
from ...utilities.types import __all__ as __all__
