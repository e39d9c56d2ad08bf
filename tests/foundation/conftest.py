"""Helpers for mocking hardware this machine cannot have, at the boundary accelplug consults."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from pytest_mock import MockerFixture

import accelplug.accelerators.mps as mps_module


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
