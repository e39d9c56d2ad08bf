"""Helpers for mocking hardware this machine cannot have, at the boundary accelplug consults."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from pytest_mock import MockerFixture

import accelplug.accelerators.cuda as cuda_module
import accelplug.accelerators.mps as mps_module

#: Modules that exercise the CUDA accelerator itself and must see the real GPUs, if any.
_SEES_REAL_GPUS = {"test_cpu_and_cuda", "test_cuda_visible_devices"}


@pytest.fixture(autouse=True)
def hide_gpus(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make a GPU machine look like the CPU-only CI machine, so the same expectations hold on both.

    In this process the CUDA probe is replaced (CUDA may already be initialised by a ``cuda`` test);
    child processes get ``CUDA_VISIBLE_DEVICES=""``, which hides every GPU from them for real.
    """
    if request.module.__name__.rsplit(".", 1)[-1] in _SEES_REAL_GPUS:
        return
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    monkeypatch.setattr(cuda_module, "_probe", lambda: (0, "CUDA_VISIBLE_DEVICES='' hides every NVIDIA GPU"))


@pytest.fixture
def fake_mac(mocker: MockerFixture) -> Callable[..., None]:
    """Pretend to be a Mac: ``fake_mac(macos="14.5", machine="arm64", rosetta=False, built=True, torch_ok=True)``."""

    def apply(
        macos: str = "14.5", machine: str = "arm64", rosetta: bool = False, built: bool = True, torch_ok: bool = True
    ) -> None:
        mocker.patch("platform.system", return_value="Darwin")
        mocker.patch("platform.machine", return_value=machine)
        mocker.patch("platform.mac_ver", return_value=(macos, ("", "", ""), machine))
        mocker.patch.object(mps_module, "is_rosetta_translated", return_value=rosetta)
        mocker.patch.object(torch.backends.mps, "is_built", return_value=built)
        mocker.patch.object(torch.backends.mps, "is_available", return_value=torch_ok)

    return apply
