"""``lightning.pytorch.tuner``'s path: accelplug's ``Tuner``, the same object."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...tuner import Tuner

__all__ = ["Tuner"]

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
