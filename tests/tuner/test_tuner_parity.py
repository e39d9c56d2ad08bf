"""The Tuner against Lightning 2.6: the same module, seed and data under both frameworks, side by side.

The range test must visit exactly Lightning's learning rates and record its smoothed losses (float rounding
aside), suggest the same rate and leave the model as it found it (a fit after ``lr_find`` ends with the weights
of a fit without it). The batch-size search meets a real boundary: the module raises CUDA's out-of-memory
message once a batch holds more than ``limit`` samples (the exception is what both frameworks inspect), and
both must stop at the same size in either mode.
"""

from __future__ import annotations

import gc
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": accelplug}
OOM = "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total capacity)"


def _dataset(n: int = 96) -> TensorDataset:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n, 4, generator=generator)
    return TensorDataset(x, x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]]) + 0.1)


def make_module(framework: Any, *, limit: int | None = None, where: str = "attribute", error: str = OOM) -> Any:
    """A regression whose loader reads ``batch_size`` (from ``where``) and whose step "runs out of memory" above
    ``limit`` samples a batch."""

    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self, lr: float = 0.01, batch_size: int = 8) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(4, 1)
            if where == "hparams":
                self.save_hyperparameters()
            else:
                self.lr, self.batch_size = lr, batch_size

        def _size(self) -> int:
            return int(self.hparams.batch_size if where == "hparams" else self.batch_size)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            x, y = batch
            if limit is not None and len(x) > limit:
                raise RuntimeError(error)
            loss = torch.nn.functional.mse_loss(self.layer(x), y)
            self.log("train_loss", loss)
            return loss

        def train_dataloader(self) -> Any:
            return DataLoader(_dataset(), batch_size=self._size())

        def configure_optimizers(self) -> Any:
            lr = self.hparams.lr if where == "hparams" else self.lr
            return torch.optim.SGD(self.parameters(), lr=lr, momentum=0.9)

    return Regression()


def trainer_for(framework: Any, root: Path, **options: Any) -> Any:
    settings = {
        "max_epochs": 4,
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "accelerator": "cpu",
        "devices": 1,
        "default_root_dir": str(root),
    }
    settings.update(options)
    return framework.Trainer(**settings)


@contextmanager
def _inside(folder: Path) -> Iterator[None]:
    folder.mkdir(parents=True, exist_ok=True)
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


