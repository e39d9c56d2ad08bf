"""MPS: one device, single-device only, and a diagnosis that names the real cause when unavailable."""

from __future__ import annotations

import platform

import pytest

from accelplug import MisconfigurationException, select
from accelplug.accelerators.mps import (
    ROSETTA_EXPLANATION,
    MPSAccelerator,
    is_rosetta_translated,
    minimum_macos_for_torch,
)
from accelplug.errors import AcceleratorUnavailableError


def test_on_linux_the_reason_says_this_is_not_a_mac(mocker) -> None:  # type: ignore[no-untyped-def]
    mocker.patch("platform.system", return_value="Linux")
    mocker.patch("platform.machine", return_value="x86_64")
    reason = MPSAccelerator.unavailable_reason()
    assert reason is not None and "macOS" in reason and "Linux (x86_64)" in reason
    assert MPSAccelerator.device_count() == 0


def test_on_windows_the_reason_names_windows(mocker) -> None:  # type: ignore[no-untyped-def]
    mocker.patch("platform.system", return_value="Windows")
    mocker.patch("platform.machine", return_value="AMD64")
    assert "Windows" in (MPSAccelerator.unavailable_reason() or "")


def test_rosetta_is_explained_with_the_native_python_remedy(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac(rosetta=True, machine="x86_64")
    reason = MPSAccelerator.unavailable_reason()
    assert reason == ROSETTA_EXPLANATION
    assert "Rosetta" in reason and "arm64" in reason and "x86_64" in reason


def test_rosetta_is_refused_even_when_torch_claims_mps_works(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac(rosetta=True, machine="x86_64", built=True, torch_ok=True)
    assert MPSAccelerator.is_available() is False
    assert MPSAccelerator.device_count() == 0


def test_torch_built_without_mps_is_named(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac(built=False, torch_ok=False)
    reason = MPSAccelerator.unavailable_reason() or ""
    assert "built without MPS" in reason and "is_built() is False" in reason


def test_old_macos_names_the_version_found_and_needed(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac(macos="12.6", torch_ok=False)
    reason = MPSAccelerator.unavailable_reason() or ""
    needed = ".".join(map(str, minimum_macos_for_torch()))
    assert "macOS 12.6" in reason and f"macOS {needed}" in reason


def test_the_macos_10_16_compatibility_number_is_explained(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac(macos="10.16", torch_ok=False)
    assert "compatibility number" in (MPSAccelerator.unavailable_reason() or "")


def test_torch_refusing_on_a_recent_mac_is_reported(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac(torch_ok=False)
    assert "is_available() is False on macOS 14.5" in (MPSAccelerator.unavailable_reason() or "")


@pytest.mark.parametrize(
    ("torch_version", "needed"), [("2.6.0", (13, 0)), ("2.8.0", (13, 0)), ("2.9.0", (14, 0)), ("2.13.0+cpu", (14, 0))]
)
def test_minimum_macos_follows_the_torch_release(torch_version: str, needed: tuple[int, int]) -> None:
    assert minimum_macos_for_torch(torch_version) == needed


def test_available_mac_has_exactly_one_device(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac()
    assert MPSAccelerator.is_available() is True
    assert MPSAccelerator.unavailable_reason() is None
    assert MPSAccelerator.device_count() == 1
    assert MPSAccelerator.parse_devices("auto") == [0]
    assert MPSAccelerator.parse_devices(-1) == [0]


def test_mps_supports_single_device_only() -> None:
    assert MPSAccelerator.supported_strategies() == ("single_device",)


def test_two_mps_devices_are_refused(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac()
    with pytest.raises(MisconfigurationException, match=r"devices=2.*only 1 exist"):
        select("mps", devices=2)


def test_ddp_on_mps_explains_that_gloo_and_nccl_cannot_move_mps_tensors(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac()
    with pytest.raises(MisconfigurationException, match=r"gloo, nccl.*cannot move mps tensors"):
        select("mps", devices=1, strategy="ddp")


def test_fsdp_on_mps_explains_that_no_distributed_backend_moves_mps_tensors(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac()
    with pytest.raises(MisconfigurationException, match=r"strategy='fsdp' cannot run on 'mps'.*no torch.distributed"):
        select("mps", devices=1, strategy="fsdp")


def test_float64_on_mps_is_refused(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac()
    with pytest.raises(MisconfigurationException, match=r"precision='64-true'.*no float64"):
        select("mps", precision="64-true")


def test_selecting_mps_on_an_available_mac_gives_mps_0(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac()
    selection = select("mps")
    assert str(selection.root_device) == "mps:0"
    assert selection.strategy == "single_device"


def test_asking_for_mps_under_rosetta_raises_with_accelerator_and_reason(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac(rosetta=True, machine="x86_64")
    with pytest.raises(AcceleratorUnavailableError) as info:
        select("mps")
    assert info.value.accelerator == "mps"
    assert info.value.reason == ROSETTA_EXPLANATION
    assert "'cpu'" in str(info.value)


def test_auto_prefers_mps_over_cpu_on_an_available_mac(fake_mac) -> None:  # type: ignore[no-untyped-def]
    fake_mac()
    assert select("auto").accelerator.name == "mps"


def test_is_rosetta_translated_is_false_off_macos() -> None:
    assert platform.system() != "Darwin"
    assert is_rosetta_translated() is False


def test_is_rosetta_translated_falls_back_to_the_sysctl_command(mocker) -> None:  # type: ignore[no-untyped-def]
    mocker.patch("platform.system", return_value="Darwin")
    mocker.patch("ctypes.CDLL", side_effect=OSError("no libc"))
    run = mocker.patch("subprocess.run")
    run.return_value.stdout = "1\n"
    assert is_rosetta_translated() is True
    assert run.call_args.args[0] == ["sysctl", "-n", "sysctl.proc_translated"]
