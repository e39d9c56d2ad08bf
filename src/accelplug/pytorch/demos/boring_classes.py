"""``lightning.pytorch.demos.boring_classes``'s path: ``accelplug.demos.boring_classes``, the same objects."""

from __future__ import annotations

from ...demos.boring_classes import *  # noqa: F403 - the mirror follows whatever the module exports
from ...demos.boring_classes import __all__ as __all__
