"""Progress-bar callbacks with Lightning's names: ``ProgressBar`` (the base), ``TQDMProgressBar``, ``RichProgressBar``.

A progress bar is a callback that draws from the hooks: a bar per training epoch (``Epoch N``), one per
validation/test/predict pass (``Validation DataLoader 0``...), with ``get_metrics`` beside it (the logger's
version as ``v_num`` and the ``prog_bar=True`` metrics). When the Trainer's callbacks hold one, it draws instead
of accelplug's own display; ``refresh_rate`` 0 turns it off. ``TQDMProgressBar`` needs ``tqdm``;
``RichProgressBar`` needs ``rich`` (a dependency of accelplug); a missing one is named in the error.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from ..errors import MisconfigurationException
from .progress_bar import ProgressBar, _total, get_standard_metrics

__all__ = ["ProgressBar", "RichProgressBar", "RichProgressBarTheme", "TQDMProgressBar", "get_standard_metrics"]


#: Lightning's public path of the ``Tqdm`` class. Code written for Lightning replaces the class there
#: (``mock.patch("lightning.pytorch.callbacks.progress.tqdm_progress.Tqdm", Recording)``) to watch the bars; the
#: bar reads the class from that module, when it is loaded, each time it makes a bar, so the replacement is used.
_TQDM_PUBLIC_PATH = "accelplug.pytorch.callbacks.progress.tqdm_progress"


def _tqdm_class() -> Any:
    from . import tqdm_bar  # imports tqdm, which only the tqdm bar needs

    public = sys.modules.get(_TQDM_PUBLIC_PATH)  # looked up, never imported: that path stands above this room
    return getattr(public, "Tqdm", tqdm_bar.Tqdm)


def _miniters(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise MisconfigurationException(f"TQDM_MINITERS={text!r} is invalid: use an int >= 0.") from None


def _should_update(refresh_rate: int, n: int, total: int | None) -> bool:
    return refresh_rate > 0 and (n % refresh_rate == 0 or n == total)


class TQDMProgressBar(ProgressBar):
    """tqdm bars on stdout, updated every ``refresh_rate`` batches (Lightning's classic bar)."""

    BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}, {rate_noinv_fmt}{postfix}]"

    def __init__(self, refresh_rate: int = 1, process_position: int = 0, leave: bool = False) -> None:
        try:
            import tqdm  # type: ignore[import-untyped]  # noqa: F401
        except ModuleNotFoundError as error:
            raise MisconfigurationException(
                "TQDMProgressBar needs the 'tqdm' package: pip install tqdm (or use RichProgressBar)."
            ) from error
        if not isinstance(refresh_rate, int) or isinstance(refresh_rate, bool) or refresh_rate < 0:
            raise MisconfigurationException(
                f"TQDMProgressBar(refresh_rate={refresh_rate!r}) is invalid: use an int >= 0."
            )
        super().__init__()
        if "TQDM_MINITERS" in os.environ:  # tqdm's own variable: the fewest batches between redraws
            refresh_rate = max(_miniters(os.environ["TQDM_MINITERS"]), refresh_rate)
        self._refresh_rate = refresh_rate
        self._process_position = process_position
        self._enabled = True
        self._leave = leave
        self.train_progress_bar: Any = None
        self.val_progress_bar: Any = None
        self.test_progress_bar: Any = None
        self.predict_progress_bar: Any = None

    @property
    def refresh_rate(self) -> int:
        return self._refresh_rate

    @property
    def process_position(self) -> int:
        return self._process_position

    @property
    def is_enabled(self) -> bool:
        return self._enabled and self.refresh_rate > 0

    @property
    def is_disabled(self) -> bool:
        return not self.is_enabled

    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True

    def _bar(self, description: str, position: int, leave: bool) -> Any:
        return _tqdm_class()(
            desc=description,
            position=2 * self.process_position + position,
            disable=self.is_disabled,
            leave=leave,
            dynamic_ncols=True,
            file=sys.stdout,
            smoothing=0,
            bar_format=self.BAR_FORMAT,
        )

    def init_sanity_tqdm(self) -> Any:
        return self._bar(self.sanity_check_description, 0, False)

    def init_train_tqdm(self) -> Any:
        return self._bar(self.train_description, 0, True)

    def init_validation_tqdm(self) -> Any:
        has_main_bar = self.trainer.state.fn != "validate"
        return self._bar(self.validation_description, int(has_main_bar), not has_main_bar)

    def init_test_tqdm(self) -> Any:
        return self._bar("Testing", 0, True)

    def init_predict_tqdm(self) -> Any:
        return self._bar(self.predict_description, 0, True)

    @staticmethod
    def _restart(bar: Any, total: Any, description: str) -> None:
        bar.reset()
        bar.total = _total(total)
        bar.initial = 0
        bar.set_description(description)

    def _advance(self, bar: Any, n: int) -> bool:
        if bar is None or not _should_update(self.refresh_rate, n, bar.total):
            return False
        if not bar.disable:
            bar.n = n
            bar.refresh()
        return True

    # ---- training ---------------------------------------------------------------------------------------
    def on_sanity_check_start(self, trainer: Any, pl_module: Any) -> None:
        self.val_progress_bar = self.init_sanity_tqdm()
        self.train_progress_bar = _tqdm_class()(disable=True)

    def on_sanity_check_end(self, trainer: Any, pl_module: Any) -> None:
        self.val_progress_bar.close()
        self.train_progress_bar.close()

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        self.train_progress_bar = self.init_train_tqdm()

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        if self._leave:
            self.train_progress_bar = self.init_train_tqdm()
        self._restart(self.train_progress_bar, self.total_train_batches, f"Epoch {trainer.current_epoch}")

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        # the metrics are read (a device read-back of the live step values) only when a visible bar redraws
        if self._advance(self.train_progress_bar, batch_idx + 1) and not self.train_progress_bar.disable:
            self.train_progress_bar.set_postfix(self.get_metrics(trainer, pl_module))

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if not self.train_progress_bar.disable:
            self.train_progress_bar.set_postfix(self.get_metrics(trainer, pl_module))
        if self._leave:
            self.train_progress_bar.close()

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        self.train_progress_bar.close()

    # ---- evaluation -------------------------------------------------------------------------------------
    def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
        if not trainer.sanity_checking:
            self.val_progress_bar = self.init_validation_tqdm()

    def on_validation_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if self.has_dataloader_changed(dataloader_idx):
            label = self.sanity_check_description if trainer.sanity_checking else self.validation_description
            total = self.total_val_batches_current_dataloader
            self._restart(self.val_progress_bar, total, f"{label} DataLoader {dataloader_idx}")

    def on_validation_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._advance(self.val_progress_bar, batch_idx + 1)

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        self.val_progress_bar.close()
        self.reset_dataloader_idx_tracker()
        if self.train_progress_bar is not None and trainer.state.fn == "fit":
            self.train_progress_bar.set_postfix(self.get_metrics(trainer, pl_module))

    def on_test_start(self, trainer: Any, pl_module: Any) -> None:
        self.test_progress_bar = self.init_test_tqdm()

    def on_test_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if self.has_dataloader_changed(dataloader_idx):
            total = self.total_test_batches_current_dataloader
            self._restart(self.test_progress_bar, total, f"{self.test_description} DataLoader {dataloader_idx}")

    def on_test_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._advance(self.test_progress_bar, batch_idx + 1)

    def on_test_end(self, trainer: Any, pl_module: Any) -> None:
        self.test_progress_bar.close()
        self.reset_dataloader_idx_tracker()

    def on_predict_start(self, trainer: Any, pl_module: Any) -> None:
        self.predict_progress_bar = self.init_predict_tqdm()

    def on_predict_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if self.has_dataloader_changed(dataloader_idx):
            total = self.total_predict_batches_current_dataloader
            self._restart(self.predict_progress_bar, total, f"{self.predict_description} DataLoader {dataloader_idx}")

    def on_predict_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._advance(self.predict_progress_bar, batch_idx + 1)

    def on_predict_end(self, trainer: Any, pl_module: Any) -> None:
        self.predict_progress_bar.close()
        self.reset_dataloader_idx_tracker()

    def __getstate__(self) -> dict[str, Any]:
        # a tqdm bar holds its output stream, which does not pickle: a pickled bar callback leaves its bars behind
        from tqdm import tqdm  # type: ignore[import-untyped]

        return {k: None if isinstance(v, tqdm) else v for k, v in vars(self).items()}

    def print(self, *args: Any, sep: str = " ", **kwargs: Any) -> None:
        """Write through the first bar that draws (training, validation, test, predict), so the bars stay whole;
        nothing when none draws (Lightning's rule)."""
        bars = (self.train_progress_bar, self.val_progress_bar, self.test_progress_bar, self.predict_progress_bar)
        active = next((bar for bar in bars if bar is not None and not bar.disable), None)
        if active is not None:
            active.write(sep.join(map(str, args)), **kwargs)


