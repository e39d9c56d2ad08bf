"""``self.log`` as Lightning 2.6 reads it, run side by side with real Lightning.

The reductions Lightning names (``'avg'``, Python's ``max``/``min``/``sum``), what it refuses and with which words,
the per-loader names and result dicts of several evaluation loaders, the logger rows (keywords, an ``int``
epoch, the values logged in ``on_train_start``), ``logged_metrics`` as tensors, ``log``/``log_dict`` lent to
callbacks, and a torchmetrics ``MetricCollection`` given to ``log_dict``.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")
FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}

StepBody = Callable[[Any, torch.Tensor, int, int], None]


def _loader(batches: int = 4) -> DataLoader[Any]:
    x = torch.randn(batches * 2, 3, generator=torch.Generator().manual_seed(0))
    return DataLoader(TensorDataset(x), batch_size=2)


def _module(framework: Any, step: StepBody | None = None, test_step: StepBody | None = None, **hooks: Any) -> Any:
    """A small module whose training/test steps call ``step(self, out, batch_idx, dataloader_idx)``."""

    class Logs(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(3, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            out: torch.Tensor = self.layer(batch[0]).mean()
            if step is not None:
                step(self, out, batch_idx, 0)
            return out

        def test_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> None:
            if test_step is not None:
                test_step(self, self.layer(batch[0]).mean(), batch_idx, dataloader_idx)

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    for name, hook in hooks.items():
        setattr(Logs, name, hook)
    return Logs()


def _trainer(framework: Any, root: Path, **options: Any) -> Any:
    settings: dict[str, Any] = {
        "accelerator": "cpu",
        "devices": 1,
        "max_epochs": 1,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "enable_checkpointing": False,
        "default_root_dir": root,
        **options,
    }
    if settings["logger"] is True:
        loggers = framework.pytorch.loggers if framework is lightning else accelplug
        settings["logger"] = loggers.CSVLogger(root)
    return framework.Trainer(**settings)


def _floats(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: round(float(v), 5) for k, v in metrics.items()}


def _fit_both(tmp_path: Path, step: StepBody, **options: Any) -> dict[str, Any]:
    seen = {}
    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name, **options)
        with quiet_lightning(framework):
            trainer.fit(_module(framework, step), _loader())
        seen[name] = trainer
    return seen


@pytest.mark.parametrize("reduce_fx", ["avg", "AVG", "sum", max, min, sum, torch.max, torch.min, torch.mean])
def test_reduce_fx_takes_the_names_and_functions_lightning_takes(tmp_path: Path, reduce_fx: Any) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("value", float(batch_idx * 3 % 5), on_step=False, on_epoch=True, reduce_fx=reduce_fx)

    seen = _fit_both(tmp_path, step)
    assert _floats(seen["accelplug"].callback_metrics) == _floats(seen["lightning"].callback_metrics)


def _refusal(framework: Any, root: Path, step: StepBody) -> BaseException:
    trainer = _trainer(framework, root, max_steps=1)
    with quiet_lightning(framework), pytest.raises(Exception, match=r"self\.log|LightningModule") as caught:
        trainer.fit(_module(framework, step), _loader())
    return caught.value


@pytest.mark.parametrize(
    ("options", "phrase"),
    [
        ({"reduce_fx": torch.prod}, "Only `self.log(..., reduce_fx={min,max,mean,sum})` are supported"),
        ({"on_step": False, "on_epoch": False}, "`self.log(on_step=False, on_epoch=False)` is not useful"),
    ],
    ids=["custom-reduce_fx", "neither-step-nor-epoch"],
)
def test_options_lightning_refuses_are_refused_with_its_words(
    tmp_path: Path, options: dict[str, Any], phrase: str
) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("value", out, **options)

    ours, theirs = _refusal(accelplug, tmp_path / "a", step), _refusal(lightning, tmp_path / "l", step)
    assert isinstance(ours, MisconfigurationException)
    assert type(theirs).__name__ == "MisconfigurationException"
    assert phrase in str(ours) and phrase in str(theirs)


def test_a_key_with_the_dataloader_suffix_is_refused_as_lightning_refuses_it(tmp_path: Path) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("foo/dataloader_idx_0", out)

    ours, theirs = _refusal(accelplug, tmp_path / "a", step), _refusal(lightning, tmp_path / "l", step)
    phrase = "You called `self.log` with the key `foo/dataloader_idx_0`"
    assert isinstance(ours, MisconfigurationException) and phrase in str(ours) and phrase in str(theirs)


@pytest.mark.parametrize(
    "value", [None, "foo", [1, 2], (1, 2), {"a": 1}, {"a": {"b": 1}}, torch.ones(2)], ids=lambda v: type(v).__name__
)
def test_a_value_that_cannot_be_logged_is_a_value_error_in_lightning_words(tmp_path: Path, value: Any) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("foo", value)

    ours, theirs = _refusal(accelplug, tmp_path / "a", step), _refusal(lightning, tmp_path / "l", step)
    assert isinstance(ours, ValueError) and isinstance(theirs, ValueError)
    said = re.match(r"`self\.log\(foo, .*\)` was called, but [^:.]*", str(theirs), re.DOTALL)
    assert said is not None
    assert said.group(0) in str(ours)


def _test_both(tmp_path: Path, test_step: StepBody, **hooks: Any) -> dict[str, tuple[list[dict[str, float]], Any]]:
    seen = {}
    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name, limit_test_batches=3)
        with quiet_lightning(framework):
            results = trainer.test(_module(framework, test_step=test_step, **hooks), [_loader(), _loader()])
        seen[name] = ([_floats(r) for r in results], trainer)
    return seen


def test_several_test_loaders_give_each_loader_its_own_names_and_results(tmp_path: Path) -> None:
    def test_step(module: Any, out: torch.Tensor, batch_idx: int, dataloader_idx: int) -> None:
        module.log_dict({"common": 789.0})
        module.log("per_loader", out * (dataloader_idx + 1))
        module.log(f"own_{dataloader_idx}", 321.0 * (dataloader_idx + 1), add_dataloader_idx=False)
        module.log("forked", float(batch_idx), on_step=True, on_epoch=True)

    def on_test_epoch_end(module: Any) -> None:
        module.log("from_epoch_end", 3.0)

    seen = _test_both(tmp_path, test_step, on_test_epoch_end=on_test_epoch_end)
    (ours, ours_trainer), (theirs, theirs_trainer) = seen["accelplug"], seen["lightning"]
    assert ours == theirs
    assert set(ours[1]) == {
        "common/dataloader_idx_1",
        "per_loader/dataloader_idx_1",
        "own_1",
        "forked_epoch/dataloader_idx_1",
        "from_epoch_end",
    }
    assert _floats(ours_trainer.callback_metrics) == _floats(theirs_trainer.callback_metrics)
    assert _floats(ours_trainer.logged_metrics) == _floats(theirs_trainer.logged_metrics)


def test_logged_metrics_hold_tensors_as_lightning_does(tmp_path: Path) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("value", out)

    seen = _fit_both(tmp_path, step, logger=True, log_every_n_steps=1)
    for trainer in seen.values():
        assert {type(v) for v in trainer.logged_metrics.values()} == {torch.Tensor}
    assert _floats(seen["accelplug"].logged_metrics) == _floats(seen["lightning"].logged_metrics)


def test_epoch_end_hooks_read_the_epochs_values_in_logged_metrics(tmp_path: Path) -> None:
    """Lightning computes ``logged_metrics`` when read: a callback's ``on_train_epoch_end`` sees this epoch's epoch
    values, before the epoch's logger row is written (accelplug had the last epoch's there)."""

    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("mean", out * (module.current_epoch + 1), on_step=False, on_epoch=True)
        module.log("most", float(batch_idx + 10 * module.current_epoch), on_step=False, on_epoch=True, reduce_fx=max)

    seen: dict[str, list[tuple[str, dict[str, float]]]] = {}
    for name, framework in FRAMEWORKS.items():
        reads: list[tuple[str, dict[str, float]]] = []

        class Reader(framework.Callback):  # type: ignore[misc, name-defined]
            def __init__(self, reads: list[tuple[str, dict[str, float]]]) -> None:
                self.reads = reads

            def on_train_epoch_end(self, trainer: Any, module: Any) -> None:
                self.reads.append(("train", _floats(trainer.logged_metrics)))

        trainer = _trainer(framework, tmp_path / name, logger=True, max_epochs=2, callbacks=[Reader(reads)])
        with quiet_lightning(framework):
            trainer.fit(_module(framework, step), _loader())
        seen[name] = reads
    assert seen["accelplug"] == seen["lightning"]
    assert [read["most"] for _, read in seen["accelplug"]] == [3.0, 13.0]


def _csv_rows(trainer: Any) -> list[dict[str, str]]:
    with open(Path(trainer.logger.log_dir) / "metrics.csv", newline="") as file:
        return [{k: v for k, v in row.items() if k != "value" or not v} for row in csv.DictReader(file)]


def _rows_of_two_epochs(tmp_path: Path, step: StepBody, **hooks: Any) -> dict[str, list[dict[str, str]]]:
    """Each framework's CSV rows of a two-epoch fit logging every step, its module given ``step`` and ``hooks``."""
    seen = {}
    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name, logger=True, max_epochs=2, log_every_n_steps=1)
        with quiet_lightning(framework):
            trainer.fit(_module(framework, step, **hooks), _loader())
        seen[name] = _csv_rows(trainer)
    return seen


