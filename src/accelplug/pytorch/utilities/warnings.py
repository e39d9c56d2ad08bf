"""``lightning.pytorch.utilities.warnings``'s path: ``accelplug.utilities.warnings``, the same objects."""

from __future__ import annotations

from ...utilities.warnings import *  # noqa: F403 - the mirror follows whatever the module exports
from ...utilities.warnings import __all__ as __all__
