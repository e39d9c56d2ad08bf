"""``lightning.pytorch.demos.lstm``'s path: ``accelplug.demos.lstm``, the same objects."""

from __future__ import annotations

from ...demos.lstm import *  # noqa: F403 - the mirror follows whatever the module exports
from ...demos.lstm import __all__ as __all__
