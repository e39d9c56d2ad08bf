"""Showing progress: a rich bar on a terminal, plain log lines otherwise (CI logs, pipes, files).

Neither reads a device value: the loss shown is the one synced at the last logging step, and the bar
is redrawn at most a few times a second, checked with one clock read per step, so a fast loop does
not pay for the display.
"""

from __future__ import annotations

import sys
import time
from typing import Any

__all__ = ["PlainProgress", "Progress", "RichProgress", "make_progress"]

_REFRESH_S = 0.25
_PLAIN_EVERY_S = 10.0


class Progress:
    """The interface the loop uses; this base shows nothing."""

    def start(self, total_steps: int | None, epoch: int, max_epochs: int | None) -> None:
        pass

    def tick(self, step: int, epoch: int, samples: int, loss: float | None) -> None:
        """Called every step; implementations decide (cheaply) whether to redraw."""

    def epoch_end(self, step: int, epoch: int, metrics: dict[str, float]) -> None:
        pass

    def eval_start(self, label: str, total: int | None) -> None:
        """A validation/test pass (or the sanity check) starts over ``total`` batches."""

    def eval_tick(self) -> None:
        """One evaluation batch done."""

    def eval_end(self) -> None:
        pass

    def stop(self) -> None:
        pass


class _Throttled(Progress):
    def __init__(self, every_s: float) -> None:
        self._every = every_s
        self._next = 0.0
        self._t0 = time.perf_counter()
        self._samples0 = 0

    def start(self, total_steps: int | None, epoch: int, max_epochs: int | None) -> None:
        self._t0 = time.perf_counter()
        self._next = self._t0 + self._every
        self.total_steps, self.max_epochs = total_steps, max_epochs

    def rate(self, samples: int) -> float:
        elapsed = time.perf_counter() - self._t0
        return samples / elapsed if elapsed > 0 else 0.0

    def tick(self, step: int, epoch: int, samples: int, loss: float | None) -> None:
        now = time.perf_counter()
        if now >= self._next:
            self._next = now + self._every
            self.draw(step, epoch, samples, loss)

    def draw(self, step: int, epoch: int, samples: int, loss: float | None) -> None:
        raise NotImplementedError


class PlainProgress(_Throttled):
    """One line every ~10 s and one per epoch, on stderr, for logs that are not a terminal."""

    def __init__(self) -> None:
        super().__init__(_PLAIN_EVERY_S)

    def draw(self, step: int, epoch: int, samples: int, loss: float | None) -> None:
        total = f"/{self.total_steps}" if self.total_steps else ""
        loss_text = f" loss={loss:.4g}" if loss is not None else ""
        print(f"epoch {epoch} step {step}{total}{loss_text} {self.rate(samples):.0f} samples/s", file=sys.stderr)

    def epoch_end(self, step: int, epoch: int, metrics: dict[str, float]) -> None:
        shown = " ".join(f"{k}={v:.4g}" for k, v in metrics.items())
        print(f"epoch {epoch} done at step {step}: {shown}", file=sys.stderr, flush=True)


class RichProgress(_Throttled):
    """A rich progress bar: steps, epoch, last synced loss and throughput."""

    def __init__(self) -> None:
        super().__init__(_REFRESH_S)
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichBar

        self._bar: Any = RichBar(
            TextColumn("[bold]epoch {task.fields[epoch]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]}  {task.fields[rate]} samples/s"),
            TimeElapsedColumn(),
            transient=False,
            auto_refresh=False,
        )
        self._task: Any = None

    def start(self, total_steps: int | None, epoch: int, max_epochs: int | None) -> None:
        super().start(total_steps, epoch, max_epochs)
        self._bar.start()
        self._task = self._bar.add_task("fit", total=total_steps, epoch=epoch, loss="-", rate="-")

    def draw(self, step: int, epoch: int, samples: int, loss: float | None) -> None:
        self._bar.update(
            self._task,
            completed=step,
            epoch=epoch,
            loss=f"{loss:.4g}" if loss is not None else "-",
            rate=f"{self.rate(samples):.0f}",
        )
        self._bar.refresh()

    def epoch_end(self, step: int, epoch: int, metrics: dict[str, float]) -> None:
        loss = metrics.get("train_loss")
        self.draw(step, epoch, self._samples_seen, loss)
        if metrics:
            self._bar.console.print(f"epoch {epoch}: " + "  ".join(f"{k}={v:.4g}" for k, v in metrics.items()))

    _samples_seen = 0

    def tick(self, step: int, epoch: int, samples: int, loss: float | None) -> None:
        self._samples_seen = samples
        super().tick(step, epoch, samples, loss)

    def stop(self) -> None:
        self._bar.stop()


def make_progress(enabled: bool) -> Progress:
    """A rich bar on a terminal, plain lines otherwise, nothing when disabled."""
    if not enabled:
        return Progress()
    if sys.stderr.isatty() or sys.stdout.isatty():
        return RichProgress()
    return PlainProgress()
