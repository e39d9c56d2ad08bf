"""Writing predictions as they are made: Lightning's ``BasePredictionWriter``.

Subclass it and override ``write_on_batch_end`` (``write_interval="batch"``), ``write_on_epoch_end``
(``"epoch"``) or both (``"batch_and_epoch"``). Each call gets the dataset indices of the batch (of every batch,
at the epoch's end), which the prediction loop records only while a writer is present; under DDP each process
writes its own share, so the indices tell which samples it predicted.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any, Literal

import torch

from ..errors import MisconfigurationException, did_you_mean
from .base import Callback

__all__ = ["BasePredictionWriter", "WriteInterval"]


class WriteInterval(str, Enum):
    """When a writer writes."""

    BATCH = "batch"
    EPOCH = "epoch"
    BATCH_AND_EPOCH = "batch_and_epoch"

    @property
    def on_batch(self) -> bool:
        return self in (WriteInterval.BATCH, WriteInterval.BATCH_AND_EPOCH)

    @property
    def on_epoch(self) -> bool:
        return self in (WriteInterval.EPOCH, WriteInterval.BATCH_AND_EPOCH)


class BasePredictionWriter(Callback):
    """Override ``write_on_batch_end`` and/or ``write_on_epoch_end``; ``write_interval`` picks which run."""

    def __init__(self, write_interval: Literal["batch", "epoch", "batch_and_epoch"] = "batch") -> None:
        accepted = [i.value for i in WriteInterval]
        if write_interval not in accepted:
            raise MisconfigurationException(
                f"write_interval={write_interval!r} is not accepted: `write_interval` should be one of {accepted}."
                + did_you_mean(write_interval, accepted)
            )
        self.interval = WriteInterval(write_interval)

    def write_on_batch_end(
        self,
        trainer: Any,
        pl_module: torch.nn.Module,
        prediction: Any,
        batch_indices: Sequence[int] | None,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int,
    ) -> None:
        """Override: write one batch's ``prediction``."""
        raise NotImplementedError(f"{type(self).__name__} writes per batch but does not override write_on_batch_end")

    def write_on_epoch_end(
        self, trainer: Any, pl_module: torch.nn.Module, predictions: Sequence[Any], batch_indices: Sequence[Any]
    ) -> None:
        """Override: write every batch's prediction at once."""
        raise NotImplementedError(f"{type(self).__name__} writes per epoch but does not override write_on_epoch_end")

    def on_predict_batch_end(
        self,
        trainer: Any,
        pl_module: torch.nn.Module,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        if not self.interval.on_batch:
            return
        indices = trainer.predict_loop.current_batch_indices
        self.write_on_batch_end(trainer, pl_module, outputs, indices, batch, batch_idx, dataloader_idx)

    def on_predict_epoch_end(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        if not self.interval.on_epoch:
            return
        loop = trainer.predict_loop
        self.write_on_epoch_end(trainer, pl_module, loop.predictions, loop.epoch_batch_indices)
