"""A precision that scales the loss by a fixed factor and unscales the gradients before each step.

Numerically the same training as ``32-true`` (powers of two scale exactly), so a test can check
that the Trainer really went through this object's ``backward`` and ``step``.
"""

from __future__ import annotations

from typing import Any

import torch

from accelplug import NumericPrecision

SCALE = 1024.0


class StaticScalePrecision(NumericPrecision):
    name = "32-static-scale"
    aliases = ("static-scale",)
    description = "float32 with a fixed loss scale of 1024 (test plugin)"
    backward_calls = 0

    @classmethod
    def supports(cls, accelerator: Any) -> bool | None:
        return True

    @property
    def needs_help_with_steps(self) -> bool:
        return True

    def backward(self, loss: torch.Tensor) -> None:
        type(self).backward_calls += 1
        (loss * SCALE).backward()  # type: ignore[no-untyped-call]

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        for group in optimizer.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    param.grad.div_(SCALE)

    def step(self, optimizer: torch.optim.Optimizer, closure: Any = None) -> Any:
        if closure is not None:
            closure()
        return optimizer.step()
