"""``lightning.pytorch.plugins.io``'s path: the checkpoint writers (:mod:`accelplug.plugins.io`)."""

from __future__ import annotations

from ...plugins.io import *  # noqa: F403 - the mirror carries exactly accelplug.plugins.io's __all__
from ...plugins.io import __all__ as __all__
