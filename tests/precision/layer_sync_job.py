"""A two-process DDP fit (``strategy="ddp_fork"`` on the CPU) with a custom ``LayerSync``: each rank writes
the layers ``apply`` saw to ``argv[1]`` (it leaves them alone: torch's SyncBatchNorm runs on GPUs only)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.plugins import LayerSync


class Recording(LayerSync):
    def apply(self, model: torch.nn.Module) -> torch.nn.Module:
        seen = sorted(type(m).__name__ for m in model.modules())
        with open(os.path.join(sys.argv[1], f"rank{os.environ.get('RANK', '?')}.json"), "w") as out:
            json.dump({"seen": seen, "pid": os.getpid()}, out)
        return model

    def revert(self, model: torch.nn.Module) -> torch.nn.Module:
        return model


class Net(accelplug.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 1))

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=0.01)


if __name__ == "__main__":
    x = torch.randn(16, 4)
    loader = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)
    trainer = accelplug.Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp_fork",
        max_epochs=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        plugins=[Recording()],
    )
    trainer.fit(Net(), loader)
