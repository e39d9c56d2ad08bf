"""``scripts/lightning_tests``: the parts of the Lightning-suite tool that decide what a run counts.

Running Lightning's suite needs its repository (CI cannot fetch it), so these tests check the pieces that turn a
run into numbers: the placeholders that let a test file import (and must fail where a test uses the missing
name), the facts computed for ``skipif`` conditions, the pairing of Lightning's and accelplug's test ids, and
the first sorting of a failure into issue 29's categories.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
import torch

TOOL = Path(__file__).resolve().parents[2] / "scripts" / "lightning_tests"


@pytest.fixture(scope="module")
def tool() -> Iterator[dict[str, ModuleType]]:
    sys.path.insert(0, str(TOOL))
    try:
        yield {name: importlib.import_module(name) for name in ("ltshim", "standins", "outcomes", "classify")}
    finally:
        sys.path[:] = [entry for entry in sys.path if entry != str(TOOL)]


def test_a_placeholder_fails_when_called(tool: dict[str, ModuleType]) -> None:
    missing = tool["ltshim"].placeholder("lightning.pytorch.x.Missing")
    with pytest.raises(tool["ltshim"].MissingInAccelplug, match=r"lightning\.pytorch\.x\.Missing is missing"):
        missing()


def test_a_placeholder_can_be_subclassed_and_fails_when_the_subclass_is_made(tool: dict[str, ModuleType]) -> None:
    missing = tool["ltshim"].placeholder("lightning.pytorch.demos.Model")

    class Mine(missing):  # type: ignore[misc,valid-type]  # a test file defines such classes at import
        pass

    with pytest.raises(tool["ltshim"].MissingInAccelplug):
        Mine()


def test_a_placeholder_member_is_a_placeholder_failing_when_compared_or_formatted(
    tool: dict[str, ModuleType],
) -> None:
    reason = tool["ltshim"].placeholder("lightning.pytorch.callbacks.early_stopping.EarlyStoppingReason")
    member = reason.PATIENCE_EXHAUSTED  # read in a parametrize list when the file imports
    assert member.__name__ == "EarlyStoppingReason.PATIENCE_EXHAUSTED"
    with pytest.raises(tool["ltshim"].MissingInAccelplug, match="compared"):
        _ = member == "anything"
    with pytest.raises(tool["ltshim"].MissingInAccelplug, match="formatted"):
        f"{member}"


def test_isinstance_against_a_placeholder_is_false_not_an_error(tool: dict[str, ModuleType]) -> None:
    assert not isinstance(object(), tool["ltshim"].placeholder("lightning.fabric.wrappers._FabricModule"))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("_TORCH_GREATER_EQUAL_2_0", True),
        ("_TORCH_GREATER_EQUAL_99_0", False),
        ("_TORCH_LESS_EQUAL_2_0", False),
        ("_PYTHON_GREATER_EQUAL_3_8", True),
        ("_IS_WINDOWS", sys.platform == "win32"),
    ],
)
def test_version_and_platform_facts_are_computed_for_this_machine(
    tool: dict[str, ModuleType], name: str, expected: bool
) -> None:
    assert tool["standins"].fact(name) == (True, expected)


def test_an_unknown_private_name_is_not_a_fact(tool: dict[str, ModuleType]) -> None:
    assert tool["standins"].fact("_ResultCollection") == (False, None)


def test_runif_skips_standalone_and_gpu_tests_here(
    tool: dict[str, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PL_RUN_STANDALONE_TESTS", raising=False)
    gpus = torch.cuda.device_count()
    reasons, marks = tool["standins"]._runif_reasons(standalone=True, min_cuda_gpus=gpus + 1)
    assert "Standalone execution" in reasons
    assert f"GPUs>={gpus + 1}" in reasons
    assert marks == {"standalone": True, "min_cuda_gpus": True}


def test_runif_refuses_a_condition_it_does_not_know(tool: dict[str, ModuleType]) -> None:
    with pytest.raises(TypeError, match="unknown conditions"):
        tool["standins"]._runif_reasons(quantum=True)


def test_ids_rendered_differently_are_paired_in_collection_order(tool: dict[str, ModuleType]) -> None:
    outcomes = tool["outcomes"]
    lightning = {
        "t.py::test_x[4-test-test]": outcomes.Outcome("t.py::test_x[4-test-test]", "passed"),
        "t.py::test_x[4-predict-predict]": outcomes.Outcome("t.py::test_x[4-predict-predict]", "passed"),
    }
    accelplug = {
        "t.py::test_x[4-RunningStage.TESTING-test]": outcomes.Outcome("a", "failed"),
        "t.py::test_x[4-RunningStage.PREDICTING-predict]": outcomes.Outcome("b", "passed"),
    }
    merged = outcomes.with_collection_errors(accelplug, {}, lightning)
    assert merged["t.py::test_x[4-test-test]"].outcome == "failed"
    assert merged["t.py::test_x[4-predict-predict]"].outcome == "passed"


def test_a_test_of_a_file_that_failed_to_import_counts_as_an_error(tool: dict[str, ModuleType]) -> None:
    outcomes = tool["outcomes"]
    lightning = {"t.py::test_y": outcomes.Outcome("t.py::test_y", "passed")}
    collect = {"t.py": outcomes.Outcome("t.py", "error", "collect", "ModuleNotFoundError: No module named 'x'")}
    merged = outcomes.with_collection_errors({}, collect, lightning)
    assert (merged["t.py::test_y"].outcome, merged["t.py::test_y"].when) == ("error", "collect")


@pytest.mark.parametrize(
    ("message", "kind", "category"),
    [
        ("ltshim.MissingInAccelplug: lightning.pytorch.loops._Loop is missing in accelplug", "", "a"),
        ("ltshim.MissingInAccelplug: lightning.pytorch.demos.boring_classes.X is missing in accelplug", "", "b"),
        ("AttributeError: 'Trainer' object has no attribute '_results'", "AttributeError", "a"),
        ("AttributeError: 'SingleDeviceStrategy' object has no attribute 'connect'", "AttributeError", "c"),
        ("Failed: DID NOT RAISE ValueError", "Failed", "e"),
        ("AssertionError: Regex pattern did not match.", "AssertionError", "g"),
    ],
)
def test_the_classifier_sorts_common_failures(
    tool: dict[str, ModuleType], message: str, kind: str, category: str
) -> None:
    outcome = tool["outcomes"].Outcome("tests_pytorch/t.py::test_z", "failed", "call", message, kind, [])
    assert tool["classify"].classify(outcome).category == category


def test_a_refusal_raised_inside_accelplug_is_an_input_lightning_accepts(tool: dict[str, ModuleType]) -> None:
    outcome = tool["outcomes"].Outcome(
        "tests_pytorch/t.py::test_z",
        "failed",
        "call",
        "accelplug.errors.MisconfigurationException: val_check_interval='00:00:02' is invalid",
        "accelplug.errors.MisconfigurationException",
        [["tests_pytorch/t.py", 3, "Trainer(...)"], ["/repo/src/accelplug/trainer/options/entries.py", 202, ""]],
    )
    assert tool["classify"].classify(outcome).category == "d"


def test_a_private_access_outranks_the_behaviour_item_a_failure_matches(tool: dict[str, ModuleType]) -> None:
    outcome = tool["outcomes"].Outcome(
        "tests_pytorch/t.py::test_z",
        "failed",
        "call",
        "AttributeError: 'Trainer' object has no attribute '_data_connector'",
        "AttributeError",
        [],
    )
    classify = tool["classify"]
    assert classify.final_category("c", classify.classify(outcome)) == "a"


def test_a_public_failure_keeps_the_category_of_its_behaviour_item(tool: dict[str, ModuleType]) -> None:
    outcome = tool["outcomes"].Outcome(
        "tests_pytorch/t.py::test_z", "failed", "call", "Failed: DID NOT RAISE ValueError", "Failed", []
    )
    classify = tool["classify"]
    assert classify.final_category("d", classify.classify(outcome)) == "d"
    assert classify.final_category(None, classify.classify(outcome)) == "e"
