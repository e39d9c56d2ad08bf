"""``lightning.pytorch.utilities.migration``'s path: accelplug's checkpoint upgrades, the same objects."""

from __future__ import annotations

from ....core.migration import migrate_checkpoint, pl_legacy_patch

__all__ = ["migrate_checkpoint", "pl_legacy_patch"]
