"""A plugin whose accelerator's is_available() hangs (a driver query that never returns)."""

import time

from accelplug import Accelerator, hookimpl


class SlowProbeAccelerator(Accelerator):
    name = "slowprobe"
    device_type = "cpu"
    auto_priority = 500

    @classmethod
    def is_available(cls) -> bool:
        time.sleep(600)
        return True

    @classmethod
    def device_count(cls) -> int:
        return 1


@hookimpl
def register_accelerators():
    return [SlowProbeAccelerator]
