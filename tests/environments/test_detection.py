"""The registry knows the cluster environments by name and says which one started this process."""

from __future__ import annotations

import os
import re
from typing import ClassVar

import pytest

from accelplug.environments import ClusterEnvironment, SLURMEnvironment
from accelplug.errors import MisconfigurationException, PluginLoadWarning
from accelplug.registry import get_registry

from .captured import MPICH_RANK_1, OPEN_MPI_RANK_1, SBATCH_SCRIPT, SRUN_TASK_1, TORCHRUN_RANK_1
from .conftest import Launch


class _Scheduler(SLURMEnvironment):
    """A scheduler of the test's own: a Slurm-like environment told apart by its own variable."""

    name = "fakesched"
    description = "a test scheduler (FAKESCHED_JOB)"
    detect_priority = 350
    asked: ClassVar[int] = 0

    @staticmethod
    def detect() -> bool:
        _Scheduler.asked += 1
        return "FAKESCHED_JOB" in os.environ


def test_the_builtins_are_registered_in_detection_order() -> None:
    assert get_registry().environment_names() == ["torchrun", "slurm", "lsf", "mpi", "kubeflow"]
    assert get_registry().environment_source("slurm").plugin == "builtin"


def test_nothing_is_detected_where_no_launcher_started_this_process() -> None:
    assert get_registry().detect_environment() is None


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        (SRUN_TASK_1, "slurm"),
        (TORCHRUN_RANK_1, "torchrun"),
        ({**SRUN_TASK_1, **TORCHRUN_RANK_1}, "torchrun"),  # torchrun run by srun, one per node
        (OPEN_MPI_RANK_1, "mpi"),
        (MPICH_RANK_1, "mpi"),
        ({**SRUN_TASK_1, "SLURM_PROCID": "0", "SLURM_NTASKS": "1", **OPEN_MPI_RANK_1}, "mpi"),  # mpirun in a job
        (SBATCH_SCRIPT, None),  # a batch script's python, alone in a job of two tasks
    ],
    ids=["srun", "torchrun", "torchrun-in-slurm", "open-mpi", "mpich", "mpirun-in-slurm", "sbatch-alone"],
)
def test_the_environment_that_started_the_process_is_detected(
    launched: Launch, variables: dict[str, str], expected: str | None
) -> None:
    launched(variables)
    found = get_registry().detect_environment()
    assert (found.name if found else None) == expected


def test_an_environment_of_higher_priority_is_asked_first(launched: Launch) -> None:
    registry = get_registry()
    registry.register_environment(_Scheduler)
    assert registry.environment_names()[:3] == ["torchrun", "fakesched", "slurm"]
    launched(SRUN_TASK_1, FAKESCHED_JOB="7")
    assert registry.detect_environment() is _Scheduler
    launched(TORCHRUN_RANK_1)
    assert registry.detect_environment().__name__ == "TorchElasticEnvironment"  # type: ignore[union-attr]


def test_a_detect_that_raises_is_reported_and_skipped_from_then_on(launched: Launch) -> None:
    class Raising(_Scheduler):
        name = "raising"
        asked: ClassVar[int] = 0

        @staticmethod
        def detect() -> bool:
            Raising.asked += 1
            raise RuntimeError("the scheduler's daemon is not answering")

    registry = get_registry()
    registry.register_environment(Raising)
    launched(SRUN_TASK_1)
    with pytest.warns(PluginLoadWarning, match="cluster environment 'raising' is skipped"):
        assert registry.detect_environment() is SLURMEnvironment
    assert registry.detect_environment() is SLURMEnvironment
    assert Raising.asked == 1
    (failure,) = registry.failures()
    assert failure.error == (
        "cluster environment 'raising' is skipped: raising.detect() raised RuntimeError: "
        "the scheduler's daemon is not answering"
    )


def test_a_detect_that_answers_no_bool_is_reported(launched: Launch) -> None:
    class Vague(_Scheduler):
        name = "vague"

        @staticmethod
        def detect() -> bool:
            return "yes"  # type: ignore[return-value]

    registry = get_registry()
    registry.register_environment(Vague)
    with pytest.warns(PluginLoadWarning, match=re.escape("vague.detect() returned 'yes' (str); expected a bool")):
        assert registry.detect_environment() is None


class _Abstract(ClusterEnvironment):
    name = "abstract"
    description = "missing every method"


@pytest.mark.parametrize(
    ("candidate", "message"),
    [
        (SLURMEnvironment(), "is an instance; cluster environments are registered as classes"),
        (int, "is not an accelplug ClusterEnvironment subclass"),
        (_Abstract, "does not implement: creates_processes_externally, detect, global_rank"),
        (type("Nameless", (SLURMEnvironment,), {"name": "Bad Name"}), "has name='Bad Name'"),
        (type("Silent", (SLURMEnvironment,), {"name": "silent", "description": ""}), "has description=''"),
        (type("Flag", (SLURMEnvironment,), {"name": "flag", "detect_priority": True}), "has detect_priority=True"),
        (type("Usurper", (SLURMEnvironment,), {"name": "slurm"}), "clashes with SLURMEnvironment already registered"),
    ],
    ids=["instance", "not-a-subclass", "abstract", "bad-name", "no-description", "bool-priority", "clash"],
)
def test_a_wrong_class_is_refused_with_the_reason(candidate: object, message: str) -> None:
    with pytest.raises(MisconfigurationException, match=re.escape(message)):
        get_registry().register_environment(candidate)  # type: ignore[arg-type]
    assert get_registry().get_environment("slurm") is SLURMEnvironment


def test_an_unknown_name_gets_the_registered_ones_and_a_close_match() -> None:
    with pytest.raises(MisconfigurationException) as caught:
        get_registry().get_environment("slrum")
    assert str(caught.value) == (
        "cluster environment 'slrum' is not registered. Registered: 'torchrun', 'slurm', 'lsf', 'mpi', "
        "'kubeflow'. Did you mean 'slurm'?"
    )
