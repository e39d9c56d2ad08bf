"""``lightning.pytorch.trainer.states``'s path (imports only)."""

from __future__ import annotations

from ...trainer.state import RunningStage, TrainerFn, TrainerState, TrainerStatus

__all__ = ["RunningStage", "TrainerFn", "TrainerState", "TrainerStatus"]
