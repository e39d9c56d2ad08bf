"""A well-behaved plugin that takes 2 s to import (a heavy vendor SDK, say): over the 1 s from which
``accelplug list`` shows a plugin's import time, within the default bound on it."""

import time

import torch

from accelplug import Accelerator, hookimpl

time.sleep(2)


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
