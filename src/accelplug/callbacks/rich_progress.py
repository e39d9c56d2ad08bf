"""``RichProgressBar``: Lightning's rich bars, and the rich columns and display they are drawn with.

One rich ``Progress`` display per stage (``progress``), holding a task per bar: the sanity check's, one per
training epoch (reused, or a fresh display per epoch with ``leave=True`` so each finished one stays on the
screen), one per validation/test/predict pass and loader. The display stays readable after the stage ends
(``progress.tasks`` tell the counts), and the next stage starts a new one. Subclasses change the columns
(:meth:`RichProgressBar.configure_columns`), the metrics (``get_metrics``), the epoch's description
(``_get_train_description``) and the styles (:class:`RichProgressBarTheme`), as Lightning's documentation shows.

Drawing happens in rich's refresh thread; the bar only tells it that something changed (a soft refresh), and
the metrics are handed to their column from the training loop (:class:`MetricsTextColumn`), so the thread never
reads a device value itself. Lightning's module path ``lightning.pytorch.callbacks.progress.rich_progress``
gives these objects; the bar looks the names it builds with up there (:func:`accelplug._import_paths.seen_at`),
so code that replaces one with ``mock.patch`` at that path sees its replacement used. This module imports rich
(a dependency of accelplug); nothing on a plain ``Trainer()``'s path imports this module.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from datetime import timedelta
from threading import Event
from typing import Any

import torch
from lightning_utilities.core.apply_func import apply_to_collection
from rich.console import Console, RenderableType
from rich.live import Live
from rich.live import _RefreshThread as _RichRefreshThread
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn
from rich.progress_bar import ProgressBar as _RichBar
from rich.style import Style
from rich.text import Text

from .._import_paths import seen_at
from .._optional import _RICH_AVAILABLE
from ..errors import MisconfigurationException, PackageNotInstalledError
from .progress_bar import _SwitchedBar

__all__ = [
    "BatchesProcessedColumn",
    "CustomBarColumn",
    "CustomInfiniteTask",
    "CustomProgress",
    "CustomTimeColumn",
    "MetricsTextColumn",
    "ProcessingSpeedColumn",
    "RichProgressBar",
    "RichProgressBarTheme",
]

#: Lightning's path of these names, where code written for Lightning replaces them.
_PUBLIC_PATH = "accelplug.pytorch.callbacks.progress.rich_progress"


def _public(name: str) -> Any:
    return seen_at(_PUBLIC_PATH, name, globals()[name])


def _interactive() -> bool:
    """Whether Python runs an interactive session (a prompt), where rich redraws at once instead of in its thread."""
    return hasattr(sys, "ps1") or bool(sys.flags.interactive)


class CustomBarColumn(BarColumn):
    """rich's bar column that pulses for a task without a known end (a loader without a length: ``total`` inf)."""

    def render(self, task: Task) -> _RichBar:
        total = task.total if task.total is not None else float("inf")
        open_ended = not math.isfinite(total)
        return _RichBar(
            total=0 if open_ended else max(0.0, total),
            completed=max(0.0, task.completed),
            width=None if self.bar_width is None else max(1, self.bar_width),
            pulse=open_ended or not task.started,
            animation_time=task.get_time(),
            style=self.style,
            complete_style=self.complete_style,
            finished_style=self.finished_style,
            pulse_style=self.pulse_style,
        )


class CustomInfiniteTask(Task):
    """A task whose total is infinite (a loader without a length): no time remaining to estimate, where rich's own
    estimate would overflow. ``CustomProgress.add_task`` gives a task of an infinite total this class."""

    @property
    def time_remaining(self) -> float | None:
        return None


class _RefreshWhenAsked(_RichRefreshThread):
    """rich's refresh thread, redrawing only when something changed since its last redraw (:meth:`ask`), at most
    ``refresh_per_second`` times a second: a bar updated every batch costs one flag, not one redraw."""

    def __init__(self, live: Live, refresh_per_second: float) -> None:
        super().__init__(live, refresh_per_second)
        self.asked = Event()

    def ask(self) -> None:
        self.asked.set()

    def run(self) -> None:
        while not self.done.wait(1 / self.refresh_per_second):
            if not self.asked.is_set():
                continue
            self.asked.clear()
            with self.live._lock:
                if not self.done.is_set():
                    self.live.refresh()


