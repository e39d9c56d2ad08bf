"""A well-behaved plugin: a pretend accelerator that runs on the CPU device and outranks it."""

from __future__ import annotations

import torch

from accelplug import Accelerator, hookimpl


class FakeGPUAccelerator(Accelerator):
    name = "fakegpu"
    description = "pretend accelerator for tests (runs on the CPU device)"
    device_type = "cpu"
    auto_priority = 50
    distributed_backend = "gloo"

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return 2

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("single_device", "ddp")

    @classmethod
    def get_device(cls, index: int) -> torch.device:
        return torch.device("cpu")


@hookimpl
def register_accelerators():
    return [FakeGPUAccelerator]
