"""Steps written as ``*_step(self, dataloader_iter)`` fetch their own batches, as Lightning 2.6.6 lets them.

The same module runs under Lightning and accelplug: each step pulls two batches from the iterator it is given; the
record holds what each batch hook received (the last batch fetched so far, and its indices), what each step
fetched, the counters and the weights. Both frameworks warn that the loop hands the step an iterator.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from tests.callbacks.parity import quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS

#: 8 batches of 2 samples; each step fetches two of them
DATA = TensorDataset(torch.arange(32, dtype=torch.float32).reshape(16, 2))


def _loader() -> DataLoader[Any]:
    return DataLoader(DATA, batch_size=2)


def _module(framework: Any, record: list[Any], *, automatic: bool = True, stop_at_step: int | None = None) -> Any:
    class FetchesItself(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(2, 1)
            self.automatic_optimization = automatic
            self.steps = 0

        def _fetch_two(self, dataloader_iter: Any, stage: str) -> torch.Tensor:
            self.steps += 1
            if self.steps - 1 == stop_at_step:  # once
                raise StopIteration
            fetched = [next(dataloader_iter) for _ in range(2)]
            record.append((stage, "fetched", [(int(b[0][0, 0]), i, d) for b, i, d in fetched]))
            return sum(self.layer(batch[0]).pow(2).mean() for batch, _, _ in fetched)  # type: ignore[return-value]

        def training_step(self, dataloader_iter: Any) -> Any:
            loss = self._fetch_two(dataloader_iter, "train")
            if self.automatic_optimization:
                return loss
            optimizer = self.optimizers()
            optimizer.zero_grad()
            self.manual_backward(loss)
            optimizer.step()
            return None

        def validation_step(self, dataloader_iter: Any) -> None:
            self._fetch_two(dataloader_iter, "val")

        def predict_step(self, dataloader_iter: Any) -> torch.Tensor:
            return self._fetch_two(dataloader_iter, "predict")

        def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
            record.append(("train", "start", _first(batch), batch_idx))

        def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
            record.append(("train", "end", _first(batch), batch_idx))

        def on_validation_batch_start(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
            record.append(("val", "start", _first(batch), batch_idx, dataloader_idx))

        def on_validation_batch_end(self, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
            record.append(("val", "end", _first(batch), batch_idx, dataloader_idx))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.01)

    return FetchesItself()


def _first(batch: Any) -> int | None:
    return None if batch is None else int(batch[0][0, 0])


def _trainer(framework: Any, tmp_path: Path, **options: Any) -> Any:
    settings = {
        "accelerator": "cpu",
        "devices": 1,
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "default_root_dir": tmp_path,
        **options,
    }
    return framework.Trainer(**settings)


def _both(run: Any) -> dict[str, list[Any]]:
    records = {}
    for name, framework in FRAMEWORKS.items():
        records[name] = []
        with quiet_lightning(framework), pytest.warns(UserWarning, match="dataloader_iter"):
            run(framework, records[name])
    return records


def test_a_training_step_that_takes_dataloader_iter_fetches_its_own_batches_as_in_lightning(tmp_path: Path) -> None:
    def run(framework: Any, record: list[Any]) -> None:
        model = _module(framework, record)
        trainer = _trainer(framework, tmp_path / framework.__name__, max_epochs=2, num_sanity_val_steps=2)
        trainer.fit(model, _loader(), _loader())
        record.append(("counters", trainer.global_step, trainer.current_epoch, model.layer.weight.tolist()))

    records = _both(run)
    assert records["accelplug"] == records["lightning"]
    # four steps an epoch, each given the last batch fetched before it (none at first), then a validation
    train = [r for r in records["accelplug"] if r[0] == "train"]
    assert train[:3] == [
        ("train", "start", None, 0),
        ("train", "fetched", [(0, 0, 0), (4, 1, 0)]),
        ("train", "end", 4, 1),
    ]


@pytest.mark.parametrize("automatic", [True, False], ids=["automatic", "manual"])
def test_a_step_that_raises_stop_iteration_ends_as_in_lightning(tmp_path: Path, automatic: bool) -> None:
    """An automatic step's StopIteration ends the epoch (without its validation); a manual step's ends the step."""

    def run(framework: Any, record: list[Any]) -> None:
        model = _module(framework, record, automatic=automatic, stop_at_step=1)
        trainer = _trainer(framework, tmp_path / framework.__name__, max_epochs=1, num_sanity_val_steps=0)
        trainer.fit(model, _loader(), _loader())
        record.append(("counters", trainer.global_step, model.steps))

    records = _both(run)
    assert records["accelplug"] == records["lightning"]


def test_validation_and_prediction_fetch_from_every_loader_in_turn_as_in_lightning(tmp_path: Path) -> None:
    """With two loaders one iterator runs over both; the hooks take the ``dataloader_idx`` of the last batch."""

    def run(framework: Any, record: list[Any]) -> None:
        model = _module(framework, record)
        trainer = _trainer(framework, tmp_path / framework.__name__, limit_val_batches=4, limit_predict_batches=2)
        record.append(("validate", trainer.validate(model, [_loader(), _loader()], verbose=False)))
        predictions = trainer.predict(model, [_loader(), _loader()])
        record.append(("predict", [[float(p) for p in loader] for loader in predictions]))

    records = _both(run)
    assert records["accelplug"] == records["lightning"]
    fetched = [r[2] for r in records["accelplug"] if r[:2] == ("val", "fetched")]
    assert fetched == [[(0, 0, 0), (4, 1, 0)], [(8, 2, 0), (12, 3, 0)], [(0, 0, 1), (4, 1, 1)], [(8, 2, 1), (12, 3, 1)]]
