"""``lightning.fabric.utilities.seed``'s import path: accelplug's one ``seed_everything``."""

from __future__ import annotations

from ...seed import seed_everything

__all__ = ["seed_everything"]
