"""``lightning.pytorch.cli``'s path: accelplug's ``LightningCLI`` and its companions (``accelplug.lightning_cli``)."""

from __future__ import annotations

from ..lightning_cli import *  # noqa: F403 - the mirror follows whatever the module exports
from ..lightning_cli import __all__ as __all__
