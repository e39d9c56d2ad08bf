"""What a person watches during training: rich bars on a terminal, plain lines in logs and CI.

On a terminal each epoch gets a bar (``Epoch 3/10``) with batches done, elapsed and remaining time,
iterations per second and the progress-bar metrics (``self.log(..., prog_bar=True)``, the loss,
validation results); validation and the sanity check get a transient bar of their own. Elsewhere
(a pipe, a file, CI) a line per epoch with its metrics, and a progress line at most every 30 s
during a long epoch, printed only when something changed.

The training loop pays one method call per batch (:meth:`ProgressDisplay.tick` stores a counter); a
background thread reads the counters and redraws a few times a second. No device value is read for
the display: what it shows was already read back at a logging step or an epoch end.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

__all__ = ["PlainProgressDisplay", "ProgressDisplay", "RichProgressDisplay", "make_progress"]

_REFRESH_S = 0.25
_PLAIN_EVERY_S = 30.0


def _format_metrics(metrics: dict[str, Any]) -> str:
    return " ".join(f"{k}={float(v):.4g}" for k, v in metrics.items())


def _duration(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}"


class ProgressDisplay:
    """The interface the loops use; this base shows nothing (``enable_progress_bar=False``, other ranks)."""

    def start(self, total_steps: int | None, epoch: int, max_epochs: int | None) -> None:
        """Fit starts: ``total_steps`` optimizer steps if known, from ``epoch`` of ``max_epochs``."""

    def set_limits(self, total_steps: int | None, max_epochs: int | None) -> None:
        """How long the fit runs, once the training data is known (after the sanity check)."""

    def epoch_start(self, epoch: int, batches: int | None) -> None:
        """An epoch of ``batches`` batches (None: unknown length) starts."""

    def tick(self, step: int, loss: float | None) -> None:
        """One training batch done; ``step`` optimizer steps so far (the hot path: store, never draw)."""

    def show_metrics(self, metrics: dict[str, Any]) -> None:
        """The values to show beside the bar (progress-bar metrics, read back already)."""

    def epoch_end(self, step: int, epoch: int, metrics: dict[str, float]) -> None:
        """The epoch finished with these metrics."""

    def eval_start(self, label: str, total: int | None) -> None:
        """A validation/test pass (or the sanity check) starts over ``total`` batches."""

    def eval_tick(self) -> None:
        """One evaluation batch done."""

    def eval_end(self) -> None:
        """The evaluation pass finished."""

    def stop(self) -> None:
        """Fit ended (also after an exception): stop drawing."""


class _Counting(ProgressDisplay):
    """Keeps the counters a display thread reads; the subclasses draw them."""

    def __init__(self) -> None:
        self.total_steps: int | None = None
        self.max_epochs: int | None = None
        self.epoch = 0
        self.batches: int | None = None
        self.done = 0
        self.step = 0
        self.loss: float | None = None
        self.metrics: dict[str, Any] = {}
        # perf_counter, not monotonic: a script that fakes ``time.monotonic`` sees only the reads Lightning makes
        self.epoch_started = time.perf_counter()
        self._train_seconds: float | None = None
        self.eval_label: str | None = None
        self.eval_total: int | None = None
        self.eval_done = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, total_steps: int | None, epoch: int, max_epochs: int | None) -> None:
        self.total_steps, self.max_epochs, self.epoch = total_steps, max_epochs, epoch
        self._thread = threading.Thread(target=self._run, name="accelplug-progress", daemon=True)
        self._thread.start()

    def set_limits(self, total_steps: int | None, max_epochs: int | None) -> None:
        self.total_steps, self.max_epochs = total_steps, max_epochs

    def epoch_start(self, epoch: int, batches: int | None) -> None:
        self.epoch, self.batches, self.done = epoch, batches, 0
        self.epoch_started = time.perf_counter()
        self._train_seconds = None

    def tick(self, step: int, loss: float | None) -> None:
        self.done += 1
        self.step = step
        self.loss = loss

    def show_metrics(self, metrics: dict[str, Any]) -> None:
        # floats now, in the loop's thread: a prog_bar step value may still be a device tensor (read back here,
        # only when this display draws), and the drawing thread must never touch the device
        self.metrics = {k: float(v) for k, v in metrics.items()}

    def eval_start(self, label: str, total: int | None) -> None:
        self.eval_label, self.eval_total, self.eval_done = label, total, 0
        if self.batches and self.done >= self.batches and self._train_seconds is None:
            self._train_seconds = time.perf_counter() - self.epoch_started  # the epoch's rate leaves out validation

    def eval_tick(self) -> None:
        self.eval_done += 1

    def eval_end(self) -> None:
        self.eval_label = None

    def rate(self) -> float:
        elapsed = self._train_seconds if self._train_seconds is not None else time.perf_counter() - self.epoch_started
        return self.done / elapsed if elapsed > 0 else 0.0

    def epoch_title(self) -> str:
        of = f"/{self.max_epochs}" if self.max_epochs else ""
        return f"Epoch {self.epoch + 1}{of}"

    def shown_metrics(self) -> dict[str, Any]:
        """The progress-bar metrics; the loss only when the module chose none to show during training."""
        shown = {k: v for k, v in self.metrics.items() if k != "train_loss"}
        if self.loss is not None and not self._user_training_metrics(shown):
            shown = {"train_loss": self.loss, **shown}
        return shown

    @staticmethod
    def _user_training_metrics(shown: dict[str, Any]) -> bool:
        return any(not k.startswith(("val", "test")) for k in shown)

    def _run(self) -> None:
        while not self._stop.wait(self.every_s):
            self.refresh()

    every_s = _REFRESH_S

    def refresh(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)


class PlainProgressDisplay(_Counting):
    """Lines on stderr for logs that are not a terminal: one per epoch, and one every ~30 s if it moved."""

    every_s = _PLAIN_EVERY_S

    def __init__(self) -> None:
        super().__init__()
        self._last_printed: tuple[int, int] = (-1, -1)

    def refresh(self) -> None:
        position = (self.epoch, self.done)
        if position == self._last_printed or not self.done:
            return
        self._last_printed = position
        of = f"/{self.batches}" if self.batches else ""
        remaining = ""
        if self.batches and self.rate() > 0:
            remaining = f", epoch ends in {_duration((self.batches - self.done) / self.rate())}"
        print(f"{self.epoch_title()}: {self.done}{of} batches, {self.rate():.1f} it/s{remaining}", file=sys.stderr)

    def epoch_end(self, step: int, epoch: int, metrics: dict[str, float]) -> None:
        shown = _format_metrics({k: v for k, v in metrics.items() if not k.endswith("_step")})
        print(f"epoch {epoch} done at step {step}: {shown}", file=sys.stderr, flush=True)
        self._last_printed = (epoch, self.done)


class RichProgressDisplay(_Counting):
    """rich bars on a terminal: one per epoch (kept), one for each evaluation pass (removed after)."""

    def __init__(self) -> None:
        super().__init__()
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as RichBar

        self._bar: Any = RichBar(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=24),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("<"),
            TimeRemainingColumn(),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[metrics]}"),
            console=Console(stderr=True),
            auto_refresh=False,
        )
        self._lock = threading.Lock()
        self._epoch_task: Any = None
        self._eval_task: Any = None

    def start(self, total_steps: int | None, epoch: int, max_epochs: int | None) -> None:
        self._bar.start()
        super().start(total_steps, epoch, max_epochs)

    def epoch_start(self, epoch: int, batches: int | None) -> None:
        super().epoch_start(epoch, batches)
        with self._lock:
            self._epoch_task = self._bar.add_task(self.epoch_title(), total=batches, rate="", metrics="")

    def refresh(self) -> None:
        with self._lock:
            if self._epoch_task is not None:
                self._bar.update(
                    self._epoch_task,
                    completed=self.done,
                    rate=f"{self.rate():.1f}it/s",
                    metrics=_format_metrics(self.shown_metrics()),
                )
            if self.eval_label is not None:
                if self._eval_task is None:
                    label = {"val": "Validation", "test": "Testing"}.get(self.eval_label, self.eval_label.capitalize())
                    self._eval_task = self._bar.add_task(label, total=self.eval_total, rate="", metrics="")
                self._bar.update(self._eval_task, completed=self.eval_done)
            self._bar.refresh()

    def eval_end(self) -> None:
        super().eval_end()
        with self._lock:
            if self._eval_task is not None:
                self._bar.remove_task(self._eval_task)
                self._eval_task = None

    def epoch_end(self, step: int, epoch: int, metrics: dict[str, float]) -> None:
        """The finished epoch's bar becomes a line above the live display (which holds one epoch)."""
        self.show_metrics({k: v for k, v in metrics.items() if not k.endswith("_step")})
        self.refresh()
        with self._lock:
            if self._epoch_task is not None:
                self._bar.remove_task(self._epoch_task)
                self._epoch_task = None
        elapsed = _duration(time.perf_counter() - self.epoch_started)
        of = f"/{self.batches}" if self.batches else ""
        self._bar.console.print(
            f"[bold]{self.epoch_title()}[/bold] {self.done}{of} in {elapsed}, {self.rate():.1f}it/s  "
            f"{_format_metrics(self.shown_metrics())}",
            highlight=False,
        )

    def stop(self) -> None:
        super().stop()
        self.refresh()
        self._bar.stop()


def make_progress(enabled: bool) -> ProgressDisplay:
    """A rich display on a terminal, plain lines otherwise, nothing when disabled."""
    if not enabled:
        return ProgressDisplay()
    if sys.stderr.isatty():
        return RichProgressDisplay()
    return PlainProgressDisplay()
