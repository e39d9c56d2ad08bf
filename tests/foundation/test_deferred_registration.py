"""Strategies registered by name (``hookspecs.Deferred``): listed at once, imported when a run asks for one.

accelplug's own plugin declares its strategies so (``accelplug.strategies.BUILTIN_STRATEGIES``), which keeps DDP
and FSDP off the start-up path (``test_start_up_imports.py`` checks the path); a plugin may do the same.
"""

from __future__ import annotations

import importlib

import pytest

from accelplug.errors import MisconfigurationException, PluginLoadWarning
from accelplug.hookspecs import Deferred
from accelplug.registry import get_registry
from accelplug.strategies import BUILTIN_STRATEGIES, DDPStrategy


@pytest.mark.parametrize(("name", "target"), BUILTIN_STRATEGIES, ids=[name for name, _ in BUILTIN_STRATEGIES])
def test_each_builtin_declaration_names_its_class(name: str, target: str) -> None:
    module, _, attribute = target.partition(":")
    cls = getattr(importlib.import_module(module), attribute)
    assert cls.name == name
    assert get_registry().get_strategy(name) is cls


def test_registering_a_declared_class_itself_is_no_clash() -> None:
    assert get_registry().register_strategy(DDPStrategy) is DDPStrategy
    assert get_registry().get_strategy("ddp") is DDPStrategy


def test_a_declaration_whose_class_has_another_name_is_refused_when_used() -> None:
    registry = get_registry()
    registry._add_strategy(Deferred("accelplug.strategies.ddp:DDPStrategy", "myddp"), registry.source("cpu"))
    assert "myddp" in registry.strategy_names()
    with (
        pytest.warns(PluginLoadWarning, match="strategy 'myddp'"),
        pytest.raises(MisconfigurationException, match=r"has name='ddp', not the declared name='myddp'"),
    ):
        registry.get_strategy("myddp")


def test_a_declaration_that_cannot_be_imported_is_refused_with_the_import_error() -> None:
    registry = get_registry()
    registry._add_strategy(Deferred("no_such_module:Strategy", "gone"), registry.source("cpu"))
    with (
        pytest.warns(PluginLoadWarning),
        pytest.raises(MisconfigurationException, match="No module named 'no_such_module'"),
    ):
        registry.get_strategy("gone")


def test_a_name_declared_twice_by_different_targets_clashes() -> None:
    registry = get_registry()
    with pytest.raises(MisconfigurationException, match="strategy name 'ddp' of other:Thing clashes"):
        registry._add_strategy(Deferred("other:Thing", "ddp"), registry.source("cpu"))


def test_another_class_under_a_declared_name_clashes_naming_the_class_it_would_replace() -> None:
    usurper = type("Usurper", (DDPStrategy,), {"name": "ddp"})
    registry = get_registry()
    with pytest.raises(MisconfigurationException, match="strategy name 'ddp' of Usurper clashes with DDPStrategy"):
        registry.register_strategy(usurper)
    assert registry.get_strategy("ddp") is DDPStrategy
