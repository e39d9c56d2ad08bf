"""The bridge against accelplug's conformance kit: on the device this machine has, and with torch.accelerator
mocked for a CUDA machine.

On this CPU-only machine "as this machine is" means the pure-Python PrivateUse1 device of ``python_device``
(real ``torch.accelerator`` answers, no kernels); on a GPU machine with ACCELPLUG_TORCH_ACCELERATOR_FORCE=1
it runs every check on the real device torch reports (scripts/gpu/plugin_bridge_gpu.sh does that on CUDA).
accelplug's own tests run the kit on torchvulkan's real device (tests/real_device/).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
import python_device
from accelplug_torch_accelerator import TorchAcceleratorBridge
from fake_accelerator import FakeTorchAccelerator

from accelplug.testing import AcceleratorConformance

_MOCKED = "torch.accelerator is mocked: its API answers, but nothing can run on the mocked device"


class TestTorchAcceleratorBridgeAsThisMachineIs(AcceleratorConformance):
    accelerator_class = TorchAcceleratorBridge
    plugin_module = "accelplug_torch_accelerator.plugin"
    entry_point_name = "torch_accelerator"

    def tensor_skip_reason(self) -> str | None:
        if TorchAcceleratorBridge.device_type == python_device.NAME:
            return "the pure-Python PrivateUse1 device has no kernels: no tensor can live on it"
        return super().tensor_skip_reason()


class TestBridgeToMockedCudaOwnedByTheBuiltin(AcceleratorConformance):
    accelerator_class = TorchAcceleratorBridge

    @pytest.fixture(autouse=True)
    def _cuda(self, fake_torch_accelerator: Callable[..., FakeTorchAccelerator]) -> None:
        fake_torch_accelerator("cuda", 1)


class TestBridgeForcedOntoMockedCuda(AcceleratorConformance):
    accelerator_class = TorchAcceleratorBridge

    @pytest.fixture(autouse=True)
    def _cuda(self, fake_torch_accelerator: Callable[..., FakeTorchAccelerator]) -> None:
        fake_torch_accelerator("cuda", 1, forced=True)

    def device_skip_reason(self) -> str | None:
        """The bridge's per-run calls go to ``torch.cuda``'s own functions first, which no mock stands in for."""
        return _MOCKED
