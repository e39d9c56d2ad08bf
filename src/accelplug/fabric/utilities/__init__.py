"""``accelplug.fabric.utilities``: the helpers Fabric scripts import from ``lightning.fabric.utilities``."""

from __future__ import annotations

from ...core.hparams import AttributeDict
from ...distributed.rank_zero import rank_zero_deprecation, rank_zero_info, rank_zero_only, rank_zero_warn
from ...seed import seed_everything
from ..transfer import move_to as move_data_to_device

__all__ = [
    "AttributeDict",
    "move_data_to_device",
    "rank_zero_deprecation",
    "rank_zero_info",
    "rank_zero_only",
    "rank_zero_warn",
    "seed_everything",
]
