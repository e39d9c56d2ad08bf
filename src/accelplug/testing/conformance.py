"""``AcceleratorConformance``: the contract of an accelerator, as tests pytest collects per subclass.

The class holds no state of its own; each check reads ``accelerator_class`` and the optional
attributes and hooks below, so a plugin's test module is a three-line subclass. The base class is
not named ``Test...``, so pytest collects only the subclasses.

Checks come in three groups:

* class-level queries (name, device type, availability, ``parse_devices``, strategies,
  precisions) run on every machine, because ``accelerator="auto"`` asks every registered
  accelerator on every machine;
* registration through the pluggy hook and the installed entry point run when the subclass says
  where its plugin lives (``plugin_module``, ``entry_point_name``), and skip otherwise;
* per-run checks (``setup_device``/``teardown``/``get_device_stats``, a training step, autocast)
  need the device and skip with the accelerator's own ``unavailable_reason()`` where it is absent.
"""

from __future__ import annotations

import importlib
import inspect
import math
import time
from collections.abc import Iterator
from importlib import metadata
from types import ModuleType
from typing import ClassVar

import pluggy
import pytest
import torch

from .. import hookspecs
from ..accelerator import NAME_PATTERN, Accelerator
from ..errors import MisconfigurationException
from ..registry import DISABLE_AUTOLOAD_ENV, PLUGINS_ENV, RESERVED_NAMES, AcceleratorRegistry, get_registry
from .cases import invalid_devices_arguments, valid_devices_cases

__all__ = ["AcceleratorConformance"]


