"""``TQDMProgressBar``, Lightning's classic bar (``RichProgressBar`` is in :mod:`.rich_progress`).

A progress bar is a callback that draws from the hooks: a bar per training epoch (``Epoch N``), one per
validation/test/predict pass (``Validation DataLoader 0``...), with ``get_metrics`` beside it (the logger's
version as ``v_num`` and the ``prog_bar=True`` metrics). When the Trainer's callbacks hold one, it draws instead
of accelplug's own display; ``refresh_rate`` 0 turns it off. ``TQDMProgressBar`` needs ``tqdm``, named in the
error when missing.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .._import_paths import seen_at
from ..errors import MisconfigurationException
from .progress_bar import ProgressBar, _SwitchedBar, _total, get_standard_metrics

__all__ = ["ProgressBar", "TQDMProgressBar", "get_standard_metrics"]


#: Lightning's public path of the ``Tqdm`` class. Code written for Lightning replaces the class there
#: (``mock.patch("lightning.pytorch.callbacks.progress.tqdm_progress.Tqdm", Recording)``) to watch the bars; the
#: bar reads the class from that module, when it is loaded, each time it makes a bar, so the replacement is used.
_TQDM_PUBLIC_PATH = "accelplug.pytorch.callbacks.progress.tqdm_progress"


def _tqdm_class() -> Any:
    from . import tqdm_bar  # imports tqdm, which only the tqdm bar needs

    return seen_at(_TQDM_PUBLIC_PATH, "Tqdm", tqdm_bar.Tqdm)


def _miniters(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise MisconfigurationException(f"TQDM_MINITERS={text!r} is invalid: use an int >= 0.") from None


def _should_update(refresh_rate: int, n: int, total: int | None) -> bool:
    return refresh_rate > 0 and (n % refresh_rate == 0 or n == total)


class TQDMProgressBar(_SwitchedBar):
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
    def process_position(self) -> int:
        return self._process_position

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
