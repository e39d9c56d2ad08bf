"""A well-behaved plugin that takes 5 s to import (a heavy vendor SDK, say)."""

import time

import torch

from accelplug import Accelerator, hookimpl

time.sleep(5)


class SlowImportAccelerator(Accelerator):
    name = "slowimport"
    device_type = "cpu"
    auto_priority = 5

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return 1

    @classmethod
    def get_device(cls, index: int) -> torch.device:
        return torch.device("cpu")


@hookimpl
def register_accelerators():
    return [SlowImportAccelerator]
