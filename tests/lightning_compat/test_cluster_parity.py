"""The Trainer in a scheduler's task, and the LightningEnvironment, as Lightning 2.6's: same ranks, same strategy.

Both Trainers are built with the same captured launcher variables (nothing is trained: no process
group is made); what each decides is compared.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

import lightning.pytorch as lightning
import pytest
from lightning.fabric.plugins import environments as lightning_environments

import accelplug
from accelplug import environments as ours
from tests.callbacks.parity import quiet_lightning
from tests.environments.captured import SRUN_TASK_1, TORCHRUN_RANK_1, launcher_variables

SRUN = {**SRUN_TASK_1, "SLURM_NTASKS_PER_NODE": "2"}


@pytest.fixture(autouse=True)
def clean_environ() -> Iterator[None]:
    before = dict(os.environ)
    for name in launcher_variables():
        del os.environ[name]
    yield
    os.environ.clear()
    os.environ.update(before)


def _ranks(trainer: object) -> tuple[int, int, int, int]:
    return (
        trainer.global_rank,  # type: ignore[attr-defined]
        trainer.local_rank,  # type: ignore[attr-defined]
        trainer.node_rank,  # type: ignore[attr-defined]
        trainer.world_size,  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize(
    ("variables", "environment"),
    [(SRUN, "SLURMEnvironment"), (TORCHRUN_RANK_1, "TorchElasticEnvironment")],
    ids=["srun task 1 of 2", "torchrun worker 1 of 2"],
)
def test_a_trainer_in_a_launched_task_has_lightnings_ranks(
    variables: Mapping[str, str], environment: str, tmp_path: Path
) -> None:
    os.environ.update(variables)
    options = {"accelerator": "cpu", "devices": 2, "logger": False, "default_root_dir": tmp_path}
    with quiet_lightning():
        theirs = lightning.Trainer(strategy="ddp", enable_checkpointing=False, **options)
    ours_trainer = accelplug.Trainer(strategy="ddp", **options)
    assert type(theirs.strategy.cluster_environment).__name__ == environment
    assert type(ours_trainer._cluster_environment).__name__ == environment
    assert _ranks(ours_trainer) == _ranks(theirs) == (1, 1, 0, 2)


def test_an_environment_in_plugins_is_used_by_both(tmp_path: Path) -> None:
    os.environ.update(SRUN)
    options = {"accelerator": "cpu", "devices": 2, "logger": False, "default_root_dir": tmp_path}
    with quiet_lightning():
        given_theirs = lightning_environments.SLURMEnvironment(auto_requeue=False)
        theirs = lightning.Trainer(plugins=[given_theirs], enable_checkpointing=False, **options)
    given_ours = ours.SLURMEnvironment(auto_requeue=False)
    ours_trainer = accelplug.Trainer(plugins=[given_ours], **options)
    assert theirs.strategy.cluster_environment is given_theirs
    assert ours_trainer._cluster_environment is given_ours
    assert _ranks(ours_trainer) == _ranks(theirs)


def test_num_nodes_two_with_one_device_is_ddp_in_both(tmp_path: Path) -> None:
    options = {"accelerator": "cpu", "devices": 1, "num_nodes": 2, "logger": False, "default_root_dir": tmp_path}
    with quiet_lightning():
        theirs = lightning.Trainer(enable_checkpointing=False, **options)
    assert type(theirs.strategy).__name__ == "DDPStrategy"
    assert accelplug.Trainer(**options).selection.strategy == "ddp"


LIGHTNING_CASES: dict[str, dict[str, str]] = {
    "nothing set": {},
    "started by hand": {"LOCAL_RANK": "1", "NODE_RANK": "2", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "4242"},
    "torchrun's group rank": {"LOCAL_RANK": "0", "GROUP_RANK": "3"},
}


@pytest.mark.parametrize("case", LIGHTNING_CASES)
def test_the_lightning_environment_answers_as_lightnings(case: str) -> None:
    os.environ.update(LIGHTNING_CASES[case])
    mine, theirs = ours.LightningEnvironment(), lightning_environments.LightningEnvironment()
    for env in (mine, theirs):
        env.set_world_size(4)
        env.set_global_rank(3)
    questions = ("world_size", "global_rank", "local_rank", "node_rank")
    assert [getattr(mine, q)() for q in questions] == [getattr(theirs, q)() for q in questions]
    assert mine.creates_processes_externally == theirs.creates_processes_externally
    assert mine.main_address == theirs.main_address
    if "MASTER_PORT" in os.environ:
        assert mine.main_port == theirs.main_port
    else:  # both choose a free port once and keep it
        assert mine.main_port == mine.main_port and 0 < mine.main_port < 65536
    os.environ["WORLD_SIZE"] = "4"
    mine.teardown()
    assert "WORLD_SIZE" not in os.environ


@pytest.mark.parametrize("name", ["ddp_notebook", "ddp_fork"])
def test_the_fork_strategies_fork_ddp_processes_in_both(name: str, tmp_path: Path) -> None:
    options = {"accelerator": "cpu", "devices": 2, "logger": False, "default_root_dir": tmp_path}
    with quiet_lightning():
        theirs = lightning.Trainer(strategy=name, enable_checkpointing=False, **options)
    mine = accelplug.Trainer(strategy=name, **options)
    assert type(theirs.strategy).__name__ == "DDPStrategy" and isinstance(
        mine.strategy, accelplug.strategies.DDPStrategy
    )
    assert theirs.strategy.launcher._start_method == mine.selection.start_method == "fork"
    assert theirs.strategy._start_method == mine.strategy.start_method == "fork"
