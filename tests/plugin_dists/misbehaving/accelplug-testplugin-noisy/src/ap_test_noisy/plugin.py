"""A plugin that prints 20 MB while it is imported: 10 MB through print(), 10 MB straight to fd 1."""

import os

from accelplug import Accelerator, hookimpl

print("noise from print " * (10 * 2**20 // 17))
os.write(1, b"noise written to fd 1 " * (10 * 2**20 // 22))


class NoisyAccelerator(Accelerator):
    name = "noisy"
    device_type = "cpu"
    auto_priority = -1

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return 1


@hookimpl
def register_accelerators():
    return [NoisyAccelerator]
