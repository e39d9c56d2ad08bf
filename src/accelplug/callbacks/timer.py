"""``Timer``: how long training, validation and testing took, and a time limit that stops fit.

``duration`` is a ``timedelta``, a dict of ``timedelta`` fields or ``"DD:HH:MM:SS"``; the check runs when fit starts
and after every training batch (``interval="step"``) or epoch (``"epoch"``), and sets ``trainer.should_stop`` once the
training time passes it. The training time survives a resume (``state_dict``), so a resumed run keeps its budget.
"""

from __future__ import annotations

import logging
import re
import time
from datetime import timedelta
from typing import Any

from ..enums import LightningEnum
from ..errors import MisconfigurationException, did_you_mean
from .base import Callback

__all__ = ["Interval", "Timer"]

log = logging.getLogger(__name__)


class Interval(LightningEnum):
    """When ``Timer`` checks the time: after every training step, or after every epoch."""

    step = "step"
    epoch = "epoch"


#: Lightning's stage names (``RunningStage`` values), the keys of ``state_dict()["time_elapsed"]``.
_STAGES = ("train", "sanity_check", "validate", "test", "predict")
_INTERVALS = tuple(interval.value for interval in Interval)


def _duration(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, str):
        found = re.fullmatch(r"(\d+):(\d\d):(\d\d):(\d\d)", value.strip())
        if not found:
            raise MisconfigurationException(
                f"Timer(duration={value!r}) is invalid: `duration` must be a string in the format DD:HH:MM:SS (e.g. "
                "'00:12:00:00'), a datetime.timedelta or a dict of its fields."
            )
        days, hours, minutes, seconds = (int(g) for g in found.groups())
        value = timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
    elif isinstance(value, dict):
        try:
            value = timedelta(**value)
        except TypeError as error:
            raise MisconfigurationException(
                f"Timer(duration={value!r}) is invalid: the dict's keys are timedelta's (days, hours, minutes, ...)."
            ) from error
    if not isinstance(value, timedelta):
        raise MisconfigurationException(
            f"Timer(duration={value!r}) is invalid: use 'DD:HH:MM:SS', a datetime.timedelta or a dict of its fields."
        )
    return value.total_seconds()


def _stage(stage: str) -> str:
    if stage not in _STAGES:
        raise MisconfigurationException(f"stage={stage!r} is not one of {list(_STAGES)}.{did_you_mean(stage, _STAGES)}")
    return stage


class Timer(Callback):
    def __init__(
        self, duration: str | timedelta | dict[str, int] | None = None, interval: str = "step", verbose: bool = True
    ) -> None:
        if interval not in _INTERVALS:
            raise MisconfigurationException(
                f"Unsupported parameter value Timer(interval={interval!r}): use 'step' or 'epoch'."
                f"{did_you_mean(interval, _INTERVALS)}"
            )
        self._duration = _duration(duration)
        self._interval = interval
        self._verbose = verbose
        self._start_time: dict[str, float | None] = dict.fromkeys(_STAGES)
        self._end_time: dict[str, float | None] = dict.fromkeys(_STAGES)
        self._offset = 0.0

    def start_time(self, stage: str = "train") -> float | None:
        """When ``stage`` last started (``time.monotonic()`` seconds), None before it ran."""
        return self._start_time[_stage(stage)]

    def end_time(self, stage: str = "train") -> float | None:
        return self._end_time[_stage(stage)]

    def time_elapsed(self, stage: str = "train") -> float:
        """Seconds ``stage`` has run (training: including the time before a resume)."""
        start, end = self.start_time(stage), self.end_time(stage)
        offset = self._offset if stage == "train" else 0.0
        if start is None:
            return offset
        return (end if end is not None else time.monotonic()) - start + offset

    def time_remaining(self, stage: str = "train") -> float | None:
        return None if self._duration is None else self._duration - self.time_elapsed(stage)

    def _mark(self, table: dict[str, float | None], stage: str) -> None:
        table[stage] = time.monotonic()

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self._mark(self._start_time, "train")

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        self._mark(self._end_time, "train")

    def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
        self._mark(self._start_time, "validate")

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        self._mark(self._end_time, "validate")

    def on_test_start(self, trainer: Any, pl_module: Any) -> None:
        self._mark(self._start_time, "test")

    def on_test_end(self, trainer: Any, pl_module: Any) -> None:
        self._mark(self._end_time, "test")

    def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
        if self._duration is not None:
            self._check(trainer)

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        if self._interval == "step" and self._duration is not None:
            self._check(trainer)

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if self._interval == "epoch" and self._duration is not None:
            self._check(trainer)

    def state_dict(self) -> dict[str, Any]:
        return {"time_elapsed": {stage: self.time_elapsed(stage) for stage in _STAGES}}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self._offset = float(state_dict.get("time_elapsed", {}).get("train", 0.0))

    def _check(self, trainer: Any) -> None:
        assert self._duration is not None
        stop = bool(trainer.strategy.broadcast_object(self.time_elapsed() >= self._duration))  # rank 0's clock
        trainer.should_stop = trainer.should_stop or stop
        if stop and self._verbose and trainer.is_global_zero:
            elapsed = timedelta(seconds=int(self.time_elapsed()))
            log.info(f"Time limit reached. Elapsed time is {elapsed}. Signaling Trainer to stop.")
