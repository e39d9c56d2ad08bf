"""``trainer.log_dir`` with no logger is ``default_root_dir`` as in Lightning 2.6; LightningCLI's config follows it.

Found by Lightning's ImageNet example (``tests/lightning_compat/projects/pl_imagenet_cli.py``: LightningCLI with
``trainer_defaults={"logger": False}``): Lightning wrote ``config.yaml`` into the root folder, next to
``checkpoints/``, and accelplug into ``lightning_logs/version_0/``, a folder no other file of that run uses.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


@pytest.mark.parametrize("logger", [False, []])
def test_log_dir_without_a_logger_is_the_root_folder(tmp_path: Path, logger: Any) -> None:
    found = {}
    for name, framework in {"lightning": lightning, "accelplug": accelplug}.items():
        trainer = framework.Trainer(default_root_dir=str(tmp_path / name), logger=logger, accelerator="cpu", devices=1)
        found[name] = (Path(trainer.log_dir).relative_to(tmp_path / name), len(trainer.loggers))
    assert found["accelplug"] == found["lightning"] == (Path("."), 0)


def test_log_dir_with_the_default_logger_is_its_version_folder(tmp_path: Path) -> None:
    found = {}
    for name, framework in {"lightning": lightning, "accelplug": accelplug}.items():
        trainer = framework.Trainer(default_root_dir=str(tmp_path / name), logger=None, accelerator="cpu", devices=1)
        found[name] = Path(trainer.log_dir).relative_to(tmp_path / name)
    assert found["accelplug"] == found["lightning"] == Path("lightning_logs/version_0")


def test_log_dir_with_a_logger_is_the_loggers_folder(tmp_path: Path) -> None:
    found = {}
    for name, framework in {"lightning": lightning, "accelplug": accelplug}.items():
        root = tmp_path / name
        trainer = framework.Trainer(
            default_root_dir=str(root), logger=framework.pytorch.loggers.CSVLogger(str(root)), accelerator="cpu"
        )
        found[name] = Path(trainer.log_dir).relative_to(root)
    assert found["accelplug"] == found["lightning"] == Path("lightning_logs/version_0")


@pytest.mark.parametrize("logger", [False, None])
def test_log_dir_and_default_root_dir_are_strings_as_in_lightning(tmp_path: Path, logger: Any) -> None:
    """Scripts join them with ``+`` and write them to JSON: a ``Path`` breaks both."""
    found = {}
    for name, framework in {"lightning": lightning, "accelplug": accelplug}.items():
        trainer = framework.Trainer(default_root_dir=tmp_path / name, logger=logger, accelerator="cpu", devices=1)
        found[name] = (type(trainer.log_dir), type(trainer.default_root_dir), trainer.default_root_dir)
    assert found["accelplug"][:2] == found["lightning"][:2] == (str, str)
    assert found["accelplug"][2] == str(tmp_path / "accelplug")


def _cli_files(framework: Any, folder: Path, monkeypatch: pytest.MonkeyPatch) -> set[str]:
    class Tiny(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self, width: int = 2) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(width, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self.layer(batch).sum()

        def train_dataloader(self) -> Any:
            return torch.utils.data.DataLoader(torch.randn(4, 2), batch_size=2)

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "argv", ["prog", "fit", "--trainer.max_epochs=1"])
    with quiet_lightning(framework):
        importlib.import_module(f"{framework.__name__}.pytorch.cli").LightningCLI(
            Tiny,
            trainer_defaults={"logger": False, "enable_progress_bar": False, "enable_model_summary": False},
            save_config_kwargs={"overwrite": True},
        )
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_the_cli_config_of_a_run_without_logger_is_in_the_root_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    theirs = _cli_files(lightning, tmp_path / "lightning", monkeypatch)
    ours = _cli_files(accelplug, tmp_path / "accelplug", monkeypatch)
    assert ours == theirs
    assert "config.yaml" in theirs  # the comparison is about a file Lightning wrote


def test_logger_and_loggers_can_be_set_as_in_lightning_and_log_dir_follows(tmp_path: Path) -> None:
    seen = {}
    for name, framework in {"lightning": lightning, "accelplug": accelplug}.items():
        root = tmp_path / name
        csv = framework.pytorch.loggers.CSVLogger(str(root / "first"))
        other = framework.pytorch.loggers.CSVLogger(str(root / "second"))
        trainer = framework.Trainer(default_root_dir=str(root), logger=csv, accelerator="cpu")
        steps = [Path(trainer.log_dir).relative_to(root)]
        trainer.logger = other
        steps.append((trainer.loggers == [other], Path(trainer.log_dir).relative_to(root)))
        trainer.logger = None
        steps.append((trainer.logger, trainer.loggers))
        trainer.loggers = [csv, other]
        steps.append((trainer.logger is csv, len(trainer.loggers)))
        trainer.loggers = None
        steps.append((trainer.logger, trainer.loggers, Path(trainer.log_dir) == root))
        seen[name] = steps
    assert seen["accelplug"] == seen["lightning"]
    assert seen["accelplug"][1] == (True, Path("second/lightning_logs/version_0"))
