"""LightningCLI's warnings and refusals carry Lightning's key phrases and exception types, so a script (or a test)
that looks for them finds them under accelplug too; each is compared with Lightning's own CLI, in process."""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

pytest.importorskip("lightning", reason="the CLI is compared against Lightning's, not installed here")
pytest.importorskip("jsonargparse", reason="LightningCLI needs jsonargparse (the test extra installs it)")

from tests.callbacks.parity import quiet_lightning

FRAMEWORKS = {"lightning": "lightning.pytorch", "accelplug": "accelplug.pytorch"}
QUIET = {"logger": False, "enable_progress_bar": False, "enable_model_summary": False, "enable_checkpointing": False}


def _package(name: str) -> tuple[Any, Any, Any]:
    """(the ``cli`` module, ``BoringModel``, the package) of one framework."""
    root = FRAMEWORKS[name]
    cli = importlib.import_module(f"{root}.cli")
    return cli, importlib.import_module(f"{root}.demos.boring_classes").BoringModel, importlib.import_module(root)


def _warnings_of(name: str, argv: list[str], **options: Any) -> list[str]:
    cli, model, _ = _package(name)
    framework = importlib.import_module("lightning" if name == "lightning" else "accelplug")
    with quiet_lightning(framework), warnings.catch_warnings(record=True) as caught, mock.patch("sys.argv", argv):
        warnings.simplefilter("always")
        cli.LightningCLI(model, run=False, trainer_defaults=QUIET, **options)
    return [str(w.message) for w in caught]


@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_an_optimizer_on_the_command_line_warns_that_configure_optimizers_will_be_overridden(name: str) -> None:
    phrase = "configure_optimizers` will be overridden by `LightningCLI.configure_optimizers`"
    assert not any(phrase in m for m in _warnings_of(name, ["any.py"]))
    assert any(phrase in m for m in _warnings_of(name, ["any.py", "--optimizer=Adam"]))


@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_args_beside_a_command_line_warn_that_only_args_is_read(name: str) -> None:
    messages = _warnings_of(name, ["any.py", "--trainer.max_epochs=3"], args=["--trainer.max_epochs=2"])
    assert any("LightningCLI's args parameter" in m for m in messages)


# Lightning's LightningCLI seeds with seed_everything=True and says it picked 0 (accelplug's says nothing); pytest.warns
# re-emits that unmatched warning outside quiet_lightning's module filter, so it is named here
@pytest.mark.filterwarnings("ignore:No seed found, seed set to 0:UserWarning")
@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_a_trainer_class_without_callbacks_is_warned_about_by_its_name(name: str) -> None:
    cli, model, package = _package(name)

    class NoCallbacksTrainer(package.Trainer):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__(**QUIET)

    phrase = "NoCallbacksTrainer` class does not expose the `callbacks"
    with quiet_lightning(), mock.patch("sys.argv", ["any.py"]), pytest.warns(UserWarning, match=phrase):
        cli.LightningCLI(model, run=False, trainer_class=NoCallbacksTrainer)


@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_save_to_log_dir_false_without_a_save_config_of_ones_own_is_a_value_error(name: str) -> None:
    from jsonargparse import Namespace

    cli, _, _ = _package(name)
    with pytest.raises(ValueError, match="`save_to_log_dir=False` only makes sense when subclassing"):
        cli.SaveConfigCallback(cli.LightningArgumentParser(), Namespace(), save_to_log_dir=False)  # type: ignore[no-untyped-call]


# The second run logs into the first one's version folder on purpose (both frameworks warn so, as they should).
@pytest.mark.filterwarnings("ignore:Experiment logs directory .* exists and is not empty:UserWarning")
# the CLI seeds by default (seed_everything=True) and no seed is set: Lightning warns so too
@pytest.mark.filterwarnings("ignore:No seed found, seed set to 0:UserWarning")
@pytest.mark.parametrize("name", list(FRAMEWORKS))
def test_a_config_file_of_an_earlier_run_is_not_overwritten_and_the_refusal_is_a_runtime_error(
    name: str, tmp_path: Path
) -> None:
    cli, model, _ = _package(name)
    logger = ["--trainer.logger=CSVLogger", f"--trainer.logger.save_dir={tmp_path}", "--trainer.logger.version=fixed"]
    argv = ["any.py", "fit", "--trainer.max_steps=1", "--trainer.limit_val_batches=0", *logger]
    options = {key: value for key, value in QUIET.items() if key != "logger"}
    with quiet_lightning(), mock.patch("sys.argv", argv):
        cli.LightningCLI(model, trainer_defaults=options)
        with pytest.raises(RuntimeError, match="Aborting to avoid overwriting"):
            cli.LightningCLI(model, trainer_defaults=options)
