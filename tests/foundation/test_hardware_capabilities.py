"""``accelplug.hardware.capabilities``: a missing part is judged by its first call, once; a working part is trusted.

The backend's module is the one stand-in (this machine has no out-of-tree device in the test process):
``torch.get_device_module`` answers with a module whose functions the tests script. The bridge's tests and
``tests/real_device`` exercise the same code on a pure-Python PrivateUse1 device and on torchvulkan.
"""

from __future__ import annotations

import logging
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import torch

from accelplug.hardware.capabilities import capabilities, forget_capabilities

DEVICE_TYPE = "hpu"  # a device type torch knows and this machine has no module for


@pytest.fixture(autouse=True)
def fresh() -> Iterator[None]:
    forget_capabilities()
    yield
    forget_capabilities()


@pytest.fixture
def backend(monkeypatch: pytest.MonkeyPatch) -> Callable[..., types.SimpleNamespace]:
    """``backend(empty_cache=fn, ...)``: the device module torch returns for ``hpu``, with these functions."""

    def install(**functions: Callable[..., Any]) -> types.SimpleNamespace:
        module = types.SimpleNamespace(**functions)
        real = torch.get_device_module

        def get_device_module(device_type: str | None = None) -> Any:
            return module if device_type == DEVICE_TYPE else real(device_type)

        monkeypatch.setattr(torch, "get_device_module", get_device_module)
        return module

    return install


def test_a_part_that_raises_on_its_first_call_is_recorded_missing_and_not_called_again(
    backend: Callable[..., types.SimpleNamespace], caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[int] = []

    def empty_cache() -> None:
        calls.append(1)
        raise RuntimeError("Allocator for hpu is not a DeviceAllocator.\nsecond line")

    backend(empty_cache=empty_cache)
    found = capabilities(DEVICE_TYPE)
    with caplog.at_level(logging.DEBUG, logger="accelplug.capabilities"):
        assert found.empty_cache() is False
        assert found.empty_cache() is False
    assert calls == [1]
    row = next(c for c in found.report() if c.name == "empty_cache")
    assert row.describe() == (
        "empty_cache: no (torch.hpu.empty_cache raised RuntimeError: Allocator for hpu is not a DeviceAllocator.)"
    )
    assert "capability empty_cache of 'hpu': missing, skipped from now on" in caplog.text


def test_a_part_that_worked_once_is_trusted_and_its_later_failure_raised(
    backend: Callable[..., types.SimpleNamespace],
) -> None:
    """A device fault that surfaces at a synchronize must not be mistaken for a missing synchronize."""
    outcomes = iter([None, RuntimeError("device lost")])

    def synchronize() -> None:
        outcome = next(outcomes)
        if outcome is not None:
            raise outcome

    backend(synchronize=synchronize)
    found = capabilities(DEVICE_TYPE)
    assert found.synchronize(torch.device(DEVICE_TYPE, 0)) is True
    with pytest.raises(RuntimeError, match="device lost"):
        found.synchronize(torch.device(DEVICE_TYPE, 0))


def test_running_out_of_memory_is_never_a_missing_part(backend: Callable[..., types.SimpleNamespace]) -> None:
    def empty_cache() -> None:
        raise torch.OutOfMemoryError("out of memory")

    backend(empty_cache=empty_cache)
    with pytest.raises(torch.OutOfMemoryError):
        capabilities(DEVICE_TYPE).empty_cache()
    assert next(c for c in capabilities(DEVICE_TYPE).report() if c.name == "empty_cache").available is None


def test_memory_statistics_keep_the_numbers_as_floats(backend: Callable[..., types.SimpleNamespace]) -> None:
    backend(memory_stats=lambda index: {"allocated_bytes.all.current": 512, "oom": True, "name": "x", "peak": 1.5})
    assert capabilities(DEVICE_TYPE).memory_stats(torch.device(DEVICE_TYPE, 0)) == {
        "allocated_bytes.all.current": 512.0,
        "peak": 1.5,
    }


def test_a_part_nothing_offers_is_missing_with_the_reason(backend: Callable[..., types.SimpleNamespace]) -> None:
    backend()
    found = capabilities(DEVICE_TYPE)
    assert found.memory_stats(torch.device(DEVICE_TYPE, 0)) == {}
    assert found.rng_state() is None
    rows = {c.name: c.describe() for c in found.report()}
    assert rows["memory_stats"] == "memory_stats: no (neither torch.hpu nor torch.accelerator has memory_stats)"
    assert rows["rng_state"] == "rng_state: no (torch.hpu has no get_rng_state)"


def test_the_cpu_has_nothing_to_wait_for_empty_or_pin() -> None:
    cpu = capabilities("cpu")
    assert cpu.synchronize(torch.device("cpu")) is True
    assert (cpu.empty_cache(), cpu.pins_memory(), cpu.memory_stats(torch.device("cpu"))) == (False, False, {})