@pytest.fixture(autouse=True)
def _collect_only_what_the_test_makes() -> Iterator[None]:
    """Both frameworks run ``gc.collect()`` before every batch-size trial and after every failed one (freeing what
    a CUDA out-of-memory error left); in a process holding torch, Lightning and the suite's earlier objects each
    collection takes ~0.2 s, most of these tests' time. Freezing the objects that exist before the test leaves the
    collections only what the test makes (the tuner's garbage is still collected); no decision depends on it."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def weights(module: Any) -> list[torch.Tensor]:
    return [p.detach().clone() for p in module.parameters()]


# ---- the learning-rate finder -----------------------------------------------------------------------------
def _lr_find(name: str, tmp_path: Path, **arguments: Any) -> tuple[Any, Any, Any]:
    framework = FRAMEWORKS[name]
    with _inside(tmp_path / name):
        module = make_module(framework)
        trainer = trainer_for(framework, tmp_path / name)
        finder = framework.pytorch.tuner.Tuner(trainer).lr_find(module, **arguments)
        return finder, module, trainer


@pytest.mark.parametrize("mode", ["exponential", "linear"])
def test_lr_find_visits_lightnings_rates_and_suggests_its_rate(tmp_path: Path, mode: str) -> None:
    # linear reaches large rates sooner: a lower ceiling keeps all 30 steps finite
    arguments = {"min_lr": 1e-5, "max_lr": 1.0 if mode == "exponential" else 0.1, "num_training": 30, "mode": mode}
    ours, our_module, _ = _lr_find("accelplug", tmp_path, **arguments)
    theirs, their_module, _ = _lr_find("lightning", tmp_path, **arguments)
    assert ours.results["lr"] == theirs.results["lr"]  # the same schedule, to the last bit
    assert len(ours.results["loss"]) == len(theirs.results["loss"])
    for mine, lightning_loss in zip(ours.results["loss"], theirs.results["loss"], strict=True):
        assert mine == pytest.approx(lightning_loss, rel=1e-5, abs=1e-7) or (
            math.isnan(mine) and math.isnan(lightning_loss)
        )
    assert ours.suggestion() == theirs.suggestion() is not None
    assert len(ours.results["lr"]) == 30
    assert ours.suggestion(skip_begin=2, skip_end=3) == theirs.suggestion(skip_begin=2, skip_end=3)
    assert our_module.lr == their_module.lr == ours.suggestion()  # update_attr set the model's lr
    assert not list(tmp_path.rglob(".lr_find_*.ckpt"))  # the temporary checkpoints were removed


def test_lr_find_stops_on_divergence_where_lightning_does(tmp_path: Path) -> None:
    arguments = {"min_lr": 1e-3, "max_lr": 50.0, "num_training": 40, "early_stop_threshold": 2.0}
    ours, _, our_trainer = _lr_find("accelplug", tmp_path, **arguments)
    theirs, _, _ = _lr_find("lightning", tmp_path, **arguments)
    assert len(ours.results["lr"]) == len(theirs.results["lr"]) < 40
    assert ours.results["lr"] == theirs.results["lr"]
    assert our_trainer.global_step == 0  # the counters came back too


def test_a_fit_after_lr_find_starts_from_the_initial_weights(tmp_path: Path) -> None:
    """In both frameworks: lr_find (without applying its rate) then fit == fit alone, and the two agree."""
    finals = {}
    for name, framework in FRAMEWORKS.items():
        with _inside(tmp_path / name):
            tuned = make_module(framework)
            initial = weights(tuned)
            trainer = trainer_for(framework, tmp_path / name)
            framework.pytorch.tuner.Tuner(trainer).lr_find(tuned, num_training=20, update_attr=False)
            assert all(torch.equal(a, b) for a, b in zip(weights(tuned), initial, strict=True))
            trainer.fit(tuned)
            plain = make_module(framework)
            trainer_for(framework, tmp_path / name / "plain").fit(plain)
            for after_tuning, untouched in zip(weights(tuned), weights(plain), strict=True):
                torch.testing.assert_close(after_tuning, untouched, rtol=0, atol=0)
            finals[name] = weights(tuned)
    for ours, theirs in zip(finals["accelplug"], finals["lightning"], strict=True):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


def test_the_result_plots_with_the_suggestion_marked(tmp_path: Path) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    finder, _, _ = _lr_find("accelplug", tmp_path, num_training=25)
    figure = finder.plot(suggest=True)
    axes = figure.axes[0]
    assert axes.get_xscale() == "log" and axes.get_xlabel() == "Learning rate"
    assert len(axes.lines) == 2  # the curve and the suggestion's red point
    assert axes.lines[1].get_xdata()[0] == finder.suggestion()


def test_fine_tuning_pattern_runs_the_finder_at_milestones_and_the_fit_goes_on(tmp_path: Path) -> None:
    """Lightning's documented subclass: lr_find at epochs 0 and 2 from on_train_epoch_start."""
    steps = {}
    for name, framework in FRAMEWORKS.items():

        class FineTune(framework.pytorch.callbacks.LearningRateFinder):  # type: ignore[misc, name-defined]
            def __init__(self, milestones: tuple[int, ...], **kwargs: Any) -> None:
                super().__init__(**kwargs)
                self.milestones, self.runs = milestones, 0

            def on_fit_start(self, *args: Any, **kwargs: Any) -> None:
                return

            def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
                if trainer.current_epoch in self.milestones or trainer.current_epoch == 0:
                    self.runs += 1
                    self.lr_find(trainer, pl_module)

        with _inside(tmp_path / name):
            callback = FineTune((2,), num_training_steps=10)
            trainer = trainer_for(framework, tmp_path / name, callbacks=[callback])
            trainer.fit(make_module(framework))
            steps[name] = (trainer.global_step, trainer.current_epoch, callback.runs)
    assert steps["accelplug"] == steps["lightning"] == (48, 4, 2)


