"""Loaders Lightning 2.6.6 accepts that are no plain ``DataLoader``, and batch limits given in other forms.

An iterator class of the user's own (its ``__iter__`` may start over) and a loader whose ``__len__`` raises
``NotImplementedError`` are accepted, their length unknown; so is a generator, in fit as in test and predict
(once used up, a later epoch over it is empty, as in Lightning).
A dict of iterables, and a list of lists of numbers, are several loaders, as Lightning reads them. An iterable that
yields nothing in some epoch ends that epoch, without validation, as Lightning's loop does. A whole float above 1
as a batch limit is that many batches.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, IterableDataset

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS, VAL_SAMPLES, fit_both, fit_one, loader


class _Restarting:
    """The user's iterator over a DataLoader: ``__iter__`` starts over; optionally ``__len__`` says it has none."""

    def __init__(self, inner: DataLoader[Any], *, length_raises: bool = False) -> None:
        self.inner, self.length_raises = inner, length_raises
        self._it: Iterator[Any] = iter(inner)

    def __iter__(self) -> _Restarting:
        self._it = iter(self.inner)
        return self

    def __next__(self) -> Any:
        return next(self._it)

    def __len__(self) -> int:
        if self.length_raises:
            raise NotImplementedError
        return len(self.inner)


@pytest.mark.parametrize("length_raises", [False, True], ids=["with a length", "__len__ raises NotImplementedError"])
def test_an_iterator_class_of_the_users_own_trains_and_validates_as_in_lightning(
    tmp_path: Path, length_raises: bool
) -> None:
    records = fit_both(
        tmp_path,
        max_epochs=2,
        train=lambda: _Restarting(loader(), length_raises=length_raises),  # type: ignore[arg-type, return-value]
        val=lambda: _Restarting(loader(VAL_SAMPLES, seed=1), length_raises=length_raises),  # type: ignore[arg-type, return-value]
    )
    assert records["lightning"].validations
    assert records["accelplug"].story == records["lightning"].story


def test_a_generator_trains_and_validates_as_in_lightning(tmp_path: Path) -> None:
    records = fit_both(
        tmp_path,
        max_epochs=2,
        train=lambda: (b for b in loader()),  # type: ignore[arg-type, return-value]
        val=lambda: (b for b in loader(VAL_SAMPLES, seed=1)),  # type: ignore[arg-type, return-value]
    )
    assert records["lightning"].validations
    assert records["accelplug"].story == records["lightning"].story


class _FirstEpochOnly(IterableDataset[torch.Tensor]):
    """Samples in the first epoch only (an exhausted stream afterwards)."""

    def __init__(self) -> None:
        self.epochs = 0

    def __iter__(self) -> Iterator[Any]:
        self.epochs += 1
        if self.epochs == 1:
            x = torch.randn(16, 2, generator=torch.Generator().manual_seed(0))
            yield from zip(x, x.sum(1, keepdim=True), strict=True)


def test_an_epoch_with_no_batches_ends_without_training_or_validation_as_in_lightning(tmp_path: Path) -> None:
    records = {
        name: fit_one(fw, tmp_path / name, max_epochs=3, train=lambda: DataLoader(_FirstEpochOnly(), batch_size=4))
        for name, fw in FRAMEWORKS.items()
    }
    theirs, ours = records["lightning"], records["accelplug"]
    assert theirs[0].epoch_ends == [("epoch_end", 0, 4), ("epoch_end", 1, 4), ("epoch_end", 2, 4)]
    assert ours[0].story == theirs[0].story
    assert ours[1].current_epoch == theirs[1].current_epoch == 3


@pytest.mark.parametrize("option", ["limit_train_batches", "limit_val_batches", "overfit_batches"])
@pytest.mark.parametrize("value", [-0.1, 1.2])
def test_a_batch_limit_neither_fraction_nor_whole_is_refused_with_lightnings_phrase(option: str, value: float) -> None:
    with pytest.raises(MisconfigurationException, match=rf"{option}={value} is invalid \(passed invalid value"):
        accelplug.Trainer(**{option: value})  # type: ignore[arg-type]


def test_a_whole_float_batch_limit_above_one_is_that_many_batches(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=1, limit_train_batches=3.0, limit_val_batches=1e50)
    assert records["lightning"].story["global_step"] == 3
    assert records["accelplug"].story == records["lightning"].story


