"""``lightning.pytorch.utilities.migration``'s path: accelplug's checkpoint upgrades, the same objects."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....core.migration import migrate_checkpoint, pl_legacy_patch

__all__ = ["migrate_checkpoint", "pl_legacy_patch"]

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
