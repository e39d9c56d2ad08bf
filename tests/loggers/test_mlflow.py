"""MLFlowLogger against a real ``mlflow server`` process; results are read back with ``MlflowClient``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from accelplug.errors import MisconfigurationException
from accelplug.loggers.logger import DummyExperiment

from .conftest import MlflowServer
from .sequence import METRICS, play


def recorded(server: MlflowServer, run_id: str, download: Path) -> dict[str, Any]:
    """The run as the server has it: status, params, metric histories, artifact folders and their files."""
    from mlflow import MlflowClient

    client = MlflowClient(server.uri)
    run = client.get_run(run_id)
    histories = {
        key: [(m.step, m.value) for m in client.get_metric_history(run_id, key)] for key in sorted(run.data.metrics)
    }
    artifacts: dict[str, dict[str, Any]] = {}
    for folder in client.list_artifacts(run_id):
        assert folder.is_dir, f"checkpoints are logged in folders, found file {folder.path}"
        names = sorted(Path(item.path).name for item in client.list_artifacts(run_id, folder.path))
        local = Path(client.download_artifacts(run_id, folder.path, str(download)))
        artifacts[folder.path] = {
            "files": names,
            "metadata": yaml.safe_load((local / "metadata.yaml").read_text()),
            "aliases": (local / "aliases.txt").read_text(),
        }
    return {
        "status": run.info.status,
        "params": dict(run.data.params),
        "metrics": histories,
        "artifacts": artifacts,
        "run_name": run.data.tags.get("mlflow.runName"),
    }


def test_params_metrics_and_status_reach_the_server(mlflow_server: MlflowServer, tmp_path: Path) -> None:
    from accelplug.loggers.mlflow import MLFlowLogger

    logger = MLFlowLogger(experiment_name="params", run_name="first", tracking_uri=mlflow_server.uri)
    play(logger, tmp_path / "ckpt")
    found = recorded(mlflow_server, str(logger.run_id), tmp_path / "download")

    assert found["status"] == "FINISHED"
    assert found["run_name"] == "first"
    assert found["params"] == {
        "lr": "0.01",
        "batch_size": "32",
        "optimizer/name": "adam",
        "optimizer/betas": "[0.9, 0.99]",
        "layers/0/width": "8",
        "layers/1/width": "4",
        "activation": "<class 'torch.nn.modules.activation.ReLU'>",
        "dropout": "None",
        "long_text": "x" * 250,  # cut to 250 characters, as Lightning does
    }
    assert found["metrics"]["train_loss"] == [(step, m["train_loss"]) for step, m in METRICS]
    assert found["metrics"]["val_loss"] == [(10, 0.8), (20, 0.6), (30, 0.7)]
    assert found["artifacts"] == {}  # log_model=False
    assert logger.name == logger.experiment_id and logger.version == logger.run_id


def test_log_model_all_uploads_each_checkpoint_with_metadata_and_aliases(
    mlflow_server: MlflowServer, tmp_path: Path
) -> None:
    from accelplug.loggers.mlflow import MLFlowLogger

    logger = MLFlowLogger(experiment_name="all", tracking_uri=mlflow_server.uri, log_model="all")
    play(logger, tmp_path / "ckpt")
    found = recorded(mlflow_server, str(logger.run_id), tmp_path / "download")

    artifacts = found["artifacts"]
    assert sorted(artifacts) == ["epoch=0-step=10", "epoch=1-step=20", "epoch=2-step=30", "last"]
    assert artifacts["epoch=0-step=10"]["files"] == ["aliases.txt", "epoch=0-step=10.ckpt", "metadata.yaml"]
    assert artifacts["epoch=1-step=20"]["aliases"] == "['latest', 'best']"
    assert artifacts["epoch=2-step=30"]["aliases"] == "['latest']"
    # last.ckpt was uploaded after each save; the folder holds the newest upload.
    assert artifacts["last"]["metadata"]["score"] == pytest.approx(0.7)
    assert artifacts["epoch=1-step=20"]["metadata"] == {
        "score": pytest.approx(0.6),
        "original_filename": "epoch=1-step=20.ckpt",
        "Checkpoint": {
            "monitor": "val_loss",
            "mode": "min",
            "save_last": True,
            "save_top_k": 2,
            "save_weights_only": False,
            "_every_n_train_steps": 0,
        },
    }
    stored = mlflow_server.artifacts / str(logger.experiment_id) / str(logger.run_id) / "artifacts"
    assert (stored / "epoch=0-step=10" / "epoch=0-step=10.ckpt").stat().st_size > 0  # kept though deleted locally


def test_log_model_true_uploads_the_survivors_at_the_end(mlflow_server: MlflowServer, tmp_path: Path) -> None:
    from accelplug.loggers.mlflow import MLFlowLogger

    logger = MLFlowLogger(experiment_name="end", tracking_uri=mlflow_server.uri, log_model=True)
    callback = play(logger, tmp_path / "ckpt", status="failed")
    found = recorded(mlflow_server, str(logger.run_id), tmp_path / "download")

    # Lightning's MLflow logger uploads what log_model=True waited for whatever the status.
    assert sorted(found["artifacts"]) == ["epoch=1-step=20", "epoch=2-step=30", "last"]
    assert found["status"] == "FAILED"
    assert Path(callback.best_model_path).name == "epoch=1-step=20.ckpt"


def test_metric_names_mlflow_refuses_are_cleaned_with_a_warning(mlflow_server: MlflowServer, tmp_path: Path) -> None:
    from accelplug.loggers.mlflow import MLFlowLogger

    logger = MLFlowLogger(experiment_name="names", tracking_uri=mlflow_server.uri, prefix="fold1")
    with pytest.warns(RuntimeWarning, match=r"'fold1-acc@top5'.*it is logged as 'fold1-acctop5'"):
        logger.log_metrics({"acc@top5": 0.5, "note": "text"}, step=None)  # type: ignore[dict-item]
    logger.finalize("finished")
    found = recorded(mlflow_server, str(logger.run_id), tmp_path / "download")
    assert found["metrics"] == {"fold1-acctop5": [(0, 0.5)]}  # step None is 0; text is dropped
    assert found["status"] == "FINISHED"


def test_an_unknown_final_status_is_refused_with_the_accepted_ones(mlflow_server: MlflowServer) -> None:
    from accelplug.loggers.mlflow import MLFlowLogger

    logger = MLFlowLogger(experiment_name="status", tracking_uri=mlflow_server.uri)
    logger.log_metrics({"loss": 1.0}, step=1)
    with pytest.raises(MisconfigurationException, match=r"status='faild'.*Did you mean 'failed'"):
        logger.finalize("faild")
    logger.finalize("failed")


def test_an_existing_run_is_continued(mlflow_server: MlflowServer, tmp_path: Path) -> None:
    from accelplug.loggers.mlflow import MLFlowLogger

    first = MLFlowLogger(experiment_name="resume", tracking_uri=mlflow_server.uri)
    first.log_metrics({"loss": 1.0}, step=1)
    again = MLFlowLogger(tracking_uri=mlflow_server.uri, run_id=first.run_id)
    again.log_metrics({"loss": 0.5}, step=2)
    again.finalize("success")
    found = recorded(mlflow_server, str(first.run_id), tmp_path / "download")
    assert found["metrics"]["loss"] == [(1, 1.0), (2, 0.5)]
    assert again.experiment_id == first.experiment_id


def test_other_ranks_get_a_stand_in_and_create_no_run(
    mlflow_server: MlflowServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mlflow import MlflowClient

    from accelplug.loggers.mlflow import MLFlowLogger

    monkeypatch.setenv("LOCAL_RANK", "2")
    logger = MLFlowLogger(experiment_name="rank2-only", tracking_uri=mlflow_server.uri)
    assert isinstance(logger.experiment, DummyExperiment)
    logger.log_metrics({"loss": 1.0}, step=1)
    logger.finalize("success")
    assert MlflowClient(mlflow_server.uri).get_experiment_by_name("rank2-only") is None


def test_missing_mlflow_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.loggers.mlflow import MLFlowLogger

    monkeypatch.setitem(sys.modules, "mlflow", None)
    with pytest.raises(MisconfigurationException, match=r"MLFlowLogger needs the .mlflow.*accelplug\[mlflow\]"):
        MLFlowLogger()


def test_the_folder_store_mlflow_refuses_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow import MlflowClient
    from mlflow.exceptions import MlflowException
    from mlflow.store.tracking.file_store import FileStore

    from accelplug.loggers.mlflow import MLFlowLogger

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    try:  # MLflow itself says whether this version refuses Lightning's default folder store
        FileStore(str(tmp_path / "probe"))
        refused = False
    except MlflowException:
        refused = True
    if refused:
        with pytest.raises(MisconfigurationException, match=r"MLFLOW_ALLOW_FILE_STORE=true") as caught:
            MLFlowLogger(save_dir=str(tmp_path / "mlruns"))
        assert "tracking_uri='sqlite:///mlflow.db'" in str(caught.value)
        monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    logger = MLFlowLogger(save_dir=str(tmp_path / "mlruns"))
    assert logger.save_dir == str(tmp_path / "mlruns")
    logger.log_metrics({"loss": 0.5}, step=2)
    logger.finalize("success")
    run = MlflowClient(f"file:{tmp_path / 'mlruns'}").get_run(str(logger.run_id))
    assert (run.info.status, run.data.metrics) == ("FINISHED", {"loss": 0.5})


def test_lightnings_availability_flags_replaced_at_its_path_are_obeyed(monkeypatch: pytest.MonkeyPatch) -> None:
    import accelplug.pytorch.loggers.mlflow as lightnings_path
    from accelplug.loggers.mlflow import MLFlowLogger

    monkeypatch.setattr(lightnings_path, "_MLFLOW_SYNCHRONOUS_AVAILABLE", False)
    with pytest.raises(ModuleNotFoundError, match=r"leave synchronous=None"):
        MLFlowLogger(synchronous=True)
    monkeypatch.setattr(lightnings_path, "_MLFLOW_AVAILABLE", False)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "accelplug\[mlflow\]"'):
        MLFlowLogger()