def _predict_both(tmp_path: Path, data: Callable[[], Any]) -> dict[str, Any]:
    """What ``predict`` returns under each framework for a step that answers ``(batch, batch_idx, dataloader_idx)``."""
    answers = {}
    for name, framework in FRAMEWORKS.items():

        class Echo(framework.LightningModule):  # type: ignore[misc, name-defined]
            def predict_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> Any:
                return (batch, batch_idx, dataloader_idx)

        trainer = framework.Trainer(
            default_root_dir=tmp_path / name, limit_predict_batches=3, logger=False, enable_progress_bar=False
        )
        with quiet_lightning(framework):
            answers[name] = trainer.predict(Echo(), data())
    return answers


@pytest.mark.parametrize(
    "data",
    [
        lambda: itertools.count(),
        lambda: [itertools.count(), itertools.count(10)],
        lambda: {"a": [0, 1], "b": [2, 3]},
        lambda: [[0, 1], [2, 3]],
    ],
    ids=["an iterator", "a list of iterators", "a dict of lists", "a list of lists of numbers"],
)
def test_prediction_reads_iterators_and_collections_of_iterables_as_lightning_does(
    tmp_path: Path, data: Callable[[], Any]
) -> None:
    """Prediction goes over its data once, so an iterator is taken (fit still refuses one); a dict of iterables and a
    list of lists of numbers are several loaders, one after the other."""
    answers = _predict_both(tmp_path, data)
    assert answers["accelplug"] == answers["lightning"]


def test_fit_trains_on_a_dict_of_iterables_one_batch_of_each_a_step_as_lightning_does(tmp_path: Path) -> None:
    seen: dict[str, list[Any]] = {}
    for name, framework in FRAMEWORKS.items():

        class Records(framework.LightningModule):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.layer = torch.nn.Linear(1, 1)
                self.steps: list[Any] = []

            def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
                self.steps.append((batch, batch_idx))
                return self.layer(torch.ones(1)).sum()  # type: ignore[no-any-return]

            def configure_optimizers(self) -> Any:
                return torch.optim.SGD(self.parameters(), lr=0.1)

        trainer = framework.Trainer(
            default_root_dir=tmp_path / name,
            max_epochs=1,
            log_every_n_steps=1,
            logger=False,
            enable_progress_bar=False,
            enable_checkpointing=False,
            enable_model_summary=False,
        )
        model = Records()
        with quiet_lightning(framework):
            trainer.fit(model, {"a": [0, 1, 2], "b": [3, 4]})
        seen[name] = model.steps
    assert (
        seen["accelplug"] == seen["lightning"] == [({"a": 0, "b": 3}, 0), ({"a": 1, "b": 4}, 1), ({"a": 2, "b": 3}, 2)]
    )


@pytest.mark.parametrize("mode", ["max_size_cycle", "min_size", "max_size"])
def test_combined_loaders_start_their_iterators_as_often_as_lightnings(mode: str, tmp_path: Path) -> None:
    """A fit over a dict of loaders starts each loader's iterator exactly when Lightning does (once per pass, and
    again where ``max_size_cycle`` cycles a shorter one): a second start costs its workers' start-up, and each start
    draws the global RNG once (a DataLoader's base seed), so the weights of a model built later would differ."""
    import hashlib

    lightning = pytest.importorskip("lightning")
    from lightning.pytorch.utilities import CombinedLoader as TheirCombinedLoader

    import accelplug

    starts: list[tuple[str, int, str]] = []
    original = DataLoader.__iter__

    def counting(self: DataLoader[Any]) -> Any:
        starts.append((framework_name, len(self), hashlib.md5(torch.get_rng_state().numpy().tobytes()).hexdigest()))
        return original(self)

    seen: dict[str, list[tuple[int, str]]] = {}
    for framework_name, framework in {"lightning": lightning, "accelplug": accelplug}.items():
        combined = TheirCombinedLoader if framework is lightning else accelplug.pytorch.utilities.CombinedLoader

        class Model(framework.LightningModule):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.layer = torch.nn.Linear(2, 1)

            def training_step(self, batch: Any, batch_idx: int) -> Any:
                return self.layer(batch["long"][0]).sum()

            def configure_optimizers(self) -> Any:
                return torch.optim.SGD(self.parameters(), lr=0.01)

        torch.manual_seed(0)
        loaders = {"long": loader(24), "short": loader(4)}  # 6 batches and 1
        trainer = framework.Trainer(
            max_epochs=2,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=tmp_path / framework_name,
        )
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(DataLoader, "__iter__", counting)
            trainer.fit(Model(), train_dataloaders=combined(loaders, mode))
        seen[framework_name] = [(length, rng) for name, length, rng in starts if name == framework_name]
    assert seen["accelplug"] == seen["lightning"]
