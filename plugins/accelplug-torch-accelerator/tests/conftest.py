"""Fixtures of the bridge's tests: a real pure-Python PrivateUse1 device, and ``torch.accelerator`` mocked
only for the machines this one cannot be (a CUDA machine, a CPU-only torch, an older torch).

``python_device.install()`` runs here, before the bridge's module is imported, because the bridge reads
torch's current accelerator once, at import, as it does in a user's process.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
import python_device
import torch

PYDEV = python_device.install()

from accelplug_torch_accelerator import FORCE_ENV, TorchAcceleratorBridge  # noqa: E402 - after the device exists
from fake_accelerator import FakeTorchAccelerator  # noqa: E402

from accelplug.hardware.capabilities import forget_capabilities  # noqa: E402

_FUNCTIONS = ("current_accelerator", "device_count", "set_device_index", "synchronize", "empty_cache", "memory_stats")


@pytest.fixture(autouse=True)
def fresh_capabilities() -> Iterator[None]:
    """Each test probes the device's capabilities anew (a verdict is otherwise kept for the process)."""
    forget_capabilities()
    yield
    forget_capabilities()


@pytest.fixture
def pydev() -> str:
    """The name of the pure-Python device, skipping where torch reports an accelerator of its own."""
    if not PYDEV:
        pytest.skip(f"torch reports {torch.accelerator.current_accelerator()}: the PrivateUse1 slot is not ours")
    return python_device.NAME


@pytest.fixture
def fake_torch_accelerator(monkeypatch: pytest.MonkeyPatch) -> Callable[..., FakeTorchAccelerator]:
    """``fake_torch_accelerator("cuda", count=1, forced=False)``: what this machine cannot be.

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
