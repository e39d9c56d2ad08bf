"""KubeflowEnvironment: one process per pod, never detected (as in Lightning), given explicitly."""

from __future__ import annotations

import re

import pytest

from accelplug.environments import KubeflowEnvironment
from accelplug.errors import MisconfigurationException

from .captured import KUBEFLOW_WORKER_2
from .conftest import Launch, ask


def test_a_pytorchjob_replica_has_its_place(launched: Launch) -> None:
    launched(KUBEFLOW_WORKER_2)
    env = KubeflowEnvironment()
    assert env.creates_processes_externally
    assert (env.world_size(), env.global_rank(), env.local_rank(), env.node_rank()) == (3, 2, 0, 2)
    assert (env.main_address, env.main_port) == ("job-master-0", 23456)
    env.validate_settings(num_devices=1, num_nodes=3)


def test_it_is_never_detected(launched: Launch) -> None:
    launched(KUBEFLOW_WORKER_2)
    assert KubeflowEnvironment.detect() is False


@pytest.mark.parametrize(
    ("changes", "answer", "message"),
    [
        ({"MASTER_PORT": None}, "main_port", "MASTER_PORT is not set. The PyTorchJob operator sets it"),
        ({"MASTER_ADDR": None}, "main_address", "MASTER_ADDR is not set. The PyTorchJob operator sets it"),
        ({"RANK": "3"}, "node_rank", "RANK=3 contradicts WORLD_SIZE=3"),
    ],
)
def test_a_bad_variable_is_named_with_its_value(
    launched: Launch, changes: dict[str, str | None], answer: str, message: str
) -> None:
    launched(KUBEFLOW_WORKER_2, **changes)
    with pytest.raises(MisconfigurationException, match=re.escape(message)):
        ask(KubeflowEnvironment(), answer)
