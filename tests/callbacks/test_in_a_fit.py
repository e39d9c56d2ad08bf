"""Callbacks inside a fit: their hooks run in Lightning's order, and one can end the fit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Trainer
from accelplug.callbacks import Callback
from tests.modules import LinearRegression, quiet, regression_data

# These fits use loaders of a few batches: the advice that an epoch is shorter than the logging interval
# (Lightning's, given by both frameworks) is not what the tests are about.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)


def test_callback_hooks_run_in_order(tmp_path: Path) -> None:
    calls: list[str] = []

    class Recorder:
        def on_fit_start(self, trainer: Trainer, model: torch.nn.Module) -> None:
            calls.append("fit_start")

        def on_train_batch_end(self, trainer: Trainer, model: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
            calls.append(f"batch{batch_idx}")

        def on_train_epoch_end(self, trainer: Trainer, model: torch.nn.Module) -> None:
            calls.append("epoch_end")

        def on_fit_end(self, trainer: Trainer, model: torch.nn.Module) -> None:
            calls.append("fit_end")

    trainer = Trainer(**quiet(max_epochs=1, limit_train_batches=2, callbacks=Recorder(), default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data())
    assert calls == ["fit_start", "batch0", "batch1", "epoch_end", "fit_end"]


def test_a_callback_can_stop_training(tmp_path: Path) -> None:
    class StopAtThree(Callback):
        def on_train_batch_end(self, trainer: Trainer, model: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
            if trainer.global_step == 3:
                trainer.should_stop = True

    trainer = Trainer(**quiet(max_epochs=10, callbacks=[StopAtThree()], default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data())
    assert trainer.global_step == 3
