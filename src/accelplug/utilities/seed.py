"""``lightning.pytorch.utilities.seed``'s path: the one ``seed_everything`` of ``accelplug.seed``."""

from __future__ import annotations

from ..seed import isolate_rng, seed_everything

__all__ = ["isolate_rng", "seed_everything"]
