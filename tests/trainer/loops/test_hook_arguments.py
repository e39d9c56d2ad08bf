"""What the loops hand each hook, and when: Lightning 2.6.6's arguments, keyword forms and moments, side by side.

Each test runs one small call under both frameworks with a module (and callback) that records what it received,
and compares the two records; the Lightning-only rules a record cannot show (its warning, its skipping of an
evaluation limited to no batches) are checked on accelplug against what Lightning does in the same test.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.callbacks.parity import quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS, loader

pytestmark = pytest.mark.filterwarnings(
    # Lightning's advice about worker processes for the tiny in-memory loaders these tests use
    "ignore:The '.*dataloader' does not have many workers:UserWarning",
)


def _module(framework: Any, calls: list[Any]) -> Any:
    """A regression module that records the arguments of the hooks these tests are about."""

    class Recorder(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            return torch.nn.functional.mse_loss(self.layer(x), y)

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            x, y = batch
            self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.01)

        def train_dataloader(self) -> Any:
            return loader(16)

        def val_dataloader(self) -> Any:
            calls.append(("val_dataloader", torch.is_inference_mode_enabled()))
            return loader(8, seed=1)

        def setup(self, *args: Any, **kwargs: Any) -> None:
            calls.append(("setup", args, kwargs))

        def teardown(self, *args: Any, **kwargs: Any) -> None:
            calls.append(("teardown", args, kwargs))

        def zero_grad(self, *args: Any, **kwargs: Any) -> None:
            calls.append(("zero_grad",))
            super().zero_grad(*args, **kwargs)

        def on_fit_start(self) -> None:
            calls.append(("on_fit_start",))

        def on_validation_start(self) -> None:
            calls.append(("on_validation_start", torch.is_grad_enabled(), torch.is_inference_mode_enabled()))

        def configure_gradient_clipping(self, *args: Any, **kwargs: Any) -> None:
            calls.append(("configure_gradient_clipping", len(args), kwargs))

        def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
            calls.append(("on_save_checkpoint", sorted(checkpoint)))

    return Recorder()


def _trainer(framework: Any, tmp_path: Path, **options: Any) -> Any:
    settings: dict[str, Any] = {
        "accelerator": "cpu",
        "devices": 1,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "default_root_dir": tmp_path,
        "max_epochs": 1,
        "limit_train_batches": 2,
        "limit_val_batches": 1,
        "num_sanity_val_steps": 0,
        **options,
    }
    return framework.Trainer(**settings)


def _calls_of(name: str, stage: str, tmp_path: Path, **options: Any) -> dict[str, list[Any]]:
    """``stage`` ("fit" or "validate") under each framework; each framework's record."""
    records: dict[str, list[Any]] = {}
    for framework_name, framework in FRAMEWORKS.items():
        calls: list[Any] = []
        with quiet_lightning(framework):
            trainer = _trainer(framework, tmp_path / framework_name / name, **options)
            getattr(trainer, stage)(_module(framework, calls))
        records[framework_name] = calls
    return records


def _named(calls: list[Any], *names: str) -> list[Any]:
    return [c for c in calls if c[0] in names]


def test_setup_and_teardown_receive_the_stage_by_keyword(tmp_path: Path) -> None:
    records = _calls_of("stage", "fit", tmp_path)
    assert _named(records["accelplug"], "setup", "teardown") == [
        ("setup", (), {"stage": "fit"}),
        ("teardown", (), {"stage": "fit"}),
    ]
    assert _named(records["accelplug"], "setup", "teardown") == _named(records["lightning"], "setup", "teardown")


def test_a_fit_zeroes_the_module_gradients_after_on_fit_start(tmp_path: Path) -> None:
    records = _calls_of("zero", "fit", tmp_path)
    ours, theirs = (_named(records[name], "on_fit_start", "zero_grad") for name in ("accelplug", "lightning"))
    # the first zero_grad is the stage's; the second, before the validation inside the fit, its default hook's
    assert ours == theirs == [("on_fit_start",), ("zero_grad",), ("zero_grad",)]


