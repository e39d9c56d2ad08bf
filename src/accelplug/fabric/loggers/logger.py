"""``lightning.fabric.loggers.logger``'s path (imports only): the ``Logger`` base, one for the Trainer and Fabric,
and ``rank_zero_experiment``."""

from __future__ import annotations

from ...loggers.logger import Logger, rank_zero_experiment

__all__ = ["Logger", "rank_zero_experiment"]
