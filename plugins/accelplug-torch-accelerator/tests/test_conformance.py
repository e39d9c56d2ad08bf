"""The bridge against accelplug's conformance suite: for real, and with torch.accelerator mocked.

On a GPU machine with ACCELPLUG_TORCH_ACCELERATOR_FORCE=1 the first class runs every check on the
real device torch reports (scripts/gpu/plugin_bridge_gpu.sh does that on CUDA).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from accelplug_torch_accelerator import TorchAcceleratorBridge
from fake_accelerator import FakeTorchAccelerator

from accelplug.testing import AcceleratorConformance

_MOCKED = "torch.accelerator is mocked: its API answers, but no tensor can live on the mocked device"


class TestTorchAcceleratorBridgeAsThisMachineIs(AcceleratorConformance):
    accelerator_class = TorchAcceleratorBridge
    plugin_module = "accelplug_torch_accelerator.plugin"
    entry_point_name = "torch_accelerator"


class TestBridgeToAMockedOutOfTreeDevice(AcceleratorConformance):
    accelerator_class = TorchAcceleratorBridge
    plugin_module = "accelplug_torch_accelerator.plugin"

    @pytest.fixture(autouse=True)
    def _out_of_tree(self, fake_torch_accelerator: Callable[..., FakeTorchAccelerator]) -> None:
        fake_torch_accelerator("privateuseone", 2)

    def tensor_skip_reason(self) -> str | None:
        return _MOCKED


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

    def tensor_skip_reason(self) -> str | None:
        return _MOCKED
