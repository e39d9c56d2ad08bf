"""Sharing a loader's samples over processes as Lightning does: which sampler, which order, which seed.

The orders are compared index by index with Lightning's own ``DistributedSamplerWrapper`` and with what
Lightning's Trainer puts in a training loader under DDP (a shuffled ``DistributedSampler`` seeded with
``PL_GLOBAL_SEED``); the end-to-end data order of a two-process fit is compared in
``tests/strategies/test_ddp_processes.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, Sampler, TensorDataset, WeightedRandomSampler
from torch.utils.data.distributed import DistributedSampler

from accelplug.data.loaders import prepare_loader, with_distributed_sampler
from accelplug.data.samplers import DistributedSamplerWrapper, sampler_seed
from accelplug.errors import MisconfigurationException

lightning = pytest.importorskip("lightning", reason="the orders are compared with lightning's, not installed here")

DATA = TensorDataset(torch.arange(21.0))


class EvensFirst(Sampler[int]):
    """A custom order: even indices, then odd ones (what a bucketing sampler looks like to the wrapper)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Iterator[int]:
        return iter([*range(0, self.n, 2), *range(1, self.n, 2)])

    def __len__(self) -> int:
        return self.n


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("rank", [0, 1, 2])
@pytest.mark.parametrize("epoch", [0, 3])
def test_the_wrapper_shares_a_custom_order_as_lightnings(shuffle: bool, rank: int, epoch: int) -> None:
    from lightning.fabric.utilities.distributed import DistributedSamplerWrapper as LightningWrapper

    options: dict[str, Any] = {"num_replicas": 3, "rank": rank, "shuffle": shuffle, "seed": 7}
    ours, theirs = DistributedSamplerWrapper(EvensFirst(21), **options), LightningWrapper(EvensFirst(21), **options)
    ours.set_epoch(epoch)
    theirs.set_epoch(epoch)
    assert list(ours) == list(theirs)
    assert len(ours) == len(theirs) == 7


class Reshuffling(EvensFirst):
    """A sampler with its own per-epoch order, which it is told through ``set_epoch``."""

    def __init__(self, n: int) -> None:
        super().__init__(n)
        self.epochs: list[int] = []

    def set_epoch(self, epoch: int) -> None:
        self.epochs.append(epoch)


@pytest.mark.parametrize("lightnings", [False, True])
def test_the_wrapper_tells_the_wrapped_sampler_its_epoch_as_lightnings(lightnings: bool) -> None:
    from lightning.fabric.utilities.distributed import DistributedSamplerWrapper as LightningWrapper

    wrapper_class = LightningWrapper if lightnings else DistributedSamplerWrapper
    inner = Reshuffling(10)
    wrapper = wrapper_class(inner, num_replicas=2, rank=0)
    wrapper.set_epoch(5)
    wrapper.set_epoch(6)
    assert (wrapper.epoch, inner.epochs) == (6, [5, 6])
    plain = EvensFirst(10)
    plain.set_epoch = "not a method"  # type: ignore[attr-defined]  # present but not callable: left alone
    wrapper = wrapper_class(plain, num_replicas=2, rank=0)
    wrapper.set_epoch(3)
    assert wrapper.epoch == 3


def test_a_custom_sampler_is_wrapped_and_keeps_deciding_the_order() -> None:
    loader = DataLoader(DATA, batch_size=4, sampler=EvensFirst(21))
    shards = [with_distributed_sampler(loader, 2, rank, seed=0, shuffle=False) for rank in (0, 1)]
    assert all(isinstance(s.sampler, DistributedSamplerWrapper) for s in shards)
    assert list(shards[0].sampler) == [0, 4, 8, 12, 16, 20, 3, 7, 11, 15, 19]
    assert list(shards[1].sampler) == [2, 6, 10, 14, 18, 1, 5, 9, 13, 17, 0]  # padded with the first, as torch's


def test_a_training_loader_is_shuffled_with_seed_everythings_seed(monkeypatch: pytest.MonkeyPatch) -> None:
    class Sharding:
        is_distributed = True
        global_rank = 1

        def prepare_dataloader(self, loader: Any, *, shuffle_seed: int, shuffle: bool | None = None) -> Any:
            return with_distributed_sampler(loader, 2, 1, shuffle_seed, shuffle=shuffle)

        def process_dataloader(self, loader: Any) -> Any:
            return loader

    monkeypatch.setenv("PL_GLOBAL_SEED", "42")
    loader = DataLoader(DATA, batch_size=4, shuffle=False)
    cpu = torch.device("cpu")
    train = prepare_loader(loader, cpu, Sharding(), train=True, distributed_sampler=True, seed=None)
    evaluation = prepare_loader(loader, cpu, Sharding(), distributed_sampler=True, seed=None)
    expected = DistributedSampler(DATA, num_replicas=2, rank=1, shuffle=True, seed=42)  # Lightning's for training
    assert list(train.sampler) == list(expected)
    assert train.sampler.seed == 42 and train.sampler.shuffle
    assert not evaluation.sampler.shuffle  # an evaluation loader that did not shuffle keeps its order
    shuffled = prepare_loader(
        DataLoader(DATA, batch_size=4, shuffle=True), cpu, Sharding(), distributed_sampler=True, seed=None
    )
    assert shuffled.sampler.shuffle


