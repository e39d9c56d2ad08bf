"""What the bridge decides: when it steps aside, what it says, and what it asks torch.accelerator.

Most tests run on the pure-Python PrivateUse1 device of ``python_device`` (fixture ``pydev``): torch's real
device-neutral API over a backend that lacks every optional part. The rest mock ``torch.accelerator`` for
what this machine cannot be: a CUDA machine, a CPU-only torch, an older torch, a device index other than 0.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest
import python_device
import torch
from accelplug_torch_accelerator import FORCE_ENV, TorchAcceleratorBridge, torch_accelerator_type
from accelplug_torch_accelerator.accelerator import _distributed_backend
from fake_accelerator import FakeTorchAccelerator

from accelplug import MisconfigurationException
from accelplug.accelerators import CPUAccelerator, CUDAAccelerator
from accelplug.data.loaders import unpin_where_unsupported
from accelplug.hardware.capabilities import capabilities
from accelplug.hardware.runtime import copies_may_overlap
from accelplug.registry import AcceleratorRegistry
from accelplug.selection import select
from accelplug.strategies.compiling import check_compile_support

Fake = Callable[..., FakeTorchAccelerator]


def test_an_out_of_tree_device_nobody_owns_is_available(pydev: str) -> None:
    assert TorchAcceleratorBridge.device_type == pydev
    assert TorchAcceleratorBridge.unavailable_reason() is None
    assert TorchAcceleratorBridge.device_count() == python_device.COUNT


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


def test_auto_prefers_the_owner_and_the_bridge_over_the_cpu(pydev: str, fake_torch_accelerator: Fake) -> None:
    registry = AcceleratorRegistry()
    for cls in (CPUAccelerator, TorchAcceleratorBridge):
        registry.register(cls)
    assert registry.available() == ["torch_accelerator", "cpu"]
    fake_torch_accelerator("cuda", 1)
    assert "torch_accelerator" not in registry.available()


def test_a_cpu_only_torch_is_reported(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator(None)
    assert "reports no accelerator" in (TorchAcceleratorBridge.unavailable_reason() or "")


def test_no_visible_device_is_reported(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator("hpu", 0)
    assert "no visible device" in (TorchAcceleratorBridge.unavailable_reason() or "")


def test_a_backend_loaded_after_the_plugins_is_reported(
    fake_torch_accelerator: Fake, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_torch_accelerator("hpu", 1)
    monkeypatch.setattr(TorchAcceleratorBridge, "device_type", "cuda")
    reason = TorchAcceleratorBridge.unavailable_reason() or ""
    assert "current accelerator is 'hpu', but it was 'cuda'" in reason


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


def test_the_device_type_is_the_name_the_backend_gave_privateuse1(pydev: str) -> None:
    assert torch_accelerator_type() == pydev == torch._C._get_privateuse1_backend_name()


def test_setup_device_makes_the_index_current(fake_torch_accelerator: Fake) -> None:
    """Mocked: the pure-Python device's guard cannot hold an index other than 0."""
    fake = fake_torch_accelerator("hpu", 2)
    TorchAcceleratorBridge().setup_device(torch.device("hpu", 1))
    assert fake.current == 1


def test_teardown_synchronises_and_empties_the_cache_through_torch_accelerator(fake_torch_accelerator: Fake) -> None:
    """Mocked: a backend with every optional part, whose module leaves them to torch.accelerator."""
    fake = fake_torch_accelerator("hpu", 2)
    bridge = TorchAcceleratorBridge()
    device = torch.device("hpu", 1)
    bridge.setup_device(device)
    bridge.teardown()
    assert fake.synchronized == [device]
    assert fake.emptied == 1


def test_teardown_without_setup_touches_nothing(fake_torch_accelerator: Fake) -> None:
    fake = fake_torch_accelerator("hpu", 2)
    TorchAcceleratorBridge().teardown()
    assert (fake.synchronized, fake.emptied) == ([], 0)


