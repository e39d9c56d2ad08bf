"""A small two-process training job for the cluster tests, run as ``srun python train_job.py`` (or under torchrun).

It trains a linear regression with ``Trainer(strategy="ddp", devices=N)`` and says on stdout, per
process, which rank it was and how many processes the job had; rank 0 saves the trained weights to
``--out``. ``--step-delay`` slows each step of the job's first run so a signal can arrive mid-run (a run Slurm
requeued, ``SLURM_RESTART_COUNT`` above 0, goes at full speed: nothing is sent to it), and ``--ready`` names a
file rank 0 touches at step 3 (the test then knows training is under way). Run by hand:

    srun --ntasks=2 python tests/clusters/train_job.py --root /tmp/run --out /tmp/run/w.pt
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug as L


class Regression(L.LightningModule):
    def __init__(self, delay: float, ready: Path | None) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.delay = delay
        self.ready = ready

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        if self.delay:
            time.sleep(self.delay)
        if self.ready is not None and self.global_step == 3 and self.trainer.is_global_zero:
            self.ready.touch()
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> None:
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y), sync_dist=True)

    def predict_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self.layer(batch[0])

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.05)


def data() -> DataLoader[tuple[torch.Tensor, ...]]:
    """64 samples of a noisy linear function, 4 a batch, shuffled (each rank gets its shard)."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=generator)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1 * torch.randn(64, 1, generator=generator)
    return DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True)


#: The Trainer's options besides devices, nodes and strategy (the notebook test uses the same).
OPTIONS = {
    "accelerator": "cpu",
    "max_epochs": 3,
    "logger": False,
    "enable_checkpointing": False,
    "enable_progress_bar": False,
    "enable_model_summary": False,
    "log_every_n_steps": 1,
}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--num-nodes", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--step-delay", type=float, default=0.0)
    parser.add_argument("--ready", type=Path, default=None)
    args = parser.parse_args()

    restarts = os.environ.get("SLURM_RESTART_COUNT", "0")
    loader = data()
    L.seed_everything(0, verbose=False)
    model = Regression(args.step_delay if restarts == "0" else 0.0, args.ready)
    options = {**OPTIONS, "max_epochs": args.epochs, "default_root_dir": args.root}
    trainer = L.Trainer(devices=args.devices, num_nodes=args.num_nodes, strategy="ddp", **options)
    trainer.fit(model, loader)
    line = (
        f"rank {trainer.global_rank} of {trainer.world_size} (node {trainer.node_rank}, pid {os.getpid()}, "
        f"restart {restarts}): {trainer.global_step} steps\n"
    )
    os.write(sys.stdout.fileno(), line.encode())  # one write: the ranks share the pipe, a line must not split
    if trainer.is_global_zero:
        torch.save(model.state_dict(), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
