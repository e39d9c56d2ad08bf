"""``lightning.pytorch.plugins``'s path: every name of :mod:`accelplug.plugins`, the same objects.

Re-exported whole, so a name added to ``accelplug.plugins`` is here too; ``.io`` and ``.environments`` are
Lightning's sub-paths.
"""

from __future__ import annotations

from ...plugins import *  # noqa: F403 - the mirror carries exactly accelplug.plugins' __all__
from ...plugins import __all__ as __all__
