"""``accelplug.fabric``: Lightning Fabric's API on accelplug's accelerators, strategies and precisions.

A script written for Lightning Fabric changes one import (``from lightning.fabric import Fabric`` ->
``from accelplug.fabric import Fabric``); ``accelplug.fabric.strategies``, ``.plugins``, ``.utilities``
and ``.loggers`` answer the imports such scripts make from ``lightning.fabric``. Nothing here imports
``accelplug.trainer``: the Trainer and Fabric share what lies below both (selection, strategies, the
checkpoint file), as Lightning's ``fabric`` never imports its ``pytorch`` half.
"""

from __future__ import annotations

from ..seed import seed_everything
from .fabric import Fabric
from .wrappers import is_wrapped

__all__ = ["Fabric", "is_wrapped", "seed_everything"]
