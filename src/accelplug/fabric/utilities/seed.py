"""``lightning.fabric.utilities.seed``'s path (imports only)."""

from __future__ import annotations

from ...data.workers import worker_init_function as pl_worker_init_function
from ...seed import max_seed_value, min_seed_value, reset_seed, seed_everything

__all__ = ["max_seed_value", "min_seed_value", "pl_worker_init_function", "reset_seed", "seed_everything"]
