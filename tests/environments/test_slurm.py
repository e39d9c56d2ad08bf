"""SLURMEnvironment reads what srun set, refuses what contradicts itself, and knows when srun did not start it."""

from __future__ import annotations

import re
import signal

import pytest

from accelplug.environments import SLURMEnvironment
from accelplug.environments.slurm import tasks_per_node
from accelplug.errors import MisconfigurationException

from .captured import MPICH_RANK_1, OPEN_MPI_RANK_1, SBATCH_SCRIPT, SRUN_TASK_1
from .conftest import Launch, ask

#: SRUN_TASK_1 moved to the second of two nodes: rank 3 of 4, two tasks per node.
TWO_NODES_RANK_3 = {
    **SRUN_TASK_1,
    "SLURM_JOB_ID": "1234567",
    "SLURM_NODELIST": "gpu[007-008]",
    "SLURM_STEP_NODELIST": "gpu[007-008]",
    "SLURM_NNODES": "2",
    "SLURM_NTASKS": "4",
    "SLURM_PROCID": "3",
    "SLURM_LOCALID": "1",
    "SLURM_NODEID": "1",
    "SLURM_TASKS_PER_NODE": "2(x2)",
    "SLURM_STEP_TASKS_PER_NODE": "2(x2)",
}


def test_a_task_started_by_srun_is_detected_with_its_place(launched: Launch) -> None:
    launched(SRUN_TASK_1)
    assert SLURMEnvironment.detect()
    env = SLURMEnvironment()
    assert env.creates_processes_externally
    assert (env.world_size(), env.global_rank(), env.local_rank(), env.node_rank()) == (2, 1, 1, 0)
    assert (env.main_address, env.main_port) == ("vm", 15001)
    assert env.job_id() == 1 and env.job_name() == "python"


def test_two_nodes_meet_on_the_first_node_of_the_list(launched: Launch) -> None:
    launched(TWO_NODES_RANK_3)
    env = SLURMEnvironment()
    assert (env.world_size(), env.global_rank(), env.local_rank(), env.node_rank()) == (4, 3, 1, 1)
    assert env.main_address == "gpu007"
    assert env.main_port == 4567 + 15000  # the job id's last four digits, as in Lightning


def test_master_addr_and_master_port_win(launched: Launch) -> None:
    launched(TWO_NODES_RANK_3, MASTER_ADDR="10.1.2.3", MASTER_PORT="29400")
    env = SLURMEnvironment()
    assert (env.main_address, env.main_port) == ("10.1.2.3", 29400)


def test_outside_a_job_the_address_and_port_are_lightnings_defaults() -> None:
    env = SLURMEnvironment()
    assert not env.detect()
    assert (env.main_address, env.main_port) == ("127.0.0.1", 12910)


@pytest.mark.parametrize("name", ["bash", "interactive"])
def test_an_interactive_allocation_is_not_taken_for_a_training_job(launched: Launch, name: str) -> None:
    launched(SRUN_TASK_1, SLURM_JOB_NAME=name)
    assert not SLURMEnvironment.detect()
    assert SLURMEnvironment.job_id() is None
    SLURMEnvironment().validate_settings(num_devices=8, num_nodes=3)  # the person decides, not Slurm


def test_a_batch_script_running_python_itself_in_a_job_of_two_tasks_is_alone(launched: Launch) -> None:
    launched(SBATCH_SCRIPT)
    assert not SLURMEnvironment.detect()  # Lightning would wait forever for rank 1


def test_a_batch_script_of_a_one_task_job_is_that_task(launched: Launch) -> None:
    launched(SBATCH_SCRIPT, SLURM_NTASKS="1", SLURM_NPROCS="1", SLURM_TASKS_PER_NODE="1")
    assert SLURMEnvironment.detect()
    assert SLURMEnvironment().world_size() == 1


@pytest.mark.parametrize("mpi", [OPEN_MPI_RANK_1, MPICH_RANK_1], ids=["open-mpi", "mpich"])
def test_mpirun_inside_an_allocation_is_left_to_the_mpi_environment(launched: Launch, mpi: dict[str, str]) -> None:
    # mpirun's processes inherit the Slurm variables of the step that started mpirun's helpers.
    launched({**SRUN_TASK_1, "SLURM_PROCID": "0", "SLURM_NTASKS": "1"}, **mpi)
    assert not SLURMEnvironment.detect()


def test_srun_with_pmi_variables_of_its_own_is_still_slurm(launched: Launch) -> None:
    launched(SRUN_TASK_1, PMI_RANK="1", PMI_SIZE="2")  # srun --mpi=pmi2 sets them, consistent with Slurm's
    assert SLURMEnvironment.detect()


