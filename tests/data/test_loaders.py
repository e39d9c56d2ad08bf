"""This process's view of a loader: rebuilt with one setting changed, every other setting of the user's kept."""

from __future__ import annotations

import torch

from tests.modules import regression_data


def test_pinning_for_cuda_keeps_the_loaders_sampler() -> None:
    from accelplug.data.loaders import pin_for_cuda, with_distributed_sampler

    sharded = with_distributed_sampler(regression_data(), world_size=2, rank=1, seed=3)
    pinned = pin_for_cuda(sharded, torch.device("cuda", 0))  # builds a loader only; no GPU is touched
    assert pinned.pin_memory
    assert pinned.sampler is sharded.sampler
    assert pinned.sampler.shuffle and pinned.sampler.rank == 1
