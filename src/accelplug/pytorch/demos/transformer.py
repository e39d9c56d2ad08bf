"""``lightning.pytorch.demos.transformer``'s path: ``accelplug.demos.transformer``, the same objects."""

from __future__ import annotations

from ...demos.transformer import *  # noqa: F403 - the mirror follows whatever the module exports
from ...demos.transformer import __all__ as __all__
