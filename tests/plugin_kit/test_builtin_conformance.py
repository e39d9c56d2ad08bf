"""The built-in accelerators pass the conformance suite plugin authors run (``accelplug.testing``).

CUDA runs for real on a GPU machine and skips its device checks here with CUDA's own reason. MPS is
checked on this machine as it really is (unavailable: not a Mac) and on a mocked Apple silicon Mac,
where only class-level behaviour can be checked: nothing can run on a mocked GPU.
"""

from __future__ import annotations

import pytest
import torch

import accelplug.accelerators.mps as mps_module
from accelplug.accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator
from accelplug.testing import AcceleratorConformance


class TestCPUAccelerator(AcceleratorConformance):
    accelerator_class = CPUAccelerator
    plugin_module = "accelplug.builtin_plugin"


class TestCUDAAccelerator(AcceleratorConformance):
    accelerator_class = CUDAAccelerator
    plugin_module = "accelplug.builtin_plugin"


class TestMPSAcceleratorAsThisMachineIs(AcceleratorConformance):
    accelerator_class = MPSAccelerator
    plugin_module = "accelplug.builtin_plugin"


def _pretend_to_be_a_mac(monkeypatch: pytest.MonkeyPatch, *, rosetta: bool) -> None:
    """Patch the boundary MPSAccelerator consults: platform, the Rosetta probe, torch's MPS flags."""
    machine = "x86_64" if rosetta else "arm64"
    monkeypatch.setattr("platform.system", lambda: "Darwin")
    monkeypatch.setattr("platform.machine", lambda: machine)
    monkeypatch.setattr("platform.mac_ver", lambda: ("15.1", ("", "", ""), machine))
    monkeypatch.setattr(mps_module, "is_rosetta_translated", lambda: rosetta)
    monkeypatch.setattr(torch.backends.mps, "is_built", lambda: True)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: not rosetta)


class TestMPSAcceleratorOnAMockedAppleSiliconMac(AcceleratorConformance):
    accelerator_class = MPSAccelerator
    plugin_module = "accelplug.builtin_plugin"

    @pytest.fixture(autouse=True)
    def _apple_silicon(self, monkeypatch: pytest.MonkeyPatch) -> None:
        _pretend_to_be_a_mac(monkeypatch, rosetta=False)

    def device_skip_reason(self) -> str | None:
        return "the Apple GPU is mocked on this machine: only class-level behaviour can be checked"

    def test_the_mock_makes_mps_available(self) -> None:
        assert MPSAccelerator.is_available()
        assert MPSAccelerator.device_count() == 1


class TestMPSAcceleratorUnderMockedRosetta(AcceleratorConformance):
    accelerator_class = MPSAccelerator
    plugin_module = "accelplug.builtin_plugin"

    @pytest.fixture(autouse=True)
    def _rosetta(self, monkeypatch: pytest.MonkeyPatch) -> None:
        _pretend_to_be_a_mac(monkeypatch, rosetta=True)

    def test_the_mock_makes_mps_unavailable_for_rosetta(self) -> None:
        assert "Rosetta" in (MPSAccelerator.unavailable_reason() or "")
