"""A LightningModule written against ``lightning.pytorch``, the way a model zoo ships one."""

import lightning.pytorch as pl
import torch
from lightning.pytorch.utilities import rank_zero_only
from torch import nn


class LinearRegressor(pl.LightningModule):
    """Fits ``y = 3x - 1`` with one linear layer and logs its validation loss."""

    def __init__(self, lr: float = 0.1) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.layer = nn.Linear(1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer(x)

    def training_step(self, batch, batch_idx):  # type: ignore[no-untyped-def]
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):  # type: ignore[no-untyped-def]
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self(x), y))

    def configure_optimizers(self):  # type: ignore[no-untyped-def]
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    @rank_zero_only
    def describe(self) -> str:
        return f"LinearRegressor(lr={self.hparams.lr})"
