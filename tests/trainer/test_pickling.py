"""A fitted Trainer can be pickled (``torch.save(trainer)``), as Lightning's can, and runs again."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug


class Regression(accelplug.LightningModule):
    """At module level, so that pickle finds the class by name."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        loss = torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)

    def train_dataloader(self) -> DataLoader[Any]:
        x = torch.randn(16, 4, generator=torch.Generator().manual_seed(0))
        return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)

    val_dataloader = train_dataloader


def test_a_fitted_trainer_survives_torch_save_and_validates_again(tmp_path: Path) -> None:
    trainer = accelplug.Trainer(
        accelerator="cpu", max_epochs=1, default_root_dir=tmp_path, enable_progress_bar=True, enable_model_summary=False
    )
    with warnings.catch_warnings():
        # the tiny data set on purpose: 4 batches, fewer than the default logging interval of 50
        warnings.filterwarnings("ignore", message=r"The number of training batches \(4\) is smaller than the logging")
        trainer.fit(Regression())
    torch.save(trainer, tmp_path / "trainer.pt")
    loaded = torch.load(tmp_path / "trainer.pt", weights_only=False)
    assert (loaded.global_step, loaded.current_epoch, loaded.state.finished) == (4, 1, True)
    assert loaded.callback_metrics.keys() == trainer.callback_metrics.keys()
    assert isinstance(loaded.lightning_module, Regression)
    (metrics,) = loaded.validate(loaded.lightning_module, verbose=False)
    assert metrics["val_loss"] == trainer.validate(trainer.lightning_module, verbose=False)[0]["val_loss"]
