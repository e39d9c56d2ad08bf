"""``trainer.world_size`` answers the planned run from construction on, before any process starts (Lightning's rule).

Users size learning rates and effective batch sizes from it right after ``Trainer(...)``, and a ``ddp_spawn``
parent keeps its Trainer after the spawned fit: both read the plan (this node's devices x nodes), not 1.
"""

from __future__ import annotations

import lightning
import pytest

import accelplug
from tests.callbacks.parity import quiet_lightning


@pytest.mark.parametrize("strategy", ["ddp", "ddp_spawn", "ddp_fork"])
@pytest.mark.parametrize("num_nodes", [1, 2])
def test_world_size_and_processes_are_the_plan_before_any_process_starts(strategy: str, num_nodes: int) -> None:
    options = {"strategy": strategy, "accelerator": "cpu", "devices": 2, "num_nodes": num_nodes, "logger": False}
    with quiet_lightning():
        theirs = lightning.Trainer(**options)
    ours = accelplug.Trainer(**options)
    assert (ours.world_size, ours.global_rank, ours.num_nodes) == (theirs.world_size, theirs.global_rank, num_nodes)
    assert ours.strategy.num_processes == theirs.strategy.num_processes == 2


def test_a_strategy_given_its_own_devices_keeps_them() -> None:
    import torch

    strategy = accelplug.pytorch.strategies.DDPStrategy(parallel_devices=[torch.device("cpu")] * 2)
    trainer = accelplug.Trainer(strategy=strategy, logger=False)
    assert (trainer.world_size, trainer.num_devices) == (2, 2)
