"""What the bridge decides: when it steps aside, what it says, and what it asks torch.accelerator."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from accelplug_torch_accelerator import FORCE_ENV, TorchAcceleratorBridge, torch_accelerator_type
from accelplug_torch_accelerator.accelerator import _distributed_backend
from fake_accelerator import FakeTorchAccelerator

from accelplug import MisconfigurationException
from accelplug.accelerators import CPUAccelerator, CUDAAccelerator
from accelplug.registry import AcceleratorRegistry

Fake = Callable[..., FakeTorchAccelerator]


def test_an_out_of_tree_device_nobody_owns_is_available(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator("privateuseone", 2)
    assert TorchAcceleratorBridge.unavailable_reason() is None
    assert TorchAcceleratorBridge.device_count() == 2


def test_it_steps_aside_for_the_accelerator_that_owns_the_device_type(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator("cuda", 1)
    reason = TorchAcceleratorBridge.unavailable_reason() or ""
    assert "accelerator 'cuda' already serves" in reason
    assert f"{FORCE_ENV}=1" in reason
    assert TorchAcceleratorBridge.device_count() == 0


def test_the_force_variable_runs_it_on_an_owned_device_type(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator("cuda", 1, forced=True)
    assert TorchAcceleratorBridge.is_available()
    assert TorchAcceleratorBridge.device_count() == 1


def test_force_set_to_zero_does_not_force(fake_torch_accelerator: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_torch_accelerator("cuda", 1)
    monkeypatch.setenv(FORCE_ENV, "0")
    assert not TorchAcceleratorBridge.is_available()


def test_auto_prefers_the_owner_and_the_bridge_over_the_cpu(fake_torch_accelerator: Fake) -> None:
    registry = AcceleratorRegistry()
    for cls in (CPUAccelerator, TorchAcceleratorBridge):
        registry.register(cls)
    fake_torch_accelerator("privateuseone", 1)
    assert registry.available() == ["torch_accelerator", "cpu"]
    fake_torch_accelerator("cuda", 1)
    assert "torch_accelerator" not in registry.available()


def test_a_cpu_only_torch_is_reported(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator(None)
    assert "reports no accelerator" in (TorchAcceleratorBridge.unavailable_reason() or "")


def test_no_visible_device_is_reported(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator("privateuseone", 0)
    assert "no visible device" in (TorchAcceleratorBridge.unavailable_reason() or "")


def test_a_backend_loaded_after_the_plugins_is_reported(
    fake_torch_accelerator: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_torch_accelerator("privateuseone", 1)
    monkeypatch.setattr(TorchAcceleratorBridge, "device_type", "cuda")
    reason = TorchAcceleratorBridge.unavailable_reason() or ""
    assert "current accelerator is 'privateuseone', but it was 'cuda'" in reason


def test_a_torch_without_check_available_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.accelerator, "current_accelerator", lambda: torch.device("cuda"))
    assert torch_accelerator_type() is None
    assert "predates torch.accelerator.current_accelerator(check_available=...)" in (
        TorchAcceleratorBridge.unavailable_reason() or ""
    )


def test_the_device_type_is_asked_without_the_runtime_check(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[bool] = []

    def current_accelerator(check_available: bool = False) -> torch.device:
        asked.append(check_available)
        return torch.device("cuda")

    monkeypatch.setattr(torch.accelerator, "current_accelerator", current_accelerator)
    assert torch_accelerator_type() == "cuda"
    assert asked == [False]


def test_this_cpu_only_torch_has_no_accelerator_type() -> None:
    if torch.accelerator.current_accelerator() is not None:
        pytest.skip(f"this torch reports {torch.accelerator.current_accelerator()}")
    assert torch_accelerator_type() is None
    assert TorchAcceleratorBridge.device_type == "privateuseone"
    assert not TorchAcceleratorBridge.is_available()


def test_setup_device_makes_the_index_current(fake_torch_accelerator: Fake) -> None:
    fake = fake_torch_accelerator("privateuseone", 2)
    TorchAcceleratorBridge().setup_device(torch.device("privateuseone", 1))
    assert fake.current == 1


def test_teardown_synchronises_and_empties_the_cache_after_setup(fake_torch_accelerator: Fake) -> None:
    fake = fake_torch_accelerator("privateuseone", 2)
    bridge = TorchAcceleratorBridge()
    device = torch.device("privateuseone", 1)
    bridge.setup_device(device)
    bridge.teardown()
    assert fake.synchronized == [device]
    assert fake.emptied == 1


def test_teardown_without_setup_touches_nothing(fake_torch_accelerator: Fake) -> None:
    fake = fake_torch_accelerator("privateuseone", 2)
    TorchAcceleratorBridge().teardown()
    assert (fake.synchronized, fake.emptied) == ([], 0)


def test_device_stats_are_floats(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator("privateuseone", 1)
    stats = TorchAcceleratorBridge().get_device_stats(torch.device("privateuseone", 0))
    assert stats == {"allocated_bytes.all.current": 512.0, "num_ooms": 0.0}


def test_device_stats_are_empty_without_memory_stats(
    fake_torch_accelerator: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_torch_accelerator("privateuseone", 1)
    monkeypatch.delattr(torch.accelerator, "memory_stats")
    assert TorchAcceleratorBridge().get_device_stats(torch.device("privateuseone", 0)) == {}


def test_the_distributed_backend_is_torchs_default_for_the_device_type() -> None:
    assert _distributed_backend("cuda") == "nccl"
    assert _distributed_backend(None) is None


def test_ddp_is_offered_only_with_a_distributed_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TorchAcceleratorBridge, "distributed_backend", "hccl")
    assert TorchAcceleratorBridge.supported_strategies() == ("single_device", "ddp")
    monkeypatch.setattr(TorchAcceleratorBridge, "distributed_backend", None)
    assert TorchAcceleratorBridge.supported_strategies() == ("single_device",)


def test_mixed_precision_is_claimed_where_torch_has_autocast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TorchAcceleratorBridge, "device_type", "cuda")
    assert TorchAcceleratorBridge.supported_precisions() == ("32-true", "bf16-mixed", "16-mixed")
    monkeypatch.setattr(torch.amp, "is_autocast_available", lambda device_type: False)
    assert TorchAcceleratorBridge.supported_precisions() == ("32-true",)


def test_a_backend_declaring_its_autocast_dtypes_gets_only_those(monkeypatch: pytest.MonkeyPatch) -> None:
    """A PrivateUse1 backend (openreg, torch_npu) lists its autocast dtypes in ``get_amp_supported_dtype``;
    torch's autocast refuses the rest, so the bridge must not claim them."""
    import types

    backend = types.ModuleType("backend")
    backend.get_amp_supported_dtype = lambda: [torch.float16]  # type: ignore[attr-defined]
    monkeypatch.setattr(TorchAcceleratorBridge, "device_type", "npu")
    monkeypatch.setattr(torch.amp, "is_autocast_available", lambda device_type: True)
    monkeypatch.setattr(torch, "get_device_module", lambda device_type: backend)
    assert TorchAcceleratorBridge.supported_precisions() == ("32-true", "16-mixed")


def test_the_owner_is_found_in_the_process_registry(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator("cuda", 1)
    assert TorchAcceleratorBridge.owner() == CUDAAccelerator.name


def test_an_unclear_force_value_is_refused(fake_torch_accelerator: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_torch_accelerator("cuda", 1)
    monkeypatch.setenv(FORCE_ENV, "maybe")
    with pytest.raises(MisconfigurationException, match=f"{FORCE_ENV}='maybe' is invalid"):
        TorchAcceleratorBridge.is_available()
