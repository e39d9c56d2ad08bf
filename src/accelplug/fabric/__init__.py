"""``accelplug.fabric``: Lightning Fabric's API on accelplug's accelerators, strategies and precisions.

A script written for Lightning Fabric changes one import (``from lightning.fabric import Fabric`` ->
``from accelplug.fabric import Fabric``); ``accelplug.fabric.strategies``, ``.plugins``, ``.utilities``
and ``.loggers`` answer the imports such scripts make from ``lightning.fabric``. Nothing here imports
``accelplug.trainer``: the Trainer and Fabric share what lies below both (selection, strategies, the
checkpoint file), as Lightning's ``fabric`` never imports its ``pytorch`` half.
"""

from __future__ import annotations

from .._import_paths import lazy_submodules
from ..seed import seed_everything
from .fabric import Fabric
from .wrappers import is_wrapped

__all__ = ["Fabric", "is_wrapped", "seed_everything"]

# Lightning's sub-packages, reached as attributes (``L.fabric.accelerators``) without importing them first.
__getattr__ = lazy_submodules(
    __name__, ("accelerators", "connector", "fabric", "loggers", "plugins", "strategies", "utilities", "wrappers")
)