def test_logger_rows_have_an_int_epoch_and_the_values_logged_at_train_start(tmp_path: Path) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("value", out, on_step=True, on_epoch=True)

    def on_train_start(module: Any) -> None:
        module.log("at_start", 123.0)

    seen = _rows_of_two_epochs(tmp_path, step, on_train_start=on_train_start)
    assert seen["accelplug"] == seen["lightning"]
    assert {row["epoch"] for row in seen["accelplug"]} == {"0", "1"}
    assert [row["step"] for row in seen["accelplug"] if row["at_start"]] == ["3"]


def test_a_training_epoch_and_its_end_hook_share_one_logger_row(tmp_path: Path) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("value", out, on_step=False, on_epoch=True)

    def on_train_epoch_end(module: Any) -> None:
        module.log("at_end", float(module.current_epoch))

    seen = _rows_of_two_epochs(tmp_path, step, on_train_epoch_end=on_train_epoch_end)
    assert seen["accelplug"] == seen["lightning"]
    assert [(row["at_end"], row["step"]) for row in seen["accelplug"]] == [("0.0", "3"), ("1.0", "7")]


def test_an_epoch_the_user_logs_replaces_the_automatic_one(tmp_path: Path) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("epoch", float(-batch_idx))

    seen = {}
    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name, logger=True, limit_train_batches=2, log_every_n_steps=1)
        with quiet_lightning(framework):
            trainer.fit(_module(framework, step), _loader())
        seen[name] = (_floats(trainer.logged_metrics), _csv_rows(trainer))
    assert seen["accelplug"] == seen["lightning"]
    assert seen["accelplug"][0] == {"epoch": -1.0}


