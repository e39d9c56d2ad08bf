"""A well-behaved plugin that looks at the registry while it is being loaded (it used to deadlock)."""

from accelplug import Accelerator, get_registry, hookimpl


class AskerAccelerator(Accelerator):
    name = "asker"
    device_type = "cpu"
    auto_priority = -1

    @classmethod
    def is_available(cls) -> bool:
        return "cpu" in get_registry().names()

    @classmethod
    def device_count(cls) -> int:
        return 1


@hookimpl
def register_accelerators():
    assert "cpu" in get_registry().names(), "the built-ins are registered before any entry-point plugin"
    return [AskerAccelerator]
