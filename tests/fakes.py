"""Accelerators this machine can pretend to have: one base, so no test copies the boilerplate of a fake.

A fake's devices are the CPU (every tensor lands on ``torch.device("cpu")``), so a test of the registry,
the selection rules or the conformance kit runs anywhere; a subclass sets its ``name`` and the class
attributes below, and overrides a method only to break the one thing a test is about.
"""

from __future__ import annotations

from typing import ClassVar

import torch

from accelplug import Accelerator

__all__ = ["FakeAccelerator"]


class FakeAccelerator(Accelerator):
    """Available with ``count`` devices, all of them the CPU; ``available = False`` makes it offline."""

    name = "fake"
    device_type = "cpu"
    #: Whether ``is_available()`` says yes (then ``device_count()`` is ``count``, else 0).
    available: ClassVar[bool] = True
    count: ClassVar[int] = 2
    strategies: ClassVar[tuple[str, ...]] = ("single_device",)

    @classmethod
    def is_available(cls) -> bool:
        return cls.available

    @classmethod
    def device_count(cls) -> int:
        return cls.count if cls.available else 0

    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return cls.strategies

    @classmethod
    def get_device(cls, index: int) -> torch.device:
        return torch.device("cpu")  # one CPU, however many devices the fake claims
