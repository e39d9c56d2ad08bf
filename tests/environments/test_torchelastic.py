"""TorchElasticEnvironment: torchrun's workers, recognised by torch's own test."""

from __future__ import annotations

import re

import pytest

from accelplug.environments import TorchElasticEnvironment
from accelplug.errors import MisconfigurationException

from .captured import SRUN_TASK_1, TORCHRUN_RANK_1
from .conftest import Launch, ask


def test_a_torchrun_worker_is_detected_with_its_place(launched: Launch) -> None:
    launched(TORCHRUN_RANK_1)
    assert TorchElasticEnvironment.detect()
    env = TorchElasticEnvironment()
    assert env.creates_processes_externally
    assert (env.world_size(), env.global_rank(), env.local_rank(), env.node_rank()) == (2, 1, 1, 0)
    assert (env.main_address, env.main_port) == ("localhost", 43241)


def test_without_torchruns_run_id_it_is_not_torchrun(launched: Launch) -> None:
    launched(TORCHRUN_RANK_1, TORCHELASTIC_RUN_ID=None)  # RANK and WORLD_SIZE alone: started by hand
    assert not TorchElasticEnvironment.detect()


def test_the_second_node_of_two(launched: Launch) -> None:
    launched(TORCHRUN_RANK_1, WORLD_SIZE="4", RANK="3", GROUP_RANK="1", GROUP_WORLD_SIZE="2")
    env = TorchElasticEnvironment()
    assert (env.global_rank(), env.local_rank(), env.node_rank()) == (3, 1, 1)
    env.validate_settings(num_devices=2, num_nodes=2)


def test_torchrun_inside_a_slurm_job_is_still_torchrun(launched: Launch) -> None:
    launched({**SRUN_TASK_1, **TORCHRUN_RANK_1})
    assert TorchElasticEnvironment.detect()  # the registry asks it before Slurm (priority 400 > 300)


@pytest.mark.parametrize(
    ("changes", "answer", "message"),
    [
        ({"RANK": "2"}, "global_rank", "RANK=2 contradicts WORLD_SIZE=2"),
        ({"LOCAL_RANK": "2"}, "local_rank", "LOCAL_RANK=2 contradicts LOCAL_WORLD_SIZE=2"),
        ({"LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": None}, "local_rank", "LOCAL_RANK=2 contradicts WORLD_SIZE=2"),
        ({"WORLD_SIZE": "2.0"}, "world_size", "WORLD_SIZE='2.0' is not a whole number"),
        ({"RANK": None}, "global_rank", "RANK is not set. torchrun sets it for every worker."),
        ({"GROUP_RANK": "first"}, "node_rank", "GROUP_RANK='first' is not a whole number"),
        ({"MASTER_PORT": "0"}, "main_port", "MASTER_PORT='0' is out of range"),
    ],
)
def test_a_bad_variable_is_named_with_its_value(
    launched: Launch, changes: dict[str, str | None], answer: str, message: str
) -> None:
    launched(TORCHRUN_RANK_1, **changes)
    with pytest.raises(MisconfigurationException, match=re.escape(message)):
        ask(TorchElasticEnvironment(), answer)


def test_a_missing_rendezvous_falls_back_to_lightnings_defaults_with_a_warning(launched: Launch) -> None:
    launched(TORCHRUN_RANK_1, MASTER_ADDR=None, MASTER_PORT=None)
    env = TorchElasticEnvironment()
    with pytest.warns(UserWarning, match="MASTER_ADDR is not set; using 127.0.0.1"):
        assert env.main_address == "127.0.0.1"
    with pytest.warns(UserWarning, match="MASTER_PORT is not set; using 12910"):
        assert env.main_port == 12910


def test_devices_times_nodes_must_be_the_world_size(launched: Launch) -> None:
    launched(TORCHRUN_RANK_1)
    with pytest.raises(MisconfigurationException) as caught:
        TorchElasticEnvironment().validate_settings(num_devices=1, num_nodes=1)
    assert str(caught.value).startswith("devices=1 x num_nodes=1 = 1 processes, but torchrun started 2.")
