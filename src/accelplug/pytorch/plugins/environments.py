"""``lightning.pytorch.plugins.environments``'s path: the cluster environments of :mod:`accelplug.plugins`."""

from __future__ import annotations

from ...plugins.environments import *  # noqa: F403 - the mirror carries exactly its __all__
from ...plugins.environments import __all__ as __all__