def _accumulated_range_test(framework: Any, root: Path) -> tuple[int, int, int, int]:
    """The rates tested, the training batches run, the finder's batch index and the step left after ``lr_find``."""
    module = make_module(framework)
    batches: list[int] = []
    step = module.training_step

    def counted(batch: Any, batch_idx: int) -> Any:
        batches.append(batch_idx)
        return step(batch, batch_idx)

    module.training_step = counted
    trainer = trainer_for(framework, root, accumulate_grad_batches=2)
    finder = framework.pytorch.tuner.Tuner(trainer).lr_find(module, num_training=10, early_stop_threshold=None)
    return len(finder.results["lr"]), len(batches), finder._total_batch_idx, trainer.global_step


def test_under_gradient_accumulation_each_tested_rate_takes_the_accumulated_batches(tmp_path: Path) -> None:
    """Ten rates at two batches a step: twenty batches, and the finder's batch count says so, as Lightning's."""
    seen = {}
    for name, framework in FRAMEWORKS.items():
        with _inside(tmp_path / name):
            seen[name] = _accumulated_range_test(framework, tmp_path / name)
    assert seen["accelplug"] == seen["lightning"] == (10, 20, 19, 0)


def _limits_seen_around_a_range_test(framework: Any, root: Path) -> list[tuple[Any, ...]]:
    """``fit_loop.max_steps`` at every training batch, and (with ``restarting``) right after ``lr_find`` ran
    from the second epoch's start."""
    seen: list[tuple[Any, ...]] = []

    class AtSecondEpoch(framework.pytorch.callbacks.LearningRateFinder):  # type: ignore[misc, name-defined]
        def on_fit_start(self, *args: Any, **kwargs: Any) -> None:
            return

        def on_train_epoch_start(self, trainer: Any, pl_module: Any) -> None:
            if trainer.current_epoch == 1:
                self.lr_find(trainer, pl_module)
                seen.append(("after", trainer.fit_loop.max_steps, trainer.fit_loop.epoch_loop.restarting))

    module = make_module(framework)
    module.on_train_batch_start = lambda *_: seen.append(("batch", module.trainer.fit_loop.max_steps))
    finder = AtSecondEpoch(num_training_steps=5, update_attr=False)
    trainer_for(framework, root, max_epochs=3, callbacks=[finder]).fit(module)
    return sorted(set(seen), key=str)


def test_hooks_during_the_range_test_see_its_step_limit_and_the_fits_afterwards(tmp_path: Path) -> None:
    """``trainer.fit_loop.max_steps`` reads the test's limit (steps so far + ``num_training_steps``) while it
    runs, then the fit's own again; the fit goes on as a fresh run, not a restarted one."""
    seen = {}
    for name, framework in FRAMEWORKS.items():
        with _inside(tmp_path / name):
            seen[name] = _limits_seen_around_a_range_test(framework, tmp_path / name)
    assert seen["accelplug"] == seen["lightning"] == [("after", -1, False), ("batch", -1), ("batch", 17)]


# ---- the batch-size finder -----------------------------------------------------------------------------------
def _scale(name: str, tmp_path: Path, limit: int | None, where: str = "attribute", **arguments: Any) -> tuple[Any, Any]:
    framework = FRAMEWORKS[name]
    with _inside(tmp_path / name):
        module = make_module(framework, limit=limit, where=where)
        trainer = trainer_for(framework, tmp_path / name)
        found = framework.pytorch.tuner.Tuner(trainer).scale_batch_size(module, **arguments)
        size = module.hparams.batch_size if where == "hparams" else module.batch_size
        return found, size


@pytest.mark.parametrize(
    ("mode", "limit", "arguments"),
    [
        ("power", 40, {}),
        ("binsearch", 40, {}),  # bisects down and up again; the default margin of 5% is taken off
        ("power", None, {}),  # no boundary: stops at the data set's length
        ("binsearch", None, {"max_val": 24}),
        ("power", 1, {}),  # the first trial already fails: power keeps halving
        ("power", 40, {"max_trials": 3}),
        ("power", 40, {"max_trials": 0}),  # no trial: the initial size is the answer
        ("binsearch", 40, {"max_trials": 0}),  # one trial, then the margin
        ("binsearch", 13, {"init_val": 5, "steps_per_trial": 1, "margin": 0.0}),
    ],
)
def test_batch_size_search_reaches_lightnings_size(
    tmp_path: Path, mode: str, limit: int | None, arguments: Any
) -> None:
    ours = _scale("accelplug", tmp_path, limit, mode=mode, **arguments)
    theirs = _scale("lightning", tmp_path, limit, mode=mode, **arguments)
    assert ours == theirs
    assert not list(tmp_path.rglob(".scale_batch_size_*.ckpt"))


