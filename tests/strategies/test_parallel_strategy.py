"""``ParallelStrategy`` at Lightning's path, the base of the strategies with one process per device, as in Lightning.

Found by Lightning's ImageNet example (``tests/lightning_compat/projects/pl_imagenet_cli.py``), whose ``setup``
asks ``isinstance(self.trainer.strategy, ParallelStrategy)``: the import failed under accelplug.
"""

from __future__ import annotations

import pytest

import accelplug.pytorch.strategies as ours

theirs = pytest.importorskip("lightning.pytorch.strategies", reason="compared with Lightning, not installed here")


@pytest.mark.parametrize("name", ["DDPStrategy", "FSDPStrategy", "SingleDeviceStrategy"])
def test_which_strategies_are_parallel_as_in_lightning(name: str) -> None:
    assert issubclass(getattr(ours, name), ours.ParallelStrategy) == issubclass(
        getattr(theirs, name), theirs.ParallelStrategy
    )
    assert issubclass(ours.ParallelStrategy, ours.Strategy)


def test_a_ddp_strategy_is_parallel_and_counts_its_processes() -> None:
    strategy = ours.DDPStrategy()
    assert isinstance(strategy, ours.ParallelStrategy)
    assert strategy.num_processes >= 1
    assert strategy.distributed_sampler_kwargs == {"num_replicas": strategy.world_size, "rank": strategy.global_rank}