def test_a_plain_batch_sampler_is_rebuilt_around_the_shard() -> None:
    loader = DataLoader(DATA, batch_sampler=BatchSampler(RandomSampler(DATA), batch_size=5, drop_last=True))
    sharded = with_distributed_sampler(loader, 2, 0, seed=0, shuffle=True)
    assert isinstance(sharded.batch_sampler, BatchSampler)
    assert isinstance(sharded.batch_sampler.sampler, DistributedSampler)
    assert sharded.batch_sampler.batch_size == 5 and sharded.batch_sampler.drop_last
    assert len(sharded) == 11 // 5


def test_a_custom_batch_sampler_is_made_again_with_its_class() -> None:
    class Chunks(BatchSampler):
        pass

    loader = DataLoader(
        DATA, batch_sampler=Chunks(WeightedRandomSampler([1.0] * 21, 21), batch_size=3, drop_last=False)
    )
    sharded = with_distributed_sampler(loader, 3, 2, seed=0)
    assert type(sharded.batch_sampler) is Chunks
    # as Lightning: the loader's own sampler (sequential under a batch sampler) is what is shared out
    assert type(sharded.batch_sampler.sampler) is DistributedSampler


def test_a_batch_sampler_that_cannot_be_made_again_is_refused_with_what_to_do() -> None:
    class Fixed(Sampler[list[int]]):
        def __iter__(self) -> Iterator[list[int]]:
            return iter([[0, 1], [2, 3]])

        def __len__(self) -> int:
            return 2

    loader = DataLoader(DATA, batch_sampler=Fixed())
    with pytest.raises(MisconfigurationException, match=r"batch_sampler, a Fixed.*use_distributed_sampler=False"):
        with_distributed_sampler(loader, 2, 0, seed=0)


def test_a_sampler_without_length_is_refused_with_lightnings_type_and_phrase() -> None:
    class Endless(Sampler[int]):
        def __iter__(self) -> Iterator[int]:
            return iter(range(3))

    with pytest.raises(TypeError, match=r"You seem to have configured a sampler in your DataLoader.*Endless has no"):
        DistributedSamplerWrapper(Endless(), num_replicas=2, rank=0)
    with pytest.raises(MisconfigurationException, match=r"use_distributed_sampler=False"):
        DistributedSamplerWrapper(Endless(), num_replicas=2, rank=0)


def test_a_bad_global_seed_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PL_GLOBAL_SEED", "abc")
    with pytest.raises(MisconfigurationException, match=r"PL_GLOBAL_SEED='abc'"):
        sampler_seed()
    monkeypatch.delenv("PL_GLOBAL_SEED")
    assert sampler_seed() == 0


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("size", [20, 21, 3])
def test_the_unrepeated_sampler_gives_every_index_once_across_ranks_as_lightnings(shuffle: bool, size: int) -> None:
    from lightning.pytorch.overrides.distributed import UnrepeatedDistributedSampler as LightningSampler

    from accelplug.data.samplers import UnrepeatedDistributedSampler

    dataset = range(size)
    shares = []
    for rank in range(3):
        ours = UnrepeatedDistributedSampler(dataset, num_replicas=3, rank=rank, shuffle=shuffle, seed=5)
        theirs = LightningSampler(dataset, num_replicas=3, rank=rank, shuffle=shuffle, seed=5)
        ours.set_epoch(2)
        theirs.set_epoch(2)
        assert list(ours) == list(theirs)
        assert len(ours) == len(theirs)
        shares.append(list(ours))
    assert sorted(index for share in shares for index in share) == list(range(size))  # none twice, none left out


@pytest.mark.parametrize("rank", [0, 1])
def test_the_unrepeated_wrapper_shares_a_custom_order_without_padding_as_lightnings(rank: int) -> None:
    from lightning.pytorch.overrides.distributed import UnrepeatedDistributedSamplerWrapper as LightningWrapper

    from accelplug.data.samplers import UnrepeatedDistributedSamplerWrapper

    ours = UnrepeatedDistributedSamplerWrapper(EvensFirst(21), num_replicas=2, rank=rank, shuffle=False)
    theirs = LightningWrapper(EvensFirst(21), num_replicas=2, rank=rank, shuffle=False)
    assert list(ours) == list(theirs)
    assert len(ours) == (11 if rank == 0 else 10)


def test_the_unrepeated_sampler_refuses_a_dataset_without_length_with_lightnings_type() -> None:
    from accelplug.data.samplers import UnrepeatedDistributedSampler

    with pytest.raises(TypeError, match="must implement the `__len__` method"):
        UnrepeatedDistributedSampler(iter(range(4)), num_replicas=2, rank=0)  # type: ignore[arg-type]


def test_the_unrepeated_sampler_refuses_to_leave_a_process_without_a_sample() -> None:
    from accelplug.data.samplers import UnrepeatedDistributedSampler

    with pytest.raises(AssertionError, match="2 samples cannot give each of 3 processes one"):
        UnrepeatedDistributedSampler(range(2), num_replicas=3, rank=2)
