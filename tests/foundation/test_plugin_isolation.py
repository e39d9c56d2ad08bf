"""Calls into plugin code are bounded and checked, in this process (fast; the real distributions are
exercised in ``test_misbehaving_plugins.py``).

Plugins here are module objects built by the test and handed to the registry's loader as if an entry
point had produced them (``entry_point=True``: isolated, time-bounded, asked once).
"""

from __future__ import annotations

import threading
import time
import types
from collections.abc import Callable

import pytest

from accelplug import Accelerator, MisconfigurationException, get_registry, hookimpl, isolation
from accelplug.accelerators import CPUAccelerator
from accelplug.errors import PluginLoadWarning
from accelplug.registry import AcceleratorRegistry, PluginInfo
from accelplug.status import ContractBreach, ask


def _plugin(**hooks: Callable[[], object]) -> types.ModuleType:
    module = types.ModuleType("fake_plugin")
    for name, function in hooks.items():
        setattr(module, name, hookimpl(function))
    return module


def _accelerator(name: str, **methods: Callable[..., object]) -> type[Accelerator]:
    body: dict[str, object] = {"name": name, "device_type": "cpu", "auto_priority": 500}
    body["is_available"] = classmethod(lambda cls: True)
    body["device_count"] = classmethod(lambda cls: 1)
    body.update({k: classmethod(v) for k, v in methods.items()})
    return type(f"{name.title()}Accelerator", (Accelerator,), body)


def _load(registry: AcceleratorRegistry, name: str, module: types.ModuleType) -> None:
    info = PluginInfo(name, f"dist-{name}", "1.0", entry_point=True)
    registry._load_plugin(info, lambda: module)


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> AcceleratorRegistry:
    monkeypatch.setenv("ACCELPLUG_PLUGIN_TIMEOUT_S", "0.3")
    registry = AcceleratorRegistry()
    registry.load()  # built-ins only (the suite turns autoloading off); reads the bound
    return registry


# ---- isolation.call ------------------------------------------------------------------------------
def test_a_call_that_does_not_return_is_abandoned_after_the_bound() -> None:
    release = threading.Event()
    begin = time.perf_counter()
    outcome = isolation.call(lambda: release.wait(30), "hangs", timeout=0.2)
    assert time.perf_counter() - begin < 2
    assert outcome.timed_out and outcome.error is not None and outcome.error.startswith("did not return within 0.2 s")
    release.set()


def test_sys_exit_in_a_plugin_call_is_reported_not_obeyed() -> None:
    outcome = isolation.call(lambda: exit(3), "exits", timeout=5)
    assert outcome.error == "called sys.exit(3)"
    assert isinstance(outcome.exception, SystemExit)


def test_keyboard_interrupt_raised_by_plugin_code_is_reported() -> None:
    def interrupt() -> None:
        raise KeyboardInterrupt

    assert isolation.call(interrupt, "interrupts", timeout=5).error == "raised KeyboardInterrupt"


def test_a_trusted_call_reports_exceptions_and_sys_exit_but_lets_keyboard_interrupt_through() -> None:
    assert isolation.call(lambda: {}["x"], "raises", timeout=None).error == "raised KeyError: 'x'"
    assert isolation.call(lambda: exit(2), "exits", timeout=None).error == "called sys.exit(2)"

    def interrupt() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        isolation.call(interrupt, "interrupts", timeout=None)


# ---- the registry's use of it ---------------------------------------------------------------------
def test_hung_accelerators_are_asked_together_so_several_cost_one_bound(registry: AcceleratorRegistry) -> None:
    release = threading.Event()
    hung = [_accelerator(f"hung{i}", is_available=lambda cls: release.wait(30)) for i in range(4)]
    _load(registry, "hung", _plugin(register_accelerators=lambda: hung))
    begin = time.perf_counter()
    with pytest.warns(PluginLoadWarning):
        assert registry.available() == ["cpu"]
    assert time.perf_counter() - begin < 0.3 * 4  # one shared deadline, not one per plugin
    release.set()
    reported = [f.error for f in registry.failures()]
    assert len(reported) == 4
    assert all(f"hung{i}.is_available() did not return within" in reported[i] for i in range(4))


