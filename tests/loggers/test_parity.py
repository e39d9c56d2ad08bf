"""Lightning 2.6's tracker loggers and ours, sent the same calls, record the same data in the service.

Each test plays ``sequence.play`` (hyper-parameters, metrics at steps, checkpoints through a top-2
ModelCheckpoint with last.ckpt, finalize) once into Lightning's logger and once into ours, reads both runs
back from the tracker and compares them. Run ids and names, which differ by construction, are masked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .readers import comet_archives, read_comet_archive, read_wandb_run, wandb_run_dir
from .sequence import play
from .test_mlflow import recorded

pytest.importorskip("lightning", reason="the parity tests compare with Lightning (it comes with the test extra)")


def _wandb_record(logger: Any, wandb_dir: Path) -> dict[str, Any]:
    run_id = str(logger.version)
    logger.experiment.finish()
    run = read_wandb_run(wandb_run_dir(wandb_dir, run_id))
    return {
        "config": run.config,
        "history": run.history,
        "axes": run.metric_axes,
        "exit_code": run.exit_code,
        "artifacts": [
            (a.name.replace(run_id, "<run>"), a.type, a.metadata, a.aliases, sorted(a.files)) for a in run.artifacts
        ],
    }


@pytest.mark.parametrize("log_model", [False, True, "all"])
def test_wandb_records_what_lightning_records(wandb_offline: Path, tmp_path: Path, log_model: bool | str) -> None:
    from lightning.pytorch.loggers import WandbLogger as LightningWandbLogger

    from accelplug.loggers.wandb import WandbLogger

    theirs = LightningWandbLogger(project="parity", save_dir=str(wandb_offline / "lightning"), log_model=log_model)
    (wandb_offline / "lightning").mkdir()
    play(theirs, tmp_path / "lightning")
    lightning = _wandb_record(theirs, wandb_offline / "lightning")

    ours = WandbLogger(project="parity", save_dir=wandb_offline / "ours", log_model=log_model)  # type: ignore[arg-type]
    (wandb_offline / "ours").mkdir()
    play(ours, tmp_path / "ours")
    accelplug = _wandb_record(ours, wandb_offline / "ours")

    assert accelplug == lightning
    assert len(lightning["artifacts"]) == {False: 0, True: 3, "all": 6}[log_model]  # the comparison saw uploads


@pytest.mark.parametrize(("log_model", "status"), [(True, "success"), ("all", "failed")])
def test_mlflow_records_what_lightning_records(
    mlflow_server: Any, tmp_path: Path, log_model: bool | str, status: str
) -> None:
    from lightning.pytorch.loggers import MLFlowLogger as LightningMLFlowLogger

    from accelplug.loggers.mlflow import MLFlowLogger

    theirs = LightningMLFlowLogger(
        experiment_name="parity-lightning", run_name="run", tracking_uri=mlflow_server.uri, log_model=log_model
    )
    play(theirs, tmp_path / "lightning", status=status)
    lightning = recorded(mlflow_server, theirs.run_id, tmp_path / "download-lightning")

    ours = MLFlowLogger(
        experiment_name="parity-ours",
        run_name="run",
        tracking_uri=mlflow_server.uri,
        log_model=log_model,  # type: ignore[arg-type]
    )
    play(ours, tmp_path / "ours", status=status)
    accelplug = recorded(mlflow_server, str(ours.run_id), tmp_path / "download-ours")

    assert accelplug == lightning
    assert lightning["artifacts"] and lightning["params"] and lightning["metrics"]


def _folder(path: Path) -> str:
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def _comet_record(logger: Any, folder: Path) -> dict[str, Any]:
    logger.experiment.end()
    (archive,) = comet_archives(folder)
    found = read_comet_archive(archive)
    return {
        "params": found.params,
        "metrics": found.metrics,
        "graph": found.graph,
        "project": found.experiment["project_name"],
    }


def test_comet_records_what_lightning_records(
    comet_offline: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch
    from lightning.pytorch.loggers import CometLogger as LightningCometLogger

    from accelplug.loggers.comet import CometLogger

    # Lightning's online=False disables Comet (see the next test); Comet's own setting makes it offline.
    monkeypatch.setenv("COMET_START_ONLINE", "false")
    theirs = LightningCometLogger(project="parity", offline_directory=_folder(comet_offline / "lightning"))
    play(theirs, tmp_path / "lightning")
    theirs.log_graph(torch.nn.Linear(2, 3))
    lightning = _comet_record(theirs, comet_offline / "lightning")
    monkeypatch.delenv("COMET_START_ONLINE")

    ours = CometLogger(online=False, project="parity", offline_directory=_folder(comet_offline / "ours"))
    play(ours, tmp_path / "ours")
    ours.log_graph(torch.nn.Linear(2, 3))
    accelplug = _comet_record(ours, comet_offline / "ours")

    assert accelplug == lightning
    assert lightning["params"] and lightning["metrics"] and lightning["graph"]


def test_comet_online_false_records_offline_where_lightning_records_nothing(
    comet_offline: Path, tmp_path: Path
) -> None:
    """A deliberate difference: Lightning 2.6 documents online=False as offline but disables Comet."""
    from lightning.pytorch.loggers import CometLogger as LightningCometLogger

    from accelplug.loggers.comet import CometLogger

    lightning_folder = _folder(comet_offline / "lightning")
    theirs = LightningCometLogger(online=False, project="parity", offline_directory=lightning_folder)
    theirs.log_metrics({"loss": 1.0}, step=1)
    theirs.experiment.end()
    assert comet_archives(comet_offline / "lightning") == []

    ours = CometLogger(online=False, project="parity", offline_directory=_folder(comet_offline / "ours"))
    ours.log_metrics({"loss": 1.0}, step=1)
    ours.experiment.end()
    (archive,) = comet_archives(comet_offline / "ours")
    assert ("loss", 1.0, 1, None) in read_comet_archive(archive).metrics
