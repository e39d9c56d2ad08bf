"""An example accelplug plugin: the ``example`` accelerator, which runs on the host CPU."""

from .accelerator import ExampleAccelerator

__all__ = ["ExampleAccelerator"]
