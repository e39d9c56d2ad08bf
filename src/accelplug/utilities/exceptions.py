"""``lightning.pytorch.utilities.exceptions``'s path: accelplug's one exception hierarchy."""

from __future__ import annotations

from ..errors import MisconfigurationException, SIGTERMException
from ..errors import TunerExit as _TunerExitException

__all__ = ["MisconfigurationException", "SIGTERMException", "_TunerExitException"]
