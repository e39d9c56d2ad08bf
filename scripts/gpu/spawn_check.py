"""``strategy="ddp_spawn"`` and ``"ddp"`` on the GPUs of one machine (NCCL): both train, and the parent gets the result.

    python scripts/gpu/spawn_check.py            # on a machine with 2+ GPUs (the lent nvidia-h100-x2 / h200-x2)

ddp_spawn pickles the Trainer and the module to the spawned processes and loads rank 0's weights back into this
process; ddp re-launches this script (so this file is a script with a main guard). Prints one line per strategy:
the loss before and after, and whether this process's weights moved.
"""

from __future__ import annotations

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug


class Regression(accelplug.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main(strategy: str) -> None:
    torch.manual_seed(0)
    x = torch.randn(256, 8)
    data = DataLoader(TensorDataset(x, x @ torch.arange(8.0).unsqueeze(1)), batch_size=32)
    model = Regression()
    before = model.layer.weight.detach().clone()
    trainer = accelplug.Trainer(
        accelerator="cuda",
        devices=2,
        strategy=strategy,
        max_epochs=3,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
    )
    trainer.fit(model, data)
    if trainer.is_global_zero:
        moved = not torch.equal(before, model.layer.weight.detach().cpu())
        loss = float(trainer.callback_metrics["train_loss"])
        print(
            f"{strategy}: world size {trainer.world_size}, global_step {trainer.global_step}, last train_loss "
            f"{loss:.4f}, weights in this process trained: {moved}",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "ddp_spawn")
