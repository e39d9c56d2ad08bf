"""Which epoch each loader's sampler is told, and when: Lightning 2.6.6's ``set_epoch`` calls, side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from unittest.mock import Mock

import pytest
from torch.utils.data import BatchSampler, DataLoader, RandomSampler

from tests.callbacks.parity import quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS, loader

pytestmark = pytest.mark.filterwarnings(
    # Lightning's advice about worker processes for the tiny in-memory loaders these tests use
    "ignore:The '.*dataloader' does not have many workers:UserWarning",
    # the advice against a shuffling validation sampler (both give it): shuffling is this test's point
    "ignore:Your `val_dataloader`'s sampler has shuffling enabled:UserWarning",
)


def _told_epochs(framework: Any, tmp_path: Path, *, batch_sampler: bool) -> tuple[list[int], list[int], list[int]]:
    """Fit 2 epochs (sanity check on), then validate: the epochs the train, val and later val samplers were told."""

    def make() -> tuple[DataLoader[Any], Mock]:
        dataset = loader(16).dataset
        sampler = RandomSampler(dataset)  # type: ignore[arg-type]  # a TensorDataset, sized
        sampler.set_epoch = Mock()  # type: ignore[attr-defined]
        if batch_sampler:
            return DataLoader(dataset, batch_sampler=BatchSampler(sampler, 4, True)), sampler.set_epoch  # type: ignore[attr-defined]
        return DataLoader(dataset, sampler=sampler, batch_size=4), sampler.set_epoch  # type: ignore[attr-defined]

    module = _module(framework)
    (train, train_told), (val, val_told), (later, later_told) = make(), make(), make()
    with quiet_lightning(framework):
        trainer = framework.Trainer(
            accelerator="cpu",
            max_epochs=2,
            limit_train_batches=1,
            limit_val_batches=1,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=tmp_path,
        )
        trainer.fit(module, train, val)
        trainer.validate(module, later, verbose=False)
    return tuple([c.args[0] for c in told.call_args_list] for told in (train_told, val_told, later_told))  # type: ignore[return-value]


def _module(framework: Any) -> Any:
    import torch

    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    return Regression()


@pytest.mark.parametrize("batch_sampler", [False, True], ids=["sampler", "batch_sampler"])
def test_every_evaluation_tells_its_samplers_the_training_epoch(tmp_path: Path, batch_sampler: bool) -> None:
    told = {name: _told_epochs(fw, tmp_path / name, batch_sampler=batch_sampler) for name, fw in FRAMEWORKS.items()}
    # train: each epoch; val: the sanity check and each epoch; a later validate: the epoch the fit left at
    assert told["accelplug"] == ([0, 1], [0, 0, 1], [2]) == told["lightning"]


def _strict_module(framework: Any, *, takes_idx: bool, default: bool) -> Any:
    """A module whose ``validation_step`` takes ``dataloader_idx`` (required, or with a default), or not."""
    base = type(_module(framework))

    if not takes_idx:
        return base()

    class WithDefault(base):  # type: ignore[misc, valid-type]
        def validation_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
            super().validation_step(batch, batch_idx)

    class WithRequired(base):  # type: ignore[misc, valid-type]
        def validation_step(self, batch: Any, batch_idx: int, dataloader_idx: int) -> None:
            super().validation_step(batch, batch_idx)

    return WithDefault() if default else WithRequired()


@pytest.mark.parametrize(
    ("loaders", "takes_idx", "default", "refused"),
    [
        (1, True, False, "only a single `val_dataloader`, but have included `dataloader_idx`"),
        (1, True, True, None),
        (2, False, False, "multiple `val_dataloader`, but no `dataloader_idx` argument"),
        (2, True, False, None),
    ],
    ids=["one-required", "one-default", "two-missing", "two-taken"],
)
def test_validation_step_and_dataloader_idx_as_lightning_rules(
    tmp_path: Path, loaders: int, takes_idx: bool, default: bool, refused: str | None
) -> None:
    outcomes: dict[str, str | None] = {}
    for name, framework in FRAMEWORKS.items():
        with quiet_lightning(framework):
            trainer = framework.Trainer(
                accelerator="cpu",
                limit_val_batches=1,
                logger=False,
                enable_progress_bar=False,
                enable_model_summary=False,
                default_root_dir=tmp_path / name,
            )
            module = _strict_module(framework, takes_idx=takes_idx, default=default)
            try:
                trainer.validate(module, [loader(8)] * loaders, verbose=False)
                outcomes[name] = None
            except RuntimeError as error:
                outcomes[name] = str(error)
    if refused is None:
        assert outcomes == {"lightning": None, "accelplug": None}
    else:
        assert refused in outcomes["accelplug"] and refused in outcomes["lightning"]  # type: ignore[operator]
