"""The run's cluster environment decides ranks and rendezvous: detected or given in ``plugins``, checked, exported.

Real training under srun, mpirun-like launchers and torchrun is in ``tests/clusters``; here the
Trainer and Fabric are built in this process with a launcher's captured variables, which is enough to
see what they decide (nothing here makes a process group).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from accelplug import Trainer
from accelplug.environments import LightningEnvironment, SLURMEnvironment, TorchElasticEnvironment
from accelplug.errors import MisconfigurationException
from accelplug.fabric import Fabric
from accelplug.launcher import adopt_environment, cluster_environment
from accelplug.plugins import environments as short_path
from accelplug.selection import RunPlugins, sort_plugins
from accelplug.strategies.parallel import ParallelStrategy
from accelplug.trainer.checkpointing.auto_resume import Asked, choose_checkpoint
from accelplug.trainer.process.requeue import hpc_resume_path, hpc_save_path, requeue_signal
from tests.modules import LinearRegression, regression_data

from .captured import OPEN_MPI_RANK_1, SRUN_TASK_1, TORCHRUN_RANK_1
from .conftest import Launch

_EXPORTED = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK")


@pytest.fixture(autouse=True)
def restored_environ() -> Iterator[None]:
    """The Trainer exports torch's variables into ``os.environ``; every test gets the environment back."""
    before = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(before)


def _exported() -> dict[str, str]:
    return {name: os.environ[name] for name in _EXPORTED if name in os.environ}


def test_a_trainer_in_an_srun_task_takes_its_rank_and_rendezvous_from_slurm(launched: Launch) -> None:
    launched(SRUN_TASK_1)
    trainer = Trainer(accelerator="cpu", devices=2, strategy="ddp", logger=False)
    assert isinstance(trainer._cluster_environment, SLURMEnvironment)
    # job id 1: port 15000 + its last four digits, as every task computes it without talking to the others
    assert _exported() == {
        "MASTER_ADDR": "vm",
        "MASTER_PORT": "15001",
        "WORLD_SIZE": "2",
        "RANK": "1",
        "LOCAL_RANK": "1",
        "NODE_RANK": "0",
    }
    assert (trainer.global_rank, trainer.local_rank, trainer.world_size, trainer.is_global_zero) == (1, 1, 2, False)


def test_an_environment_given_in_plugins_wins_over_the_detected_one(launched: Launch) -> None:
    launched(SRUN_TASK_1)
    given = SLURMEnvironment(auto_requeue=False)
    trainer = Trainer(accelerator="cpu", devices=2, strategy="ddp", logger=False, plugins=[given])
    assert trainer._cluster_environment is given
    assert trainer.options.plugins == RunPlugins(cluster_environment=given)
    assert requeue_signal(given) is None and requeue_signal(SLURMEnvironment()) == signal.SIGUSR1


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"devices": 1}, r"devices=1, but Slurm placed SLURM_STEP_TASKS_PER_NODE='2' tasks"),
        ({"devices": 2, "num_nodes": 2}, r"num_nodes=2, but the job runs on SLURM_NNODES=1 nodes"),
    ],
)
def test_devices_and_num_nodes_that_disagree_with_slurm_are_refused_naming_both(
    launched: Launch, options: dict[str, int], words: str
) -> None:
    # The bug this prevents: each of srun's two tasks starting two processes of its own (four in all).
    launched(SRUN_TASK_1)
    with pytest.raises(MisconfigurationException, match=words):
        Trainer(accelerator="cpu", logger=False, **options)
    assert _exported() == {}


def test_without_a_placement_the_product_is_checked_against_the_world(launched: Launch) -> None:
    launched(SRUN_TASK_1, SLURM_STEP_TASKS_PER_NODE=None, SLURM_TASKS_PER_NODE=None)
    with pytest.raises(MisconfigurationException, match=r"devices=1 x num_nodes=1 = 1 processes, but slurm started 2"):
        Trainer(accelerator="cpu", devices=1, logger=False)


def test_a_non_numeric_slurm_ntasks_is_named(launched: Launch) -> None:
    launched(SRUN_TASK_1, SLURM_NTASKS="two")
    with pytest.raises(MisconfigurationException, match=r"SLURM_NTASKS='two' is not a whole number"):
        Trainer(accelerator="cpu", devices=2, logger=False)


@pytest.mark.parametrize("port", ["0", "65536", "99999999999999999999", "80a"])
def test_a_master_port_out_of_range_is_named(launched: Launch, port: str) -> None:
    launched(SRUN_TASK_1, MASTER_PORT=port)
    with pytest.raises(MisconfigurationException, match=rf"MASTER_PORT={port}|MASTER_PORT='{port}'"):
        Trainer(accelerator="cpu", devices=2, logger=False)


