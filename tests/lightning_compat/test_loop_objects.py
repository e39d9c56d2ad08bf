"""``trainer.fit_loop``, ``validate_loop``, ``test_loop``, ``predict_loop`` and the Trainer names around them,
the same script under Lightning 2.6.6 and accelplug: the counters projects read, ``fit_loop.max_epochs += 2``
to train on, and ``val_check_batch``/``enable_validation``/``distributed_sampler_kwargs``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    with quiet_lightning():  # Lightning's own warnings only: accelplug's stay visible
        yield


def _loader(n: int = 16, seed: int = 0) -> DataLoader[Any]:
    x = torch.randn(n, 2, generator=torch.Generator().manual_seed(seed))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def _module(framework: Any, manual: bool = False) -> Any:
    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(2, 1)
            self.automatic_optimization = not manual

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            loss = torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])
            if manual:
                optimizer = self.optimizers()
                optimizer.zero_grad()
                self.manual_backward(loss)
                optimizer.step()
                return None
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.log("v", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

        def test_step(self, batch: Any, batch_idx: int) -> None:
            self.log("t", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

        def predict_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> Any:
            return self.layer(batch[0])

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Regression()


def _trainer(framework: Any, **options: Any) -> Any:
    quiet = {"logger": False, "enable_checkpointing": False, "enable_progress_bar": False}
    return framework.Trainer(accelerator="cpu", enable_model_summary=False, **quiet, **options)


def _tracker(t: Any) -> tuple[int, int, int, int]:
    return (t.ready, t.started, t.processed, t.completed)


def _counters(trainer: Any) -> dict[str, Any]:
    fit = trainer.fit_loop
    epoch = fit.epoch_loop
    return {
        "epoch_total": _tracker(fit.epoch_progress.total),
        "epoch_current": _tracker(fit.epoch_progress.current),
        "batch_total": _tracker(epoch.batch_progress.total),
        "batch_current": _tracker(epoch.batch_progress.current),
        "stepped": epoch._batches_that_stepped,
        "total_batch_idx": fit.total_batch_idx,
        "batch_idx": epoch.batch_idx,
        "global_step": epoch.global_step,
        "limits": (fit.max_epochs, fit.max_steps, fit.min_epochs, fit.min_steps),
        "val_batches": _tracker(epoch.val_loop.batch_progress.total),
        "val_check_batch": trainer.val_check_batch,
        "enable_validation": trainer.enable_validation,
        "done": fit.done,
        "current_epoch": trainer.current_epoch,
    }


def _both(script: Any) -> dict[str, Any]:
    return {name: script(framework) for name, framework in FRAMEWORKS.items()}


def test_extending_max_epochs_through_fit_loop_trains_on_as_lightning() -> None:
    def script(framework: Any) -> Any:
        module, trainer = _module(framework), _trainer(framework, max_epochs=2, limit_val_batches=2)
        before = (trainer.fit_loop.max_epochs, trainer.fit_loop.max_steps, trainer.val_check_batch)
        trainer.fit(module, _loader(), _loader(8, 1))
        first = _counters(trainer)
        trainer.fit_loop.max_epochs += 2
        trainer.fit(module, _loader(), _loader(8, 1))
        return before, first, _counters(trainer), module.layer.weight.detach().clone()

    got = _both(script)
    ours, theirs = got["accelplug"], got["lightning"]
    assert ours[:3] == theirs[:3]
    assert ours[2]["epoch_total"][3] == ours[2]["current_epoch"] == 4
    torch.testing.assert_close(ours[3], theirs[3])


@pytest.mark.parametrize(
    "options",
    [
        {"max_steps": 5},
        {"max_epochs": 1, "accumulate_grad_batches": 3},
        {"max_epochs": 2, "val_check_interval": 0.5},
        {"max_epochs": 1, "limit_val_batches": 0},
    ],
    ids=["max_steps", "accumulation", "val_check_interval", "no_validation"],
)
def test_progress_counters_after_fit_are_lightnings(options: dict[str, Any]) -> None:
    def script(framework: Any) -> Any:
        trainer = _trainer(framework, num_sanity_val_steps=0, **options)
        trainer.fit(_module(framework), _loader(20), _loader(8, 1))
        return _counters(trainer)

    got = _both(script)
    assert got["accelplug"] == got["lightning"]


def test_the_batch_counters_while_a_batch_runs_are_lightnings() -> None:
    """From ``on_train_batch_start`` on, the running batch counts as taken (``batch_idx``, ``total_batch_idx``,
    ``ready``) but not as done, as Lightning's loop counts it."""

    def script(framework: Any) -> Any:
        seen: list[Any] = []

        def record(trainer: Any, where: str) -> None:
            fit, epoch = trainer.fit_loop, trainer.fit_loop.epoch_loop
            current, total = epoch.batch_progress.current, epoch.batch_progress.total
            seen.append((where, fit.batch_idx, fit.total_batch_idx, current.ready, current.completed, total.ready))

        class Recording(type(_module(framework))):  # type: ignore[misc]
            def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
                record(self.trainer, "start")

            def training_step(self, batch: Any, batch_idx: int) -> Any:
                record(self.trainer, "step")
                return super().training_step(batch, batch_idx)

        trainer = _trainer(framework, max_epochs=2, limit_train_batches=2, limit_val_batches=0)
        trainer.fit(Recording(), _loader())
        return seen

    got = _both(script)
    assert got["accelplug"] == got["lightning"]
    assert got["accelplug"][-1] == ("step", 1, 3, 2, 1, 4)