def test_logging_to_a_logger_when_there_is_none_warns(tmp_path: Path) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("value", out, logger=True)

    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name, max_steps=1)
        with (
            quiet_lightning(framework),
            pytest.warns(UserWarning, match=r"log\('value', ..., logger=True\)` but have no logger"),
        ):
            trainer.fit(_module(framework, step), _loader())


def test_callbacks_log_through_the_module_as_in_lightning(tmp_path: Path) -> None:
    seen = {}
    for name, framework in FRAMEWORKS.items():

        class LogsFromCallback(framework.Callback):  # type: ignore[misc, name-defined]
            def on_train_batch_end(self, trainer: Any, module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
                self.log("from_callback", float(batch_idx), on_step=False, on_epoch=True)  # type: ignore[attr-defined]
                self.log_dict({"also": 2.0})  # type: ignore[attr-defined]

        trainer = _trainer(framework, tmp_path / name, callbacks=[LogsFromCallback()])
        with quiet_lightning(framework):
            trainer.fit(_module(framework), _loader())
        seen[name] = _floats(trainer.callback_metrics)
    assert seen["accelplug"] == seen["lightning"] == {"from_callback": 1.5, "also": 2.0}


def test_log_dict_takes_a_metric_collection_with_compute_groups(tmp_path: Path) -> None:
    torchmetrics = pytest.importorskip("torchmetrics")
    seen = {}
    for name, framework in FRAMEWORKS.items():

        def test_step(module: Any, out: torch.Tensor, batch_idx: int, dataloader_idx: int) -> None:
            preds = torch.tensor([0, 1, 1, 0]) if batch_idx % 2 else torch.tensor([1, 1, 0, 0])
            module.metrics(preds, torch.tensor([0, 1, 0, 0]))
            module.log_dict(module.metrics)

        module = _module(framework, test_step=test_step)
        module.metrics = torchmetrics.MetricCollection(
            {
                "precision": torchmetrics.classification.BinaryPrecision(),
                "recall": torchmetrics.classification.BinaryRecall(),
            },
            prefix="test_",
            compute_groups=True,
        )
        trainer = _trainer(framework, tmp_path / name, limit_test_batches=3)
        with quiet_lightning(framework):
            (results,) = trainer.test(module, _loader())
        seen[name] = _floats(results)
    assert seen["accelplug"] == seen["lightning"]
    assert set(seen["accelplug"]) == {"test_precision", "test_recall"}


def test_a_metric_that_is_no_attribute_of_the_module_is_refused_in_lightning_words(tmp_path: Path) -> None:
    torchmetrics = pytest.importorskip("torchmetrics")

    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("acc", torchmetrics.classification.BinaryAccuracy())

    ours, theirs = _refusal(accelplug, tmp_path / "a", step), _refusal(lightning, tmp_path / "l", step)
    phrase = "fix this by setting an attribute for the metric in your `LightningModule`"
    assert isinstance(ours, MisconfigurationException) and phrase in str(ours) and phrase in str(theirs)


def test_fast_dev_run_logs_every_step_as_lightning_does(tmp_path: Path) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("a", 2.0, on_step=True, on_epoch=True)

    seen = _fit_both(tmp_path, step, fast_dev_run=True, logger=True)
    assert set(seen["accelplug"].logged_metrics) == set(seen["lightning"].logged_metrics) == {"a_step", "a_epoch"}


@pytest.mark.parametrize(
    ("hook", "phrase"),
    [
        ("on_fit_start", "You can't `self.log()` inside `on_fit_start`"),
        (None, "`self.trainer` reference is not registered"),
    ],
)
def test_logging_where_lightning_cannot_says_so_in_its_words(tmp_path: Path, hook: str | None, phrase: str) -> None:
    for framework in FRAMEWORKS.values():
        if hook is None:
            with quiet_lightning(framework), pytest.warns(UserWarning, match=re.escape(phrase)):
                _module(framework).log("value", 1.0)
            continue

        def log_there(module: Any) -> None:
            module.log("value", 1.0)

        trainer = _trainer(framework, tmp_path / framework.__name__, max_steps=1)
        with quiet_lightning(framework), pytest.raises(Exception, match=re.escape(phrase)):
            trainer.fit(_module(framework, **{hook: log_there}), _loader())


def test_one_name_logged_twice_in_a_hook_with_other_options_is_refused(tmp_path: Path) -> None:
    def step(module: Any, out: torch.Tensor, batch_idx: int, _: int) -> None:
        module.log("foo", out, prog_bar=False)
        module.log("foo", out, prog_bar=True)

    ours, theirs = _refusal(accelplug, tmp_path / "a", step), _refusal(lightning, tmp_path / "l", step)
    phrase = "You called `self.log(foo, ...)` twice in `training_step` with different arguments"
    assert isinstance(ours, MisconfigurationException) and phrase in str(ours) and phrase in str(theirs)


def test_one_bare_name_logged_by_two_loaders_is_refused_as_lightning_refuses_it(tmp_path: Path) -> None:
    def test_step(module: Any, out: torch.Tensor, batch_idx: int, dataloader_idx: int) -> None:
        module.log("shared", out, add_dataloader_idx=False)

    caught = {}
    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name, limit_test_batches=1)
        with quiet_lightning(framework), pytest.raises(Exception, match="twice in `test_step`") as raised:
            trainer.test(_module(framework, test_step=test_step), [_loader(), _loader()])
        caught[name] = raised.value
    phrase = "You called `self.log(shared, ...)` twice in `test_step` with different arguments"
    assert isinstance(caught["accelplug"], MisconfigurationException)
    assert phrase in str(caught["accelplug"]) and phrase in str(caught["lightning"])


def _iterator_module(framework: Any, **log_options: Any) -> Any:
    class FetchesItself(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(3, 1)

        def training_step(self, dataloader_iter: Any) -> torch.Tensor:
            batch, _, _ = next(dataloader_iter)
            loss: torch.Tensor = self.layer(batch[0]).mean()
            self.log("loss", loss, **log_options)
            return loss

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return FetchesItself()


def test_a_step_that_fetches_its_batches_logs_with_a_batch_size_as_lightning_asks(tmp_path: Path) -> None:
    phrase = "With `def training_step(self, dataloader_iter)`, `self.log(..., batch_size=...)` should be provided"
    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name, max_steps=2)
        with quiet_lightning(framework), pytest.raises(Exception, match=re.escape(phrase)) as raised:
            trainer.fit(_iterator_module(framework), _loader())
        assert type(raised.value).__name__ == "MisconfigurationException"
        trainer = _trainer(framework, tmp_path / name, max_steps=2)
        with quiet_lightning(framework):
            trainer.fit(_iterator_module(framework, batch_size=2), _loader())
        assert set(trainer.callback_metrics) == {"loss"}
