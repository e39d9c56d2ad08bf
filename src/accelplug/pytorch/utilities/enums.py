"""``lightning.pytorch.utilities.enums``'s path: ``accelplug.utilities.enums``, the same objects."""

from __future__ import annotations

from ...trainer.options.enums import *  # noqa: F403 - the mirror follows whatever the module exports
from ...trainer.options.enums import __all__ as __all__
