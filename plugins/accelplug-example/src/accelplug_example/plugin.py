"""The module the ``accelplug`` entry point names: accelplug calls its hook to find the accelerator."""

from accelplug import Accelerator, hookimpl

from .accelerator import ExampleAccelerator


@hookimpl
def register_accelerators() -> list[type[Accelerator]]:
    return [ExampleAccelerator]