def test_teardown_on_a_backend_without_synchronize_or_a_caching_allocator_completes(pydev: str) -> None:
    """torch.accelerator.synchronize() and empty_cache() both raise on this device, as empty_cache() does on
    torchvulkan; the bridge's teardown still ends the run, and each missing part is recorded with torch's words."""
    bridge = TorchAcceleratorBridge()
    bridge.setup_device(torch.device(pydev, 0))
    bridge.teardown()
    verdicts = {c.name: c for c in capabilities(pydev).report()}
    assert verdicts["synchronize"].available is False
    assert "torch.accelerator.synchronize raised RuntimeError" in verdicts["synchronize"].detail
    assert verdicts["empty_cache"].available is False
    assert "is not a DeviceAllocator" in verdicts["empty_cache"].detail


def test_a_missing_capability_is_logged_at_debug_level(pydev: str, caplog: pytest.LogCaptureFixture) -> None:
    bridge = TorchAcceleratorBridge()
    bridge.setup_device(torch.device(pydev, 0))
    with caplog.at_level(logging.DEBUG, logger="accelplug.capabilities"):
        bridge.teardown()
    assert f"capability empty_cache of {pydev!r}: missing" in caplog.text


def test_device_stats_are_floats(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator("hpu", 1)
    stats = TorchAcceleratorBridge().get_device_stats(torch.device("hpu", 0))
    assert stats == {"allocated_bytes.all.current": 512.0, "num_ooms": 0.0}


def test_device_stats_are_empty_for_a_backend_without_memory_statistics(pydev: str) -> None:
    assert TorchAcceleratorBridge().get_device_stats(torch.device(pydev, 0)) == {}


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


def test_a_backend_declaring_its_autocast_dtypes_gets_only_those(pydev: str) -> None:
    """A PrivateUse1 backend (torchvulkan, torch_npu) lists its autocast dtypes in ``get_amp_supported_dtype``;
    torch's autocast refuses the rest, so the bridge must not claim them."""
    assert TorchAcceleratorBridge.supported_precisions() == ("32-true", "16-mixed")


def test_bf16_mixed_is_refused_naming_the_backend_and_what_it_lacks(pydev: str) -> None:
    with pytest.raises(MisconfigurationException) as raised:
        select(accelerator=TorchAcceleratorBridge, devices=1, precision="bf16-mixed")
    message = str(raised.value)
    assert f"precision='bf16-mixed' cannot run on 'torch_accelerator': torch's autocast on {pydev!r}" in message
    assert "accepts float16 only" in message
    assert "It supports: '32-true', '16-mixed'" in message


def test_compile_is_refused_where_inductor_has_no_code_generator(pydev: str) -> None:
    with pytest.raises(MisconfigurationException) as raised:
        check_compile_support(pydev, {})
    assert f"compile=... cannot run on {pydev!r}" in str(raised.value)
    assert "Inductor, has no code generator registered" in str(raised.value)
    assert "compile={'backend': 'aot_eager'}" in str(raised.value)


def test_a_loader_asking_for_pinned_memory_stops_pinning_where_the_backend_cannot_pin(pydev: str) -> None:
    """This device's torch hooks have no pinned allocator, so the loader's pinning thread would raise."""
    data = torch.utils.data.TensorDataset(torch.zeros(4, 2))
    loader = unpin_where_unsupported(
        torch.utils.data.DataLoader(data, batch_size=2, pin_memory=True), torch.device(pydev, 0)
    )
    assert loader.pin_memory is False
    assert "NotImplementedError" in next(c.detail for c in capabilities(pydev).report() if c.name == "pinned_memory")


def test_copies_to_a_backend_that_cannot_pin_are_blocking(pydev: str) -> None:
    assert copies_may_overlap(torch.device(pydev, 0)) is False


def test_the_device_rng_state_of_a_backend_without_a_generator_is_left_out(pydev: str) -> None:
    assert TorchAcceleratorBridge().get_rng_state() is None
    assert "has no get_rng_state" in next(c.detail for c in capabilities(pydev).report() if c.name == "rng_state")


def test_the_owner_is_found_in_the_process_registry(fake_torch_accelerator: Fake) -> None:
    fake_torch_accelerator("cuda", 1)
    assert TorchAcceleratorBridge.owner() == CUDAAccelerator.name


def test_an_unclear_force_value_is_refused(fake_torch_accelerator: Fake, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_torch_accelerator("cuda", 1)
    monkeypatch.setenv(FORCE_ENV, "maybe")
    with pytest.raises(MisconfigurationException, match=f"{FORCE_ENV}='maybe' is invalid"):
        TorchAcceleratorBridge.is_available()