def test_an_entry_point_accelerator_is_asked_once_per_registry(registry: AcceleratorRegistry) -> None:
    calls: list[str] = []
    counted = _accelerator("counted", device_count=lambda cls: calls.append("asked") or 1)
    _load(registry, "counted", _plugin(register_accelerators=lambda: [counted]))
    assert registry.available()[0] == "counted"
    asked = len(calls)
    assert asked >= 1
    for _ in range(3):
        assert registry.available()[0] == "counted"
        assert registry.status("counted").device_count == 1
    assert len(calls) == asked


def test_a_builtin_is_asked_afresh_every_time(registry: AcceleratorRegistry, monkeypatch: pytest.MonkeyPatch) -> None:
    assert "cpu" in registry.available()
    monkeypatch.setattr(CPUAccelerator, "is_available", classmethod(lambda cls: False))
    monkeypatch.setattr(CPUAccelerator, "unavailable_reason", classmethod(lambda cls: "switched off by the test"))
    assert "cpu" not in registry.available()


def test_a_slow_plugin_import_is_measured(registry: AcceleratorRegistry) -> None:
    def slow_hook() -> list[type[Accelerator]]:
        time.sleep(0.1)
        return [_accelerator("slowhook")]

    _load(registry, "slowhook", _plugin(register_accelerators=slow_hook))
    load_seconds = registry.source("slowhook").load_seconds
    assert load_seconds is not None and load_seconds >= 0.1


def test_a_hook_that_does_not_return_is_a_failure(registry: AcceleratorRegistry) -> None:
    release = threading.Event()
    with pytest.warns(PluginLoadWarning, match=r"register_accelerators\(\) hook did not return within 0.3 s"):
        _load(registry, "stuck", _plugin(register_accelerators=lambda: release.wait(30)))
    release.set()
    assert registry.names() == ["cpu", "cuda", "mps"]


def test_a_returned_generator_that_raises_is_a_failure(registry: AcceleratorRegistry) -> None:
    def generator() -> object:
        yield _accelerator("first")
        raise RuntimeError("half-way")

    with pytest.warns(PluginLoadWarning, match=r"register_accelerators\(\) hook raised RuntimeError: half-way"):
        _load(registry, "gen", _plugin(register_accelerators=generator))


def test_a_misspelt_hook_name_is_a_failure_naming_the_hooks_that_exist(registry: AcceleratorRegistry) -> None:
    with pytest.warns(PluginLoadWarning, match=r"'register_accelerator'.*Did you mean 'register_accelerators'\?"):
        _load(registry, "typo", _plugin(register_accelerator=lambda: [_accelerator("typo")]))
    assert "typo" not in registry.plugin_manager.list_name_plugin()
    assert [f.plugin for f in registry.failures()] == ["typo"]


def test_a_plugin_with_no_hookimpl_is_a_failure(registry: AcceleratorRegistry) -> None:
    module = types.ModuleType("forgot_the_marker")
    module.register_accelerators = lambda: [_accelerator("unmarked")]  # type: ignore[attr-defined]
    with pytest.warns(PluginLoadWarning, match=r"implements no hook.*@accelplug.hookimpl"):
        _load(registry, "unmarked", module)


def test_a_plugin_import_that_calls_sys_exit_is_a_failure(registry: AcceleratorRegistry) -> None:
    def load() -> types.ModuleType:
        raise SystemExit(3)

    with pytest.warns(PluginLoadWarning, match=r"import failed: the module called sys.exit\(3\) while being imported"):
        registry._load_plugin(PluginInfo("exits", "dist-exits", "1.0", entry_point=True), load)


