"""Which checkpoint ``fit``/``validate``/``test``/``predict`` restore (``ckpt_path`` None, ``"best"``, ``"last"``, a
path, ``trainer.ckpt_path``), with Lightning 2.6's warnings and errors: each scenario runs under both frameworks
and ``trainer.ckpt_path`` (the file restored) is compared, relative to each framework's folder.

The one resolver is ``accelplug.trainer.checkpointing.auto_resume``; ``"auto"`` (accelplug's own keyword) is
tested at the end.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.errors import CheckpointNotFoundError, MisconfigurationException
from tests.callbacks.parity import FRAMEWORKS, quiet_lightning

# These fits use loaders of a few batches: the advice that an epoch is shorter than the logging interval
# (Lightning's, given by both frameworks) is not what the tests are about.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)

lightning = pytest.importorskip("lightning", reason="the parity tests compare with Lightning, not installed here")

BEST_OF_FIT = r"`\.(validate|test|predict)\(ckpt_path=None\)` was called without a model\. The best model of the prev"
NO_LAST = r'ckpt_path="last"\) is set, but there is no last checkpoint available\. No checkpoint will be loaded'


def _data(n: int = 16) -> DataLoader[Any]:
    x = torch.randn(n, 4, generator=torch.Generator().manual_seed(0))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def _module(framework: Any) -> Any:
    class Regression(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.log("val_loss", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

        test_step = validation_step

        def predict_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self.layer(batch[0])  # type: ignore[no-any-return]

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.01)

        def train_dataloader(self) -> DataLoader[Any]:
            return _data()

        def val_dataloader(self) -> DataLoader[Any]:
            return _data(8)

        test_dataloader = val_dataloader
        predict_dataloader = val_dataloader

    return Regression()


def _callbacks(framework: Any) -> Any:
    return lightning.pytorch.callbacks if framework is lightning else accelplug.callbacks


def _trainer(framework: Any, root: Path, **options: Any) -> Any:
    settings = {
        "accelerator": "cpu",
        "devices": 1,
        "max_epochs": 2,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "default_root_dir": root,
    }
    return framework.Trainer(**{**settings, **options})


def _relative(path: Any, root: Path) -> str | None:
    return None if path is None else str(Path(path).relative_to(root))


def on_both(tmp_path: Path, scenario: Callable[[Any, Path], Any]) -> list[Any]:
    """``scenario(framework, root)`` under Lightning, then accelplug, each in its own folder."""
    results = []
    for name, framework in FRAMEWORKS.items():
        root = tmp_path / name
        root.mkdir()
        with quiet_lightning(framework):
            results.append(scenario(framework, root))
    return results


# ---- None ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["validate", "test", "predict"])
def test_a_call_without_a_model_after_fit_restores_the_best_checkpoint_and_says_so(fn: str, tmp_path: Path) -> None:
    def scenario(framework: Any, root: Path) -> tuple[str | None, str | None]:
        callback = _callbacks(framework).ModelCheckpoint(monitor="val_loss", save_top_k=2)
        trainer = _trainer(framework, root, callbacks=[callback])
        module = _module(framework)
        trainer.fit(module)
        getattr(trainer, fn)(module)  # with the model: nothing restored, nothing said
        given = trainer.ckpt_path
        with pytest.warns(UserWarning, match=BEST_OF_FIT):
            getattr(trainer, fn)()
        assert trainer.ckpt_path == callback.best_model_path
        return given, _relative(trainer.ckpt_path, root)

    lightnings, ours = on_both(tmp_path, scenario)
    assert ours == lightnings and ours[0] is None


# ---- "best" ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"callbacks_top_k": 0}, "`ModelCheckpoint` is not configured to save the best model"),
        ({"enable_checkpointing": False}, "`ModelCheckpoint` is not configured"),
    ],
)
def test_best_without_a_best_checkpoint_is_a_value_error(options: dict[str, Any], words: str, tmp_path: Path) -> None:
    def scenario(framework: Any, root: Path) -> str:
        settings = dict(options)
        top_k = settings.pop("callbacks_top_k", None)
        if top_k is not None:
            settings["callbacks"] = [_callbacks(framework).ModelCheckpoint(monitor="val_loss", save_top_k=top_k)]
        trainer = _trainer(framework, root, **settings)
        module = _module(framework)
        trainer.fit(module)
        with pytest.raises(ValueError, match=words) as raised:
            trainer.test(module, ckpt_path="best")
        return raised.typename

    assert on_both(tmp_path, scenario) == ["ValueError", "MisconfigurationException"]


def test_best_with_several_checkpoint_callbacks_takes_the_first_and_says_so(tmp_path: Path) -> None:
    def scenario(framework: Any, root: Path) -> str | None:
        make = _callbacks(framework).ModelCheckpoint
        callbacks = [
            make(monitor="val_loss", dirpath=root / "a"),
            make(monitor="val_loss", dirpath=root / "b", mode="max"),
        ]
        trainer = _trainer(framework, root, callbacks=callbacks)
        module = _module(framework)
        trainer.fit(module)
        with pytest.warns(UserWarning, match="It will use the best checkpoint path from first checkpoint callback"):
            trainer.validate(module, ckpt_path="best")
        return _relative(trainer.ckpt_path, root)

    lightnings, ours = on_both(tmp_path, scenario)
    assert ours == lightnings and ours is not None and ours.startswith("a/")


# ---- "last" ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("save_last", [True, False])
def test_last_is_the_last_checkpoint_file_or_nothing_with_lightnings_warning(save_last: bool, tmp_path: Path) -> None:
    def scenario(framework: Any, root: Path) -> str | None:
        callback = _callbacks(framework).ModelCheckpoint(save_last=save_last)
        trainer = _trainer(framework, root, callbacks=[callback])
        module = _module(framework)
        trainer.fit(module)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            trainer.validate(module, ckpt_path="last")
        said = any("No checkpoint will be loaded" in str(w.message) for w in caught)
        assert said is not save_last
        return _relative(trainer.ckpt_path, root)

    lightnings, ours = on_both(tmp_path, scenario)
    assert ours == lightnings == ("checkpoints/last.ckpt" if save_last else None)


def test_a_fit_with_last_and_nothing_saved_yet_trains_from_the_start(tmp_path: Path) -> None:
    def scenario(framework: Any, root: Path) -> tuple[int, str | None]:
        callback = _callbacks(framework).ModelCheckpoint(save_last=True)
        trainer = _trainer(framework, root, callbacks=[callback], max_epochs=1)
        with pytest.warns(UserWarning, match=NO_LAST):
            trainer.fit(_module(framework), ckpt_path="last")
        return trainer.global_step, trainer.ckpt_path

    assert on_both(tmp_path, scenario) == [(4, None)] * 2


def test_a_new_trainer_resumes_from_the_last_file_in_the_folder_its_checkpoint_callback_will_write(
    tmp_path: Path,
) -> None:
    def scenario(framework: Any, root: Path) -> tuple[int, str | None]:
        first = _trainer(framework, root, callbacks=[_callbacks(framework).ModelCheckpoint(save_last=True)])
        first.fit(_module(framework))
        again = _trainer(framework, root, callbacks=[_callbacks(framework).ModelCheckpoint(save_last=True)])
        again.fit_loop.max_epochs = 3
        with pytest.warns(UserWarning, match=r"Checkpoint directory .*checkpoints exists and is not empty"):
            again.fit(_module(framework), ckpt_path="last")
        return again.global_step, _relative(again.ckpt_path, root)

    assert on_both(tmp_path, scenario) == [(12, "checkpoints/last.ckpt")] * 2


def test_a_fit_with_an_on_exception_checkpoint_resumes_from_the_crash_as_lightnings(tmp_path: Path) -> None:
    def scenario(framework: Any, root: Path) -> tuple[int, str | None]:
        class Crashing(type(_module(framework))):  # type: ignore[misc]
            def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
                if self.trainer.global_step == 3:
                    raise RuntimeError("crash at step 3")
                return super().training_step(batch, batch_idx)  # type: ignore[no-any-return]

        def trainer() -> Any:
            crash = _callbacks(framework).OnExceptionCheckpoint(root / "crash")
            return _trainer(framework, root, callbacks=[crash])

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="crash at step 3"):
                trainer().fit(Crashing())
        said = " | ".join(str(w.message) for w in caught)
        assert "The last model of the previous `fit` call will be used" in said  # looked for one to resume
        assert "No checkpoint will be loaded" in said  # and found none
        again = trainer()
        with warnings.catch_warnings():
            # pytest.warns gives back the warnings it did not match without their module: Lightning's on resuming
            # mid-epoch (LIGHTNING_ONLY_WARNINGS) is filtered here by its message
            warnings.filterwarnings("ignore", message=r"You're resuming from a checkpoint that ended before the epoch")
            with pytest.warns(UserWarning, match="The last model of the previous `fit` call will be used"):
                again.fit(_module(framework))
        return again.global_step, _relative(again.ckpt_path, root)

    assert on_both(tmp_path, scenario) == [(8, "crash/on_exception.ckpt")] * 2


# ---- a path, trainer.ckpt_path ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["fit", "validate"])
def test_a_missing_file_is_lightnings_file_not_found_error(fn: str, tmp_path: Path) -> None:
    def scenario(framework: Any, root: Path) -> str:
        trainer = _trainer(framework, root)
        with pytest.raises(FileNotFoundError, match="Checkpoint file not found") as raised:
            getattr(trainer, fn)(_module(framework), ckpt_path=root / "missing.ckpt")
        return raised.typename

    assert on_both(tmp_path, scenario) == ["FileNotFoundError", "CheckpointNotFoundError"]
    assert issubclass(CheckpointNotFoundError, MisconfigurationException)


@pytest.mark.parametrize("value", ["registry", "registry:my-model:v1"])
def test_a_model_registry_name_without_a_downloader_is_a_missing_file(value: str, tmp_path: Path) -> None:
    def scenario(framework: Any, root: Path) -> str:
        trainer = _trainer(framework, root)
        with pytest.raises(FileNotFoundError, match=f"Checkpoint file not found: {value}") as raised:
            trainer.fit(_module(framework), ckpt_path=value)
        return raised.typename

    assert on_both(tmp_path, scenario) == ["FileNotFoundError", "CheckpointNotFoundError"]


def test_a_path_set_on_the_trainer_is_restored_until_a_call_gives_its_own(tmp_path: Path) -> None:
    def scenario(framework: Any, root: Path) -> list[str | None]:
        first = _trainer(framework, root, max_epochs=1)
        first.fit(_module(framework))
        first.save_checkpoint(root / "one.ckpt")
        first.save_checkpoint(root / "two.ckpt")
        trainer = _trainer(framework, root, max_epochs=1)
        trainer.ckpt_path = str(root / "one.ckpt")
        module = _module(framework)
        seen = []
        for _ in range(2):
            trainer.validate(module)
            seen.append(_relative(trainer.ckpt_path, root))
        with pytest.warns(UserWarning, match=r"`trainer.ckpt_path = .*` was called but then you passed"):
            trainer.validate(module, ckpt_path=root / "two.ckpt")
        seen.append(_relative(trainer.ckpt_path, root))
        trainer.validate(module)
        seen.append(trainer.ckpt_path)
        return seen

    assert on_both(tmp_path, scenario) == [["one.ckpt", "one.ckpt", "two.ckpt", None]] * 2


# ---- "auto": accelplug's own -----------------------------------------------------------------------------------
def test_auto_resumes_from_the_newest_checkpoint_of_any_earlier_version_or_starts_fresh(tmp_path: Path) -> None:
    options = {"logger": True, "enable_checkpointing": True, "max_epochs": 1}
    fresh = _trainer(accelplug, tmp_path, **options)
    fresh.fit(_module(accelplug), ckpt_path="auto")
    assert fresh.ckpt_path is None and fresh.global_step == 4
    resumed = _trainer(accelplug, tmp_path, **{**options, "max_epochs": 2})
    # a new Trainer logs to version_1; version_0 has the file, and the ModelCheckpoint's folder changed
    with pytest.warns(UserWarning, match=r"The dirpath has changed from .*version_0.* to .*version_1"):
        resumed.fit(_module(accelplug), ckpt_path="auto")
    assert _relative(resumed.ckpt_path, tmp_path) == "lightning_logs/version_0/checkpoints/epoch=0-step=4.ckpt"
    assert resumed.global_step == 8


@pytest.mark.parametrize("max_epochs", [1, 2, 3])
def test_resuming_a_run_already_past_max_epochs_is_refused_as_in_lightning(tmp_path: Path, max_epochs: int) -> None:
    import lightning
    from lightning.pytorch.demos.boring_classes import BoringModel as LightningBoringModel

    from accelplug.demos.boring_classes import BoringModel
    from tests.callbacks.parity import quiet_lightning

    def outcome(framework: Any, model_cls: Any, folder: Path) -> str:
        options: dict[str, Any] = dict(limit_train_batches=2, limit_val_batches=0, logger=False, log_every_n_steps=1)
        options.update(enable_progress_bar=False, enable_model_summary=False, default_root_dir=folder)
        first = framework.Trainer(max_epochs=3, **options)
        first.fit(model_cls())
        first.save_checkpoint(folder / "done.ckpt")
        again = framework.Trainer(max_epochs=max_epochs, enable_checkpointing=False, **options)
        try:
            with warnings.catch_warnings():
                # the second Trainer leaves the first's ModelCheckpoint out on purpose (both frameworks advise)
                warnings.filterwarnings("ignore", message=".*Please add the following callbacks: ")
                again.fit(model_cls(), ckpt_path=folder / "done.ckpt")
        except Exception as exc:
            return f"{type(exc).__name__}: {str(exc).split(':')[0].split(' but')[0]}"
        return f"epoch {again.current_epoch}"

    with quiet_lightning():
        theirs = outcome(lightning, LightningBoringModel, tmp_path / "lightning")
    ours = outcome(accelplug, BoringModel, tmp_path / "accelplug")
    assert ours == theirs


def test_resuming_without_a_callback_whose_state_the_checkpoint_holds_warns_naming_it(tmp_path: Path) -> None:
    by_epoch = accelplug.callbacks.ModelCheckpoint(monitor="epoch", dirpath=tmp_path / "a")
    by_step = accelplug.callbacks.ModelCheckpoint(monitor="step", dirpath=tmp_path / "b")
    options: dict[str, Any] = {"limit_val_batches": 0}
    _trainer(accelplug, tmp_path, max_epochs=1, callbacks=[by_epoch, by_step], **options).fit(_module(accelplug))
    path = by_epoch.best_model_path
    with warnings.catch_warnings():
        # the resumed runs write into the folders of the first one, on purpose
        warnings.filterwarnings("ignore", message="Checkpoint directory .* exists and is not empty")
        resumed = _trainer(accelplug, tmp_path, max_epochs=2, callbacks=[by_step], **options)
        with pytest.warns(
            UserWarning, match=re.escape(f"Please add the following callbacks: [{by_epoch.state_key!r}]")
        ):
            resumed.fit(_module(accelplug), ckpt_path=path)
        warnings.filterwarnings("error", message=".*Please add the following callbacks")
        complete = _trainer(accelplug, tmp_path, max_epochs=2, callbacks=[by_step, by_epoch], **options)
        complete.fit(_module(accelplug), ckpt_path=path)  # every state has its callback: no warning
