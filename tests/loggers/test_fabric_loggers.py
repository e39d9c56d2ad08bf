"""Lightning Fabric's ``CSVLogger`` and ``TensorBoardLogger`` (``accelplug.fabric.loggers``) next to Lightning's.

They are the file loggers of :mod:`accelplug.loggers` with Fabric's meanings: ``root_dir`` is the folder given
(the Trainer's loggers call it ``save_dir`` and answer ``root_dir`` with ``save_dir/name``), the CSV logger
refuses hyper-parameters, and neither writes ``hparams.yaml``. Each test gives Lightning Fabric's logger and
ours the same calls in two folders and compares what lands on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug.fabric.loggers as fabric_loggers
import accelplug.loggers as trainer_loggers

lightning_fabric_loggers = pytest.importorskip("lightning.fabric.loggers", reason="the parity tests compare with it")

CALLS: list[tuple[int | None, dict[str, Any]]] = [
    (0, {"loss": 1.5}),
    (1, {"loss": torch.tensor(1.25)}),
    (None, {"loss": 1.0, "acc": 0.5}),  # a new column, and no step: the row's index among the pending rows
]


def _relative(path: str, root: Path) -> str:
    return str(Path(path).relative_to(root))


def _play(logger: Any) -> None:
    for step, metrics in CALLS:
        logger.log_metrics(metrics, step=step)
    logger.finalize("success")


@pytest.mark.parametrize(
    "options", [{}, {"name": "exp", "version": 3, "prefix": "train"}, {"name": None, "flush_logs_every_n_steps": 1}]
)
def test_fabric_csv_logger_writes_the_file_lightning_fabrics_writes(tmp_path: Path, options: dict[str, Any]) -> None:
    theirs = lightning_fabric_loggers.CSVLogger(root_dir=tmp_path / "lightning", **options)
    ours = fabric_loggers.CSVLogger(root_dir=tmp_path / "ours", **options)
    for logger in (theirs, ours):
        _play(logger)
    assert (ours.name, ours.version) == (theirs.name, theirs.version)
    for attribute in ("root_dir", "log_dir"):
        assert _relative(getattr(ours, attribute), tmp_path / "ours") == _relative(
            getattr(theirs, attribute), tmp_path / "lightning"
        ), attribute
    assert Path(ours.log_dir, "metrics.csv").read_text() == Path(theirs.log_dir, "metrics.csv").read_text()
    assert sorted(p.name for p in Path(ours.log_dir).iterdir()) == ["metrics.csv"]


def test_fabric_csv_logger_refuses_hyperparameters_as_lightning_fabrics_does(tmp_path: Path) -> None:
    for cls in (lightning_fabric_loggers.CSVLogger, fabric_loggers.CSVLogger):
        with pytest.raises(NotImplementedError, match="does not yet support logging hyperparameters"):
            cls(tmp_path).log_hyperparams({"lr": 0.1})


def test_root_dir_is_the_folder_given_under_fabric_and_the_name_folder_under_the_trainer(tmp_path: Path) -> None:
    for fabric_cls, trainer_cls in (
        (fabric_loggers.CSVLogger, trainer_loggers.CSVLogger),
        (fabric_loggers.TensorBoardLogger, trainer_loggers.TensorBoardLogger),
    ):
        fabric_logger, trainer_logger = fabric_cls(tmp_path, name="exp"), trainer_cls(tmp_path, name="exp")
        assert fabric_logger.root_dir == str(tmp_path)
        assert trainer_logger.root_dir == str(tmp_path / "exp")
        assert fabric_logger.log_dir == trainer_logger.log_dir == str(tmp_path / "exp" / "version_0")
        assert isinstance(trainer_logger, fabric_cls)  # as in Lightning: the Trainer's logger extends Fabric's


def test_a_reused_run_folder_is_announced_with_lightnings_warning_and_its_old_metrics_removed(tmp_path: Path) -> None:
    run = tmp_path / "exp" / "version_0"
    run.mkdir(parents=True)
    (run / "metrics.csv").write_text("step,loss\n0,1.0\n")
    logger = fabric_loggers.CSVLogger(tmp_path, name="exp", version=0)
    with pytest.warns(UserWarning, match=r"Experiment logs directory .* exists and is not empty\. Previous log files"):
        logger.experiment  # noqa: B018 - the writer is made on first use
    assert not (run / "metrics.csv").exists()


def test_fabric_tensorboard_logger_keeps_no_hparams_file(tmp_path: Path) -> None:
    loggers = {
        "lightning": lightning_fabric_loggers.TensorBoardLogger(tmp_path / "lightning", sub_dir="sub"),
        "ours": fabric_loggers.TensorBoardLogger(tmp_path / "ours", sub_dir="sub"),
    }
    for logger in loggers.values():
        logger.log_hyperparams({"lr": 0.1, "layers": [8, 4]})
        logger.log_metrics({"loss": 1.0}, step=0)
        logger.finalize("success")
    ours, theirs = loggers["ours"], loggers["lightning"]
    assert _relative(ours.log_dir, tmp_path / "ours") == _relative(theirs.log_dir, tmp_path / "lightning")
    assert _relative(ours.log_dir, tmp_path / "ours") == "lightning_logs/version_0/sub"
    for logger in loggers.values():
        assert not Path(logger.log_dir, "hparams.yaml").exists()
        assert not hasattr(logger, "hparams")


@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated:DeprecationWarning")  # inside add_graph
def test_fabric_tensorboard_logger_draws_the_users_module_behind_what_setup_returned(tmp_path: Path) -> None:
    from accelplug.fabric import Fabric

    module = torch.nn.Linear(3, 2)
    fabric_module = Fabric(accelerator="cpu", devices=1).setup(module)
    traced: list[torch.nn.Module] = []
    logger = fabric_loggers.TensorBoardLogger(tmp_path)
    logger.experiment.add_graph = lambda model, inputs: traced.append(model)
    logger.log_graph(fabric_module, torch.zeros(1, 3))  # Fabric's logger draws without log_graph=True
    assert traced == [module]
    with pytest.warns(UserWarning, match="`model.example_input_array` attribute is not set"):
        logger.log_graph(fabric_module)


def test_fabric_csv_writer_is_reachable_by_lightning_fabrics_private_name(tmp_path: Path) -> None:
    from lightning.fabric.loggers.csv_logs import _ExperimentWriter as theirs

    from accelplug.fabric.loggers.csv_logs import _ExperimentWriter as ours

    assert ours.NAME_METRICS_FILE == theirs.NAME_METRICS_FILE == "metrics.csv"
    logger = fabric_loggers.CSVLogger(tmp_path)
    logger.log_metrics({"loss": 1.0}, step=0)
    logger.save()
    assert isinstance(logger.experiment, ours)
    assert Path(logger.log_dir, ours.NAME_METRICS_FILE).is_file()
