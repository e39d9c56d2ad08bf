"""Train a small regression model under a DeepSpeed strategy; run as a script (one process, or under torchrun).

argv: strategy, precision, epochs, out_json, [ckpt_to_save], [ckpt_to_resume]. Writes per-step losses (rank 0).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug as L


class Regression(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
        self.losses: list[float] = []

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x).float(), y.float())
        self.losses.append(float(loss.detach()))
        return loss

    def configure_optimizers(self) -> Any:
        optimizer: torch.optim.Optimizer = (
            torch.optim.SGD(self.parameters(), lr=0.05)
            if os.environ.get("DS_TEST_SGD")
            else torch.optim.AdamW(self.parameters(), lr=0.01)
        )
        return {"optimizer": optimizer, "lr_scheduler": torch.optim.lr_scheduler.StepLR(optimizer, 3, 0.5)}


def loader() -> DataLoader[Any]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, generator=g)
    y = x.sum(dim=1, keepdim=True) * 0.3
    return DataLoader(TensorDataset(x, y), batch_size=8)


def main() -> None:
    strategy, precision, epochs, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    save = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] != "-" else None
    resume = sys.argv[6] if len(sys.argv) > 6 else None
    torch.manual_seed(0)
    model = Regression()
    trainer = L.Trainer(
        accelerator="cpu", devices="auto", strategy=strategy, precision=precision, max_epochs=epochs,
        logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        # the loader as given on every rank, whatever the strategy: the engine's numbers are what is compared
        # (a DDP-based strategy would otherwise shard and shuffle it, as Lightning's does)
        use_distributed_sampler=False,
    )  # fmt: skip
    trainer.fit(model, loader(), ckpt_path=resume)
    if save:
        trainer.save_checkpoint(save)
    if trainer.is_global_zero:
        with open(out, "w") as f:
            json.dump({"losses": model.losses, "global_step": trainer.global_step,
                       "world_size": trainer.world_size}, f)  # fmt: skip


if __name__ == "__main__":
    main()
