"""A hand-written training loop on whatever accelerator this machine has, through Fabric.

    python examples/fabric_basic.py                                   # one device (the best one here)
    accelplug launch --cpu --devices 2 examples/fabric_basic.py       # two CPU processes, DDP
    python examples/fabric_basic.py --devices 2 --accelerator cpu     # re-launches itself as two processes

The loop is plain PyTorch; Fabric places the model and batches on the device, shards the data across
processes, averages gradients and casts to the precision. The same file runs under Lightning Fabric with
``from lightning.fabric import Fabric`` instead of the accelplug import.
"""

from __future__ import annotations

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

from accelplug.fabric import Fabric


def make_data(samples: int = 512) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(samples, 16, generator=generator)
    y = (x[:, :4].sum(dim=1) > 0).long()  # a learnable two-class problem
    return TensorDataset(x, y)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accelerator", default="auto")
    parser.add_argument("--devices", default="auto")
    parser.add_argument("--precision", default=None, help="e.g. bf16-mixed (default: 32-true)")
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()

    fabric = Fabric(accelerator=args.accelerator, devices=args.devices, precision=args.precision)
    fabric.launch()
    fabric.seed_everything(0, verbose=False)

    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(DataLoader(make_data(), batch_size=32, shuffle=True))

    for epoch in range(args.epochs):
        model.train()
        correct = total = 0
        for x, y in loader:
            optimizer.zero_grad()
            logits = model(x)
            loss = torch.nn.functional.cross_entropy(logits, y)
            fabric.backward(loss)
            optimizer.step()
            correct += int((logits.argmax(dim=1) == y).sum())
            total += len(y)
        accuracy = fabric.all_reduce(torch.tensor(correct / total), reduce_op="mean")
        fabric.print(f"epoch {epoch}: loss {loss.item():.4f}, train accuracy {accuracy.item():.3f}")
    fabric.print(f"done on {fabric.world_size} process(es), {fabric.device.type}")


if __name__ == "__main__":
    main()
