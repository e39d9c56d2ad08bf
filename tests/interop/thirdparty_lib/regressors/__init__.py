"""A stand-in for a library built on Lightning: it imports Lightning's names, never accelplug's.

Nothing in it knows about accelplug; ``tests/interop`` imports it in a child process with the redirect on and
trains its module with a Trainer reached through ``lightning.pytorch``.
"""

from .data import make_loaders
from .model import LinearRegressor

__all__ = ["LinearRegressor", "make_loaders"]
