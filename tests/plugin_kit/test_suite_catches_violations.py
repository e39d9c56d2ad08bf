"""The conformance suite fails an accelerator that breaks the contract, naming what is wrong.

Each test runs one check of ``AcceleratorConformance`` against a deliberately broken accelerator;
a suite whose checks could not fail would let every plugin through.
"""

from __future__ import annotations

import time
from typing import ClassVar

import pluggy
import pytest
import torch
from tests.fakes import FakeAccelerator

from accelplug import Accelerator, hookimpl
from accelplug.accelerators import CPUAccelerator
from accelplug.testing import AcceleratorConformance


class _Sound(FakeAccelerator):
    """Available, two devices, on the CPU device: passes everything, so each variant breaks one thing."""

    name = "sound"


def _suite(accelerator: type[Accelerator], **attributes: object) -> AcceleratorConformance:
    suite_class = type("Suite", (AcceleratorConformance,), {"accelerator_class": accelerator, **attributes})
    suite: AcceleratorConformance = suite_class()
    return suite


def _violation(accelerator: type[Accelerator], check: str, **attributes: object) -> str:
    with pytest.raises((AssertionError, pytest.fail.Exception)) as info:
        getattr(_suite(accelerator, **attributes), check)()
    return str(info.value)


def test_a_sound_accelerator_passes_the_checks_used_below() -> None:
    suite = _suite(_Sound, plugin_module=_SoundPlugin)
    for check in (
        "test_name_is_a_lowercase_identifier_and_not_a_selection_keyword",
        "test_is_available_returns_a_bool",
        "test_unavailable_reason_is_none_exactly_when_available",
        "test_device_count_is_zero_exactly_when_unavailable",
        "test_parse_devices_accepts_every_contract_form",
        "test_parse_devices_rejects_bad_arguments_naming_the_value",
        "test_supported_strategies_are_registered_strategies",
        "test_a_distributed_strategy_has_a_distributed_backend",
        "test_supported_precisions_are_canonical_names_including_32_true",
        "test_class_level_queries_answer_quickly",
        "test_get_device_stats_maps_names_to_floats",
        "test_a_training_step_on_device_0_lowers_the_loss",
        "test_the_plugin_hook_returns_the_class",
    ):
        getattr(suite, check)()


def test_a_name_with_capitals_fails() -> None:
    bad = type("Bad", (_Sound,), {"name": "My-Device"})
    assert "'My-Device' is not a lowercase identifier" in _violation(
        bad, "test_name_is_a_lowercase_identifier_and_not_a_selection_keyword"
    )


def test_the_name_gpu_fails_as_a_selection_keyword() -> None:
    bad = type("Bad", (_Sound,), {"name": "gpu"})
    assert "selection keyword" in _violation(bad, "test_name_is_a_lowercase_identifier_and_not_a_selection_keyword")


def test_an_unknown_device_type_fails() -> None:
    bad = type("Bad", (_Sound,), {"device_type": "warpdrive"})
    assert "torch does not know device_type 'warpdrive'" in _violation(bad, "test_device_type_is_a_torch_device_type")


class _TruthyInt(_Sound):
    @classmethod
    def is_available(cls) -> bool:
        return 1  # type: ignore[return-value]


def test_is_available_returning_an_int_fails() -> None:
    assert "not a bool" in _violation(_TruthyInt, "test_is_available_returns_a_bool")


class _Silent(_Sound):
    @classmethod
    def is_available(cls) -> bool:
        return False

    @classmethod
    def unavailable_reason(cls) -> str | None:
        return None


def test_unavailable_without_a_reason_fails() -> None:
    assert "must explain why" in _violation(_Silent, "test_unavailable_reason_is_none_exactly_when_available")


def test_unavailable_with_devices_fails() -> None:
    assert "device_count() is 2" in _violation(_Silent, "test_device_count_is_zero_exactly_when_unavailable")


class _AcceptsZero(_Sound):
    @classmethod
    def parse_devices(cls, devices: object) -> list[int]:
        return [] if devices == 0 else super().parse_devices(devices)


def test_parse_devices_accepting_zero_fails() -> None:
    assert "devices=0 was accepted as []" in _violation(
        _AcceptsZero, "test_parse_devices_rejects_bad_arguments_naming_the_value"
    )


class _WrongException(_Sound):
    @classmethod
    def parse_devices(cls, devices: object) -> list[int]:
        if devices == "two":
            raise KeyError(devices)
        return super().parse_devices(devices)


