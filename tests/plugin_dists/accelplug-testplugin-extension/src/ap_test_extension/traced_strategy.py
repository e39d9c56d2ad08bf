"""A single-device strategy that records the preparation order it was driven through."""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from accelplug import Strategy


class TracedStrategy(Strategy):
    name = "traced"
    description = "one device, recording what the Trainer asked of it (test plugin)"
    calls: ClassVar[list[str]] = []

    @classmethod
    def supports(cls, accelerator: Any) -> bool | None:
        return accelerator.device_type == "cpu"

    def setup_environment(self, accelerator: Any, device: torch.device) -> None:
        type(self).calls.append("setup_environment")
        super().setup_environment(accelerator, device)

    def wrap_module(self, module: torch.nn.Module) -> torch.nn.Module | None:
        type(self).calls.append(f"wrap_module(on {next(module.parameters()).device.type})")
        return None

    def setup_optimizers(self, optim: Any) -> Any:
        type(self).calls.append("setup_optimizers")
        return optim

    def teardown(self) -> None:
        type(self).calls.append("teardown")
        super().teardown()
