"""``lightning.pytorch.utilities.types``'s path: ``accelplug.utilities.types``, the same objects."""

from __future__ import annotations

from ...core.types import *  # noqa: F403 - the mirror follows whatever the module exports
from ...core.types import (  # noqa: F401 - Lightning's underscored aliases, which libraries import
    _EVALUATE_OUTPUT,
    _METRIC,
    _NUMBER,
    _PREDICT_OUTPUT,
)
from ...core.types import __all__ as __all__