def test_parse_devices_raising_another_exception_fails() -> None:
    message = _violation(_WrongException, "test_parse_devices_rejects_bad_arguments_naming_the_value")
    assert "devices='two' raised KeyError" in message


class _FirstOnly(_Sound):
    @classmethod
    def parse_devices(cls, devices: object) -> list[int]:
        super().parse_devices(devices)
        return [0]


def test_parse_devices_selecting_the_wrong_devices_fails() -> None:
    assert "devices=-1 gave [0], expected [0, 1]" in _violation(
        _FirstOnly, "test_parse_devices_accepts_every_contract_form"
    )


class _UnknownStrategy(_Sound):
    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("single_device", "warp")


def test_an_unregistered_strategy_fails() -> None:
    assert "['warp']" in _violation(_UnknownStrategy, "test_supported_strategies_are_registered_strategies")


class _DDPWithoutBackend(_Sound):
    @classmethod
    def supported_strategies(cls) -> tuple[str, ...]:
        return ("single_device", "ddp")


def test_ddp_without_a_distributed_backend_fails() -> None:
    assert "distributed_backend" in _violation(
        _DDPWithoutBackend, "test_a_distributed_strategy_has_a_distributed_backend"
    )


class _Fp8(_Sound):
    @classmethod
    def supported_precisions(cls) -> tuple[str, ...]:
        return ("32-true", "fp8")


def test_a_non_canonical_precision_fails() -> None:
    assert "['fp8']" in _violation(_Fp8, "test_supported_precisions_are_canonical_names_including_32_true")


class _Slow(_Sound):
    @classmethod
    def is_available(cls) -> bool:
        time.sleep(0.2)
        return True


def test_a_slow_availability_probe_fails() -> None:
    message = _violation(_Slow, "test_class_level_queries_answer_quickly", query_time_limit_s=0.05)
    assert "is_available() took" in message


class _Runtime:
    initialized: ClassVar[bool] = False


class _Initialises(_Sound):
    @classmethod
    def is_available(cls) -> bool:
        _Runtime.initialized = True
        return True


def test_initialising_the_runtime_when_asked_for_availability_fails() -> None:
    _Runtime.initialized = False
    message = _violation(
        _Initialises,
        "test_class_level_queries_do_not_initialise_the_device_runtime",
        runtime_initialized=lambda self: _Runtime.initialized,
    )
    assert "initialised the 'cpu' runtime" in message


class _IntStats(_Sound):
    def get_device_stats(self, device: torch.device) -> dict[str, float]:
        return {"allocated": 3}  # type: ignore[dict-item]


def test_device_stats_that_are_not_floats_fail() -> None:
    assert "'allocated': 3" in _violation(_IntStats, "test_get_device_stats_maps_names_to_floats")


class _SoundPlugin:
    @staticmethod
    @hookimpl
    def register_accelerators() -> list[type[Accelerator]]:
        return [_Sound]


class _OtherPlugin:
    @staticmethod
    @hookimpl
    def register_accelerators() -> list[type[Accelerator]]:
        return [CPUAccelerator]


class _MisspeltPlugin:
    @staticmethod
    @hookimpl
    def register_acelerators() -> list[type[Accelerator]]:
        return [_Sound]


def test_a_misspelt_hook_name_fails() -> None:
    with pytest.raises(pluggy.PluginValidationError, match="register_acelerators"):
        _suite(_Sound, plugin_module=_MisspeltPlugin).test_the_plugin_hook_returns_the_class()


def test_a_hook_that_returns_another_class_fails() -> None:
    assert "not _Sound" in _violation(_Sound, "test_the_plugin_hook_returns_the_class", plugin_module=_OtherPlugin)


def test_an_entry_point_that_is_not_installed_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    suite = _suite(_Sound, entry_point_name="not-installed-anywhere")
    with pytest.raises(AssertionError, match="no entry point 'not-installed-anywhere'"):
        suite.test_the_installed_entry_point_registers_the_class(monkeypatch)


class _Offline(_Sound):
    @classmethod
    def is_available(cls) -> bool:
        return False

    @classmethod
    def device_count(cls) -> int:
        return 0


def test_device_checks_skip_with_the_accelerators_own_reason() -> None:
    with pytest.raises(pytest.skip.Exception, match=r"not available here: .*gives no further detail"):
        _suite(_Offline).test_setup_device_and_teardown_run_on_device_0()