def test_validate_zeroes_the_gradients_before_asking_for_its_loaders(tmp_path: Path) -> None:
    records = _calls_of("zero_validate", "validate", tmp_path)
    assert [c[0] for c in _named(records["accelplug"], "zero_grad", "val_dataloader")] == [
        "zero_grad",
        "val_dataloader",
    ]
    assert _named(records["accelplug"], "zero_grad", "val_dataloader") == _named(
        records["lightning"], "zero_grad", "val_dataloader"
    )


def test_validate_with_no_batches_asks_for_no_loader_and_returns_nothing(tmp_path: Path) -> None:
    results = {}
    for framework_name, framework in FRAMEWORKS.items():
        calls: list[Any] = []
        with quiet_lightning(framework):
            trainer = _trainer(framework, tmp_path / framework_name, limit_val_batches=0)
            results[framework_name] = (trainer.validate(_module(framework, calls)), _named(calls, "val_dataloader"))
    assert results["accelplug"] == results["lightning"] == ([], [])


def test_evaluation_hooks_and_loaders_run_under_inference_mode(tmp_path: Path) -> None:
    records = _calls_of("inference", "validate", tmp_path)
    seen = _named(records["accelplug"], "val_dataloader", "on_validation_start")
    assert seen == [("val_dataloader", True), ("on_validation_start", False, True)]
    assert seen == _named(records["lightning"], "val_dataloader", "on_validation_start")


def test_validate_without_inference_mode_runs_its_hooks_under_no_grad(tmp_path: Path) -> None:
    records = _calls_of("no_grad", "validate", tmp_path, inference_mode=False)
    seen = _named(records["accelplug"], "on_validation_start")
    assert seen == [("on_validation_start", False, False)] == _named(records["lightning"], "on_validation_start")


def test_the_validation_inside_a_fit_runs_its_hooks_under_no_grad_not_inference_mode(tmp_path: Path) -> None:
    # what its hooks make (a pruning mask, a cached buffer) must stay usable by the training steps that follow
    records = _calls_of("fit_no_grad", "fit", tmp_path, inference_mode=True)
    seen = _named(records["accelplug"], "val_dataloader", "on_validation_start")
    assert seen == [("val_dataloader", False), ("on_validation_start", False, False)]
    assert seen == _named(records["lightning"], "val_dataloader", "on_validation_start")


def test_configure_gradient_clipping_gets_keywords_that_are_none_unless_given(tmp_path: Path) -> None:
    records = _calls_of("clip", "fit", tmp_path)
    clipping = _named(records["accelplug"], "configure_gradient_clipping")
    assert clipping[0] == (
        "configure_gradient_clipping",
        1,
        {"gradient_clip_val": None, "gradient_clip_algorithm": None},
    )
    assert clipping == _named(records["lightning"], "configure_gradient_clipping")


def test_configure_gradient_clipping_gets_the_options_as_given(tmp_path: Path) -> None:
    records = _calls_of("clip_given", "fit", tmp_path, gradient_clip_val=0.5, gradient_clip_algorithm="Value")
    clipping = _named(records["accelplug"], "configure_gradient_clipping")
    assert clipping[0] == (
        "configure_gradient_clipping",
        1,
        {"gradient_clip_val": 0.5, "gradient_clip_algorithm": "value"},
    )
    assert clipping == _named(records["lightning"], "configure_gradient_clipping")


def test_on_save_checkpoint_sees_lightnings_keys_only(tmp_path: Path) -> None:
    records = _calls_of("save", "fit", tmp_path)
    (saved,) = _named(records["accelplug"], "on_save_checkpoint")
    assert saved == ("on_save_checkpoint", sorted(LIGHTNING_KEYS))
    assert [saved] == _named(records["lightning"], "on_save_checkpoint")


