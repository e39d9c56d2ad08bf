"""Training loops written against Lightning Fabric's API, run unchanged under both ``Fabric`` classes.

Each function takes the ``Fabric`` class to use and returns plain numbers (losses, norms, weights) that the
parity tests compare. The data come from a seeded generator of their own; the model and the shuffling draw
from the global RNG after ``seed_everything``, so both frameworks see the same values in the same order.
"""

from __future__ import annotations

from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = torch.nn.Linear(4, 8)
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.out = torch.nn.Linear(8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.inp(x))
        for block in self.blocks:
            x = block(x)
        return self.out(x)

    def training_step(self, batch: Any) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.mse_loss(self(x), y)

    def score(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """A method that runs the model (and so must go through DDP's wrapper: marked as a forward method)."""
        return torch.nn.functional.mse_loss(self(x), y)


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.lin(x))


def dataset(samples: int = 32) -> TensorDataset:
    generator = torch.Generator().manual_seed(1234)
    x = torch.randn(samples, 4, generator=generator)
    y = (x[:, :1] * 0.7 - x[:, 1:2] * 0.3) + 0.05 * torch.randn(samples, 1, generator=generator)
    return TensorDataset(x, y)


def weights(model: torch.nn.Module) -> dict[str, list[float]]:
    """Every entry of the state dict as a list of floats (a sharded one gathered in full first)."""
    found = {}
    for key, value in model.state_dict().items():
        full = getattr(value, "full_tensor", None)
        found[key] = (full() if callable(full) else value).detach().float().flatten().tolist()
    return found


def train(
    fabric_cls: Any,
    *,
    devices: int = 1,
    strategy: Any = "auto",
    precision: str = "32-true",
    accumulate: int = 1,
    clip: str | None = None,
    epochs: int = 2,
    optimizer: str = "sgd",
    save_to: str | None = None,
    resume_from: str | None = None,
    seed: int = 7,
    method: str = "forward",
) -> dict[str, Any]:
    """A plain loop: accumulation through ``no_backward_sync``, clipping, checkpoints, all_reduce'd losses.

    ``method`` is how the loss is computed: ``model(x)``, ``model.training_step(batch)`` (a forward method
    by default) or ``model.score(x, y)`` (marked with ``mark_forward_method``).
    """
    fabric = fabric_cls(accelerator="cpu", devices=devices, strategy=strategy, precision=precision)
    fabric.launch()
    fabric.seed_everything(seed, verbose=False)
    model = Net()
    if optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, opt = fabric.setup(model, opt)
    if method == "score":
        model.mark_forward_method("score")
    loader = fabric.setup_dataloaders(DataLoader(dataset(), batch_size=4, shuffle=True))
    start = 0
    if resume_from is not None:
        state = {"model": model, "optimizer": opt, "epoch": 0}
        fabric.load(resume_from, state)
        start = state["epoch"]
    losses: list[float] = []
    local: list[float] = []
    norms: list[float] = []
    for epoch in range(start, epochs):
        for index, (x, y) in enumerate(loader):
            stepping = (index + 1) % accumulate == 0
            with fabric.no_backward_sync(model, enabled=not stepping):
                if method == "training_step":
                    loss = model.training_step((x, y))
                elif method == "score":
                    loss = model.score(x, y)
                else:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                fabric.backward(loss / accumulate)
            if stepping:
                if clip == "norm":
                    norms.append(float(fabric.clip_gradients(model, opt, max_norm=0.3)))
                elif clip == "value":
                    fabric.clip_gradients(model, opt, clip_val=0.02)
                opt.step()
                opt.zero_grad()
            local.append(float(loss.detach()))
            losses.append(float(fabric.all_reduce(loss.detach(), reduce_op="mean")))
        if save_to is not None and epoch == 0:
            fabric.save(save_to, {"model": model, "optimizer": opt, "epoch": epoch + 1})
    return {
        "losses": losses,
        "local_losses": local,
        "norms": norms,
        "weights": weights(model),
        "rank": fabric.global_rank,
        "world_size": fabric.world_size,
    }


def collectives(fabric_cls: Any, *, devices: int, strategy: str = "ddp") -> dict[str, Any]:
    """all_gather, all_reduce (sum, mean, max), broadcast, barrier and rank_zero_first on the launched processes."""
    fabric = fabric_cls(accelerator="cpu", devices=devices, strategy=strategy)
    fabric.launch()
    rank = fabric.global_rank
    gathered = fabric.all_gather(torch.tensor([rank, rank * 10.0]))
    gathered_dict = fabric.all_gather({"a": torch.tensor(rank + 1.0), "b": [torch.tensor([rank])]})
    model = fabric.setup(Net())
    try:
        model.score(torch.ones(2, 4), torch.ones(2, 1))  # runs the model outside DDP's wrapper: refused
        unmarked = "ran"
    except Exception as error:  # RuntimeError in Lightning, MisconfigurationException here
        unmarked = "refused: mark_forward_method" if "mark_forward_method" in str(error) else str(error)
    with fabric.rank_zero_first():
        pass
    fabric.barrier()
    return {
        "gathered": gathered.tolist(),
        "gathered_dict": {"a": gathered_dict["a"].tolist(), "b": gathered_dict["b"][0].tolist()},
        "sum": fabric.all_reduce(torch.tensor(rank + 1.0), reduce_op="sum").item(),
        "mean": fabric.all_reduce(torch.tensor(rank + 1.0)).item(),
        "max": fabric.all_reduce(torch.tensor(float(rank)), reduce_op="max").item(),
        "number": fabric.all_reduce(3).item(),
        "broadcast": fabric.broadcast({"from": rank}, src=1 if fabric.world_size > 1 else 0),
        "unmarked_method": unmarked,
        "rank": rank,
    }