@pytest.mark.parametrize(("at", "max_epochs"), [(2, 2), (0, 1)])
def test_a_batch_skipped_by_on_train_batch_start_counts_as_taken_and_last(at: int, max_epochs: int) -> None:
    """``on_train_batch_start`` returning -1 ends the epoch: the batch it skipped counts as taken (``batch_idx``,
    ``ready``), never as done, and it is the epoch's last (``trainer.is_last_batch``)."""

    def script(framework: Any) -> Any:
        class Skipping(type(_module(framework))):  # type: ignore[misc]
            def on_train_batch_start(self, batch: Any, batch_idx: int) -> int | None:
                return -1 if batch_idx == at else None

        trainer = _trainer(framework, max_epochs=max_epochs, limit_val_batches=0)
        trainer.fit(Skipping(), _loader(24))
        counters = _counters(trainer)
        return counters["batch_idx"], counters["total_batch_idx"], counters["global_step"], trainer.is_last_batch

    got = _both(script)
    assert got["accelplug"] == got["lightning"]
    assert got["accelplug"][0] == at


def test_manual_optimization_counts_every_batch_as_stepped_as_lightning() -> None:
    def script(framework: Any) -> Any:
        trainer = _trainer(framework, max_epochs=2)
        trainer.fit(_module(framework, manual=True), _loader(12))
        return _counters(trainer)

    got = _both(script)
    assert got["accelplug"] == got["lightning"]


def test_validate_test_and_predict_loops_after_their_calls_are_lightnings() -> None:
    def script(framework: Any) -> Any:
        module, trainer = _module(framework), _trainer(framework, max_epochs=1)
        trainer.fit(module, _loader())
        trainer.validate(module, _loader(12, 1))
        trainer.test(module, _loader(8, 2))
        predictions = trainer.predict(module, [_loader(8, 3), _loader(4, 4)])
        kept = trainer.predict_loop.predictions
        after = {
            "validate": _tracker(trainer.validate_loop.batch_progress.total),
            "test": _tracker(trainer.test_loop.batch_progress.current),
            "predict": _tracker(trainer.predict_loop.batch_progress.total),
            "shape": [len(p) for p in kept],
            "same": all(
                torch.equal(a, b) for x, y in zip(kept, predictions, strict=True) for a, b in zip(x, y, strict=True)
            ),
            "separate": trainer.fit_loop.epoch_loop.val_loop is not trainer.validate_loop,
        }
        trainer.predict(module, _loader(8, 3), return_predictions=False)
        after["none_kept"] = trainer.predict_loop.predictions
        return after

    got = _both(script)
    assert got["accelplug"] == got["lightning"]


def test_the_trainer_names_before_any_fit_are_lightnings() -> None:
    def script(framework: Any) -> Any:
        trainer = _trainer(framework, max_epochs=3)
        loop = trainer.fit_loop
        return (
            trainer.val_check_batch,
            trainer.enable_validation,
            trainer.distributed_sampler_kwargs,
            trainer.progress_bar_callback,  # enable_progress_bar=False: none in either
            (loop.max_epochs, loop.max_steps, loop.min_epochs, loop.min_steps),
            _tracker(loop.epoch_progress.total),
            loop.epoch_loop._batches_that_stepped,
        )

    got = _both(script)
    assert got["accelplug"] == got["lightning"]


def test_a_progress_bar_callback_given_is_the_one_named() -> None:
    bar = accelplug.pytorch.callbacks.TQDMProgressBar()
    trainer = accelplug.Trainer(accelerator="cpu", callbacks=[bar], logger=False)
    assert trainer.progress_bar_callback is bar


def test_a_bad_limit_written_into_fit_loop_is_refused_with_the_options_words() -> None:
    trainer = _trainer(accelplug, max_epochs=1)
    with pytest.raises(MisconfigurationException, match=r"max_epochs=-5 is invalid"):
        trainer.fit_loop.max_epochs = -5
    with pytest.raises(MisconfigurationException, match=r"max_steps='ten' is invalid"):
        trainer.fit_loop.epoch_loop.max_steps = "ten"  # type: ignore[assignment]
    assert trainer.fit_loop.max_epochs == 1


def test_max_steps_written_into_fit_loop_takes_effect_on_the_next_fit() -> None:
    def script(framework: Any) -> Any:
        trainer = _trainer(framework, max_steps=3)
        module = _module(framework)
        trainer.fit(module, _loader())
        trainer.fit_loop.epoch_loop.max_steps = 6  # Lightning's fit_loop.max_steps is read-only
        trainer.fit(module, _loader())
        return trainer.global_step, trainer.current_epoch, module.layer.weight.detach().clone()

    got = _both(script)
    assert got["accelplug"][:2] == got["lightning"][:2] == (6, 2)  # 4 batches an epoch
    torch.testing.assert_close(got["accelplug"][2], got["lightning"][2])
