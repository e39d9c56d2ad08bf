"""``lightning.fabric.utilities.seed``'s import path: accelplug's one ``seed_everything``, and the worker seeding
function a loader gets after ``seed_everything(workers=True)`` under Lightning's name."""

from __future__ import annotations

from ...data.workers import worker_init_function as pl_worker_init_function
from ...seed import seed_everything

__all__ = ["pl_worker_init_function", "seed_everything"]