#: What Lightning 2.6.6 puts in a checkpoint of a module without hyper-parameters, when its hooks see it.
LIGHTNING_KEYS = (
    "epoch",
    "global_step",
    "pytorch-lightning_version",
    "state_dict",
    "loops",
    "callbacks",
    "optimizer_states",
    "lr_schedulers",
)


def test_the_checkpoint_file_still_holds_what_an_exact_resume_needs(tmp_path: Path) -> None:
    import accelplug

    trainer = _trainer(accelplug, tmp_path)
    trainer.fit(_module(accelplug, []))
    checkpoint = torch.load(trainer.checkpoint_callback.best_model_path, weights_only=True)
    assert set(LIGHTNING_KEYS) | {"accelplug_checkpoint", "loop", "rng"} <= set(checkpoint)


# validate restores the callbacks too (Lightning's rule); this test's second Trainer has its own folder
@pytest.mark.filterwarnings("ignore:The dirpath has changed from:UserWarning")
def test_on_load_checkpoint_changes_reach_what_is_restored(tmp_path: Path) -> None:
    import accelplug

    trainer = _trainer(accelplug, tmp_path)
    trainer.fit(_module(accelplug, []))

    class Zeroing(type(_module(accelplug, []))):  # type: ignore[misc]
        def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
            assert "loop" not in checkpoint  # accelplug's own keys stay out of the hook's view
            checkpoint["state_dict"] = {k: torch.zeros_like(v) for k, v in checkpoint["state_dict"].items()}

    module = Zeroing()
    _trainer(accelplug, tmp_path / "again", max_epochs=1).validate(
        module, ckpt_path=trainer.checkpoint_callback.best_model_path
    )
    assert all(bool((p == 0).all()) for p in module.parameters())


def test_an_unset_max_epochs_warns_as_lightning_and_reads_1000(tmp_path: Path) -> None:
    import accelplug

    trainer = _trainer(accelplug, tmp_path, max_epochs=None, max_steps=-1, limit_train_batches=1)
    module = _module(accelplug, [])
    module.training_step = lambda batch, batch_idx: trainer.__setattr__("should_stop", True)  # type: ignore[method-assign]
    with pytest.warns(accelplug.errors.PossibleUserWarning, match="`max_epochs` was not set. Setting it to 1000"):
        trainer.fit(module)
    assert trainer.max_epochs == 1000


@pytest.mark.parametrize("limits", [{"max_steps": 2}, {"max_time": {"seconds": 60}}, {"fast_dev_run": True}])
def test_an_unset_max_epochs_with_another_limit_does_not_warn(tmp_path: Path, limits: dict[str, Any]) -> None:
    import accelplug

    class StopAfterOneBatch(accelplug.Callback):
        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            trainer.should_stop = True  # a time limit alone would train for its whole minute

    trainer = _trainer(accelplug, tmp_path, callbacks=[StopAfterOneBatch()], **{"max_epochs": None, **limits})
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="`max_epochs` was not set")
        trainer.fit(_module(accelplug, []))


def test_the_progress_bar_counts_no_validation_batches_in_an_epoch_that_does_not_validate(tmp_path: Path) -> None:
    seen: dict[str, list[Any]] = {}
    for framework_name, framework in FRAMEWORKS.items():
        totals: list[Any] = []

        class Totals(framework.Callback):  # type: ignore[misc, name-defined]
            def __init__(self, totals: list[Any]) -> None:
                self.totals = totals

            def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
                self.totals.append(trainer.progress_bar_callback.total_val_batches)

        with quiet_lightning(framework):
            trainer = _trainer(
                framework,
                tmp_path / framework_name,
                max_epochs=3,
                check_val_every_n_epoch=2,
                enable_progress_bar=True,
                callbacks=[Totals(totals)],
            )
            trainer.fit(_module(framework, []))
        seen[framework_name] = totals
    assert seen["accelplug"] == [0, 1, 0] == seen["lightning"]