@dataclass
class RichProgressBarTheme:
    """The styles of ``RichProgressBar``'s parts (rich style strings, Lightning's fields and defaults)."""

    description: str = ""
    progress_bar: str = "#6206E0"
    progress_bar_finished: str = "#6206E0"
    progress_bar_pulse: str = "#6206E0"
    batch_progress: str = ""
    time: str = "dim"
    processing_speed: str = "dim underline"
    metrics: str = "italic"
    metrics_text_delimiter: str = " "
    metrics_format: str = ".3f"


class RichProgressBar(ProgressBar):
    """rich bars: a task per training epoch and per evaluation pass (``leave`` keeps each epoch's), redrawn
    ``refresh_rate`` times a second by rich's own thread (Lightning's meaning: per second, not per batch)."""

    def __init__(
        self,
        refresh_rate: int = 100,
        leave: bool = False,
        theme: RichProgressBarTheme = RichProgressBarTheme(),  # noqa: B008  # Lightning's default, one shared instance
        console_kwargs: dict[str, Any] | None = None,
    ) -> None:
        try:
            import rich  # noqa: F401
        except ModuleNotFoundError as error:
            raise MisconfigurationException(
                "RichProgressBar needs the 'rich' package: pip install rich (or use TQDMProgressBar)."
            ) from error
        if not isinstance(refresh_rate, int) or isinstance(refresh_rate, bool) or refresh_rate < 0:
            raise MisconfigurationException(
                f"RichProgressBar(refresh_rate={refresh_rate!r}) is invalid: use an int >= 0."
            )
        super().__init__()
        self._refresh_rate = refresh_rate
        self._leave = leave
        self._enabled = True
        if not isinstance(theme, RichProgressBarTheme):
            raise MisconfigurationException(
                f"RichProgressBar(theme={theme!r}) is invalid: pass a RichProgressBarTheme instance."
            )
        self.theme = theme
        self._console_kwargs = console_kwargs or {}
        self.progress: Any = None
        #: The bars of the last stage stay readable after it (``progress.tasks``), as Lightning's; the next stage
        #: starts a new display.
        self._progress_stopped = False
        self.train_progress_bar_id: Any = None
        self.val_progress_bar_id: Any = None
        self.test_progress_bar_id: Any = None
        self.predict_progress_bar_id: Any = None
        self._metrics: dict[str, Any] = {}

    def __getstate__(self) -> dict[str, Any]:
        # rich's display holds a lock and a thread, which do not pickle: a pickled bar callback leaves it behind
        return {**vars(self), "progress": None, "_progress_stopped": False}

    @property
    def refresh_rate(self) -> float:
        return self._refresh_rate

    @property
    def is_enabled(self) -> bool:
        return self._enabled and self.refresh_rate > 0

    @property
    def is_disabled(self) -> bool:
        return not self.is_enabled

    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True

    def _start(self) -> None:
        if (self.progress is not None and not self._progress_stopped) or self.is_disabled:
            return
        self.train_progress_bar_id = self.val_progress_bar_id = None
        self.test_progress_bar_id = self.predict_progress_bar_id = None
        self._progress_stopped = False
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        theme = self.theme
        self.progress = Progress(
            TextColumn("[progress.description]{task.description}", style=theme.description),
            BarColumn(
                complete_style=theme.progress_bar,
                finished_style=theme.progress_bar_finished,
                pulse_style=theme.progress_bar_pulse,
            ),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.fields[metrics]}", style=theme.metrics),
            console=Console(**self._console_kwargs),
            refresh_per_second=self.refresh_rate,
        )
        self.progress.start()

    def _stop(self) -> None:
        if self.progress is not None and not self._progress_stopped:
            self.progress.stop()
            self._progress_stopped = True

    def _metrics_text(self, trainer: Any, pl_module: Any) -> str:
        self._metrics = self.get_metrics(trainer, pl_module)
        theme = self.theme
        parts = [
            f"{k}: {v:{theme.metrics_format}}" if isinstance(v, float) else f"{k}: {v}"
            for k, v in self._metrics.items()
        ]
        return theme.metrics_text_delimiter.join(parts)

    def _task(self, description: str, total: Any, visible: bool = True) -> Any:
        return self.progress.add_task(description, total=_total(total), metrics="", visible=visible)

    def _update(self, task: Any, n: int, metrics: str | None = None) -> None:
        if self.progress is None or task is None:
            return
        fields = {} if metrics is None else {"metrics": metrics}
        self.progress.update(task, completed=n, **fields)  # drawn by rich's refresh thread

    # ---- training ---------------------------------------------------------------------------------------
    def on_sanity_check_start(self, trainer: Any, pl_module: Any) -> None:
        self._start()

    def on_sanity_check_end(self, trainer: Any, pl_module: Any) -> None:
        if self.progress is not None and self.val_progress_bar_id is not None:
            self.progress.update(self.val_progress_bar_id, visible=False)
            self.progress.refresh()
        self.val_progress_bar_id = None

    def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
        self._start()
        if self.progress is None:
            return
        description = f"Epoch {trainer.current_epoch}/{trainer.max_epochs - 1}" if trainer.max_epochs else ""
        description = description or f"Epoch {trainer.current_epoch}"
        if self.train_progress_bar_id is not None and self._leave:
            self.train_progress_bar_id = None
        if self.train_progress_bar_id is None:
            self.train_progress_bar_id = self._task(description, self.total_train_batches)
        else:
            self.progress.reset(
                self.train_progress_bar_id, total=_total(self.total_train_batches), description=description
            )
        self.progress.refresh()

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        if self.progress is not None:  # a disabled bar reads no metrics (each read is a device read-back)
            self._update(self.train_progress_bar_id, batch_idx + 1, self._metrics_text(trainer, pl_module))

    def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
        if self.progress is not None and self.train_progress_bar_id is not None:
            self.progress.update(self.train_progress_bar_id, metrics=self._metrics_text(trainer, pl_module))
            self.progress.refresh()

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        self._stop()

    # ---- evaluation -------------------------------------------------------------------------------------
    def on_validation_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        if not self.has_dataloader_changed(dataloader_idx):
            return
        self._start()
        if self.progress is None:
            return
        if self.val_progress_bar_id is not None:
            self.progress.update(self.val_progress_bar_id, visible=False)
        label = self.sanity_check_description if trainer.sanity_checking else self.validation_description
        self.val_progress_bar_id = self._task(label, self.total_val_batches_current_dataloader)

    def on_validation_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._update(self.val_progress_bar_id, batch_idx + 1)

    def on_validation_end(self, trainer: Any, pl_module: Any) -> None:
        if self.progress is not None and self.val_progress_bar_id is not None and trainer.state.fn == "fit":
            self.progress.update(self.val_progress_bar_id, visible=False)
            if self.train_progress_bar_id is not None:
                self.progress.update(self.train_progress_bar_id, metrics=self._metrics_text(trainer, pl_module))
            self.progress.refresh()
        self.reset_dataloader_idx_tracker()
        if trainer.state.fn != "fit":
            self._stop()

    def _eval_start(self, label: str, total: Any, dataloader_idx: int) -> None:
        if not self.has_dataloader_changed(dataloader_idx):
            return
        self._start()
        if self.progress is not None:
            task = self._task(label, total)
            if label == self.test_description:
                self.test_progress_bar_id = task
            else:
                self.predict_progress_bar_id = task

    def on_test_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._eval_start(self.test_description, self.total_test_batches_current_dataloader, dataloader_idx)

    def on_test_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._update(self.test_progress_bar_id, batch_idx + 1)

    def on_test_end(self, trainer: Any, pl_module: Any) -> None:
        self._stop()
        self.reset_dataloader_idx_tracker()

    def on_predict_batch_start(
        self, trainer: Any, pl_module: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._eval_start(self.predict_description, self.total_predict_batches_current_dataloader, dataloader_idx)

    def on_predict_batch_end(
        self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        self._update(self.predict_progress_bar_id, batch_idx + 1)

    def on_predict_end(self, trainer: Any, pl_module: Any) -> None:
        self._stop()
        self.reset_dataloader_idx_tracker()

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        self._stop()

    def teardown(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._stop()

    def print(self, *args: Any, **kwargs: Any) -> None:
        if self.progress is not None:
            self.progress.console.print(*args, **kwargs)
        else:
            print(*args, **kwargs)
