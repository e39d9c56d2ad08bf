"""``lightning.pytorch.utilities.grads``'s path: ``accelplug.utilities.grads``, the same objects."""

from __future__ import annotations

from ...measure.grads import *  # noqa: F403 - the mirror follows whatever the module exports
from ...measure.grads import __all__ as __all__
