"""``lightning.pytorch.utilities.rank_zero``'s path: ``accelplug.utilities.rank_zero``, the same objects."""

from __future__ import annotations

from ...utilities.rank_zero import *  # noqa: F403 - the mirror follows whatever the module exports
from ...utilities.rank_zero import __all__ as __all__
