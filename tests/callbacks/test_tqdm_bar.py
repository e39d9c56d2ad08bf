"""Progress bars as Lightning code handles them: ``Tqdm`` replaced at Lightning's path, pickled, printing through."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from accelplug import Trainer
from accelplug.callbacks import TQDMProgressBar
from accelplug.demos.boring_classes import BoringModel
from accelplug.pytorch.callbacks.progress import tqdm_progress


def _trainer(tmp_path: Path, bar: Any) -> Trainer:
    return Trainer(
        default_root_dir=tmp_path,
        accelerator="cpu",
        devices=1,
        max_epochs=1,
        limit_train_batches=2,
        limit_val_batches=1,
        limit_test_batches=1,
        num_sanity_val_steps=0,
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        callbacks=[bar],
    )


class Recording(tqdm_progress.Tqdm):  # type: ignore[misc]
    """A Tqdm that remembers each count it drew (how Lightning's own tests watch the bars)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.counts: list[int] = []
        super().__init__(*args, **kwargs)

    def refresh(self, *args: Any, **kwargs: Any) -> Any:
        if self.n and (not self.counts or self.counts[-1] != self.n):
            self.counts.append(self.n)
        return super().refresh(*args, **kwargs)


def test_a_tqdm_class_replaced_at_lightnings_path_draws_the_bars(tmp_path: Path) -> None:
    bar = TQDMProgressBar()
    with mock.patch("accelplug.pytorch.callbacks.progress.tqdm_progress.Tqdm", Recording):
        _trainer(tmp_path, bar).fit(BoringModel())
    assert isinstance(bar.train_progress_bar, Recording)
    assert bar.train_progress_bar.counts == [1, 2]


def test_a_bar_pickles_after_each_stage(tmp_path: Path) -> None:
    bar = TQDMProgressBar()
    trainer = _trainer(tmp_path, bar)
    trainer.fit(BoringModel())
    copy = pickle.loads(pickle.dumps(bar))
    assert copy.train_progress_bar is None and copy.refresh_rate == bar.refresh_rate
    trainer.test(BoringModel(), verbose=False)
    pickle.dumps(bar)


def test_module_print_goes_through_the_drawing_bar(tmp_path: Path) -> None:
    printed: list[tuple[Any, ...]] = []

    class Printing(BoringModel):
        def training_step(self, batch: Any, batch_idx: int) -> Any:
            self.print("step", batch_idx)
            return super().training_step(batch, batch_idx)

    class Bar(TQDMProgressBar):
        def print(self, *args: Any, **kwargs: Any) -> None:
            printed.append(args)

    _trainer(tmp_path, Bar()).fit(Printing())
    assert printed == [("step", 0), ("step", 1)]


def test_module_print_uses_plain_print_when_the_bar_is_disabled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Printing(BoringModel):
        def training_step(self, batch: Any, batch_idx: int) -> Any:
            self.print("plain", batch_idx)
            return super().training_step(batch, batch_idx)

    bar = TQDMProgressBar()
    bar.disable()
    _trainer(tmp_path, bar).fit(Printing())
    assert "plain 0\nplain 1\n" in capsys.readouterr().out


def test_a_rich_bar_pickles_after_fit(tmp_path: Path) -> None:
    from accelplug.callbacks import RichProgressBar

    bar = RichProgressBar()
    trainer = _trainer(tmp_path, bar)
    trainer.fit(BoringModel())
    copy = pickle.loads(pickle.dumps(bar))
    assert copy.progress is None and bar.progress is not None
