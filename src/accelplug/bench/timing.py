"""The timed window: which steps count, and when the clock is read.

GPU kernels run asynchronously, so a clock read without a synchronize measures only how fast work
was queued. A :class:`StepWindow` is told each time a step ends; it synchronises the device and reads
the clock twice, after the last warm-up step and after the last timed step, and does nothing else
per step but count (and tell the progress bar, which only increments a counter). Warm-up steps
(kernel selection, the caching allocator, lazy initialisation) stay outside the window.

:class:`StepTimer` is the same window as a Trainer callback: it uses ``on_train_batch_end`` and
``on_validation_batch_end`` only, hooks that keep ``fit`` on its fast path (a callback defining
``on_train_batch_start`` or a backward hook would move it to the general one, and then the benchmark
would not time the loop users get). The hand-written baseline calls the same window after each of
its steps, so both loops pay the same bookkeeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import torch

from ..callbacks.base import Callback
from ..hardware.runtime import synchronize

__all__ = ["StepTimer", "StepWindow", "synchronize"]


def _nothing() -> None:
    return None


class StepWindow:
    """Counts steps and times steps ``warmup + 1 .. warmup + steps`` between two device synchronisations."""

    def __init__(
        self,
        device: torch.device,
        warmup: int,
        steps: int,
        tick: Callable[[], None] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.device = device
        #: Wall time by default; ``time.process_time`` counts only this process's CPU time, which a
        #: diagnosis on a shared CPU box may prefer (time spent descheduled is not the loop's cost).
        self.clock = clock
        self.warmup = warmup
        self.steps = steps
        self.total = warmup + steps
        self.tick = tick or _nothing
        #: Steps seen so far (the callback's count: the tests check one per step).
        self.seen = 0
        self.started: float | None = None
        self.ended: float | None = None

    def begin(self) -> None:
        """Before the first step; with no warm-up the window opens here."""
        self.seen = 0
        self.started = self.ended = None
        if self.warmup == 0:
            self._open()

    def step_done(self) -> None:
        self.seen += 1
        if self.seen == self.warmup:
            self._open()
        elif self.seen == self.total:
            synchronize(self.device)
            self.ended = self.clock()
        self.tick()

    def _open(self) -> None:
        synchronize(self.device)
        self.started = self.clock()

    @property
    def seconds(self) -> float:
        """Wall time of the timed steps; an error if the loop ran fewer steps than the window needs."""
        if self.started is None or self.ended is None:
            raise RuntimeError(f"the timed window saw {self.seen} of {self.total} steps")
        return self.ended - self.started


class StepTimer(Callback):
    """A :class:`StepWindow` driven by the Trainer's batch-end hooks (fit and validate alike)."""

    def __init__(self, window: StepWindow) -> None:
        self.window = window

    def on_train_epoch_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        self.window.begin()

    def on_train_batch_end(
        self, trainer: Any, pl_module: torch.nn.Module, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        self.window.step_done()

    def on_validation_epoch_start(self, trainer: Any, pl_module: torch.nn.Module) -> None:
        self.window.begin()

    def on_validation_batch_end(
        self,
        trainer: Any,
        pl_module: torch.nn.Module,
        outputs: Any,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int = 0,
    ) -> None:
        self.window.step_done()
