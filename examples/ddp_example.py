"""Data-parallel training across processes: the same script runs on 1 CPU, 2 CPU processes or 8 GPUs.

    accelplug launch --cpu --devices 2 examples/ddp_example.py --out weights.pt
    accelplug launch --devices 2 examples/ddp_example.py            # two GPUs, nccl
    torchrun --nproc-per-node 2 examples/ddp_example.py             # plain torchrun works the same
    python examples/ddp_example.py --devices 2                      # re-launches itself through torchrun

Each rank sees its own shard of the data (the Trainer inserts a DistributedSampler), gradients are
averaged by DDP, and rank 0 alone writes logs and checkpoints. With ``--out`` every rank saves its
final weights to ``OUT.rank<N>`` so you can check that all ranks ended identical.
"""

from __future__ import annotations

import argparse
import os

import torch
from torch.utils.data import DataLoader, TensorDataset

from accelplug import Trainer


class Regression(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
        self.crash_at_batch = -1

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        if batch_idx == self.crash_at_batch:
            raise RuntimeError(f"this rank fails on purpose at batch {batch_idx} (--crash-rank)")
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.05, momentum=0.9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", default="auto", help="processes to use (default: what the launcher started)")
    parser.add_argument("--max-epochs", type=int, default=3)
    parser.add_argument("--root-dir", default=None)
    parser.add_argument("--out", default=None, help="save each rank's final weights to OUT.rank<N>")
    parser.add_argument("--crash-rank", type=int, default=None, help="make this rank raise mid-training (fail-fast)")
    args = parser.parse_args()

    generator = torch.Generator().manual_seed(0)
    x = torch.randn(512, 8, generator=generator)
    y = torch.sin(x.sum(dim=1, keepdim=True))
    data = TensorDataset(x, y)
    devices: int | str = int(args.devices) if args.devices.isdigit() else args.devices
    trainer = Trainer(
        devices=devices,
        strategy="ddp" if devices != 1 else "auto",
        max_epochs=args.max_epochs,
        default_root_dir=args.root_dir,
        seed=0,
        log_every_n_steps=4,
    )
    torch.manual_seed(0)
    model = Regression()
    if args.crash_rank is not None and trainer.global_rank == args.crash_rank:
        model.crash_at_batch = 3  # the other ranks will be waiting for it in a gradient all-reduce
    trainer.fit(model, DataLoader(data, batch_size=32, shuffle=True), DataLoader(data, batch_size=128))
    if args.out:
        torch.save(model.state_dict(), f"{args.out}.rank{trainer.global_rank}")
    if trainer.is_global_zero:
        print(f"world size {trainer.world_size} (pid {os.getpid()}): {trainer.callback_metrics}")


if __name__ == "__main__":
    main()
