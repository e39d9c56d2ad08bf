"""What Lightning's cluster environments raise where a variable is missing or the run does not fit the job."""

from __future__ import annotations

import os
import re
from unittest import mock

import pytest

from accelplug import MisconfigurationException
from accelplug.environments.kubeflow import KubeflowEnvironment
from accelplug.environments.slurm import SLURMEnvironment
from accelplug.environments.torchelastic import TorchElasticEnvironment

lightning_environments = pytest.importorskip("lightning.fabric.plugins.environments")


@mock.patch.dict(os.environ, {}, clear=True)
@pytest.mark.parametrize(
    ("ours", "asked"),
    [
        (SLURMEnvironment, ("world_size", "local_rank", "node_rank")),
        (TorchElasticEnvironment, ("world_size", "local_rank")),
        (KubeflowEnvironment, ("world_size", "global_rank")),
    ],
)
def test_a_missing_variable_is_a_key_error_as_in_lightning(ours: type, asked: tuple[str, ...]) -> None:
    """Lightning reads ``os.environ[name]`` (KeyError); accelplug's error is that and a configuration error naming
    the variable."""
    theirs = getattr(lightning_environments, ours.__name__)()
    for method in asked:
        with pytest.raises(KeyError):
            getattr(theirs, method)()
        with pytest.raises(KeyError) as caught:
            getattr(ours(), method)()
        assert isinstance(caught.value, MisconfigurationException)
        assert str(caught.value).startswith("environment variable ")  # the sentence, not KeyError's quoted repr


@mock.patch.dict(os.environ, {}, clear=True)
def test_kubeflow_without_its_rendezvous_is_a_key_error() -> None:
    for environment in (KubeflowEnvironment(), lightning_environments.KubeflowEnvironment()):
        with pytest.raises(KeyError):
            _ = environment.main_address
        with pytest.raises(KeyError):
            _ = environment.main_port


@mock.patch.dict(os.environ, {"WORLD_SIZE": "8"})
def test_torchrun_world_size_mismatch_says_lightnings_words() -> None:
    expected = re.escape("the product (2 * 2) does not match the world size (8)")
    with pytest.raises(ValueError, match=expected):
        lightning_environments.TorchElasticEnvironment().validate_settings(num_devices=2, num_nodes=2)
    with pytest.raises(MisconfigurationException, match=expected):
        TorchElasticEnvironment().validate_settings(num_devices=2, num_nodes=2)


@mock.patch.dict(os.environ, {"SLURM_NTASKS_PER_NODE": "4", "SLURM_NNODES": "2"})
def test_slurm_settings_checked_without_slurm_ntasks_as_in_lightning() -> None:
    """Lightning checks the tasks per node and the nodes only; without SLURM_NTASKS there is no product to check."""
    os.environ.pop("SLURM_NTASKS", None)
    for environment in (SLURMEnvironment(), lightning_environments.SLURMEnvironment()):
        environment.validate_settings(num_devices=4, num_nodes=2)
        with pytest.raises(ValueError, match=r"the number of tasks per node configured .* does not match"):
            environment.validate_settings(num_devices=2, num_nodes=2)
        with pytest.raises(ValueError, match=r"the number of nodes configured in SLURM .* does not match"):
            environment.validate_settings(num_devices=4, num_nodes=1)


@mock.patch.dict(os.environ, {"SLURM_NTASKS_PER_NODE": "4", "SLURM_NNODES": "2"})
def test_slurm_settings_not_checked_for_an_interactive_job_name() -> None:
    """Validation asks ``job_name()``, so an interactive job (however it is told) is not checked, as in Lightning."""
    with mock.patch.object(SLURMEnvironment, "job_name", return_value="interactive"):
        SLURMEnvironment().validate_settings(num_devices=4, num_nodes=1)


def test_find_usable_cuda_devices_counts_through_lightnings_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A count replaced at ``lightning.fabric.accelerators.cuda`` is the one ``find_usable_cuda_devices`` asks."""
    import accelplug.fabric.accelerators.cuda as path
    from accelplug.accelerators.cuda import find_usable_cuda_devices

    monkeypatch.setattr(path, "num_cuda_devices", lambda: 1)
    with pytest.raises(ValueError, match="this machine only has 1 GPUs"):
        find_usable_cuda_devices(2)


@pytest.mark.parametrize("given", [False, True])
def test_processes_started_by_hand_get_lightnings_ranks(given: bool) -> None:
    """``LOCAL_RANK``/``NODE_RANK`` set by hand: the rank is node rank x devices + local rank and the world is devices
    x nodes, as Lightning's Trainer answers before any process group exists (whatever ``WORLD_SIZE`` said)."""
    import lightning as lightning_package

    from accelplug import Trainer
    from accelplug.distributed.rank_zero import set_rank
    from accelplug.environments.lightning import LightningEnvironment

    variables = {"LOCAL_RANK": "1", "NODE_RANK": "1", "WORLD_SIZE": "8"}
    answers = []
    try:
        with mock.patch.dict(os.environ, variables):
            for trainer_class, environment in (
                (lightning_package.Trainer, lightning_environments.LightningEnvironment),
                (Trainer, LightningEnvironment),
            ):
                plugins = [environment()] if given else None
                trainer = trainer_class(
                    strategy="ddp", accelerator="cpu", devices=2, num_nodes=2, logger=False, plugins=plugins
                )
                answers.append((trainer.global_rank, trainer.local_rank, trainer.node_rank, trainer.world_size))
                assert type(trainer.strategy.cluster_environment).__name__ == "LightningEnvironment"
    finally:
        set_rank(0)
    assert answers == [(3, 1, 1, 4), (3, 1, 1, 4)]
