"""A plugin whose hook raises."""

from accelplug import hookimpl


@hookimpl
def register_accelerators():
    raise RuntimeError("driver exploded while probing")