class AcceleratorConformance:
    """Subclass as ``TestSomething`` and set ``accelerator_class``; every ``test_*`` is a contract check.

    Override the hooks (``runtime_initialized``, ``make_accelerator``, ``device_skip_reason``,
    ``tensor_skip_reason``) when the defaults cannot see what your device does.
    """

    #: The accelerator class under test.
    accelerator_class: ClassVar[type[Accelerator]]
    #: The module (or its dotted name) whose ``@hookimpl register_accelerators()`` returns the class.
    plugin_module: ClassVar[str | ModuleType | None] = None
    #: The name under ``[project.entry-points.accelplug]`` in the plugin's pyproject (checked only
    #: when the distribution is installed, e.g. with ``pip install -e .``).
    entry_point_name: ClassVar[str | None] = None
    #: How long the class-level queries may take, in seconds. ``accelerator="auto"`` asks every
    #: installed accelerator, so a slow probe slows every run on every machine.
    query_time_limit_s: ClassVar[float] = 5.0

    # ---- hooks a subclass may override ---------------------------------------------------------
    def runtime_initialized(self) -> bool | None:
        """Whether the device runtime is initialised in this process; None when it cannot be observed.

        The default asks ``torch.<device_type>.is_initialized()`` (cuda, xpu and most out-of-tree
        backends have it). Override it for a runtime torch does not track. The CPU has no device
        runtime to initialise (``torch.cpu.is_initialized()`` is always True), so it is not observed.
        """
        device_type = self.accelerator_class.device_type
        if device_type == "cpu":
            return None
        module = getattr(torch, device_type, None)
        probe = getattr(module, "is_initialized", None)
        if not callable(probe):
            return None
        return bool(probe())

    def make_accelerator(self) -> Accelerator:
        """The instance the per-run checks use; override when the constructor needs arguments."""
        return self.accelerator_class()

    def device_skip_reason(self) -> str | None:
        """Why ``setup_device``/``teardown``/``get_device_stats`` cannot be checked here, or None.

        By default they run exactly when the accelerator is available. A test whose device is
        mocked at the class level only (nothing can run on it) overrides this to skip them.
        """
        cls = self.accelerator_class
        reason = cls.unavailable_reason()
        if reason is None:
            return None
        return f"accelerator {cls.name!r} is not available here: {reason}"

    def tensor_skip_reason(self) -> str | None:
        """Why tensors cannot be computed on device 0 here, or None; defaults to ``device_skip_reason``.

        A test that mocks the device runtime's API (so ``setup_device`` can be exercised) but has no
        real device to hold tensors overrides this to skip the training and autocast checks.
        """
        return self.device_skip_reason()

    # ---- helpers -------------------------------------------------------------------------------
    def _cls(self) -> type[Accelerator]:
        cls: type[Accelerator] | None = getattr(self, "accelerator_class", None)
        if cls is None:
            pytest.fail(f"{type(self).__name__} must set accelerator_class to the Accelerator subclass under test")
        return cls

    def _require_device(self) -> torch.device:
        reason = self.device_skip_reason()
        if reason is not None:
            pytest.skip(reason)
        return self._cls().get_device(0)

    def _require_tensors(self) -> torch.device:
        device = self._require_device()
        reason = self.tensor_skip_reason()
        if reason is not None:
            pytest.skip(reason)
        return device

    def _plugin(self) -> ModuleType:
        module = self.plugin_module
        if module is None:
            pytest.skip("plugin_module is not set: set it to the module holding the @hookimpl to check the hook")
        return importlib.import_module(module) if isinstance(module, str) else module

    # ---- identity ------------------------------------------------------------------------------
    def test_is_a_concrete_accelerator_subclass(self) -> None:
        cls = self._cls()
        assert isinstance(cls, type), f"accelerator_class must be a class, got {cls!r}"
        assert issubclass(cls, Accelerator), f"{cls.__qualname__} does not subclass accelplug.Accelerator"
        missing = sorted(getattr(cls, "__abstractmethods__", ()))
        assert not inspect.isabstract(cls), f"{cls.__qualname__} does not implement: {', '.join(missing)}"

    def test_name_is_a_lowercase_identifier_and_not_a_selection_keyword(self) -> None:
        name = self._cls().name
        assert isinstance(name, str), f"name must be a str, got {name!r}"
        assert NAME_PATTERN.match(name), f"name {name!r} is not a lowercase identifier such as 'npu'"
        assert name not in RESERVED_NAMES, f"name {name!r} is a selection keyword ({sorted(RESERVED_NAMES)})"

    def test_device_type_is_a_torch_device_type(self) -> None:
        device_type = self._cls().device_type
        assert isinstance(device_type, str), f"device_type must be a str, got {device_type!r}"
        try:
            torch.device(device_type)
        except RuntimeError as exc:
            pytest.fail(f"torch does not know device_type {device_type!r}: {exc}")

    def test_class_attributes_have_their_documented_types(self) -> None:
        cls = self._cls()
        assert isinstance(cls.description, str), f"description must be a str, got {cls.description!r}"
        assert isinstance(cls.auto_priority, int) and not isinstance(cls.auto_priority, bool), (
            f"auto_priority must be an int, got {cls.auto_priority!r}"
        )
        assert isinstance(cls.is_gpu, bool), f"is_gpu must be a bool, got {cls.is_gpu!r}"
        backend = cls.distributed_backend
        assert backend is None or isinstance(backend, str), (
            f"distributed_backend must be a str or None, got {backend!r}"
        )

    def test_get_device_returns_a_device_of_its_device_type(self) -> None:
        cls = self._cls()
        device = cls.get_device(0)
        assert isinstance(device, torch.device), f"get_device(0) returned {device!r}, not a torch.device"
        assert device.type == torch.device(cls.device_type).type, (
            f"get_device(0) is {device}, not a {cls.device_type!r} device"
        )

    # ---- availability --------------------------------------------------------------------------
    def test_class_level_queries_answer_quickly(self) -> None:
        cls = self._cls()
        for query in (cls.is_available, cls.unavailable_reason, cls.device_count, cls.supported_strategies):
            start = time.perf_counter()
            query()
            took = time.perf_counter() - start
            assert took <= self.query_time_limit_s, (
                f"{cls.__qualname__}.{query.__name__}() took {took:.2f} s (limit {self.query_time_limit_s} s); "
                "accelerator='auto' asks every installed accelerator, so cache the probe"
            )

    def test_is_available_returns_a_bool(self) -> None:
        available = self._cls().is_available()
        assert isinstance(available, bool), f"is_available() returned {available!r}, not a bool"

    def test_is_available_gives_the_same_answer_when_asked_again(self) -> None:
        cls = self._cls()
        assert cls.is_available() == cls.is_available()

    def test_class_level_queries_do_not_initialise_the_device_runtime(self) -> None:
        cls = self._cls()
        before = self.runtime_initialized()
        if before is None:
            pytest.skip(
                f"cannot observe whether a {cls.device_type!r} device runtime is initialised (no "
                f"torch.{cls.device_type}.is_initialized() to ask, or the CPU); override runtime_initialized()"
            )
        if before:
            pytest.skip(f"the {cls.device_type!r} runtime was already initialised in this process by an earlier test")
        cls.is_available()
        cls.unavailable_reason()
        count = cls.device_count()
        cls.supported_strategies()
        cls.supported_precisions()
        if count > 0:
            cls.parse_devices("auto")
        assert not self.runtime_initialized(), (
            f"asking {cls.__qualname__} whether it is available initialised the {cls.device_type!r} runtime; "
            "a process that forks afterwards (DataLoader workers, launchers) would break"
        )

    def test_unavailable_reason_is_none_exactly_when_available(self) -> None:
        cls = self._cls()
        available, reason = cls.is_available(), cls.unavailable_reason()
        if available:
            assert reason is None, f"available, yet unavailable_reason() returned {reason!r}"
        else:
            assert isinstance(reason, str), f"unavailable, so unavailable_reason() must explain why; got {reason!r}"
            assert reason.strip(), "unavailable, so unavailable_reason() must not be empty"

    def test_device_count_is_a_non_negative_int(self) -> None:
        count = self._cls().device_count()
        assert isinstance(count, int) and not isinstance(count, bool), f"device_count() returned {count!r}"
        assert count >= 0, f"device_count() returned {count}"

    def test_device_count_is_zero_exactly_when_unavailable(self) -> None:
        cls = self._cls()
        available, count = cls.is_available(), cls.device_count()
        assert (count > 0) == available, f"is_available() is {available} but device_count() is {count}"

    # ---- devices -------------------------------------------------------------------------------
    def test_parse_devices_accepts_every_contract_form(self) -> None:
        cls = self._cls()
        count, auto = cls.device_count(), cls.auto_device_count()
        if count > 0:
            assert 1 <= auto <= count, f"auto_device_count() is {auto}, outside 1..device_count() ({count})"
        wrong = []
        for case in valid_devices_cases(count, auto):
            try:
                got = cls.parse_devices(case.argument)
            except MisconfigurationException as exc:
                wrong.append(f"devices={case.argument!r} raised {exc}")
                continue
            if got != case.expected:
                wrong.append(f"devices={case.argument!r} gave {got!r}, expected {case.expected!r}")
        assert not wrong, f"{cls.__qualname__}.parse_devices with {count} device(s):\n" + "\n".join(wrong)

    def test_parse_devices_rejects_bad_arguments_naming_the_value(self) -> None:
        cls = self._cls()
        count = cls.device_count()
        wrong = []
        # the CPU's devices are processes: a count above the cores is valid there (as in Lightning), nowhere else
        beyond = (count + 1, str(count + 1)) if cls.device_type == "cpu" else ()
        for argument in [a for a in invalid_devices_arguments(count) if a not in beyond]:
            try:
                got = cls.parse_devices(argument)
            except MisconfigurationException as exc:
                if repr(argument) not in str(exc) and str(argument) not in str(exc):
                    wrong.append(f"devices={argument!r}: the message does not name the value: {exc}")
                continue
            except Exception as exc:  # any other type is itself the contract violation reported
                wrong.append(f"devices={argument!r} raised {type(exc).__name__}, not MisconfigurationException")
                continue
            wrong.append(f"devices={argument!r} was accepted as {got!r}")
        assert not wrong, f"{cls.__qualname__}.parse_devices with {count} device(s):\n" + "\n".join(wrong)

    def test_every_selectable_device_index_maps_to_a_device(self) -> None:
        cls = self._cls()
        if cls.device_count() == 0:
            pytest.skip(f"accelerator {cls.name!r} has no devices here")
        for index in cls.parse_devices(-1):
            assert cls.get_device(index).type == torch.device(cls.device_type).type

    # ---- strategies and precisions -------------------------------------------------------------
    def test_supported_strategies_are_registered_strategies(self) -> None:
        cls = self._cls()
        strategies = cls.supported_strategies()
        assert isinstance(strategies, tuple) and strategies, f"supported_strategies() returned {strategies!r}"
        registered = get_registry().strategy_names()
        unknown = [s for s in strategies if s not in registered]
        assert not unknown, f"supported_strategies() names {unknown}, not registered ({registered})"

    def test_a_distributed_strategy_has_a_distributed_backend(self) -> None:
        cls = self._cls()
        if "ddp" in cls.supported_strategies():
            assert cls.distributed_backend, (
                "supported_strategies() includes 'ddp', which needs distributed_backend (e.g. 'gloo', 'nccl')"
            )

    def test_supported_precisions_are_canonical_names_including_32_true(self) -> None:
        precisions = self._cls().supported_precisions()
        assert isinstance(precisions, tuple), f"supported_precisions() returned {precisions!r}, not a tuple"
        known = get_registry().precision_names()
        unknown = [p for p in precisions if p not in known]
        assert not unknown, f"supported_precisions() names {unknown}; the registered precisions are {known}"
        assert "32-true" in precisions, "every accelerator must train in '32-true', the Trainer's default"

    # ---- registration --------------------------------------------------------------------------
    def test_a_registry_accepts_the_class(self) -> None:
        cls = self._cls()
        registry = AcceleratorRegistry()
        assert registry.register(cls) is cls
        assert registry.get(cls.name.upper()) is cls

    def test_the_plugin_hook_returns_the_class(self) -> None:
        cls = self._cls()
        module = self._plugin()
        manager = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        manager.add_hookspecs(hookspecs)
        manager.register(module)  # raises PluginValidationError for a hookimpl that does not fit its spec
        manager.check_pending()  # a misspelt hook name is otherwise silently never called
        returned = [c for result in manager.hook.register_accelerators() for c in result]
        assert cls in returned, f"{module.__name__}.register_accelerators() returned {returned}, not {cls.__qualname__}"
        registry = AcceleratorRegistry()
        for accelerator in returned:
            registry.register(accelerator)

    def test_the_installed_entry_point_registers_the_class(self, monkeypatch: pytest.MonkeyPatch) -> None:
        cls = self._cls()
        name = self.entry_point_name
        if name is None:
            pytest.skip(
                "entry_point_name is not set: set it to the plugin's name under [project.entry-points.accelplug]"
            )
        found = [ep for ep in metadata.entry_points(group=hookspecs.PROJECT_NAME) if ep.name == name]
        assert found, (
            f"no entry point {name!r} in group 'accelplug' is installed; install the plugin's distribution "
            "(pip install -e .) and check [project.entry-points.accelplug] in its pyproject.toml"
        )
        monkeypatch.delenv(DISABLE_AUTOLOAD_ENV, raising=False)
        monkeypatch.setenv(PLUGINS_ENV, name)
        registry = AcceleratorRegistry()
        registry.load()
        failures = [str(f) for f in registry.failures() if f.plugin == name]
        assert not failures, f"the registry could not load plugin {name!r}: {failures}"
        assert registry.get(cls.name) is cls, (
            f"entry point {name!r} did not register accelerator {cls.name!r}; registered: {registry.names()}"
        )
        assert registry.source(cls.name).plugin == name

    # ---- per run, on the device ----------------------------------------------------------------
    def test_setup_device_and_teardown_run_on_device_0(self) -> None:
        device = self._require_device()
        accelerator = self.make_accelerator()
        accelerator.setup_device(device)
        accelerator.teardown()

    def test_get_device_stats_maps_names_to_floats(self) -> None:
        device = self._require_device()
        accelerator = self.make_accelerator()
        accelerator.setup_device(device)
        try:
            stats = accelerator.get_device_stats(device)
        finally:
            accelerator.teardown()
        assert isinstance(stats, dict), f"get_device_stats() returned {type(stats).__name__}, not a dict"
        wrong = {k: v for k, v in stats.items() if not isinstance(k, str) or not isinstance(v, float)}
        assert not wrong, f"get_device_stats() must map str to float; these do not: {wrong}"

    def test_a_training_step_on_device_0_lowers_the_loss(self) -> None:
        device = self._require_tensors()
        accelerator = self.make_accelerator()
        accelerator.setup_device(device)
        try:
            losses = list(_train_linear_regression(device, steps=20))
        finally:
            accelerator.teardown()
        assert all(math.isfinite(loss) for loss in losses), f"non-finite loss on {device}: {losses}"
        assert losses[-1] < losses[0], f"20 SGD steps on {device} did not lower the loss: {losses[0]} -> {losses[-1]}"

    @pytest.mark.parametrize("precision", ["bf16-mixed", "16-mixed", "64-true"])
    def test_a_supported_precision_computes_in_its_dtype(self, precision: str) -> None:
        """The Trainer's own precision object (the one ``Trainer(precision=...)`` uses) on device 0."""
        cls = self._cls()
        if precision not in cls.supported_precisions():
            pytest.skip(f"{cls.name!r} does not claim {precision!r}")
        device = self._require_tensors()
        plan = get_registry().get_precision(precision)(device.type)
        layer = plan.convert_module(torch.nn.Linear(8, 4)).to(device)
        inputs = torch.randn(2, 8, device=device, dtype=plan.param_dtype or torch.float32)
        with plan.forward_context():
            output = layer(inputs)
        expected = plan.compute_dtype
        assert output.dtype == expected, f"{precision!r} on {device} computed in {output.dtype}, not {expected}"
        assert torch.isfinite(output.float()).all().item()


def _train_linear_regression(device: torch.device, steps: int) -> Iterator[float]:
    """Fit y = 3x - 1 with SGD on ``device``, yielding the loss of every step."""
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(64, 1, generator=generator)
    targets = 3 * inputs - 1
    inputs, targets = inputs.to(device), targets.to(device)
    model = torch.nn.Linear(1, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs), targets)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        yield float(loss.detach().cpu())
