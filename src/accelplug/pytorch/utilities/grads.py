"""``lightning.pytorch.utilities.grads``'s path: ``accelplug.utilities.grads``, the same objects."""

from __future__ import annotations

from ...utilities.grads import *  # noqa: F403 - the mirror follows whatever the module exports
from ...utilities.grads import __all__ as __all__
