"""A torchmetrics object logged in ``validation_step`` and computed again in ``on_validation_epoch_end`` (the
Hydra template's ``val_acc_best``): Lightning resets logged metrics only after the epoch-end hooks, so the hook
reads the epoch's value. Compared with Lightning 2.6.6."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
import torch

pytest.importorskip("lightning", reason="compared against lightning, not installed here")
torchmetrics = pytest.importorskip("torchmetrics")


def _fit(framework: str) -> dict[str, float]:
    L: Any = importlib.import_module(framework)

    class Module(L.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)
            self.val_mean = torchmetrics.MeanMetric()
            self.best = torchmetrics.MaxMetric()

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self.layer(batch[0]).pow(2).mean()

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.val_mean(self.layer(batch[0]).mean() + 10.0)
            self.log("val/mean", self.val_mean, on_step=False, on_epoch=True)

        def on_validation_epoch_end(self) -> None:
            self.best(self.val_mean.compute())
            self.log("val/best", self.best.compute())

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    torch.manual_seed(0)
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(16, 4)), batch_size=4)
    model = Module()
    quiet = {
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
    }
    trainer = L.Trainer(accelerator="cpu", max_epochs=2, num_sanity_val_steps=0, **quiet)
    trainer.fit(model, data, data)
    return {k: float(v) for k, v in trainer.callback_metrics.items()}


def test_a_metric_computed_in_the_epoch_end_hook_reads_the_epochs_value() -> None:
    ours, theirs = _fit("accelplug"), _fit("lightning")
    assert ours == pytest.approx(theirs)
    assert ours["val/best"] >= ours["val/mean"] - 1e-6  # the best epoch mean, not a reset metric's 0
