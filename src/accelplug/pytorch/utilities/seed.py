"""``lightning.pytorch.utilities.seed``'s path: ``accelplug.utilities.seed``, the same objects."""

from __future__ import annotations

from ...utilities.seed import *  # noqa: F403 - the mirror follows whatever the module exports
from ...utilities.seed import __all__ as __all__
