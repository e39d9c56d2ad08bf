"""A plugin whose hook name is misspelt (register_accelerator, without the s)."""

from accelplug import Accelerator, hookimpl


class MisspeltAccelerator(Accelerator):
    name = "misspelt"
    device_type = "cpu"
    auto_priority = 500

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return 1


@hookimpl
def register_accelerator():
    return [MisspeltAccelerator]
