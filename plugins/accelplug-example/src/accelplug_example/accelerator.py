"""The ``example`` accelerator: one device, the host CPU, under its own name."""

from accelplug import Accelerator


class ExampleAccelerator(Accelerator):
    name = "example"
    description = "a demonstration accelerator that runs on the host CPU"
    device_type = "cpu"
    auto_priority = -1  # below the CPU (0), so accelerator="auto" never picks a demonstration

    @classmethod
    def is_available(cls) -> bool:
        return True

    @classmethod
    def device_count(cls) -> int:
        return 1
