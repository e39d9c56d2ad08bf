"""A plugin that returns something that is not an Accelerator subclass."""

from accelplug import hookimpl


class NotAnAccelerator:
    name = "bogus"


@hookimpl
def register_accelerators():
    return [NotAnAccelerator]