def test_the_trainer_holds_loaders_of_the_size_found_after_the_search(tmp_path: Path) -> None:
    sizes = {}
    for name, framework in FRAMEWORKS.items():
        with _inside(tmp_path / name):
            module = make_module(framework, limit=30)
            trainer = trainer_for(framework, tmp_path / name)
            found = framework.pytorch.tuner.Tuner(trainer).scale_batch_size(module, mode="power")
            sizes[name] = (found, trainer.train_dataloader.batch_size, len(trainer.train_dataloader.dataset))
    assert sizes["accelplug"] == sizes["lightning"] == (16, 16, 96)


def test_batch_size_held_by_the_datamodule_given_to_the_search_is_found_and_set(tmp_path: Path) -> None:
    results = {}
    for name, framework in FRAMEWORKS.items():

        class Data(framework.LightningDataModule):  # type: ignore[misc, name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.batch_size = 4

            def train_dataloader(self) -> Any:
                return DataLoader(_dataset(), batch_size=self.batch_size)

        with _inside(tmp_path / name):
            module = make_module(framework, limit=20)
            del module.batch_size  # only the datamodule holds it
            data = Data()
            trainer = trainer_for(framework, tmp_path / name)
            found = framework.pytorch.tuner.Tuner(trainer).scale_batch_size(module, datamodule=data, max_trials=4)
            results[name] = (found, data.batch_size, trainer.train_dataloader.batch_size)
    assert results["accelplug"] == results["lightning"] == (16, 16, 16)


def test_batch_size_held_in_hparams_is_found_and_set(tmp_path: Path) -> None:
    ours = _scale("accelplug", tmp_path, 20, where="hparams", mode="power")
    assert ours == _scale("lightning", tmp_path, 20, where="hparams", mode="power") == (16, 16)


def test_an_error_other_than_out_of_memory_ends_the_search_in_both(tmp_path: Path) -> None:
    for name, framework in FRAMEWORKS.items():
        with _inside(tmp_path / name):
            module = make_module(framework, limit=10, error="shape mismatch in layer 3")
            trainer = trainer_for(framework, tmp_path / name)
            with pytest.raises(RuntimeError, match="shape mismatch"):
                framework.pytorch.tuner.Tuner(trainer).scale_batch_size(module)


def test_a_fit_after_the_search_starts_from_the_initial_weights_with_the_size_found(tmp_path: Path) -> None:
    with _inside(tmp_path):
        tuned = make_module(accelplug, limit=30)
        trainer = trainer_for(accelplug, tmp_path)
        initial = weights(tuned)
        assert accelplug.pytorch.tuner.Tuner(trainer).scale_batch_size(tuned, mode="power") == 16
        assert all(torch.equal(a, b) for a, b in zip(weights(tuned), initial, strict=True))
        trainer.fit(tuned)
        assert trainer.global_step == 4 * math.ceil(96 / 16)  # the fit's loader was made again at size 16
        plain = make_module(accelplug)
        plain.batch_size = 16
        trainer_for(accelplug, tmp_path / "plain").fit(plain)
        for after_tuning, untouched in zip(weights(tuned), weights(plain), strict=True):
            torch.testing.assert_close(after_tuning, untouched, rtol=0, atol=0)


def test_batch_size_finder_callback_tunes_then_trains(tmp_path: Path) -> None:
    results = {}
    for name, framework in FRAMEWORKS.items():
        with _inside(tmp_path / name):
            finder = framework.pytorch.callbacks.BatchSizeFinder(mode="binsearch")
            trainer = trainer_for(framework, tmp_path / name, callbacks=[finder], max_epochs=1)
            module = make_module(framework, limit=30)
            trainer.fit(module)
            results[name] = (finder.optimal_batch_size, module.batch_size, trainer.global_step)
    assert results["accelplug"] == results["lightning"]
