"""The built-in environments are registered by name and imported only where their launcher's variables are set.

``accelplug.environments.BUILTIN_ENVIRONMENTS`` repeats each class's name and ``detect_priority`` and names the
variables its ``detect()`` reads first; detection passes an environment over, unimported, while none of them is
set. These tests keep the declarations and the classes in step.
"""

from __future__ import annotations

import importlib

import pytest

from accelplug.environments import BUILTIN_ENVIRONMENTS
from accelplug.errors import MisconfigurationException, PluginLoadWarning
from accelplug.hookspecs import Deferred
from accelplug.registry import get_registry

from .captured import KUBEFLOW_WORKER_2, LSF_RANK_2, OPEN_MPI_RANK_1, SRUN_TASK_1, TORCHRUN_RANK_1
from .conftest import Launch

#: Each launcher's variables, under which its environment's detect() answers True (Kubeflow's never does).
STARTED_BY = {
    "torchrun": TORCHRUN_RANK_1,
    "slurm": SRUN_TASK_1,
    "lsf": {**LSF_RANK_2, "LSB_DJOB_RANKFILE": "/nonexistent"},
    "mpi": OPEN_MPI_RANK_1,
    "kubeflow": KUBEFLOW_WORKER_2,
}


@pytest.mark.parametrize(("name", "target", "priority", "variables"), BUILTIN_ENVIRONMENTS, ids=lambda v: str(v))
def test_each_declaration_names_its_class_and_priority(
    name: str, target: str, priority: int, variables: tuple[str, ...]
) -> None:
    module, _, attribute = target.partition(":")
    cls = getattr(importlib.import_module(module), attribute)
    assert (cls.name, cls.detect_priority) == (name, priority)
    assert get_registry().get_environment(name) is cls


@pytest.mark.parametrize(("name", "target", "priority", "variables"), BUILTIN_ENVIRONMENTS, ids=lambda v: str(v))
def test_detect_answers_false_without_the_variables_the_declaration_names(
    launched: Launch, name: str, target: str, priority: int, variables: tuple[str, ...]
) -> None:
    cls = get_registry().get_environment(name)
    launched(STARTED_BY[name])
    assert cls.detect() is (name != "kubeflow")
    launched(**dict.fromkeys(variables))
    assert cls.detect() is False


def test_an_environment_whose_variables_are_unset_is_not_imported(launched: Launch) -> None:
    registry = get_registry()
    registry._add_environment(
        Deferred("no_such_module:Scheduler", "nosched", detect_priority=500, detect_when=("NOSCHED_JOB",)),
        registry.source("cpu"),
    )
    assert registry.environment_names()[0] == "nosched"
    assert registry.detect_environment() is None
    assert registry.failures() == []


def test_a_declared_environment_that_cannot_be_imported_is_reported_and_skipped(launched: Launch) -> None:
    registry = get_registry()
    registry._add_environment(
        Deferred("no_such_module:Scheduler", "nosched", detect_priority=500, detect_when=("NOSCHED_JOB",)),
        registry.source("cpu"),
    )
    launched(SRUN_TASK_1, NOSCHED_JOB="1")
    with pytest.warns(PluginLoadWarning, match="cluster environment 'nosched' declared as"):
        assert registry.detect_environment().name == "slurm"  # type: ignore[union-attr]
    assert "No module named 'no_such_module'" in str(registry.failures()[-1])


def test_a_declaration_without_a_detect_priority_is_refused() -> None:
    with pytest.raises(MisconfigurationException, match="detect_priority=None"):
        get_registry()._add_environment(Deferred("x:Y", "sched"), get_registry().source("cpu"))
