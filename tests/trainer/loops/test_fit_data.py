"""How a fit sets up its data, as Lightning 2.6.6 does: what it warns about and what it shows of the loaders.

``overfit_batches`` turns shuffling off (with Lightning's warning) for the training and the validation loaders;
``trainer.train_dataloader`` keeps the nesting the loaders were given in; an epoch shorter than
``log_every_n_steps`` and an ``IterableDataset`` that declares a length are warned about; a float
``val_check_interval=1.0`` is accepted with a loader that has no length (validation at the epoch's end).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, IterableDataset, RandomSampler, SequentialSampler

from accelplug.errors import PossibleUserWarning
from tests.callbacks.parity import quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS, VAL_SAMPLES, fit_both, fit_one, loader


def _shuffled(n: int = 32, seed: int = 0) -> DataLoader[Any]:
    plain = loader(n, seed=seed)
    return DataLoader(plain.dataset, batch_size=4, sampler=RandomSampler(plain.dataset))  # type: ignore[arg-type]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_overfit_batches_turns_shuffling_off_with_lightnings_warning(tmp_path: Path, framework: str) -> None:
    with pytest.warns(UserWarning, match="requested to overfit but enabled (train|val) dataloader shuffling") as seen:
        _, trainer = fit_one(
            FRAMEWORKS[framework],
            tmp_path,
            train=_shuffled,
            val=lambda: _shuffled(VAL_SAMPLES, 1),
            overfit_batches=2,
            max_epochs=1,
        )
    overfit = [str(w.message) for w in seen if "requested to overfit" in str(w.message)]
    assert {message.split(" dataloader shuffling")[0].split()[-1] for message in overfit} == {"train", "val"}
    assert isinstance(trainer.train_dataloader.sampler, SequentialSampler)
    assert isinstance(trainer.val_dataloaders.sampler, SequentialSampler)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_train_dataloader_keeps_the_nesting_the_loaders_came_in(tmp_path: Path, framework: str) -> None:
    lightning_or_accelplug = FRAMEWORKS[framework]

    class TwoLoaders(lightning_or_accelplug.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return sum(self.layer(x).sum() for x, _ in batch)  # type: ignore[return-value]

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = lightning_or_accelplug.Trainer(
        accelerator="cpu", max_steps=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=tmp_path,
    )  # fmt: skip
    with quiet_lightning(lightning_or_accelplug):
        trainer.fit(TwoLoaders(), [loader(), loader(seed=2)])
    shown = trainer.train_dataloader
    assert isinstance(shown, list) and len(shown) == 2
    assert all(isinstance(one, DataLoader) for one in shown)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_epoch_shorter_than_the_logging_interval_is_warned_about(tmp_path: Path, framework: str) -> None:
    phrase = r"The number of training batches \(8\) is smaller than the logging interval"
    with pytest.warns(PossibleUserWarning if framework == "accelplug" else UserWarning, match=phrase):
        fit_one(FRAMEWORKS[framework], tmp_path, val=None, max_epochs=1, logger=True, log_every_n_steps=9)


class _IterableWithLength(IterableDataset[Any]):
    def __init__(self, length: bool) -> None:
        self.data, self.length = loader().dataset, length

    def __iter__(self) -> Any:
        return iter(self.data)  # type: ignore[call-overload]

    def __len__(self) -> int:
        if not self.length:
            raise TypeError("no length")
        return len(self.data)  # type: ignore[arg-type]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_iterable_dataset_with_a_length_is_warned_about(tmp_path: Path, framework: str) -> None:
    with pytest.warns(UserWarning, match="Your `IterableDataset` has `__len__` defined"):
        fit_one(
            FRAMEWORKS[framework],
            tmp_path,
            train=lambda: DataLoader(_IterableWithLength(True), batch_size=4),
            max_steps=2,
        )


def test_val_check_interval_one_point_zero_validates_at_the_end_of_an_epoch_of_unknown_length(tmp_path: Path) -> None:
    records = fit_both(
        tmp_path,
        train=lambda: DataLoader(_IterableWithLength(False), batch_size=4),
        max_epochs=2,
        val_check_interval=1.0,
    )
    assert records["accelplug"].story == records["lightning"].story
    assert [v[1] for v in records["accelplug"].validations] == [0, 1]


def test_a_fraction_of_an_epoch_of_unknown_length_is_refused_with_lightnings_phrase(tmp_path: Path) -> None:
    import accelplug

    with pytest.raises(
        accelplug.MisconfigurationException,
        match=r"`Trainer\(val_check_interval\)` must be time based, `1.0` or an int",
    ):
        fit_one(
            accelplug,
            tmp_path,
            train=lambda: DataLoader(_IterableWithLength(False), batch_size=4),
            val_check_interval=0.5,
            max_epochs=1,
        )


@pytest.mark.parametrize(
    ("has_step", "data"),
    [(True, None), (False, "argument"), (False, "method"), (True, "argument"), (False, None)],
    ids=["step-no-data", "data-no-step", "method-no-step", "both", "neither"],
)
@pytest.mark.parametrize("limit_val_batches", [1.0, 0])
def test_fit_says_when_validation_is_skipped_for_want_of_a_step_or_data(
    tmp_path: Path, has_step: bool, data: str | None, limit_val_batches: float
) -> None:
    """Lightning's two warnings at a fit's start, with its categories, whatever ``limit_val_batches`` says."""
    seen: dict[str, list[tuple[type[Warning], str]]] = {}
    for name, framework in FRAMEWORKS.items():

        class Model(framework.LightningModule):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.layer = torch.nn.Linear(2, 1)

            def training_step(self, batch: Any, batch_idx: int) -> Any:
                return torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])

            def configure_optimizers(self) -> Any:
                return torch.optim.SGD(self.parameters(), lr=0.1)

        if has_step:
            Model.validation_step = lambda self, batch, batch_idx: None
        if data == "method":
            Model.val_dataloader = lambda self: loader(VAL_SAMPLES, seed=1)
        trainer = framework.Trainer(
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            max_steps=1,
            limit_val_batches=limit_val_batches,
            default_root_dir=tmp_path / name,
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trainer.fit(Model(), loader(), loader(VAL_SAMPLES, 1) if data == "argument" else None)
        seen[name] = [(w.category, str(w.message)) for w in caught if "Skipping val loop" in str(w.message)]
    # Lightning's sentence, then accelplug's own detail
    assert [(c.__name__, m.split(" Skipping val loop")[0]) for c, m in seen["accelplug"]] == [
        (c.__name__, m.split(" Skipping val loop")[0]) for c, m in seen["lightning"]
    ]
    assert len(seen["accelplug"]) == (has_step != (data is not None))
    if has_step and data is None:
        assert issubclass(seen["accelplug"][0][0], PossibleUserWarning)
