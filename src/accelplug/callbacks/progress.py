"""Progress-bar callbacks with Lightning's names: ``ProgressBar`` (the base), ``TQDMProgressBar``, ``RichProgressBar``.

A progress bar is a callback that draws from the hooks: a bar per training epoch (``Epoch N``), one per
validation/test/predict pass (``Validation DataLoader 0``...), with ``get_metrics`` beside it (the logger's
version as ``v_num`` and the ``prog_bar=True`` metrics). When the Trainer's callbacks hold one, it draws instead
of accelplug's own display; ``refresh_rate`` 0 turns it off. ``TQDMProgressBar`` needs ``tqdm``;
``RichProgressBar`` needs ``rich`` (a dependency of accelplug); a missing one is named in the error.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from typing import Any

from ..errors import MisconfigurationException
from .base import Callback

__all__ = ["ProgressBar", "RichProgressBar", "RichProgressBarTheme", "TQDMProgressBar", "get_standard_metrics"]


def _total(value: Any) -> int | None:
    """A batch count for a bar; None when unknown or infinite (an iterable dataset)."""
    if value is None or (isinstance(value, float) and (math.isinf(value) or math.isnan(value))):
        return None
    return int(value)


def _nth(values: Any, index: int) -> Any:
    if isinstance(values, (list, tuple)):
        return values[index] if index < len(values) else None
    return values


class ProgressBar(Callback):
    """What every progress bar shares: the trainer it draws for, the batch totals, the metrics shown."""

    def __init__(self) -> None:
        self._trainer: Any = None
        self._current_eval_dataloader_idx: int | None = None

    @property
    def trainer(self) -> Any:
        if self._trainer is None:
            raise MisconfigurationException(
                f"{type(self).__name__} is not attached to a Trainer yet: pass it in Trainer(callbacks=[...])."
            )
        return self._trainer

    @property
    def pl_module(self) -> Any:
        return self.trainer.lightning_module

    sanity_check_description = "Sanity Checking"
    train_description = "Training"
    validation_description = "Validation"
    test_description = "Testing"
    predict_description = "Predicting"

    @property
    def total_train_batches(self) -> int | float:
        """Batches in one training epoch (``inf`` when the loader has no length)."""
        value = getattr(self.trainer, "num_training_batches", None)
        return float("inf") if value is None else value

    def _eval_total(self, name: str) -> int | float:
        index = self._current_eval_dataloader_idx or 0
        value = _nth(getattr(self.trainer, name, None), index)
        return float("inf") if value is None else value

    @property
    def total_val_batches_current_dataloader(self) -> int | float:
        name = "num_sanity_val_batches" if self.trainer.sanity_checking else "num_val_batches"
        return self._eval_total(name)

    @property
    def total_test_batches_current_dataloader(self) -> int | float:
        return self._eval_total("num_test_batches")

    @property
    def total_predict_batches_current_dataloader(self) -> int | float:
        return self._eval_total("num_predict_batches")

    @property
    def total_val_batches(self) -> int | float:
        """All validation loaders' batches, 0 in an epoch that does not validate (as Lightning counts them)."""
        trainer = self.trainer
        every = getattr(trainer, "check_val_every_n_epoch", None)
        if not getattr(trainer, "enable_validation", True) or (every and (trainer.current_epoch + 1) % every):
            return 0
        values = getattr(trainer, "num_val_batches", None)
        if values is None:
            return float("inf")
        return sum(values) if isinstance(values, (list, tuple)) else values

    def has_dataloader_changed(self, dataloader_idx: int) -> bool:
        old, self._current_eval_dataloader_idx = self._current_eval_dataloader_idx, dataloader_idx
        return old != dataloader_idx

    def reset_dataloader_idx_tracker(self) -> None:
        self._current_eval_dataloader_idx = None

    def disable(self) -> None:
        """Stop drawing (the Trainer calls it on processes other than global zero)."""
        raise NotImplementedError

    def enable(self) -> None:
        raise NotImplementedError

    def print(self, *args: Any, **kwargs: Any) -> None:
        """Print without breaking the bars."""
        print(*args, **kwargs)

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._trainer = trainer
        if not trainer.is_global_zero:
            self.disable()

    def get_metrics(self, trainer: Any, pl_module: Any) -> dict[str, int | str | float | dict[str, float]]:
        """What the bar shows: :func:`get_standard_metrics` (``v_num``) and the prog_bar metrics."""
        shown: dict[str, Any] = dict(get_standard_metrics(trainer))
        for name, value in trainer.progress_bar_metrics.items():
            shown[name] = float(value) if not isinstance(value, (int, str)) else value
        return shown


def get_standard_metrics(trainer: Any) -> dict[str, int | str]:
    """What every bar shows besides the logged values: ``v_num``, the loggers' version (the last 4 characters of a
    text one; several loggers' distinct versions joined by ``_``), when there is one."""
    loggers = list(trainer.loggers)
    if not loggers:
        return {}
    if len(loggers) == 1:
        version = loggers[0].version
    else:
        version = "_".join(dict.fromkeys(str(logger.version) for logger in loggers))
    if version in ("", None):
        return {}
    return {"v_num": version[-4:] if isinstance(version, str) else version}


def _tqdm_class() -> Any:
    from .tqdm_bar import Tqdm  # imports tqdm, which only the tqdm bar needs

    return Tqdm


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

    def print(self, *args: Any, sep: str = " ", **kwargs: Any) -> None:
        from tqdm.auto import tqdm  # type: ignore[import-untyped]

        tqdm.write(sep.join(map(str, args)), **kwargs)


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
