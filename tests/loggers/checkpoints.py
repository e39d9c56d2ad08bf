"""A checkpoint callback for the logger tests: Lightning's ModelCheckpoint bookkeeping over real files.

accelplug's ModelCheckpoint does not yet expose everything a tracker logger reads (``current_score``,
``_every_n_train_steps``, a string ``last_model_path``; see docs/results.md), and the Trainer does not yet
call ``after_save_checkpoint``. This object keeps the same attributes Lightning's ModelCheckpoint keeps,
with the same meaning (top-k by ``monitor`` in ``mode``, the worst file deleted when k is exceeded,
``last.ckpt`` rewritten after each save), and writes real torch checkpoints, so a logger under test sees
exactly what it would see from Lightning's callback. It is named ``ModelCheckpoint`` because the W&B
logger records the callback's class name in the artifact metadata.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import torch


class ModelCheckpoint:
    def __init__(self, dirpath: Path, *, save_top_k: int = 2, save_last: bool = True, mode: str = "min") -> None:
        self.dirpath = str(dirpath)
        self.monitor = "val_loss"
        self.mode = mode
        self.save_top_k = save_top_k
        self.save_last = save_last
        self.save_weights_only = False
        self._every_n_train_steps = 0
        self.best_k_models: dict[str, torch.Tensor] = {}
        self.best_model_path = ""
        self.best_model_score: torch.Tensor | None = None
        self.last_model_path = ""
        self.current_score: torch.Tensor | None = None
        self._clock = 1_700_000_000.0  # explicit, increasing mtimes: the upload order does not depend on timing
        Path(dirpath).mkdir(parents=True, exist_ok=True)

    def _write(self, path: str, payload: dict[str, Any]) -> None:
        torch.save(payload, path)
        self._clock += 10
        os.utime(path, (self._clock, self._clock))

    def save(self, logger: Any, *, epoch: int, step: int, score: float) -> str:
        """Save a top-k checkpoint (then last.ckpt), calling the logger after each write as Lightning does."""
        path = os.path.join(self.dirpath, f"epoch={epoch}-step={step}.ckpt")
        payload = {"epoch": epoch, "global_step": step, "state_dict": {"weight": torch.full((4, 4), float(step))}}
        self.current_score = torch.tensor(score)
        self._write(path, payload)
        self.best_k_models[path] = torch.tensor(score)
        if self.save_top_k != -1 and len(self.best_k_models) > self.save_top_k:
            pick_worst = max if self.mode == "min" else min
            worst = pick_worst(self.best_k_models, key=lambda p: float(self.best_k_models[p]))
            del self.best_k_models[worst]
            os.remove(worst)
        pick_best = min if self.mode == "min" else max
        self.best_model_path = pick_best(self.best_k_models, key=lambda p: float(self.best_k_models[p]))
        self.best_model_score = self.best_k_models[self.best_model_path]
        logger.after_save_checkpoint(self)
        if self.save_last:
            last = os.path.join(self.dirpath, "last.ckpt")
            shutil.copyfile(path, last)
            self._clock += 10
            os.utime(last, (self._clock, self._clock))
            self.last_model_path = last
            logger.after_save_checkpoint(self)
        return path
