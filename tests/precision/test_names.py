"""The built-in precisions' names come from their classes, and every list of names agrees with them.

``precision_names`` (what users type), the registry, the benchmark's hand-written loop and the
accelerators' ``supported_precisions()`` all name precisions; each is checked here against the one
list of built-in classes, so a new built-in precision (its module and one line in
``accelplug.precision.BUILTIN_PRECISIONS``) is known everywhere or a test says where it is not.
"""

from __future__ import annotations

import pytest

import accelplug.precision as precision_package
from accelplug.accelerators import BUILTIN_ACCELERATORS
from accelplug.bench.loops import BASELINE_PRECISIONS, torch_setting
from accelplug.precision import BUILTIN_PRECISIONS
from accelplug.precision import names as precision_names
from accelplug.registry import get_registry

NAMES = tuple(cls.name for cls in BUILTIN_PRECISIONS)


def test_the_names_users_type_are_the_classes_names() -> None:
    assert precision_names.PRECISIONS == NAMES
    assert len(set(NAMES)) == len(NAMES)


def test_every_alias_is_a_class_alias_and_leads_to_its_class() -> None:
    expected = {**{n: n for n in NAMES}, **{a: cls.name for cls in BUILTIN_PRECISIONS for a in cls.aliases}}
    assert expected == precision_names.PRECISION_ALIASES
    for cls in BUILTIN_PRECISIONS:
        for spelling in (cls.name, *cls.aliases):
            assert precision_names.normalize_precision(spelling) == cls.name
            assert get_registry().get_precision(spelling) is cls


def test_the_accepted_words_name_every_precision_and_alias() -> None:
    text = precision_names.ACCEPTED_PRECISIONS
    for cls in BUILTIN_PRECISIONS:
        assert repr(cls.name) in text
        for alias in cls.aliases:
            assert alias in text


def test_the_registry_registers_exactly_the_built_ins_in_their_order() -> None:
    assert get_registry().precision_names() == list(NAMES)  # the suite loads no entry-point plugin


def test_the_precision_package_exports_every_built_in() -> None:
    assert {cls.__name__ for cls in BUILTIN_PRECISIONS} <= set(precision_package.__all__)
    assert all(getattr(precision_package, cls.__name__) is cls for cls in BUILTIN_PRECISIONS)


def test_the_benchmarks_hand_written_loop_knows_every_built_in() -> None:
    assert BASELINE_PRECISIONS == NAMES


@pytest.mark.parametrize("cls", BUILTIN_PRECISIONS, ids=NAMES)
def test_the_hand_written_loop_uses_the_classes_dtypes(cls: type) -> None:
    plan = cls("cpu")
    param_dtype, autocast_dtype, scaled = torch_setting(cls.name, "cpu")
    assert param_dtype == plan.param_dtype
    assert autocast_dtype == (plan.compute_dtype if plan.uses_autocast and plan.param_dtype is None else None)
    assert scaled == (cls.name == "16-mixed")  # float16's gradients are loss-scaled, on the CPU too (as Lightning)


@pytest.mark.parametrize("accelerator", BUILTIN_ACCELERATORS, ids=lambda a: a.name)
def test_every_precision_an_accelerator_lists_is_a_built_in(accelerator: type) -> None:
    listed = accelerator.supported_precisions()
    assert listed and set(listed) <= set(NAMES), sorted(set(listed) - set(NAMES))
