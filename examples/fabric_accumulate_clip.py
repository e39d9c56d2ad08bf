"""Gradient accumulation and clipping in a Fabric loop, with mixed precision and a checkpoint.

    python examples/fabric_accumulate_clip.py --out /tmp/run.ckpt
    accelplug launch --cpu --devices 2 examples/fabric_accumulate_clip.py --precision bf16-mixed
    python examples/fabric_accumulate_clip.py --resume /tmp/run.ckpt     # continues from the saved epoch

Micro-batches that only accumulate run under ``fabric.no_backward_sync`` (no gradient all-reduce until the
last one of each window), the accumulated gradient is clipped to a norm before each step, and
``fabric.save``/``fabric.load`` write and read the same checksummed checkpoint file the Trainer uses.
"""

from __future__ import annotations

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

from accelplug.fabric import Fabric


def make_data(samples: int = 256) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(samples, 8, generator=generator)
    y = x @ torch.linspace(-1, 1, 8).unsqueeze(1) + 0.1 * torch.randn(samples, 1, generator=generator)
    return TensorDataset(x, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accelerator", default="auto")
    parser.add_argument("--devices", default="auto")
    parser.add_argument("--precision", default=None)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--accumulate", type=int, default=4, help="micro-batches per optimizer step")
    parser.add_argument("--max-norm", type=float, default=1.0)
    parser.add_argument("--out", default=None, help="save a checkpoint here after every epoch")
    parser.add_argument("--resume", default=None, help="continue from this checkpoint")
    args = parser.parse_args()

    fabric = Fabric(accelerator=args.accelerator, devices=args.devices, precision=args.precision)
    fabric.launch()
    fabric.seed_everything(0, verbose=False)
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(DataLoader(make_data(), batch_size=8, shuffle=True))

    state = {"model": model, "optimizer": optimizer, "epoch": 0}
    if args.resume:
        fabric.load(args.resume, state)
        fabric.print(f"resumed from {args.resume} at epoch {state['epoch']}")

    for epoch in range(state["epoch"], args.epochs):
        for index, (x, y) in enumerate(loader):
            stepping = (index + 1) % args.accumulate == 0 or index + 1 == len(loader)
            with fabric.no_backward_sync(model, enabled=not stepping):
                loss = torch.nn.functional.mse_loss(model(x), y)
                fabric.backward(loss / args.accumulate)
            if stepping:
                norm = fabric.clip_gradients(model, optimizer, max_norm=args.max_norm)
                optimizer.step()
                optimizer.zero_grad()
        mean_loss = fabric.all_reduce(loss.detach(), reduce_op="mean")
        fabric.print(f"epoch {epoch}: loss {mean_loss.item():.4f}, gradient norm before clipping {float(norm):.3f}")
        state["epoch"] = epoch + 1
        if args.out:
            fabric.save(args.out, state)


if __name__ == "__main__":
    main()
