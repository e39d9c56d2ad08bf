"""``accelplug.fabric.utilities``: the helpers Fabric scripts import from ``lightning.fabric.utilities``."""

from __future__ import annotations

from ...core.hparams import AttributeDict
from ...data.batches import move_data_to_device
from ...distributed.rank_zero import rank_zero_deprecation, rank_zero_info, rank_zero_only, rank_zero_warn
from ...seed import seed_everything

__all__ = [
    "AttributeDict",
    "move_data_to_device",
    "rank_zero_deprecation",
    "rank_zero_info",
    "rank_zero_only",
    "rank_zero_warn",
    "seed_everything",
]