# ---- the contract each answer is checked against ---------------------------------------------------
@pytest.mark.parametrize(
    ("methods", "breach"),
    [
        ({"is_available": lambda cls: 1}, "is_available() returned 1 (int); expected a bool"),
        ({"device_count": lambda cls: "3"}, "device_count() returned '3' (str)"),
        ({"device_count": lambda cls: None}, "device_count() returned None"),
        ({"device_count": lambda cls: -1}, "device_count() returned -1"),
        ({"device_count": lambda cls: 0}, "device_count() returned 0"),
        ({"device_count": lambda cls: True}, "device_count() returned True"),
        ({"unavailable_reason": lambda cls: "no"}, "is_available() is True but unavailable_reason() returned 'no'"),
        (
            {"is_available": lambda cls: False, "unavailable_reason": lambda cls: None},
            "is_available() is False but unavailable_reason() returned None",
        ),
        ({"supported_strategies": lambda cls: "ddp"}, "supported_strategies() returned 'ddp'"),
        ({"supported_precisions": lambda cls: ()}, "supported_precisions() returned ()"),
        ({"auto_device_count": lambda cls: 5}, "auto_device_count() returned 5, more than device_count() (1)"),
    ],
)
def test_an_answer_that_breaks_the_contract_is_named(methods: dict[str, Callable[..., object]], breach: str) -> None:
    with pytest.raises(ContractBreach, match="^" + breach.replace("(", r"\(").replace(")", r"\)")):
        ask(_accelerator("junk", **methods), [])


def test_junk_answers_make_the_accelerator_unavailable_with_the_plugin_named(registry: AcceleratorRegistry) -> None:
    junk = _accelerator("junk", device_count=lambda cls: "3")
    _load(registry, "junky", _plugin(register_accelerators=lambda: [junk]))
    with pytest.warns(PluginLoadWarning):
        status = registry.status("junk")
    assert not status.available
    assert status.reason == (
        "plugin 'junky' (distribution dist-junky 1.0) misbehaved: junk.device_count() returned '3' (str); "
        "expected an int >= 1 (the number of devices a run may use)"
    )


def test_devices_auto_is_one_device_when_only_single_device_is_supported() -> None:
    two = _accelerator("twosingle", device_count=lambda cls: 2)
    assert ask(two, []).auto_device_count == 1
    assert two.auto_device_count() == 1
    assert two.parse_devices("auto") == [0]


# ---- registration ---------------------------------------------------------------------------------
def test_registering_an_instance_names_the_class_to_pass() -> None:
    with pytest.raises(MisconfigurationException, match=r"is an instance.*register\(CPUAccelerator\)"):
        get_registry().register(CPUAccelerator())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("attribute", "value", "expected"),
    [("auto_priority", "high", "auto_priority='high'; expected an int"), ("is_gpu", 1, "is_gpu=1; expected a bool")],
)
def test_registering_a_class_with_a_wrong_attribute_type_is_refused(
    attribute: str, value: object, expected: str
) -> None:
    bad = type("Bad", (_accelerator("bad"),), {attribute: value})
    with pytest.raises(MisconfigurationException, match=expected):
        get_registry().register(bad)


# ---- the switches, read when the registry loads ---------------------------------------------------
@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf", "1e9"])
def test_a_bad_plugin_timeout_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("ACCELPLUG_PLUGIN_TIMEOUT_S", value)
    with pytest.raises(MisconfigurationException, match=f"ACCELPLUG_PLUGIN_TIMEOUT_S={value!r} is invalid"):
        get_registry()


@pytest.mark.parametrize("variable", ["ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", "ACCELPLUG_TRACE_PLUGINS"])
@pytest.mark.parametrize("value", ["maybe", "2", "enabled", "y e s"])
def test_a_boolean_switch_refuses_unclear_values(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(MisconfigurationException, match=f"{variable}={value!r} is invalid: expected 1/0, true/false"):
        get_registry()


@pytest.mark.parametrize("value", ["1", "TRUE", "yes", "On"])
def test_a_boolean_switch_accepts_clear_values(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", value)
    assert get_registry().names() == ["cpu", "cuda", "mps"]


@pytest.mark.parametrize("timeout", [None, 5.0])
def test_plugin_calls_do_not_read_a_patched_time_perf_counter(
    monkeypatch: pytest.MonkeyPatch, timeout: float | None
) -> None:
    """A test that patches ``time.perf_counter`` with a finite mock clock (Lightning's ThroughputMonitor tests do)
    must not see the registry's plugin calls use up its values, or fail when they run out."""

    def patched() -> float:
        raise AssertionError("a plugin call read the patched clock")

    monkeypatch.setattr(time, "perf_counter", patched)
    outcome = isolation.call(lambda: 7, "probe", timeout)
    assert outcome.ok and outcome.value == 7
