"""When a checkpoint goes back in, side by side with Lightning 2.6.6: the module, datamodule and callbacks while the
call is set up (after ``configure_model``, before ``configure_optimizers()``), the optimizers, schedulers and loop after
``on_fit_start``; a strategy that asks for it (``restore_checkpoint_after_setup``) gets all of it after its setup.

Each test fits a module once (each framework in its own folder), resumes or validates from that checkpoint with a
module, datamodule and callback that record what they are called with, and compares the two records.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.callbacks.parity import quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS, loader

pytestmark = pytest.mark.filterwarnings(
    # Lightning's advice about worker processes for the tiny in-memory loaders these tests use
    "ignore:The '.*dataloader' does not have many workers:UserWarning",
    # both frameworks' ModelCheckpoint, resuming in another folder than the first fit's (each test's own choice)
    "ignore:The dirpath has changed from:UserWarning",
)


def _module(framework: Any, calls: list[Any]) -> Any:
    """A regression module with a momentum optimizer (its state shows when it is restored) that records its hooks."""

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
            calls.append(("configure_optimizers", _weight_sum(self)))
            return torch.optim.SGD(self.parameters(), lr=0.01, momentum=0.9)

        def configure_model(self) -> None:
            calls.append(("configure_model",))

        def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
            calls.append(("on_load_checkpoint", sorted(checkpoint)))

        def on_fit_start(self) -> None:
            calls.append(("on_fit_start", _optimizer_state_size(self)))

        def on_train_start(self) -> None:
            calls.append(("on_train_start", _optimizer_state_size(self)))

        def on_validation_start(self) -> None:
            calls.append(("on_validation_start", _weight_sum(self)))

    return Recorder()


def _weight_sum(module: Any) -> float:
    return round(float(module.layer.weight.detach().sum()), 6)


def _optimizer_state_size(module: Any) -> int:
    optimizers = module.trainer.optimizers
    return len(optimizers[0].state) if optimizers else -1


def _datamodule(framework: Any, calls: list[Any]) -> Any:
    class Data(framework.LightningDataModule):  # type: ignore[misc, name-defined]
        def train_dataloader(self) -> Any:
            return loader(16)

        def state_dict(self) -> dict[str, Any]:
            return {"shard": 3}

        def load_state_dict(self, state_dict: dict[str, Any]) -> None:
            calls.append(("datamodule.load_state_dict", state_dict))

    return Data()


def _callback(framework: Any, calls: list[Any]) -> Any:
    class Remembering(framework.Callback):  # type: ignore[misc, name-defined]
        def state_dict(self) -> dict[str, Any]:
            return {"seen": True}

        def load_state_dict(self, state_dict: dict[str, Any]) -> None:
            calls.append(("Callback.load_state_dict", state_dict))

        def on_load_checkpoint(self, trainer: Any, pl_module: Any, checkpoint: dict[str, Any]) -> None:
            calls.append(("Callback.on_load_checkpoint", sorted(checkpoint)))

        def on_fit_start(self, trainer: Any, pl_module: Any) -> None:
            calls.append(("Callback.on_fit_start",))

    return Remembering()


def _trainer(framework: Any, root: Path, callbacks: list[Any], **options: Any) -> Any:
    settings: dict[str, Any] = {
        "accelerator": "cpu",
        "devices": 1,
        "logger": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "default_root_dir": root,
        "max_epochs": 1,
        "limit_train_batches": 2,
        "limit_val_batches": 0,
        "num_sanity_val_steps": 0,
        **options,
    }
    return framework.Trainer(callbacks=callbacks, **settings)


def _saved(framework: Any, root: Path) -> str:
    """A checkpoint of a 1-epoch fit with the recording callback and datamodule (nothing recorded)."""
    trainer = _trainer(framework, root / "first", [_callback(framework, [])])
    trainer.fit(_module(framework, []), datamodule=_datamodule(framework, []))
    return str(trainer.checkpoint_callback.best_model_path)


def _resumed(tmp_path: Path, strategy: Callable[[Any], Any] | None = None) -> dict[str, list[Any]]:
    """Each framework's record of a fit resumed from its own checkpoint, for one more epoch."""
    records: dict[str, list[Any]] = {}
    for name, framework in FRAMEWORKS.items():
        calls: list[Any] = []
        extra = {} if strategy is None else {"strategy": strategy(framework)}
        with quiet_lightning(framework):
            path = _saved(framework, tmp_path / name)
            trainer = _trainer(
                framework, tmp_path / name / "again", [_callback(framework, calls)], max_epochs=2, **extra
            )
            trainer.fit(_module(framework, calls), datamodule=_datamodule(framework, calls), ckpt_path=path)
        records[name] = calls
    return records


