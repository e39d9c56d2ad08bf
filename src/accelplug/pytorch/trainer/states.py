"""``lightning.pytorch.trainer.states``' path: the enums of ``trainer.state`` (``fn``, ``stage``, ``status``)."""

from __future__ import annotations

from ...trainer.state import RunningStage, TrainerFn, TrainerStatus

__all__ = ["RunningStage", "TrainerFn", "TrainerStatus"]
