"""``lightning.pytorch.utilities.exceptions``'s path: ``accelplug.utilities.exceptions``, the same objects."""

from __future__ import annotations

from ...utilities.exceptions import *  # noqa: F403 - the mirror follows whatever the module exports
from ...utilities.exceptions import __all__ as __all__