class CustomProgress(Progress):
    """rich's ``Progress`` with tasks of infinite total and redraws on request (:meth:`soft_refresh`)."""

    def start(self) -> None:
        live = self.live
        if not live.auto_refresh:
            super().start()
            return
        live.auto_refresh = False  # rich would start its own thread, which redraws on every tick
        try:
            super().start()
        finally:
            live.auto_refresh = True
        if self.disable or live._refresh_thread is not None:
            return
        thread = _RefreshWhenAsked(live, live.refresh_per_second)
        live._refresh_thread = thread
        thread.start()

    def stop(self) -> None:
        thread = self.live._refresh_thread  # rich forgets it when it stops the display
        super().stop()
        if thread is not None:
            thread.stop()
            thread.join()

    def soft_refresh(self) -> None:
        """Ask the refresh thread to redraw on its next tick (a no-op without one)."""
        thread = self.live._refresh_thread
        if self.live.auto_refresh and isinstance(thread, _RefreshWhenAsked):
            thread.ask()

    def add_task(
        self,
        description: str,
        start: bool = True,
        total: float | None = 100.0,
        completed: int = 0,
        visible: bool = True,
        **fields: Any,
    ) -> TaskID:
        task_id = super().add_task(description, start, total, completed, visible, **fields)
        if total is not None and not math.isfinite(total):
            with self._lock:
                self._tasks[task_id].__class__ = CustomInfiniteTask
        return task_id


class CustomTimeColumn(ProgressColumn):
    """Time elapsed and left, ``h:mm:ss • h:mm:ss`` (``-:--:--`` when unknown), redrawn twice a second at most."""

    max_refresh = 0.5

    def __init__(self, style: str | Style) -> None:
        self.style = style
        super().__init__()

    def render(self, task: Task) -> Text:
        elapsed = task.finished_time if task.finished else task.elapsed
        remaining = task.time_remaining

        def clock(seconds: float | None) -> str:
            return "-:--:--" if seconds is None or not math.isfinite(seconds) else str(timedelta(seconds=int(seconds)))

        return Text(f"{clock(elapsed)} • {clock(remaining)}", style=self.style)


class BatchesProcessedColumn(ProgressColumn):
    """``done/total`` batches (``--`` for an infinite total)."""

    def __init__(self, style: str | Style) -> None:
        self.style = style
        super().__init__()

    def render(self, task: Task) -> RenderableType:
        total: Any = task.total if task.total != float("inf") else "--"
        return Text(f"{int(task.completed)}/{total}", style=self.style)


class ProcessingSpeedColumn(ProgressColumn):
    """Batches per second, ``N.NNit/s``."""

    def __init__(self, style: str | Style) -> None:
        self.style = style
        super().__init__()

    def render(self, task: Task) -> RenderableType:
        speed = 0.0 if task.speed is None else task.speed
        return Text(f"{speed:>.2f}it/s", style=self.style)


class MetricsTextColumn(ProgressColumn):
    """The metrics beside the training bar (``name: value`` in ``metrics_format``, joined by ``text_delimiter``).

    The bar hands the values over from the training loop (:meth:`update`); rendering, in rich's thread, only
    formats them. Only the training bar shows them: the others' cells stay empty.
    """

    def __init__(self, trainer: Any, style: str | Style, text_delimiter: str, metrics_format: str) -> None:
        self._trainer = trainer
        self._style = style
        self._text_delimiter = text_delimiter
        self._metrics_format = metrics_format
        self._metrics: dict[Any, Any] = {}
        super().__init__()

    def update(self, metrics: dict[Any, Any]) -> None:
        """The values to show from now on."""
        self._metrics = metrics

    def render(self, task: Task) -> Text:
        bar = getattr(self._trainer, "progress_bar_callback", None)
        if task.id != getattr(bar, "train_progress_bar_id", None) or getattr(self._trainer, "sanity_checking", False):
            return Text()
        return Text(self._text_delimiter.join(self._metrics_texts()), justify="left", style=self._style)

    def _metrics_texts(self) -> list[str]:
        texts = []
        for name, value in self._metrics.items():
            if not isinstance(value, str):
                try:
                    value = f"{value:{self._metrics_format}}"
                except (TypeError, ValueError):  # a value the format does not apply to (a dict, None)
                    value = str(value)
            texts.append(f"{name}: {value}")
        return texts


