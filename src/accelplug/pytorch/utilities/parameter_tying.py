"""``lightning.pytorch.utilities.parameter_tying``'s path: ``accelplug.utilities.parameter_tying``, the same objects."""

from __future__ import annotations

from ...strategies.parameter_tying import *  # noqa: F403 - the mirror follows whatever the module exports
from ...strategies.parameter_tying import __all__ as __all__
