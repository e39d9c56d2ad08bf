"""``lightning.pytorch.utilities.parsing``'s path: accelplug's own, the same objects."""

from __future__ import annotations

from ...utilities.parsing import *  # noqa: F403 - the mirror follows accelplug.utilities.parsing
from ...utilities.parsing import __all__ as __all__
