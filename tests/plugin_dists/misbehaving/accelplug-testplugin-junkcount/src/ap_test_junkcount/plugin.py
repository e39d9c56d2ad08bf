"""A plugin whose accelerators claim to be available and answer device_count() with junk."""

from accelplug import Accelerator, hookimpl


class _Junk(Accelerator):
    device_type = "cpu"
    auto_priority = 500

    @classmethod
    def is_available(cls) -> bool:
        return True


class StringCount(_Junk):
    name = "junkstr"

    @classmethod
    def device_count(cls):
        return "3"


class NoneCount(_Junk):
    name = "junknone"

    @classmethod
    def device_count(cls):
        return None


class NegativeCount(_Junk):
    name = "junkneg"

    @classmethod
    def device_count(cls):
        return -1


@hookimpl
def register_accelerators():
    return [StringCount, NoneCount, NegativeCount]
