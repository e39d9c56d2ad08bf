"""A plugin whose accelerator's is_available() raises."""

from accelplug import Accelerator, hookimpl


class RaisingProbeAccelerator(Accelerator):
    name = "raisingprobe"
    device_type = "cpu"
    auto_priority = 500

    @classmethod
    def is_available(cls) -> bool:
        raise RuntimeError("the NPU driver is not loaded")

    @classmethod
    def device_count(cls) -> int:
        return 1


@hookimpl
def register_accelerators():
    return [RaisingProbeAccelerator]