def test_under_torchrun_the_world_must_be_devices_times_nodes(launched: Launch) -> None:
    launched(TORCHRUN_RANK_1)
    trainer = Trainer(accelerator="cpu", devices=2, logger=False)
    assert isinstance(trainer._cluster_environment, TorchElasticEnvironment)
    assert (trainer.global_rank, trainer.selection.strategy) == (1, "ddp")
    with pytest.raises(MisconfigurationException, match=r"num_nodes=2 = 4 processes, but torchrun started 2"):
        Trainer(accelerator="cpu", devices=2, num_nodes=2, logger=False)


def test_an_mpirun_rank_is_adopted_with_its_own_variables(launched: Launch) -> None:
    launched(OPEN_MPI_RANK_1)
    trainer = Trainer(accelerator="cpu", devices=2, strategy="ddp", logger=False)
    assert trainer._cluster_environment is not None and trainer._cluster_environment.name == "mpi"
    assert {k: _exported()[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK")} == {
        "RANK": "1",
        "WORLD_SIZE": "2",
        "LOCAL_RANK": "1",
    }


def test_with_no_scheduler_nothing_is_exported_and_the_trainer_starts_its_own_processes() -> None:
    assert cluster_environment() is None
    assert not adopt_environment(LightningEnvironment(), 2, 1)  # no LOCAL_RANK: the Trainer launches
    Trainer(accelerator="cpu", devices=1, logger=False)
    assert _exported() == {}


def test_slurm_environment_given_outside_a_slurm_job_leaves_a_one_device_run_to_one_process() -> None:
    """As in Lightning: one device needs no launcher, so the environment is never asked for Slurm's variables."""
    trainer = Trainer(accelerator="cpu", devices=1, plugins=[SLURMEnvironment()], logger=False)
    fabric = Fabric(accelerator="cpu", devices=1, plugins=[SLURMEnvironment()])
    fabric.launch()
    assert (trainer.world_size, trainer.global_rank) == (1, 0)
    assert (fabric.world_size, fabric.global_rank) == (1, 0)
    assert _exported() == {}


def test_slurm_environment_given_outside_a_slurm_job_refuses_several_devices_naming_srun() -> None:
    with pytest.raises(MisconfigurationException, match=r"SLURM_NTASKS is not set\. srun sets it"):
        Trainer(accelerator="cpu", devices=2, plugins=[SLURMEnvironment()], logger=False)


def test_num_nodes_above_one_makes_auto_ddp_even_with_one_device_per_node() -> None:
    # Lightning's own test case (its connector picks "ddp"); such a run needs a launcher on every node.
    trainer = Trainer(accelerator="cpu", devices=1, num_nodes=2, logger=False)
    assert trainer.selection.strategy == "ddp"
    with pytest.raises(MisconfigurationException, match=r"num_nodes=2 asks for a run over 2 machines"):
        trainer.fit(LinearRegression(), regression_data())


@pytest.mark.parametrize(
    ("plugins", "words"),
    [
        ([object()], r"is not a plugin object accelplug uses; accepted are instances of ClusterEnvironment"),
        ("slurm", r"plugins='slurm': 'slurm' is not a plugin object"),
        ([SLURMEnvironment(), LightningEnvironment()], r"2 objects of one kind \(SLURMEnvironment"),
    ],
)
def test_plugins_that_are_not_plugin_objects_are_refused(plugins: object, words: str) -> None:
    with pytest.raises(MisconfigurationException, match=words):
        Trainer(accelerator="cpu", logger=False, plugins=plugins)
    with pytest.raises(MisconfigurationException, match=words):
        Fabric(accelerator="cpu", plugins=plugins)


def test_the_trainer_trains_in_the_precision_object_given_in_plugins() -> None:
    from accelplug.fabric.plugins import BF16MixedPrecision

    given = BF16MixedPrecision("cpu")
    assert sort_plugins(given).precision is given
    trainer = Trainer(accelerator="cpu", logger=False, plugins=[given])
    assert trainer.precision_plugin is given
    assert trainer.precision == "bf16-mixed"


def test_fabric_keeps_the_environment_given_in_plugins(launched: Launch) -> None:
    given = SLURMEnvironment()
    fabric = Fabric(accelerator="cpu", devices=1, plugins=[given])
    assert fabric._plan.cluster_environment is given


def test_the_lightning_import_path_holds_the_environments() -> None:
    assert short_path.SLURMEnvironment is SLURMEnvironment
    assert set(short_path.__all__) >= {"ClusterEnvironment", "LightningEnvironment", "TorchElasticEnvironment"}


# ---- hpc checkpoints -------------------------------------------------------------------------------
def test_hpc_checkpoints_are_numbered_upwards_and_the_newest_is_resumed(launched: Launch, tmp_path: Path) -> None:
    assert hpc_save_path(tmp_path) == tmp_path / "hpc_ckpt_1.ckpt"
    for number in (1, 2, 10):
        (tmp_path / f"hpc_ckpt_{number}.ckpt").write_bytes(b"x")
    (tmp_path / "hpc_ckpt_x.ckpt").write_bytes(b"x")
    assert hpc_save_path(tmp_path) == tmp_path / "hpc_ckpt_11.ckpt"
    assert hpc_resume_path(tmp_path) == tmp_path / "hpc_ckpt_10.ckpt"
    slurm = SLURMEnvironment()
    trainers = {
        root: Trainer(accelerator="cpu", default_root_dir=root, logger=False, enable_checkpointing=False)
        for root in (tmp_path, tmp_path / "empty")
    }

    def chosen(ckpt_path: object, environment: object, fn: str = "fit", root: Path = tmp_path) -> object:
        trainer = trainers[root]
        return choose_checkpoint(trainer, trainer.strategy, Asked(fn, ckpt_path, True, environment)).path

    assert chosen(None, slurm) is None  # not in a Slurm task
    launched(SRUN_TASK_1)
    assert chosen(None, slurm) == tmp_path / "hpc_ckpt_10.ckpt"
    assert chosen(None, slurm, fn="validate") is None  # only fit resumes by itself
    assert chosen("hpc", None) == tmp_path / "hpc_ckpt_10.ckpt"
    with pytest.raises(MisconfigurationException, match=r'ckpt_path="hpc"\)` is set but no HPC checkpoint was found'):
        chosen("hpc", None, root=tmp_path / "empty")


# ---- bad input -------------------------------------------------------------------------------------
def test_num_nodes_beyond_what_torch_can_count_is_refused_everywhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from accelplug.launcher import plan_launch

    huge = 10**23
    with pytest.raises(MisconfigurationException, match=rf"num_nodes={huge} with 1 device\(s\) per node"):
        Trainer(accelerator="cpu", devices=1, num_nodes=huge, logger=False)
    with pytest.raises(MisconfigurationException, match=rf"num_nodes={huge} with 1 device"):
        Fabric(accelerator="cpu", devices=1, num_nodes=huge)
    script = tmp_path / "train.py"
    script.write_text("")
    with pytest.raises(MisconfigurationException, match=rf"--nnodes={huge} is invalid: expected .* and 2147483647"):
        plan_launch(script, cpu=True, nnodes=huge, master_addr="a", master_port=3)
    config = tmp_path / "config.toml"
    config.write_text(f"num_nodes = {huge}\n")
    monkeypatch.setenv("ACCELPLUG_CONFIG_FILE", str(config))
    with pytest.raises(MisconfigurationException, match=rf"num_nodes={huge} \(from config file .*line 1\)"):
        Trainer(accelerator="cpu", logger=False)


def test_a_nul_byte_in_a_path_is_named(tmp_path: Path) -> None:
    from accelplug.config import read_config_file, write_config_file

    bad = tmp_path / "con\x00fig.toml"
    with pytest.raises(MisconfigurationException, match=r"contains a NUL byte"):
        read_config_file(bad)
    with pytest.raises(MisconfigurationException, match=r"contains a NUL byte"):
        write_config_file(bad, {"num_nodes": 2})
    with pytest.raises(MisconfigurationException, match=r"default_root_dir='/a\\x00b' is invalid"):
        Trainer(accelerator="cpu", default_root_dir="/a\x00b", logger=False)
    with pytest.raises(ValueError, match="embedded null byte"):  # why ACCELPLUG_CONFIG_FILE cannot carry one
        os.environ["ACCELPLUG_CONFIG_FILE"] = str(bad)


def test_accelplug_launch_in_an_srun_task_refuses_devices_that_disagree_with_the_tasks(
    launched: Launch, tmp_path: Path
) -> None:
    from accelplug.launcher import launch

    launched(SRUN_TASK_1)
    script = tmp_path / "train.py"
    script.write_text("")
    with pytest.raises(MisconfigurationException, match=r"--devices=1 x --nnodes=1 = 1 processes, but .* one of 2"):
        launch(script, cpu=True, devices=1)


class _ThirdNode(LightningEnvironment):
    """An environment that knows this process runs on node 3, whatever the variables say."""

    def node_rank(self) -> int:
        return 3


def test_trainer_and_fabric_ask_the_strategys_cluster_environment_for_the_node_rank(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("NODE_RANK", "0")  # what a direct read of the variables would wrongly answer
    monkeypatch.setenv("GROUP_RANK", "0")
    trainer = Trainer(accelerator="cpu", devices=1, strategy="ddp", plugins=[_ThirdNode()], logger=False)
    fabric = Fabric(accelerator="cpu", devices=1, strategy="ddp", plugins=[_ThirdNode()])

    strategy = trainer.strategy
    assert isinstance(strategy, ParallelStrategy) and isinstance(strategy.cluster_environment, _ThirdNode)
    assert (strategy.node_rank, trainer.node_rank, fabric.node_rank) == (3, 3, 3)


def test_where_nothing_started_the_processes_the_strategy_asks_lightnings_local_environment() -> None:
    strategy = Trainer(accelerator="cpu", devices=2, strategy="ddp_spawn", logger=False).strategy
    assert isinstance(strategy, ParallelStrategy) and type(strategy.cluster_environment) is LightningEnvironment
