"""Fully sharded data parallel (torch FSDP2) in a Fabric loop: each process holds a shard of every block.

    accelplug launch --cpu --devices 2 examples/fabric_fsdp.py                 # two CPU processes, gloo
    accelplug launch --devices 4 examples/fabric_fsdp.py --precision bf16-mixed  # four GPUs
    python examples/fabric_fsdp.py --accelerator cpu --devices 2                # re-launches itself

The model is built on the meta device (``init_module(empty_init=True)``: no memory, no initialisation), set
up first (``setup_module`` shards each ``Block`` and gives each process real storage for its shards only,
initialised by the modules' ``reset_parameters()``), the optimizer is built on the sharded parameters, and the
checkpoint is saved sharded: every process writes its own shard with
``torch.distributed.checkpoint`` next to one small file, and loading reshards to any number of processes.
"""

from __future__ import annotations

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset

from accelplug.fabric import Fabric
from accelplug.fabric.strategies import FSDPStrategy


class Block(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.mlp = torch.nn.Sequential(
            torch.nn.Linear(width, 4 * width), torch.nn.GELU(), torch.nn.Linear(4 * width, width)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.mlp(self.norm(x))


class Model(torch.nn.Module):
    def __init__(self, width: int = 64, depth: int = 4) -> None:
        super().__init__()
        self.embed = torch.nn.Linear(16, width)
        self.blocks = torch.nn.ModuleList([Block(width) for _ in range(depth)])
        self.head = torch.nn.Linear(width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--accelerator", default="auto")
    parser.add_argument("--devices", default="auto")
    parser.add_argument("--precision", default=None)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--checkpoint", default=None, help="save the sharded checkpoint here, then load it back")
    args = parser.parse_args()

    strategy = FSDPStrategy(auto_wrap_policy={Block}, state_dict_type="sharded")
    fabric = Fabric(accelerator=args.accelerator, devices=args.devices, strategy=strategy, precision=args.precision)
    fabric.launch()
    fabric.seed_everything(0, verbose=False)

    with fabric.init_module(empty_init=True):
        model = Model()
    model = fabric.setup_module(model)
    optimizer = fabric.setup_optimizers(torch.optim.AdamW(model.parameters(), lr=3e-3))
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(1024, 16, generator=generator)
    data = TensorDataset(x, torch.sin(x.sum(dim=1, keepdim=True)))
    loader = fabric.setup_dataloaders(DataLoader(data, batch_size=32, shuffle=True))

    step = 0
    while step < args.steps:
        for inputs, targets in loader:
            loss = torch.nn.functional.mse_loss(model(inputs), targets)
            fabric.backward(loss)
            fabric.clip_gradients(model, optimizer, max_norm=1.0)
            optimizer.step()
            optimizer.zero_grad()
            step += 1
            if step % 5 == 0:
                fabric.print(f"step {step}: loss {fabric.all_reduce(loss.detach()).item():.4f}")
            if step == args.steps:
                break

    shard = sum(p.to_local().numel() for p in model.parameters())  # this process's part of the weights
    total = sum(p.numel() for p in model.parameters())
    fabric.print(f"each of {fabric.world_size} processes holds about {shard} of {total} parameters")
    if args.checkpoint:
        fabric.save(args.checkpoint, {"model": model, "optimizer": optimizer, "step": step})
        state = {"model": model, "optimizer": optimizer, "step": 0}
        fabric.load(args.checkpoint, state)
        fabric.print(f"saved and loaded {args.checkpoint} at step {state['step']}")


if __name__ == "__main__":
    main()
