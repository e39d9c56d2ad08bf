"""A well-behaved accelerator with two devices but no distributed strategy (only single_device)."""

import torch

from accelplug import Accelerator, hookimpl


class ToyAccelerator(Accelerator):
    name = "toyaccel"
    description = "two devices, one at a time (runs on the CPU device)"
    device_type = "cpu"
    auto_priority = 500

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return 2

    @classmethod
    def get_device(cls, index: int) -> torch.device:
        return torch.device("cpu")


@hookimpl
def register_accelerators():
    return [ToyAccelerator]
