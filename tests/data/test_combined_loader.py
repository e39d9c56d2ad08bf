"""``CombinedLoader`` and several loaders per stage, compared with Lightning 2.6.6 step by step.

Iteration in every mode is compared triple by triple with Lightning's own class; ``fit`` on a dict of
training loaders and ``validate`` on a sequential ``CombinedLoader`` are run under both frameworks and the
batches each step received (with ``batch_idx``/``dataloader_idx``) and the trained weights compared.
"""

from __future__ import annotations

import logging
import pickle
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.data.combined_loader import CombinedLoader
from accelplug.errors import MisconfigurationException

lightning = pytest.importorskip("lightning", reason="CombinedLoader is compared with lightning's, not installed here")
from lightning.pytorch.utilities import CombinedLoader as LightningCombinedLoader  # noqa: E402

from tests.callbacks.parity import quiet_lightning  # noqa: E402


def _loaders() -> dict[str, Any]:
    return {
        "a": DataLoader(torch.arange(6), batch_size=4),
        "b": [DataLoader(torch.arange(15), batch_size=5), DataLoader(torch.arange(4) * 10, batch_size=1)],
    }


def _plain(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _walk(cls: Any, mode: str, limits: Any = None) -> tuple[list[Any], int]:
    combined = cls(_loaders(), mode=mode)
    if limits is not None:
        combined.limits = limits
    steps = [_plain(step) for step in combined]
    iter(combined)
    return steps, len(combined)


@pytest.mark.parametrize("mode", ["min_size", "max_size_cycle", "max_size", "sequential"])
def test_every_mode_iterates_as_lightnings(mode: str) -> None:
    assert _walk(CombinedLoader, mode) == _walk(LightningCombinedLoader, mode)


@pytest.mark.parametrize("mode", ["min_size", "sequential"])
def test_limits_cut_as_lightnings(mode: str) -> None:
    assert _walk(CombinedLoader, mode, [1, 2, 3]) == _walk(LightningCombinedLoader, mode, [1, 2, 3])
    assert _walk(CombinedLoader, mode, 2) == _walk(LightningCombinedLoader, mode, 2)


def test_the_nesting_and_samplers_are_kept() -> None:
    combined = CombinedLoader(_loaders())
    assert combined.mode == "min_size"  # Lightning's default
    assert len(combined.flattened) == 3
    assert isinstance(combined.sampler["b"][1], torch.utils.data.SequentialSampler)
    with pytest.raises(RuntimeError, match=r"Please call `iter\(combined_loader\)` first"):
        len(combined)


def test_the_modes_are_listed_under_lightnings_private_names() -> None:
    """``_SUPPORTED_MODES`` and the ``Literal`` projects type a ``mode`` with, at Lightning's path."""
    from typing import get_args

    from lightning.pytorch.utilities import combined_loader as theirs

    from accelplug.pytorch.utilities import combined_loader as ours

    assert set(ours._SUPPORTED_MODES) == set(get_args(ours._LITERAL_SUPPORTED_MODES))
    assert set(ours._SUPPORTED_MODES) == set(theirs._SUPPORTED_MODES)
    assert get_args(ours._LITERAL_SUPPORTED_MODES) == get_args(theirs._LITERAL_SUPPORTED_MODES)


def test_bad_modes_and_sizes_are_named() -> None:
    with pytest.raises(MisconfigurationException, match=r"Unsupported mode 'max_cycle'.*Did you mean 'max_size_cycle'"):
        CombinedLoader(_loaders(), mode="max_cycle")
    with pytest.raises(MisconfigurationException, match=r"2 iterables given where it holds 3"):
        CombinedLoader(_loaders()).flattened = [[], []]
    with pytest.raises(MisconfigurationException, match=r"2 limits for 3 iterables"):
        CombinedLoader(_loaders()).limits = [1, 2]


# ---- the Trainer with several loaders, under both frameworks ---------------------------------------------
def _xy(n: int, seed: int) -> DataLoader[Any]:
    x = torch.randn(n, 3, generator=torch.Generator().manual_seed(seed))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def _run(framework: Any) -> dict[str, Any]:
    seen: list[Any] = []
    validated: list[Any] = []

    class TwoSources(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(3, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            seen.append((batch_idx, sorted(batch), batch["small"][0].shape[0]))
            losses = [torch.nn.functional.mse_loss(self.layer(x), y) for x, y in batch.values()]
            self.log("train_loss", sum(losses))
            return sum(losses)

        def validation_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
            x, _ = batch
            validated.append((batch_idx, dataloader_idx, x.shape[0]))

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.05)

    torch.manual_seed(0)
    model = TwoSources()
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    combined = LightningCombinedLoader if framework is lightning.pytorch else CombinedLoader
    val = combined([_xy(8, 3), _xy(12, 4)], mode="sequential")
    with quiet_lightning():  # only Lightning's own warnings
        trainer.fit(model, {"big": _xy(20, 1), "small": _xy(6, 2)})
        trainer.validate(model, val, verbose=False)
    return {"seen": seen, "global_step": trainer.global_step, "weights": model.layer.weight.tolist(), "val": validated}


def test_fit_on_a_dict_of_loaders_and_validate_on_a_sequential_combined_loader_as_lightning() -> None:
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    expected = _run(lightning.pytorch)
    got = _run(accelplug)
    assert got["seen"] == expected["seen"]  # max_size_cycle: 5 steps, the small loader starting over
    assert got["global_step"] == expected["global_step"] == 10
    torch.testing.assert_close(torch.tensor(got["weights"]), torch.tensor(expected["weights"]))
    assert got["val"] == expected["val"]  # each loader in turn, with its dataloader_idx
    assert {idx for _, idx, _ in got["val"]} == {0, 1}


class _Steps(accelplug.LightningModule):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(3, 1)
        self.validated: list[Any] = []

    def training_step(self, batch: Any, batch_idx: int) -> None:
        return None

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        self.validated.append(_plain(batch))

    def predict_step(self, batch: Any, batch_idx: int) -> Any:
        return batch

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _trainer() -> accelplug.Trainer:
    return accelplug.Trainer(
        accelerator="cpu", devices=1, max_steps=1, logger=False, enable_checkpointing=False, enable_progress_bar=False
    )


def test_fit_refuses_a_sequential_combined_loader_after_counting_its_batches() -> None:
    trainer = _trainer()
    with pytest.raises(MisconfigurationException, match=r"mode='sequential'.*`FitLoop` does not support") as info:
        trainer.fit(_Steps(), CombinedLoader([_xy(4, 1), _xy(8, 2)], "sequential"))
    assert isinstance(info.value, ValueError)  # Lightning's type for it
    assert trainer.num_training_batches == 3  # as in Lightning, the batches were counted before the refusal


def test_validate_runs_a_min_size_combined_loader_as_one_source_of_combined_batches() -> None:
    model = _Steps()
    combined = CombinedLoader({"a": DataLoader(torch.arange(6), batch_size=2), "b": DataLoader(torch.arange(2))})
    _trainer().validate(model, combined, verbose=False)
    assert model.validated == [{"a": [0, 1], "b": [0]}, {"a": [2, 3], "b": [1]}]  # Lightning's batches, idx-free


def test_predict_refuses_a_combined_loader_in_another_mode_than_sequential() -> None:
    phrase = r'`trainer.predict\(\)` only supports the `CombinedLoader\(mode="sequential"\)`'
    with pytest.raises(ValueError, match=phrase):
        _trainer().predict(_Steps(), CombinedLoader([_xy(4, 1)], "max_size"))


# ---- the iterator itself, beside Lightning's ------------------------------------------------------------------
class _Watched(DataLoader[Any]):
    """A DataLoader that notes when its iterator (its workers, if it had any) is made."""

    started = False

    def _get_iterator(self) -> Any:
        self.started = True
        return super()._get_iterator()


@pytest.mark.parametrize("mode", ["min_size", "max_size_cycle", "max_size", "sequential"])
def test_iter_starts_every_loader_or_in_sequential_mode_only_the_first(mode: str) -> None:
    def started(cls: Any) -> list[bool]:
        loaders = [_Watched(torch.arange(4), batch_size=2), _Watched(torch.arange(6), batch_size=2)]
        iter(cls(loaders, mode))
        return [one.started for one in loaders]

    assert started(CombinedLoader) == started(LightningCombinedLoader)
    assert started(CombinedLoader) == ([True, False] if mode == "sequential" else [True, True])


def test_the_combined_loader_is_its_own_iterator() -> None:
    combined = CombinedLoader([DataLoader(torch.arange(4), batch_size=2)], "max_size_cycle")
    assert iter(combined) is combined
    assert _plain(next(combined)) == [[[0, 1]], 0, 0]


def test_a_list_of_numbers_is_one_iterable_not_a_nesting() -> None:
    nested = [[0], [[1], [[2]]]]
    assert CombinedLoader(nested).flattened == LightningCombinedLoader(nested).flattened == [[0], [1], [2]]


def test_a_loader_without_a_length_leaves_the_combined_one_without_a_length() -> None:
    class Endless(torch.utils.data.IterableDataset[int]):
        def __iter__(self) -> Any:
            return iter(range(3))

    from accelplug.data.lengths import sized_len

    for cls in (CombinedLoader, LightningCombinedLoader):
        combined = cls([DataLoader(Endless()), DataLoader(torch.arange(4))], "max_size_cycle")
        iter(combined)
        assert sized_len(combined) is None


def test_a_combined_loader_in_the_middle_of_a_pass_can_be_pickled() -> None:
    combined = CombinedLoader([DataLoader(torch.arange(4)), list(range(10))])
    iter(combined)
    copy = pickle.loads(pickle.dumps(combined))
    assert [_plain(step) for step in copy] == [_plain(step) for step in CombinedLoader(combined.iterables)]


def test_reset_shuts_down_the_workers_of_persistent_loaders() -> None:
    loader = DataLoader(torch.arange(4), batch_size=2, num_workers=1, persistent_workers=True)
    combined = CombinedLoader([loader])
    list(combined)
    assert loader._iterator is not None  # persistent workers stay up between passes
    combined.reset()
    assert loader._iterator is None
