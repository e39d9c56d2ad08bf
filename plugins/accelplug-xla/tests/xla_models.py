"""The LightningModules and data the XLA training tests share.

The data carry each sample's index as a third column, so a test can see which samples a step got
and in which order, whatever device they were uploaded to.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug as L

FEATURES = 8


def regression_data(n: int = 256, batch_size: int = 32, *, shuffle: bool = True, seed: int = 0) -> DataLoader[Any]:
    """Targets from a fixed linear map of the features (learnable), with each sample's index alongside."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, FEATURES, generator=generator)
    weight = torch.linspace(-1.0, 1.0, FEATURES).unsqueeze(1)
    y = x @ weight + 0.1
    index = torch.arange(n, dtype=torch.float32).unsqueeze(1)
    return DataLoader(TensorDataset(x, y, index), batch_size=batch_size, shuffle=shuffle)


class Regressor(L.LightningModule):
    """An MLP (with dropout when ``dropout`` > 0: then every step draws from the device generator)."""

    def __init__(self, dropout: float = 0.0, lr: float = 0.01) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(FEATURES, 32), torch.nn.ReLU(), torch.nn.Dropout(dropout), torch.nn.Linear(32, 1)
        )
        self.seen: list[int] = []
        self.output_dtypes: list[torch.dtype] = []
        self.batch_devices: list[str] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        output: torch.Tensor = self.net(x)
        return output

    def training_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> torch.Tensor:
        x, y, index = batch
        prediction = self(x)
        self.output_dtypes.append(prediction.dtype)
        self.batch_devices.append(x.device.type)
        self.seen += [int(i) for i in index.flatten().cpu().tolist()]
        loss = torch.nn.functional.mse_loss(prediction.float(), y.float())
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> None:
        x, y, _ = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self(x).float(), y.float()))

    def test_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> None:
        x, y, _ = batch
        self.log("test_loss", torch.nn.functional.mse_loss(self(x).float(), y.float()))

    def predict_step(self, batch: Any, batch_idx: int = 0, dataloader_idx: int = 0) -> Any:
        return self(batch[0])

    def configure_optimizers(self) -> Any:
        return torch.optim.Adam(self.parameters(), lr=self.hparams["lr"])


class ManualRegressor(Regressor):
    """The same model stepped by hand (``automatic_optimization = False``)."""

    def __init__(self) -> None:
        super().__init__()
        self.automatic_optimization = False

    def training_step(self, batch: tuple[torch.Tensor, ...], batch_idx: int) -> torch.Tensor:
        optimizer = self.optimizers()
        optimizer.zero_grad()
        x, y, _ = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.manual_backward(loss)
        optimizer.step()
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss


def weights(module: torch.nn.Module) -> torch.Tensor:
    """Every parameter, flattened, on the CPU."""
    return torch.cat([p.detach().float().flatten().cpu() for p in module.parameters()])


def trainer(**options: Any) -> L.Trainer:
    """A quiet Trainer on the XLA device unless ``options`` say otherwise."""
    settings: dict[str, Any] = {
        "accelerator": "xla",
        "devices": 1,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "logger": False,
        "enable_checkpointing": False,
        "num_sanity_val_steps": 0,
    }
    settings.update(options)
    return L.Trainer(**settings)
