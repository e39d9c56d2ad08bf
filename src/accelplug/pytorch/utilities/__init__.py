"""``lightning.pytorch.utilities``'s path: every name of ``accelplug.utilities``, the same objects."""

from __future__ import annotations

from ...utilities import *  # noqa: F403 - the mirror follows whatever accelplug.utilities exports
from ...utilities import __all__ as __all__
