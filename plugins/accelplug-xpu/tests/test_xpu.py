"""What XPUAccelerator adds beyond the contract: diagnoses, device names, stats, backend choice."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.distributed as dist
from accelplug_xpu import XPUAccelerator, choose_distributed_backend
from fake_xpu import FakeXPU

from accelplug.accelerator import Accelerator


def test_a_torch_built_without_xpu_is_diagnosed_with_the_wheel_index(fake_xpu: Callable[..., FakeXPU]) -> None:
    fake_xpu(2, compiled=False)
    assert XPUAccelerator.device_count() == 0
    reason = XPUAccelerator.unavailable_reason() or ""
    assert "built without XPU support" in reason
    assert "--index-url https://download.pytorch.org/whl/xpu" in reason


def test_no_gpu_points_at_the_driver(fake_xpu: Callable[..., FakeXPU], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZE_AFFINITY_MASK", raising=False)
    fake_xpu(0)
    reason = XPUAccelerator.unavailable_reason() or ""
    assert "finds no Intel GPU" in reason
    assert "Level Zero" in reason
    assert "ZE_AFFINITY_MASK" not in reason


def test_no_gpu_under_an_affinity_mask_names_the_mask(
    fake_xpu: Callable[..., FakeXPU], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ZE_AFFINITY_MASK", "7")
    fake_xpu(0)
    assert "ZE_AFFINITY_MASK='7'" in (XPUAccelerator.unavailable_reason() or "")


def test_the_installed_torch_without_xpu_is_reported_as_such() -> None:
    if torch.xpu._is_compiled():
        pytest.skip("this torch is an XPU build")
    assert not XPUAccelerator.is_available()
    assert "built without XPU support" in (XPUAccelerator.unavailable_reason() or "")


def test_device_names_come_from_torch_xpu(fake_xpu: Callable[..., FakeXPU]) -> None:
    fake_xpu(2)
    assert XPUAccelerator.device_names() == [
        "Intel(R) Data Center GPU Max 1550 #0",
        "Intel(R) Data Center GPU Max 1550 #1",
    ]


def test_setup_device_makes_the_device_current(fake_xpu: Callable[..., FakeXPU]) -> None:
    fake = fake_xpu(2)
    XPUAccelerator().setup_device(torch.device("xpu", 1))
    assert fake.current == 1


def test_teardown_empties_the_cache_only_once_the_runtime_is_up(fake_xpu: Callable[..., FakeXPU]) -> None:
    fake = fake_xpu(2)
    accelerator = XPUAccelerator()
    accelerator.teardown()
    assert fake.emptied == 0
    accelerator.setup_device(torch.device("xpu", 0))
    accelerator.teardown()
    assert fake.emptied == 1


def test_device_stats_are_the_allocator_statistics_as_floats(fake_xpu: Callable[..., FakeXPU]) -> None:
    fake_xpu(2)
    stats = XPUAccelerator().get_device_stats(torch.device("xpu", 1))
    assert stats == {"allocated_bytes.all.current": 2048.0, "num_alloc_retries": 0.0}


def test_xccl_is_chosen_when_torch_has_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dist, "is_xccl_available", lambda: True, raising=False)
    assert choose_distributed_backend() == "xccl"


def test_without_xccl_there_is_no_distributed_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dist, "is_xccl_available", lambda: False, raising=False)
    assert choose_distributed_backend() is None


def test_a_torch_older_than_xccl_has_no_distributed_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(dist, "is_xccl_available", raising=False)
    assert choose_distributed_backend() is None


def test_ddp_is_offered_only_with_a_distributed_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(XPUAccelerator, "distributed_backend", "xccl")
    assert XPUAccelerator.supported_strategies() == ("single_device", "ddp")
    monkeypatch.setattr(XPUAccelerator, "distributed_backend", None)
    assert XPUAccelerator.supported_strategies() == ("single_device",)


def test_auto_prefers_cuda_and_mps_over_xpu() -> None:
    from accelplug.accelerators import CUDAAccelerator, MPSAccelerator

    priorities: list[type[Accelerator]] = [CUDAAccelerator, MPSAccelerator]
    assert all(XPUAccelerator.auto_priority < cls.auto_priority for cls in priorities)


def test_autocast_on_xpu_accepts_both_claimed_dtypes() -> None:
    for dtype in (torch.bfloat16, torch.float16):
        with torch.autocast("xpu", dtype=dtype):
            assert torch.get_autocast_dtype("xpu") == dtype
