"""``lightning.pytorch.utilities.combined_loader``'s path: ``accelplug.utilities.combined_loader``, the same objects."""

from __future__ import annotations

from ...utilities.combined_loader import *  # noqa: F403 - the mirror follows whatever the module exports
from ...utilities.combined_loader import __all__ as __all__
