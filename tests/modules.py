"""Small Lightning-protocol modules and data shared by the Trainer tests."""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

TRUE_WEIGHT = torch.tensor([[2.0, -3.0, 0.5]])
TRUE_BIAS = 0.25


def regression_data(n: int = 256, batch_size: int = 32, shuffle: bool = True, seed: int = 0) -> DataLoader[Any]:
    """Noise-free targets ``x @ TRUE_WEIGHT.T + TRUE_BIAS``: least squares recovers them exactly."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=generator)
    y = x @ TRUE_WEIGHT.T + TRUE_BIAS
    return DataLoader(TensorDataset(x, y), batch_size=batch_size, shuffle=shuffle)


class LinearRegression(torch.nn.Module):
    def __init__(self, lr: float = 0.1) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 1)
        self.lr = lr
        self.seen_dtypes: list[torch.dtype] = []

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        prediction = self.linear(x)
        self.seen_dtypes.append(prediction.dtype)
        return torch.nn.functional.mse_loss(prediction.float(), y.float())

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict[str, torch.Tensor]:
        x, y = batch
        return {"loss": torch.nn.functional.mse_loss(self.linear(x).float(), y.float())}

    def predict_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self.linear(batch[0])

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=self.lr)


class NoisyNet(torch.nn.Module):
    """Dropout, Adam and a step scheduler: every piece of state a resume must restore."""

    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.Dropout(0.3), torch.nn.Linear(16, 1))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict[str, torch.Tensor]:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        return {"loss": loss, "noise": torch.rand(()) + loss.detach() * 0}

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.Adam(self.parameters(), lr=0.01)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.8)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}


def quiet(**options: Any) -> dict[str, Any]:
    """Trainer options for tests: CPU, no progress output and no model summary, plus ``options``."""
    return {"accelerator": "cpu", "devices": 1, "enable_progress_bar": False, "enable_model_summary": False, **options}
