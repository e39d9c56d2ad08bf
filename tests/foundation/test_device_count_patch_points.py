"""Faking GPUs as tests written for Lightning do: replacing the count at Lightning's module paths.

Lightning's users (and Lightning's own ``cuda_count_N``/``mps_count_N`` fixtures) make a CPU-only machine look like
one with GPUs by ``monkeypatch.setattr(<...>.accelerators.cuda, "num_cuda_devices", lambda: n)``, then check which
accelerator, strategy and device ids the Trainer chose. On accelplug the paths re-export the accelerators room's
functions, and the room's count looks the name up at the paths each time, so the replacement drives the choice.
Each case is compared with real Lightning 2.6 given the same replacement at its own paths.
"""

from __future__ import annotations

from typing import Any

import lightning
import lightning.fabric.accelerators.cuda
import lightning.fabric.accelerators.mps
import lightning.pytorch.accelerators.cuda
import pytest
import torch
from tests.callbacks.parity import quiet_lightning

import accelplug
import accelplug.accelerators.cuda
import accelplug.fabric.accelerators.cuda
import accelplug.fabric.accelerators.mps
import accelplug.pytorch.accelerators.cuda
from accelplug.accelerators import CUDAAccelerator, MPSAccelerator
from accelplug.registry import get_registry


def _fake_cuda(monkeypatch: pytest.MonkeyPatch, framework: Any, count: int) -> None:
    """What Lightning's ``cuda_count_N`` fixtures do, at ``framework``'s paths."""
    monkeypatch.setattr(framework.fabric.accelerators.cuda, "num_cuda_devices", lambda: count)
    monkeypatch.setattr(framework.pytorch.accelerators.cuda, "num_cuda_devices", lambda: count)


def _choice(framework: Any, **kwargs: Any) -> tuple[str, str, list[int]]:
    with quiet_lightning(framework):
        trainer = framework.pytorch.Trainer(logger=False, enable_checkpointing=False, **kwargs)
    return type(trainer.accelerator).__name__, type(trainer.strategy).__name__, list(trainer.device_ids)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"accelerator": "gpu", "devices": 2}, ("CUDAAccelerator", "DDPStrategy", [0, 1])),
        ({"accelerator": "cuda", "devices": 1}, ("CUDAAccelerator", "SingleDeviceStrategy", [0])),
        ({"accelerator": "gpu", "devices": [1]}, ("CUDAAccelerator", "SingleDeviceStrategy", [1])),
        ({"accelerator": "auto", "devices": "auto"}, ("CUDAAccelerator", "DDPStrategy", [0, 1])),
        ({"accelerator": "gpu", "devices": -1}, ("CUDAAccelerator", "DDPStrategy", [0, 1])),
    ],
)
def test_a_count_replaced_at_lightnings_paths_drives_the_trainers_choice_as_in_lightning(
    monkeypatch: pytest.MonkeyPatch, kwargs: dict[str, Any], expected: tuple[str, str, list[int]]
) -> None:
    _fake_cuda(monkeypatch, accelplug, 2)
    _fake_cuda(monkeypatch, lightning, 2)
    assert _choice(accelplug, **kwargs) == expected
    assert _choice(lightning, **kwargs) == expected


def test_a_count_replaced_at_the_fabric_path_alone_is_what_the_accelerator_counts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(accelplug.fabric.accelerators.cuda, "num_cuda_devices", lambda: 4)
    assert CUDAAccelerator.device_count() == 4
    assert "cuda" in get_registry().available()
    assert _choice(accelplug, accelerator="gpu", devices=[3]) == ("CUDAAccelerator", "SingleDeviceStrategy", [3])


def test_faked_gpus_never_initialise_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_cuda(monkeypatch, accelplug, 2)
    _choice(accelplug, accelerator="auto")
    assert not torch.cuda.is_initialized()  # type: ignore[no-untyped-call]


def test_a_count_replaced_by_zero_makes_cuda_unavailable_and_names_the_replacement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _fake_cuda(monkeypatch, accelplug, 0)
    assert not CUDAAccelerator.is_available()
    assert "accelplug.pytorch.accelerators.cuda.num_cuda_devices()" in str(CUDAAccelerator.unavailable_reason())
    assert _choice(accelplug, accelerator="auto")[0] == "CPUAccelerator"


def test_a_count_replaced_in_the_accelerators_room_counts_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accelplug.accelerators.cuda, "num_cuda_devices", lambda: 3)
    assert CUDAAccelerator.device_count() == 3


def test_more_devices_than_the_replaced_count_are_refused_naming_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_cuda(monkeypatch, accelplug, 1)
    with pytest.raises(accelplug.errors.MisconfigurationException, match="2"):
        _choice(accelplug, accelerator="gpu", devices=2)


def test_a_faked_apple_gpu_is_chosen_as_in_lightning(monkeypatch: pytest.MonkeyPatch) -> None:
    for framework in (accelplug, lightning):  # what Lightning's mps_count_1 fixture does
        monkeypatch.setattr(framework.fabric.accelerators.mps, "_get_all_available_mps_gpus", lambda: [0])
        monkeypatch.setattr(framework.fabric.accelerators.mps.MPSAccelerator, "is_available", lambda *_: True)
    assert MPSAccelerator.device_count() == 1
    expected = ("MPSAccelerator", "SingleDeviceStrategy", [0])
    assert _choice(accelplug, accelerator="mps", devices=1) == expected
    assert _choice(lightning, accelerator="mps", devices=1) == expected


def test_is_available_replaced_on_the_class_agrees_with_the_count_and_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(accelplug.pytorch.accelerators.cuda.CUDAAccelerator, "is_available", lambda: True)
    assert CUDAAccelerator.unavailable_reason() is None
    assert CUDAAccelerator.device_count() >= 1
    assert "cuda" in get_registry().available()
