"""Python-level function calls one training step of ``Trainer.fit`` makes, counted, not timed.

A count does not move with the machine's load, so it compares two versions of the loop where a timing
on a shared machine cannot (``benchmarks/overhead.py`` measures the time itself). Two fits of the same
model, 200 and 400 steps, are profiled with ``sys.setprofile``; the difference divided by 200 is the
per-step count, setup and teardown cancelling out. The model and batches are ``overhead.py``'s CPU
ones, so the step takes the lean ``fast_batch`` path.

    python benchmarks/calls_per_step.py
    PYTHONPATH=/path/to/other/checkout/src python benchmarks/calls_per_step.py   # the other version
"""

from __future__ import annotations

import collections
import sys
import warnings
from types import FrameType
from typing import Any

import torch


class _Regression(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.mse_loss(self.model(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.01)


def _where(filename: str) -> str:
    return filename.split("site-packages/")[-1].split("/src/")[-1]


def count_calls(steps: int) -> collections.Counter[str]:
    """Calls made during one ``fit`` of ``steps`` steps, by the file of the called function."""
    from accelplug import Trainer

    generator = torch.Generator().manual_seed(0)
    data = [(torch.randn(32, 32, generator=generator), torch.randn(32, 1, generator=generator)) for _ in range(steps)]
    trainer = Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=1,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        logger=False,
        num_sanity_val_steps=0,
    )
    calls: collections.Counter[str] = collections.Counter()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            calls[_where(frame.f_code.co_filename)] += 1

    sys.setprofile(profile)
    try:
        trainer.fit(_Regression(), data)
    finally:
        sys.setprofile(None)
    return calls


def main() -> None:
    warnings.filterwarnings("ignore")
    torch.set_num_threads(1)
    import accelplug

    count_calls(50)  # first-call costs (imports, caches) stay out of the counts
    short, long = count_calls(200), count_calls(400)
    per_step = {name: (long[name] - short[name]) / 200 for name in set(short) | set(long)}
    per_step = {name: value for name, value in per_step.items() if value}
    print(f"accelplug from {accelplug.__file__}")
    print(f"python calls per step: {sum(per_step.values()):.2f}")
    for name, value in sorted(per_step.items(), key=lambda item: -item[1]):
        if "accelplug" in name or value >= 2:
            print(f"  {value:8.2f}  {name}")


if __name__ == "__main__":
    main()
