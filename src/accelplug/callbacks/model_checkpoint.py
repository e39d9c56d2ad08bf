"""``ModelCheckpoint``: periodic and best-so-far checkpoints, with Lightning's arguments.

Without ``monitor`` it saves every ``every_n_epochs`` epochs and/or ``every_n_train_steps`` optimizer
steps and keeps the newest ``save_top_k`` files (``keep`` is the same, accelplug's older name). With
``monitor`` it keeps the ``save_top_k`` best by that metric (``mode`` 'min' or 'max') and records
``best_model_path``/``best_model_score``. ``save_last`` writes ``last.ckpt`` when fit ends and after
each save. Files go to ``dirpath`` or to ``checkpoints/`` in the run's log folder; names follow
``filename`` (``"{epoch}-{val_loss:.2f}"`` gives ``epoch=3-val_loss=0.25.ckpt``), by default ``step=N``.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

from ..errors import MisconfigurationException
from .base import Callback

__all__ = ["ModelCheckpoint"]

_FIELD = re.compile(r"\{([^{}:]+)(:[^{}]*)?\}")


def _positive(label: str, value: Any, allow: tuple[Any, ...] = (None,)) -> None:
    if value in allow and not isinstance(value, bool):
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise MisconfigurationException(f"ModelCheckpoint({label}={value!r}) is invalid: use an int >= 1 or None.")


class ModelCheckpoint(Callback):
    CHECKPOINT_EQUALS_CHAR = "="
    FILE_EXTENSION = ".ckpt"

    def __init__(
        self,
        dirpath: str | os.PathLike[str] | None = None,
        filename: str | None = None,
        monitor: str | None = None,
        verbose: bool = False,
        save_last: bool | None = True,
        save_top_k: int = 1,
        save_weights_only: bool = False,
        mode: str = "min",
        auto_insert_metric_name: bool = True,
        every_n_train_steps: int | None = None,
        train_time_interval: Any = None,
        every_n_epochs: int | None = None,
        save_on_train_epoch_end: bool | None = None,
        enable_version_counter: bool = True,
        *,
        keep: int | None = None,
    ) -> None:
        _positive("every_n_train_steps", every_n_train_steps)
        if every_n_epochs is not None and every_n_epochs != 0:
            _positive("every_n_epochs", every_n_epochs)
        if keep is not None and (not isinstance(keep, int) or isinstance(keep, bool) or keep < 1):
            raise MisconfigurationException(f"ModelCheckpoint(keep={keep!r}) is invalid: use an int >= 1.")
        if not isinstance(save_top_k, int) or isinstance(save_top_k, bool) or save_top_k < -1:
            raise MisconfigurationException(
                f"ModelCheckpoint(save_top_k={save_top_k!r}) is invalid: use -1 (keep all), 0 (none) or an int >= 1."
            )
        if mode not in ("min", "max"):
            raise MisconfigurationException(f"ModelCheckpoint(mode={mode!r}) is invalid: use 'min' or 'max'.")
        if train_time_interval is not None:
            raise MisconfigurationException(
                "ModelCheckpoint(train_time_interval=...) is not supported; use every_n_train_steps."
            )
        if every_n_train_steps is None and every_n_epochs is None:
            every_n_epochs = 1
        self.dirpath = Path(dirpath) if dirpath is not None else None
        self.filename = filename
        self.monitor = monitor
        self.verbose = verbose
        self.save_last = save_last
        self.save_top_k = keep if keep is not None else save_top_k
        self.save_weights_only = save_weights_only
        self.mode = mode
        self.auto_insert_metric_name = auto_insert_metric_name
        self.every_n_train_steps = every_n_train_steps
        self.every_n_epochs = every_n_epochs or None
        self.save_on_train_epoch_end = save_on_train_epoch_end
        self.last_model_path: Path | None = None
        self.best_model_path: str = ""
        self.best_model_score: float | None = None
        self.best_k_models: dict[str, float] = {}
        self.saved: list[Path] = []
        self._last_saved_step = -1

    @property
    def keep(self) -> int:
        return self.save_top_k

    @property
    def state_key(self) -> str:
        return f"ModelCheckpoint{{monitor={self.monitor!r}, mode={self.mode!r}}}"

    def state_dict(self) -> dict[str, Any]:
        return {
            "monitor": self.monitor,
            "best_model_score": self.best_model_score,
            "best_model_path": self.best_model_path,
            "best_k_models": dict(self.best_k_models),
            "last_model_path": str(self.last_model_path) if self.last_model_path else "",
            "saved": [str(p) for p in self.saved],
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.best_model_score = state_dict.get("best_model_score")
        self.best_model_path = state_dict.get("best_model_path", "")
        self.best_k_models = dict(state_dict.get("best_k_models", {}))
        self.saved = [Path(p) for p in state_dict.get("saved", [])]

    # ---- naming ---------------------------------------------------------------------------------------
    def folder(self, trainer: Any) -> Path:
        return self.dirpath if self.dirpath is not None else trainer.log_dir / "checkpoints"

    def format_checkpoint_name(self, metrics: dict[str, Any]) -> str:
        template = self.filename or "{step}"

        def fill(match: re.Match[str]) -> str:
            name, spec = match.group(1), match.group(2) or ""
            value = metrics.get(name)
            if value is None:
                text = "nan" if spec else "None"
            else:
                value = float(value) if name not in ("epoch", "step") else int(value)
                text = format(value, spec[1:]) if spec else str(value)
            return f"{name}{self.CHECKPOINT_EQUALS_CHAR}{text}" if self.auto_insert_metric_name else text

        return _FIELD.sub(fill, template) + self.FILE_EXTENSION

    # ---- when to save ---------------------------------------------------------------------------------
    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        n = self.every_n_train_steps
        if n is not None and trainer.global_step > 0 and trainer.global_step % n == 0 and trainer.at_step_boundary:
            self._save(trainer)

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        n = self.every_n_epochs
        if trainer.interrupted:
            return  # a signal stopped the epoch: fit writes last.ckpt itself, once (see trainer.process.interrupts)
        if n is not None and (trainer.current_epoch + 1) % n == 0:
            self._save(trainer)

    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        if self.save_last:
            self.last_model_path = trainer.save_checkpoint(self.folder(trainer) / "last.ckpt")

    # ---- saving -------------------------------------------------------------------------------------
    def _save(self, trainer: Any) -> None:
        if trainer.global_step == self._last_saved_step or trainer.sanity_checking or self.save_top_k == 0:
            return
        metrics = {**trainer.callback_metrics, "epoch": trainer.current_epoch, "step": trainer.global_step}
        score = None
        if self.monitor is not None:
            if self.monitor not in trainer.callback_metrics:
                raise MisconfigurationException(
                    f"ModelCheckpoint(monitor={self.monitor!r}) found no metric {self.monitor!r}; logged: "
                    f"{sorted(trainer.callback_metrics)}. Log it with self.log({self.monitor!r}, value)."
                )
            score = float(trainer.callback_metrics[self.monitor])
            if not self._improves(score):
                return
        path = self.folder(trainer) / self.format_checkpoint_name(metrics)
        trainer.save_checkpoint(path, weights_only=self.save_weights_only)
        self._tell_loggers(trainer)
        self._last_saved_step = trainer.global_step
        self._record(trainer, path, score)
        if self.save_last:
            self.last_model_path = trainer.save_checkpoint(self.folder(trainer) / "last.ckpt")
            self._tell_loggers(trainer)

    def _tell_loggers(self, trainer: Any) -> None:
        """After each save, on global rank 0: the loggers' ``after_save_checkpoint`` (trackers upload here)."""
        if trainer.is_global_zero:
            for logger in trainer.loggers:
                after_save = getattr(logger, "after_save_checkpoint", None)
                if callable(after_save):
                    after_save(self)

    def _improves(self, score: float) -> bool:
        if math.isnan(score):
            return False
        if self.save_top_k == -1 or len(self.best_k_models) < self.save_top_k:
            return True
        worst = max(self.best_k_models.values()) if self.mode == "min" else min(self.best_k_models.values())
        return score < worst if self.mode == "min" else score > worst

    def _record(self, trainer: Any, path: Path, score: float | None) -> None:
        if path not in self.saved:
            self.saved.append(path)
        if score is None:
            while self.save_top_k != -1 and len(self.saved) > self.save_top_k:
                self._remove(trainer, self.saved.pop(0), path)
            self.best_model_path = str(path)
            return
        self.best_k_models[str(path)] = score
        if self.save_top_k != -1 and len(self.best_k_models) > self.save_top_k:
            pick = max if self.mode == "min" else min
            worst = pick(self.best_k_models, key=lambda p: self.best_k_models[p])
            del self.best_k_models[worst]
            if Path(worst) in self.saved:
                self.saved.remove(Path(worst))
            self._remove(trainer, Path(worst), path)
        pick_best = min if self.mode == "min" else max
        self.best_model_path = pick_best(self.best_k_models, key=lambda p: self.best_k_models[p])
        self.best_model_score = self.best_k_models[self.best_model_path]
        if self.verbose and trainer.is_global_zero:
            print(f"ModelCheckpoint: {self.monitor}={score:.6g} saved to {path}")

    @staticmethod
    def _remove(trainer: Any, old: Path, keep: Path) -> None:
        if old != keep:
            trainer.strategy.remove_checkpoint(old)  # one process deletes; a sharded one's shards go too
