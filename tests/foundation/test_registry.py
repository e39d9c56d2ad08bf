"""The registry: built-ins through the hook, lookups, run-time registration and its validation."""

from __future__ import annotations

import pytest
import torch
from tests.fakes import FakeAccelerator

from accelplug import Accelerator, MisconfigurationException, get_registry
from accelplug.accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator
from accelplug.registry import AcceleratorRegistry


class _Npu(FakeAccelerator):
    name = "npu"
    auto_priority = 500
    count = 4


class _Offline(_Npu):
    name = "offline"
    available = False


def test_get_registry_returns_one_registry_per_process() -> None:
    assert get_registry() is get_registry()


def test_builtins_are_registered_through_the_register_accelerators_hook() -> None:
    registry = get_registry()
    hook_plugins = {
        registry.plugin_manager.get_name(i.plugin)
        for i in registry.plugin_manager.hook.register_accelerators.get_hookimpls()
    }
    assert hook_plugins == {"builtin"}
    assert {registry.source(n).plugin for n in ("cpu", "cuda", "mps")} == {"builtin"}


def test_names_are_sorted() -> None:
    assert get_registry().names() == ["cpu", "cuda", "mps"]


def test_get_is_case_insensitive() -> None:
    registry = get_registry()
    assert registry.get("CPU") is CPUAccelerator
    assert registry.get(" Mps ") is MPSAccelerator
    assert registry.get("cuda") is CUDAAccelerator


def test_unknown_name_suggests_the_closest_match() -> None:
    with pytest.raises(MisconfigurationException, match=r"'mpss'.*'cpu', 'cuda', 'mps'.*Did you mean 'mps'\?"):
        get_registry().get("mpss")


def test_unknown_name_without_a_close_match_lists_the_names_only() -> None:
    with pytest.raises(MisconfigurationException) as info:
        get_registry().get("quantum")
    assert "Did you mean" not in str(info.value)
    assert "'cpu', 'cuda', 'mps'" in str(info.value)


def test_available_lists_the_cpu_on_this_machine_last() -> None:
    assert get_registry().available()[-1] == "cpu"


def test_available_orders_by_auto_priority() -> None:
    registry = get_registry()
    registry.register(_Npu)
    registry.register(_Offline)
    assert registry.available()[0] == "npu"
    assert "offline" not in registry.available()


def test_register_adds_an_accelerator_at_run_time() -> None:
    registry = get_registry()
    registry.register(_Npu)
    assert registry.get("npu") is _Npu
    assert registry.source("npu").plugin.startswith("runtime:")


def test_register_rejects_a_class_that_is_not_an_accelerator() -> None:
    with pytest.raises(MisconfigurationException, match=r"not an accelplug.Accelerator subclass"):
        get_registry().register(int)  # type: ignore[arg-type]


def test_register_rejects_an_abstract_accelerator() -> None:
    class Half(Accelerator):
        name = "half"
        device_type = "cpu"

    with pytest.raises(MisconfigurationException, match="does not implement: device_count, is_available"):
        get_registry().register(Half)


@pytest.mark.parametrize("bad_name", ["Npu", "auto", "gpu", "my-npu", "", "1npu"])
def test_register_rejects_names_that_are_not_lowercase_identifiers(bad_name: str) -> None:
    bad = type("Bad", (_Npu,), {"name": bad_name})
    with pytest.raises(MisconfigurationException, match="lowercase identifier"):
        get_registry().register(bad)


def test_register_never_replaces_a_builtin() -> None:
    impostor = type("Impostor", (_Npu,), {"name": "cpu"})
    registry = get_registry()
    with pytest.raises(MisconfigurationException, match="clashes with CPUAccelerator"):
        registry.register(impostor)
    assert registry.get("cpu") is CPUAccelerator


def test_a_plugin_whose_is_available_raises_counts_as_unavailable() -> None:
    class Flaky(_Npu):
        name = "flaky"

        @classmethod
        def is_available(cls) -> bool:
            raise RuntimeError("probe crashed")

    registry = get_registry()
    registry.register(Flaky)
    with pytest.warns(UserWarning, match=r"flaky.is_available"):
        assert "flaky" not in registry.available()


def test_builtins_have_no_failures() -> None:
    assert get_registry().failures() == []


def test_strategies_single_device_ddp_and_fsdp_are_registered() -> None:
    ddp_names = [
        f"{start}{suffix}"
        for start in ("ddp", "ddp_fork", "ddp_notebook", "ddp_spawn")
        for suffix in ("", "_find_unused_parameters_false", "_find_unused_parameters_true")
    ]  # Lightning's registered DDP spellings
    assert get_registry().strategy_names() == sorted([*ddp_names, "fsdp", "single_device"])


def test_unknown_strategy_suggests_the_closest_match() -> None:
    with pytest.raises(MisconfigurationException, match="Did you mean 'ddp'"):
        get_registry().get_strategy("dpp")


def test_a_registry_object_can_be_built_and_loaded_on_its_own() -> None:
    registry = AcceleratorRegistry()
    assert registry.names() == []
    registry.load()
    assert registry.names() == ["cpu", "cuda", "mps"]


def test_registry_queries_do_not_initialise_cuda() -> None:
    get_registry().available()
    assert not torch.cuda.is_initialized()