def test_a_resumed_fit_restores_module_datamodule_and_callbacks_before_configure_optimizers(tmp_path: Path) -> None:
    records = _resumed(tmp_path)
    names = [call[0] for call in records["accelplug"]]
    assert names[:6] == [
        "configure_model",
        "on_load_checkpoint",
        "datamodule.load_state_dict",
        "Callback.on_load_checkpoint",
        "Callback.load_state_dict",
        "configure_optimizers",
    ]
    assert records["accelplug"] == records["lightning"]


def test_configure_optimizers_of_a_resumed_fit_sees_the_restored_weights(tmp_path: Path) -> None:
    records = _resumed(tmp_path)
    fresh = _module(FRAMEWORKS["accelplug"], [])
    (configured,) = [call for call in records["accelplug"] if call[0] == "configure_optimizers"]
    assert configured[1] != _weight_sum(fresh)  # the trained weights, not the initial ones
    assert [configured] == [call for call in records["lightning"] if call[0] == "configure_optimizers"]


def test_the_optimizer_state_comes_back_after_on_fit_start_and_before_on_train_start(tmp_path: Path) -> None:
    records = _resumed(tmp_path)
    starts = [call for call in records["accelplug"] if call[0] in ("on_fit_start", "on_train_start")]
    assert starts == [("on_fit_start", 0), ("on_train_start", 2)]  # SGD's momentum buffer: weight and bias
    assert starts == [call for call in records["lightning"] if call[0] in ("on_fit_start", "on_train_start")]


def test_the_load_hooks_see_lightnings_keys_only(tmp_path: Path) -> None:
    records = _resumed(tmp_path)
    (seen,) = [call[1] for call in records["accelplug"] if call[0] == "on_load_checkpoint"]
    assert "sha256" not in seen and "loop" not in seen  # accelplug's own keys stay in the file, out of the hooks
    assert seen == next(call[1] for call in records["lightning"] if call[0] == "on_load_checkpoint")


def _restoring_after_setup(framework: Any) -> Any:
    class AfterSetup(framework.pytorch.strategies.SingleDeviceStrategy):  # type: ignore[misc, name-defined]
        @property
        def restore_checkpoint_after_setup(self) -> bool:
            return True

    return AfterSetup(device=torch.device("cpu"))


def test_a_strategy_restoring_after_its_setup_gets_the_whole_checkpoint_after_on_fit_start(tmp_path: Path) -> None:
    records = _resumed(tmp_path, strategy=_restoring_after_setup)
    names = [call[0] for call in records["accelplug"]]
    assert names.index("configure_optimizers") < names.index("on_fit_start") < names.index("on_load_checkpoint")
    assert records["accelplug"] == records["lightning"]


@pytest.mark.parametrize("name", ["SingleDeviceStrategy", "DDPStrategy", "FSDPStrategy"])
def test_which_strategies_restore_after_their_setup_is_lightnings(name: str) -> None:
    answers = {
        framework_name: getattr(framework.pytorch.strategies, name)().restore_checkpoint_after_setup
        for framework_name, framework in FRAMEWORKS.items()
    }
    assert answers["accelplug"] == answers["lightning"]


def test_validate_with_a_checkpoint_restores_the_module_and_callbacks_before_the_evaluation_starts(
    tmp_path: Path,
) -> None:
    records: dict[str, list[Any]] = {}
    for name, framework in FRAMEWORKS.items():
        calls: list[Any] = []
        with quiet_lightning(framework):
            path = _saved(framework, tmp_path / name)
            trainer = _trainer(framework, tmp_path / name / "again", [_callback(framework, calls)], limit_val_batches=1)
            trainer.validate(_module(framework, calls), loader(8, seed=1), ckpt_path=path)
        records[name] = calls
    assert [call[0] for call in records["accelplug"]] == [
        "configure_model",
        "on_load_checkpoint",
        "Callback.on_load_checkpoint",
        "Callback.load_state_dict",
        "on_validation_start",
    ]
    assert records["accelplug"] == records["lightning"]


def _watching(framework: Any, failures: list[BaseException]) -> Any:
    class Watching(framework.Callback):  # type: ignore[misc, name-defined]
        def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
            failures.append(exception)

    return Watching()


def test_a_missing_checkpoint_ends_the_fit_through_on_exception_as_lightning(tmp_path: Path) -> None:
    seen: dict[str, list[BaseException]] = {}
    for name, framework in FRAMEWORKS.items():
        seen[name] = []
        with quiet_lightning(framework), pytest.raises(FileNotFoundError):
            _trainer(framework, tmp_path / name, [_watching(framework, seen[name])]).fit(
                _module(framework, []), loader(16), ckpt_path=tmp_path / "nowhere.ckpt"
            )
    for failures in seen.values():
        assert [type(failure) for failure in failures] == [type(failures[0])]
        assert isinstance(failures[0], FileNotFoundError)