@dataclass
class RichProgressBarTheme:
    """The styles of ``RichProgressBar``'s parts (rich style strings or ``Style`` objects, Lightning's fields and
    defaults): the description, the bar while running/finished/pulsing, the batch counter, the times, the speed, the
    metrics, and how the metrics are joined and formatted."""

    description: str | Style = ""
    progress_bar: str | Style = "#6206E0"
    progress_bar_finished: str | Style = "#6206E0"
    progress_bar_pulse: str | Style = "#6206E0"
    batch_progress: str | Style = ""
    time: str | Style = "dim"
    processing_speed: str | Style = "dim underline"
    metrics: str | Style = "italic"
    metrics_text_delimiter: str = " "
    metrics_format: str = ".3f"


class RichProgressBar(_SwitchedBar):
    """rich bars: a task per training epoch and per evaluation pass, redrawn at most ``refresh_rate`` times a second
    by rich's thread (Lightning's meaning: per second, not per batch; 0 turns the bar off). ``leave=True`` keeps
    each finished epoch's bar on the screen; ``console_kwargs`` build the ``rich.console.Console``."""

    def __init__(
        self,
        refresh_rate: int = 100,
        leave: bool = False,
        theme: RichProgressBarTheme = RichProgressBarTheme(),  # noqa: B008  # Lightning's default, one shared instance
        console_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if not seen_at(_PUBLIC_PATH, "_RICH_AVAILABLE", _RICH_AVAILABLE):
            raise PackageNotInstalledError(
                "`RichProgressBar` requires `rich` >= 10.2.2. Install it by running `pip install -U rich` "
                "(or use TQDMProgressBar)."
            )
        if not isinstance(refresh_rate, int) or isinstance(refresh_rate, bool) or refresh_rate < 0:
            raise MisconfigurationException(
                f"RichProgressBar(refresh_rate={refresh_rate!r}) is invalid: use an int >= 0."
            )
        if not isinstance(theme, RichProgressBarTheme):
            raise MisconfigurationException(
                f"RichProgressBar(theme={theme!r}) is invalid: pass a RichProgressBarTheme instance."
            )
        super().__init__()
        self._refresh_rate = refresh_rate
        self._leave = leave
        self._enabled = True
        self._console: Console | None = None
        self._console_kwargs = console_kwargs or {}
        self.theme = theme
        self.progress: CustomProgress | None = None
        self._progress_stopped = False
        self._metric_component: MetricsTextColumn | None = None
        self.train_progress_bar_id: TaskID | None = None
        self.val_sanity_progress_bar_id: TaskID | None = None
        self.val_progress_bar_id: TaskID | None = None
        self.test_progress_bar_id: TaskID | None = None
        self.predict_progress_bar_id: TaskID | None = None

    def __getstate__(self) -> dict[str, Any]:
        # the display and console hold a lock and a thread, the metrics column the Trainer: none of them pickles
        return {**vars(self), "progress": None, "_console": None, "_metric_component": None}

    # ---- state ------------------------------------------------------------------------------------------
    def _task(self, task_id: TaskID | None) -> Task:
        if self.progress is None or task_id is None:
            raise MisconfigurationException(f"{type(self).__name__} has no such bar now: no stage has drawn it.")
        return self.progress.tasks[task_id]

    @property
    def train_progress_bar(self) -> Task:
        return self._task(self.train_progress_bar_id)

    @property
    def val_sanity_check_bar(self) -> Task:
        return self._task(self.val_sanity_progress_bar_id)

    @property
    def val_progress_bar(self) -> Task:
        return self._task(self.val_progress_bar_id)

    @property
    def test_progress_bar(self) -> Task:
        return self._task(self.test_progress_bar_id)

    # ---- the display ------------------------------------------------------------------------------------
    def configure_columns(self, trainer: Any) -> list[Any]:
        """The columns left of the metrics: description, bar, batches, times, speed (override to change them)."""
        theme = self.theme
        return [
            TextColumn("[progress.description]{task.description}"),
            _public("CustomBarColumn")(
                complete_style=theme.progress_bar,
                finished_style=theme.progress_bar_finished,
                pulse_style=theme.progress_bar_pulse,
            ),
            _public("BatchesProcessedColumn")(style=theme.batch_progress),
            _public("CustomTimeColumn")(style=theme.time),
            _public("ProcessingSpeedColumn")(style=theme.processing_speed),
        ]

    def _init_progress(self, trainer: Any) -> None:
        """Start a display, unless one is running or the bar is off; a new display starts with no bars."""
        if self.is_disabled or (self.progress is not None and not self._progress_stopped):
            return
        self._reset_progress_bar_ids()
        self._console = Console(**self._console_kwargs)
        self._metric_component = _public("MetricsTextColumn")(
            trainer, self.theme.metrics, self.theme.metrics_text_delimiter, self.theme.metrics_format
        )
        self.progress = _public("CustomProgress")(
            *self.configure_columns(trainer),
            self._metric_component,
            auto_refresh=True,
            refresh_per_second=self.refresh_rate,
            disable=self.is_disabled,
            console=self._console,
        )
        self.progress.start()
        self._progress_stopped = False

    def _stop_progress(self) -> None:
        """Stop drawing (once); the display and its tasks stay readable until the next stage starts."""
        if self.progress is not None and not self._progress_stopped:
            self.progress.stop()
            self._progress_stopped = True

    def _reset_progress_bar_ids(self) -> None:
        self.train_progress_bar_id = None
        self.val_sanity_progress_bar_id = None
        self.val_progress_bar_id = None
        self.test_progress_bar_id = None
        self.predict_progress_bar_id = None

    def refresh(self, hard: bool = False) -> None:
        """Redraw now (``hard``, or at an interactive prompt), else at the refresh thread's next tick."""
        if self.progress is None:
            return
        if hard or _interactive():
            self.progress.refresh()
        else:
            self.progress.soft_refresh()

    def _add_task(self, total_batches: int | float, description: str, visible: bool = True) -> TaskID:
        assert self.progress is not None
        style = self.theme.description
        return self.progress.add_task(
            f"[{style}]{description}" if style else description, total=total_batches, visible=visible
        )

    def _hide(self, task_id: TaskID | None) -> None:
        if self.progress is not None and task_id is not None:
            self.progress.update(task_id, advance=0, visible=False)

    def _update(self, task_id: TaskID | None, current: int, visible: bool = True, hard: bool = False) -> None:
        if self.progress is not None and self.is_enabled and task_id is not None:
            self.progress.update(task_id, completed=current, visible=visible)
            self.refresh(hard=hard)

    def _get_train_description(self, current_epoch: int) -> str:
        """``Epoch N/M`` (M: the last epoch, when ``max_epochs`` is set), padded to the validation bar's width so
        the description column does not jump between the two."""
        description = f"Epoch {current_epoch}"
        if self.trainer.max_epochs is not None:
            description += f"/{self.trainer.max_epochs - 1}"
        return description.ljust(len(self.validation_description))

    # ---- metrics ----------------------------------------------------------------------------------------
    def get_metrics(self, trainer: Any, pl_module: Any) -> dict[str, int | str | float | dict[str, float]]:
        """The base class's metrics with every tensor turned into a Python number for rich to format."""
        shown = super().get_metrics(trainer, pl_module)
        converted: dict[str, Any] = apply_to_collection(shown, torch.Tensor, lambda tensor: tensor.item())
        return converted

    def _update_metrics(self, trainer: Any, pl_module: Any) -> None:
        if self.is_enabled and self._metric_component is not None:
            self._metric_component.update(self.get_metrics(trainer, pl_module))

    # ---- hooks: each stage starts a display ---------------------------------------------------------------
    def on_sanity_check_start(self, trainer: Any, pl_module: Any) -> None:
        self._init_progress(trainer)

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self._init_progress(trainer)

    def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
        self._init_progress(trainer)

    def on_test_start(self, trainer: Any, pl_module: Any) -> None:
        self._init_progress(trainer)

    def on_predict_start(self, trainer: Any, pl_module: Any) -> None:
        self._init_progress(trainer)

    def on_sanity_check_end(self, trainer: Any, pl_module: Any) -> None:
        self._hide(self.val_sanity_progress_bar_id)
        self.refresh()

    # ---- training ---------------------------------------------------------------------------------------
    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        if self.is_disabled:
            return
        total = self.total_train_batches
        description = self._get_train_description(trainer.current_epoch)
        if self._leave and self.train_progress_bar_id is not None:
            self._stop_progress()  # the finished epoch's display stays on the screen; a new one draws the next
            self._init_progress(trainer)
        if self.progress is not None:
            if self.train_progress_bar_id is None:
                self.train_progress_bar_id = self._add_task(total, description)
            else:
                self.progress.reset(self.train_progress_bar_id, total=total, description=description, visible=True)
        self.refresh()

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        if self.is_enabled and self.train_progress_bar_id is None and self.progress is not None:
            # a fit resumed in the middle of an epoch starts here, past on_train_epoch_start
            description = self._get_train_description(trainer.current_epoch)
            self.train_progress_bar_id = self._add_task(self.total_train_batches, description)
        self._update(self.train_progress_bar_id, batch_idx + 1)
        self._update_metrics(trainer, pl_module)
        self.refresh()

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        self._update_metrics(trainer, pl_module)
        self.refresh()

    # ---- evaluation -------------------------------------------------------------------------------------
    def on_validation_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if self.is_disabled or not self.has_dataloader_changed(dataloader_idx):
            return
        total = self.total_val_batches_current_dataloader
        if trainer.sanity_checking:
            self._hide(self.val_sanity_progress_bar_id)
            self.val_sanity_progress_bar_id = self._add_task(total, self.sanity_check_description, visible=False)
        else:
            self._hide(self.val_progress_bar_id)
            self.val_progress_bar_id = self._add_task(total, self.validation_description, visible=False)
        self.refresh()

    def on_validation_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if self.is_enabled:
            task = self.val_sanity_progress_bar_id if trainer.sanity_checking else self.val_progress_bar_id
            self._update(task, batch_idx + 1)

    def on_validation_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if self.is_enabled and self.val_progress_bar_id is not None and trainer.state.fn == "fit":
            self._hide(self.val_progress_bar_id)  # back to the training bar
            self.refresh()

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        if trainer.state.fn == "fit":
            self._update_metrics(trainer, pl_module)
        self.reset_dataloader_idx_tracker()

    def on_test_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if self.is_disabled or not self.has_dataloader_changed(dataloader_idx):
            return
        self._hide(self.test_progress_bar_id)
        self.test_progress_bar_id = self._add_task(self.total_test_batches_current_dataloader, self.test_description)
        self.refresh()

    def on_test_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if self.is_enabled:
            self._update(self.test_progress_bar_id, batch_idx + 1)

    def on_test_end(self, trainer: Any, pl_module: Any) -> None:
        self.reset_dataloader_idx_tracker()

    def on_predict_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if self.is_disabled or not self.has_dataloader_changed(dataloader_idx):
            return
        self._hide(self.predict_progress_bar_id)
        total = self.total_predict_batches_current_dataloader
        self.predict_progress_bar_id = self._add_task(total, self.predict_description)
        self.refresh()

    def on_predict_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if self.is_enabled:
            self._update(self.predict_progress_bar_id, batch_idx + 1)

    def on_predict_end(self, trainer: Any, pl_module: Any) -> None:
        self.reset_dataloader_idx_tracker()

    # ---- the end ----------------------------------------------------------------------------------------
    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        self._stop_progress()

    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._stop_progress()
