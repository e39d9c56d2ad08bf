"""The callback protocol and the checkpointing callback.

A callback is any object with some of these methods; subclassing :class:`Callback` is optional (it
only documents the signatures). The Trainer looks the methods up once when a run starts, so a hook a
callback does not define costs nothing per step.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import MisconfigurationException

if TYPE_CHECKING:
    import torch

    from .trainer import Trainer

__all__ = ["HOOKS", "Callback", "ModelCheckpoint"]

#: Every hook the Trainer calls, in the order a run meets them.
HOOKS = (
    "on_fit_start",
    "on_train_batch_end",
    "on_train_epoch_end",
    "on_validation_end",
    "on_fit_end",
)


class Callback:
    """Hooks into the fit loop; override the ones you need."""

    def on_fit_start(self, trainer: Trainer, model: torch.nn.Module) -> None:
        """Before the first training step (after a resume has been restored)."""

    def on_train_batch_end(
        self, trainer: Trainer, model: torch.nn.Module, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """After each training batch (and after the optimizer step when one happened)."""

    def on_train_epoch_end(self, trainer: Trainer, model: torch.nn.Module) -> None:
        """After the last training batch of an epoch and its validation."""

    def on_validation_end(self, trainer: Trainer, model: torch.nn.Module) -> None:
        """After a validation pass; ``trainer.callback_metrics`` holds its averaged metrics."""

    def on_fit_end(self, trainer: Trainer, model: torch.nn.Module) -> None:
        """After the last training step."""


class ModelCheckpoint(Callback):
    """Saves ``step=N.ckpt`` every N optimizer steps and/or epochs, and ``last.ckpt`` when fit ends.

    ``keep`` periodic files are kept (older ones are deleted) so a long run does not fill the disk.
    Files go to ``dirpath`` or, by default, to ``checkpoints/`` in the run's log folder.
    """

    def __init__(
        self,
        dirpath: str | os.PathLike[str] | None = None,
        *,
        every_n_train_steps: int | None = None,
        every_n_epochs: int | None = 1,
        save_last: bool = True,
        keep: int = 1,
    ) -> None:
        for label, value in (("every_n_train_steps", every_n_train_steps), ("every_n_epochs", every_n_epochs)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise MisconfigurationException(
                    f"ModelCheckpoint({label}={value!r}) is invalid: use an int >= 1 or None."
                )
        if not isinstance(keep, int) or isinstance(keep, bool) or keep < 1:
            raise MisconfigurationException(f"ModelCheckpoint(keep={keep!r}) is invalid: use an int >= 1.")
        self.dirpath = Path(dirpath) if dirpath is not None else None
        self.every_n_train_steps = every_n_train_steps
        self.every_n_epochs = every_n_epochs
        self.save_last = save_last
        self.keep = keep
        self.last_model_path: Path | None = None
        self.saved: list[Path] = []
        self._last_saved_step = -1

    def _folder(self, trainer: Trainer) -> Path:
        return self.dirpath if self.dirpath is not None else trainer.log_dir / "checkpoints"

    def _save_periodic(self, trainer: Trainer) -> None:
        if trainer.global_step == self._last_saved_step:
            return
        path = self._folder(trainer) / f"step={trainer.global_step}.ckpt"
        trainer.save_checkpoint(path)
        self._last_saved_step = trainer.global_step
        self.saved.append(path)
        while len(self.saved) > self.keep:
            old = self.saved.pop(0)
            if trainer.is_global_zero and old != path:
                with contextlib.suppress(OSError):
                    old.unlink()

    def on_train_batch_end(
        self, trainer: Trainer, model: torch.nn.Module, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        n = self.every_n_train_steps
        if n is not None and trainer.global_step > 0 and trainer.global_step % n == 0 and trainer.at_step_boundary:
            self._save_periodic(trainer)

    def on_train_epoch_end(self, trainer: Trainer, model: torch.nn.Module) -> None:
        n = self.every_n_epochs
        if n is not None and (trainer.current_epoch + 1) % n == 0:
            self._save_periodic(trainer)

    def on_fit_end(self, trainer: Trainer, model: torch.nn.Module) -> None:
        if self.save_last:
            self.last_model_path = trainer.save_checkpoint(self._folder(trainer) / "last.ckpt")
