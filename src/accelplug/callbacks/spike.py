"""Stopping a fit when the loss spikes: Lightning's ``SpikeDetection``.

The loss of each training batch is compared with the mean of the last ``window`` losses; a value that is not an
improvement (per ``mode``) and lies further from that mean than ``atol`` and ``rtol * mean`` allow is a spike
(with ``finite_only``, so is a NaN or infinite loss). On a spike the batch and the one before it are appended to
``exclude_batches_path`` (a JSON list, ``<default_root_dir>/skip_batches.json`` unless given) and the fit stops
with :class:`TrainingSpikeException`. Each process judges its own losses; any process's spike stops all of them.

Two classes, as in Lightning: :class:`FabricSpikeDetection` is ``lightning.fabric.utilities.spike.SpikeDetection``,
a Fabric callback that ``fabric.call("on_train_batch_end", fabric=fabric, loss=loss, batch=batch, batch_idx=i)``
reaches (its file goes to the current folder unless given); :class:`SpikeDetection`, the Trainer's callback, reads
the loss from what ``training_step`` returned.
"""

from __future__ import annotations

import json
import math
import os
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import torch

from ..errors import MisconfigurationException, did_you_mean
from .base import Callback

__all__ = ["FabricSpikeDetection", "SpikeDetection", "TrainingSpikeException"]


class TrainingSpikeException(RuntimeError):
    """The training loss spiked (raised by :class:`SpikeDetection`)."""

    def __init__(self, batch_idx: int, *args: Any, **kwargs: Any) -> None:
        super().__init__(f"Training spike detected in batch {batch_idx}", *args, **kwargs)


def _tolerance(name: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise MisconfigurationException(f"{name}={value!r} is not accepted: a number or None (no {name} check).")
    return float(value)


class FabricSpikeDetection:
    """Raise :class:`TrainingSpikeException` when a training loss spikes against its running mean (a Fabric
    callback: ``on_train_batch_end(fabric, loss, batch, batch_idx)``)."""

    def __init__(
        self,
        mode: Literal["min", "max"] = "min",
        window: int = 10,
        warmup: int = 1,
        atol: float | None = None,
        rtol: float | None = 2.0,
        exclude_batches_path: str | os.PathLike[str] | None = None,
        finite_only: bool = True,
    ) -> None:
        if mode not in ("min", "max"):
            raise MisconfigurationException(
                f"mode={mode!r} is not accepted: 'min' or 'max'." + did_you_mean(mode, ["min", "max"])
            )
        for name, value, least in (("window", window, 1), ("warmup", warmup, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise MisconfigurationException(f"{name}={value!r} is not accepted: an int >= {least}.")
        self.mode = mode
        self.window = window
        self.warmup = warmup
        self.atol = _tolerance("atol", atol)
        self.rtol = _tolerance("rtol", rtol)
        self.exclude_batches_path: str | os.PathLike[str] | None = exclude_batches_path
        self.finite_only = bool(finite_only)
        self.last_val: torch.Tensor | float = 0.0
        self.bad_batches: list[int] = []
        self._recent: deque[torch.Tensor] = deque(maxlen=window)

    @torch.no_grad()
    def on_train_batch_end(self, fabric: Any, loss: torch.Tensor, batch: Any, batch_idx: int) -> None:
        self._set_path(os.getcwd())
        self._judge(fabric.strategy, fabric.global_rank == 0, loss.detach(), batch_idx)

    def _set_path(self, default_folder: str | os.PathLike[str]) -> None:
        path = self.exclude_batches_path
        if path is None:
            path = Path(default_folder) / "skip_batches.json"
        elif not str(path).endswith(".json"):
            path = Path(path) / "skip_batches.json"
        self.exclude_batches_path = str(path)

    def _judge(self, strategy: Any, global_zero: bool, loss: torch.Tensor, batch_idx: int) -> None:
        spike = bool(batch_idx >= self.warmup and self._is_spike(loss))
        strategy.barrier()
        if strategy.reduce_any(spike):
            self._handle_spike(global_zero, batch_idx)
        finite_everywhere = self.finite_only or not strategy.reduce_any(not bool(torch.isfinite(loss).all()))
        if finite_everywhere:
            self._recent.append(loss)
            self.last_val = loss

    def _running_mean(self, like: torch.Tensor) -> torch.Tensor:
        if not self._recent:
            return torch.full_like(like, float("nan"), dtype=torch.float32)
        return torch.stack([v.float().to(like.device) for v in self._recent]).mean(dim=0)

    def _is_spike(self, loss: torch.Tensor) -> bool:
        running = self._running_mean(loss)
        if self.finite_only and not bool(torch.isfinite(loss).all()):
            return True
        diff = loss - self.last_val
        better = (diff <= 0.0) if self.mode == "min" else (diff >= 0)
        if bool(better.all()):
            return False
        distance = abs(loss - running)
        if self.atol is not None and not bool(distance >= abs(self.atol)):
            return False
        return self.rtol is None or bool(distance >= abs(self.rtol * running))

    def _handle_spike(self, global_zero: bool, batch_idx: int) -> None:
        # the batch before is excluded too: it may have moved the weights to where this one spikes
        self.bad_batches.extend([batch_idx - 1, batch_idx])
        if global_zero:
            path = Path(str(self.exclude_batches_path))
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(self.bad_batches, indent=4))
        raise TrainingSpikeException(batch_idx=batch_idx)

    def state_dict(self) -> dict[str, Any]:
        last = self.last_val
        return {
            "last_val": last.item() if isinstance(last, torch.Tensor) and last.numel() == 1 else last,
            "mode": self.mode,
            "warmup": self.warmup,
            "atol": self.atol,
            "rtol": self.rtol,
            "bad_batches": list(self.bad_batches),
            "bad_batches_path": None if self.exclude_batches_path is None else str(self.exclude_batches_path),
            "running": [v.tolist() for v in self._recent],
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.last_val = state_dict["last_val"]
        self.mode = state_dict["mode"]
        self.warmup = state_dict["warmup"]
        self.atol = state_dict["atol"]
        self.rtol = state_dict["rtol"]
        self.bad_batches = list(state_dict["bad_batches"])
        self.exclude_batches_path = state_dict["bad_batches_path"]
        self._recent = deque((torch.tensor(v) for v in state_dict.get("running", [])), maxlen=self.window)


class SpikeDetection(FabricSpikeDetection, Callback):
    """Raise :class:`TrainingSpikeException` when a training loss spikes against its running mean (the Trainer's
    callback; the file goes to ``<default_root_dir>/skip_batches.json`` unless given)."""

    @torch.no_grad()
    def on_train_batch_end(  # type: ignore[override]
        self, trainer: Any, pl_module: torch.nn.Module, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        if isinstance(outputs, torch.Tensor):
            loss = outputs.detach()
        elif isinstance(outputs, Mapping) and isinstance(outputs.get("loss"), torch.Tensor):
            loss = outputs["loss"].detach()
        else:
            raise TypeError(
                "SpikeDetection reads the loss training_step returns: outputs have to be of type torch.Tensor or "
                f"Mapping with a 'loss' tensor, got {type(outputs).__qualname__}"
            )
        self._set_path(trainer.default_root_dir)
        self._judge(trainer.strategy, trainer.is_global_zero, loss, batch_idx)
