"""XPUAccelerator against accelplug's conformance suite: as this machine is, and with Intel GPUs mocked."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from accelplug_xpu import XPUAccelerator
from fake_xpu import FakeXPU

from accelplug.testing import AcceleratorConformance


class TestXPUAcceleratorAsThisMachineIs(AcceleratorConformance):
    """Real ``torch.xpu``: on a machine without an Intel GPU the device checks skip with the reason."""

    accelerator_class = XPUAccelerator
    plugin_module = "accelplug_xpu.plugin"
    entry_point_name = "xpu"


class TestXPUAcceleratorWithTwoMockedGPUs(AcceleratorConformance):
    accelerator_class = XPUAccelerator
    plugin_module = "accelplug_xpu.plugin"

    @pytest.fixture(autouse=True)
    def _two_gpus(self, fake_xpu: Callable[..., FakeXPU]) -> None:
        fake_xpu(2)

    def tensor_skip_reason(self) -> str | None:
        return "torch.xpu is mocked: its API answers, but no tensor can live on an XPU here"


class TestXPUAcceleratorWithADriverThatSeesNoGPU(AcceleratorConformance):
    accelerator_class = XPUAccelerator
    plugin_module = "accelplug_xpu.plugin"

    @pytest.fixture(autouse=True)
    def _no_gpu(self, fake_xpu: Callable[..., FakeXPU]) -> None:
        fake_xpu(0)
