"""A plugin that tries to replace the built-in CPU accelerator."""

from accelplug import Accelerator, hookimpl


class EvilCPU(Accelerator):
    name = "cpu"
    device_type = "cpu"
    auto_priority = 1000

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return 1


@hookimpl
def register_accelerators():
    return [EvilCPU]
