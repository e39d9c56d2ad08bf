"""``lightning.pytorch.trainer``'s path: the Trainer and ``seed_everything``."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...seed import seed_everything
from ...trainer import Trainer

__all__ = ["Trainer", "seed_everything"]

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
