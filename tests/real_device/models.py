"""The models and data of the real-device runs, free of torchvulkan so the test process can use them too."""

from __future__ import annotations

from typing import Any

import torch

import accelplug


class Regressor(accelplug.LightningModule):
    """A tiny MLP regression: every tensor it makes is on the module's device."""

    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(8, 16), torch.nn.LayerNorm(16), torch.nn.GELU(), torch.nn.Linear(16, 1)
        )
        self.losses: list[float] = []
        self.devices: set[str] = set()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.net(x)
        return out

    def _loss(self, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        x, y = batch
        self.devices.add(x.device.type)
        return torch.nn.functional.mse_loss(self(x).float(), y)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = self._loss(batch)
        self.losses.append(float(loss.detach().cpu()))
        self.log("train_loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        self.log("val_loss", self._loss(batch))

    def test_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        self.log("test_loss", self._loss(batch))

    def predict_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self(batch[0])

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(self.parameters(), lr=0.01)


def loader(pin_memory: bool = False) -> torch.utils.data.DataLoader[Any]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, generator=generator)
    y = x.sum(dim=1, keepdim=True) + 0.1 * torch.randn(64, 1, generator=generator)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16, pin_memory=pin_memory)


class Classifier(Regressor):
    """A normal small training step: embedding, LayerNorm, GELU, dropout, cross-entropy, gradient clipping."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(32, 8)
        self.net = torch.nn.Sequential(
            torch.nn.Linear(8, 16),
            torch.nn.LayerNorm(16),
            torch.nn.GELU(),
            torch.nn.Dropout(0.1),
            torch.nn.Linear(16, 4),
        )

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.net(self.embed(tokens).mean(dim=1))
        return out

    def _loss(self, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        tokens, labels = batch
        self.devices.add(tokens.device.type)
        logits = self(tokens)
        accuracy = (logits.argmax(dim=1) == labels).float().mean()
        self.log("accuracy", accuracy)
        return torch.nn.functional.cross_entropy(logits.float(), labels)


class BFloat16Touch(Classifier):
    """The control: one bfloat16 operation in the step, which this device runs on the CPU, must be seen
    through the Trainer as it is in a hand-written loop (nothing in between swallows the warning)."""

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = super().training_step(batch, batch_idx)
        return loss + 0 * loss.detach().to(torch.bfloat16).float()


def tokens() -> torch.utils.data.DataLoader[Any]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randint(0, 32, (32, 6), generator=generator)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, x[:, 0] % 4), batch_size=8)
