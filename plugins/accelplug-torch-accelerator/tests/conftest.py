"""The ``fake_torch_accelerator`` fixture: mock ``torch.accelerator`` and pin the bridge's device type."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from accelplug_torch_accelerator import FORCE_ENV, TorchAcceleratorBridge
from fake_accelerator import FakeTorchAccelerator

_FUNCTIONS = ("current_accelerator", "device_count", "set_device_index", "synchronize", "empty_cache", "memory_stats")


@pytest.fixture
def fake_torch_accelerator(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeTorchAccelerator]:
    """``fake_torch_accelerator("privateuseone", count=2, forced=False)``.

    Also sets the bridge's ``device_type`` to what the fake reports, as importing the plugin would
    have done on that machine, and sets or clears the force variable.
    """

    def install(device_type: str | None, count: int = 2, *, forced: bool = False) -> FakeTorchAccelerator:
        fake = FakeTorchAccelerator(device_type, count)
        for name in _FUNCTIONS:
            monkeypatch.setattr(torch.accelerator, name, getattr(fake, name))
        if device_type is not None:
            monkeypatch.setattr(TorchAcceleratorBridge, "device_type", device_type)
        if forced:
            monkeypatch.setenv(FORCE_ENV, "1")
        else:
            monkeypatch.delenv(FORCE_ENV, raising=False)
        return fake

    return install