@pytest.mark.parametrize(
    ("changes", "method", "message"),
    [
        ({"SLURM_NTASKS": "two"}, "world_size", "SLURM_NTASKS='two' is not a whole number"),
        ({"SLURM_NTASKS": "0"}, "world_size", "SLURM_NTASKS='0' is out of range; expected an integer >= 1"),
        ({"SLURM_PROCID": "2"}, "global_rank", "SLURM_PROCID=2 contradicts SLURM_NTASKS=2"),
        ({"SLURM_PROCID": "-1"}, "global_rank", "SLURM_PROCID='-1' is out of range"),
        ({"SLURM_LOCALID": None}, "local_rank", "SLURM_LOCALID is not set. srun sets it for every task"),
        ({"SLURM_LOCALID": "5"}, "local_rank", "SLURM_LOCALID=5 contradicts SLURM_NTASKS=2"),
        ({"SLURM_NODEID": "1"}, "node_rank", "SLURM_NODEID=1 contradicts SLURM_NNODES=1"),
        ({"SLURM_NODELIST": "vm[3-1]"}, "main_address", "SLURM_NODELIST='vm[3-1]' is not a Slurm host list"),
        ({"SLURM_NODELIST": ""}, "main_address", "SLURM_NODELIST='' names no node"),
        ({"SLURM_JOB_ID": "12a"}, "main_port", "SLURM_JOB_ID='12a' is not a whole number"),
        ({"MASTER_PORT": "70000"}, "main_port", "MASTER_PORT=70000 is not a TCP port"),
    ],
)
def test_a_bad_variable_is_named_with_its_value(
    launched: Launch, changes: dict[str, str | None], method: str, message: str
) -> None:
    launched(SRUN_TASK_1, **changes)
    env = SLURMEnvironment()
    with pytest.raises(MisconfigurationException, match=re.escape(message)):
        ask(env, method)


def test_bad_values_never_break_detection(launched: Launch) -> None:
    launched(SRUN_TASK_1, SLURM_NTASKS="two", SLURM_PROCID="x")
    assert SLURMEnvironment.detect()  # the method that needs the value says what is wrong with it


def test_settings_that_match_the_job_are_accepted(launched: Launch) -> None:
    launched(TWO_NODES_RANK_3)
    SLURMEnvironment().validate_settings(num_devices=2, num_nodes=2)
    launched(SRUN_TASK_1, SLURM_NTASKS_PER_NODE="2")
    SLURMEnvironment().validate_settings(num_devices=2, num_nodes=1)


@pytest.mark.parametrize(
    ("changes", "devices", "nodes", "message"),
    [
        ({"SLURM_NTASKS_PER_NODE": "2"}, 4, 2, "devices=4, but the job runs SLURM_NTASKS_PER_NODE=2 tasks per node"),
        ({}, 2, 1, "num_nodes=1, but the job runs on SLURM_NNODES=2 nodes: the number of nodes configured in SLURM"),
        (
            {"SLURM_NTASKS": "3", "SLURM_STEP_TASKS_PER_NODE": "2,1", "SLURM_PROCID": "2", "SLURM_LOCALID": "0"},
            2,
            2,
            "Slurm placed SLURM_STEP_TASKS_PER_NODE='2,1' tasks",
        ),
        (
            {"SLURM_NNODES": None, "SLURM_TASKS_PER_NODE": None, "SLURM_STEP_TASKS_PER_NODE": None},
            3,
            1,
            "= 3 processes",
        ),
    ],
)
def test_settings_that_contradict_the_job_are_refused(
    launched: Launch, changes: dict[str, str | None], devices: int, nodes: int, message: str
) -> None:
    launched(TWO_NODES_RANK_3, **changes)
    with pytest.raises(MisconfigurationException) as caught:
        SLURMEnvironment().validate_settings(num_devices=devices, num_nodes=nodes)
    assert message in str(caught.value)


def test_tasks_per_node_reads_slurms_compressed_counts() -> None:
    assert tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    assert tasks_per_node("4") == [4]
    with pytest.raises(MisconfigurationException, match=r"SLURM_TASKS_PER_NODE='2\(3\)' is not"):
        tasks_per_node("2(3)")


def test_the_requeue_id_of_a_job_and_of_an_array_task(launched: Launch) -> None:
    launched(SRUN_TASK_1, SLURM_JOB_ID="4242")
    assert SLURMEnvironment.requeue_job_id() == "4242"
    launched(SLURM_ARRAY_JOB_ID="4240", SLURM_ARRAY_TASK_ID="2")
    assert SLURMEnvironment.requeue_job_id() == "4240_2"
    launched(SLURM_ARRAY_TASK_ID=None)
    with pytest.raises(MisconfigurationException, match="SLURM_ARRAY_TASK_ID is not set"):
        SLURMEnvironment.requeue_job_id()


def test_requeue_without_scontrol_says_so(launched: Launch, monkeypatch: pytest.MonkeyPatch) -> None:
    launched(SRUN_TASK_1)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RuntimeError, match="`scontrol` is not on PATH"):
        SLURMEnvironment().requeue()


def test_requeue_on_sigusr1_by_default_as_in_lightning() -> None:
    env = SLURMEnvironment()
    assert (env.auto_requeue, env.requeue_signal) == (True, signal.SIGUSR1)
    env = SLURMEnvironment(auto_requeue=False, requeue_signal=signal.SIGHUP)
    assert (env.auto_requeue, env.requeue_signal) == (False, signal.SIGHUP)
