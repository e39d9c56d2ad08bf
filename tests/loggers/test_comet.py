"""CometLogger against Comet's own OfflineExperiment: the archive it writes is read back."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug.errors import MisconfigurationException
from accelplug.loggers.logger import DummyExperiment

from .readers import CometArchive, comet_archives, read_comet_archive
from .sequence import METRICS, play

pytestmark = pytest.mark.usefixtures("comet_offline")


def _ended(logger: Any, folder: Path) -> CometArchive:
    if logger._experiment is not None:
        logger.experiment.end()
    (archive,) = comet_archives(folder)
    return read_comet_archive(archive)


def _models(found: CometArchive) -> list[tuple[str, list[str], float]]:
    return [(m["file"], m["metadata"]["aliases"], round(m["metadata"]["score"], 6)) for m in found.models]


def test_params_metrics_and_graph_reach_the_offline_archive(comet_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.comet import CometLogger

    logger = CometLogger(online=False, project="demo", name="first", offline_directory=str(comet_offline))
    logger.log_graph(torch.nn.Linear(2, 3))  # no run yet: ignored, as in Lightning
    play(logger, tmp_path / "ckpt")
    logger.log_graph(torch.nn.Linear(2, 3))
    found = _ended(logger, comet_offline)

    assert found.experiment["project_name"] == "demo"
    assert found.others["Name"] == "first"
    assert found.others["Created from"] == "accelplug"
    assert found.params["lr"] == 0.01
    assert found.params["optimizer|name"] == "adam"  # Comet flattens nested parameters with "|"
    assert found.params["optimizer|betas"] == [0.9, 0.99]
    assert [(name, value, step, epoch) for name, value, step, epoch in found.metrics if name == "train_loss"] == [
        ("train_loss", m["train_loss"], step, m["epoch"]) for step, m in METRICS
    ]
    assert not any(name == "epoch" for name, *_ in found.metrics)  # the epoch is Comet's epoch, not a metric
    assert found.graph == "Linear(in_features=2, out_features=3, bias=True)"
    assert found.models == []  # log_model=False
    assert logger.version == found.experiment["offline_id"]
    assert logger.save_dir == str(comet_offline)


def test_log_model_all_uploads_each_checkpoint_with_metadata_and_aliases(comet_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.comet import CometLogger

    logger = CometLogger(online=False, project="demo", log_model="all")
    play(logger, tmp_path / "ckpt")
    found = _ended(logger, comet_offline)

    assert _models(found) == [
        ("epoch=0-step=10.ckpt", ["latest", "best"], 0.8),
        ("last.ckpt", ["latest"], 0.8),
        ("epoch=1-step=20.ckpt", ["latest", "best"], 0.6),
        ("last.ckpt", ["latest"], 0.6),
        ("epoch=2-step=30.ckpt", ["latest"], 0.7),
        ("last.ckpt", ["latest"], 0.7),
    ]
    assert found.models[0]["name"] == "model"
    assert found.models[0]["metadata"]["ModelCheckpoint"]["save_top_k"] == 2
    first = torch.load(io.BytesIO(found.files["epoch=0-step=10.ckpt"]), weights_only=True)
    assert first["global_step"] == 10  # the archive holds the file, deleted locally since


def test_log_model_true_uploads_the_survivors_when_training_succeeds(comet_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.comet import CometLogger

    logger = CometLogger(online=False, project="demo", log_model=True)
    play(logger, tmp_path / "ckpt")
    found = _ended(logger, comet_offline)
    assert _models(found) == [
        ("epoch=1-step=20.ckpt", ["latest", "best"], 0.6),
        ("epoch=2-step=30.ckpt", ["latest"], 0.7),
        ("last.ckpt", ["latest"], 0.7),
    ]


def test_a_failed_run_is_ended_at_once_without_checkpoints(comet_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.comet import CometLogger

    logger = CometLogger(online=False, project="demo", log_model=True)
    play(logger, tmp_path / "ckpt", status="failed")
    (archive,) = comet_archives(comet_offline)  # written by finalize, not by the test
    found = read_comet_archive(archive)
    assert found.models == []
    assert len([m for m in found.metrics if m[0] == "train_loss"]) == len(METRICS)


def test_the_deprecated_offline_flag_means_offline(comet_offline: Path, caplog: pytest.LogCaptureFixture) -> None:
    from accelplug.loggers.comet import CometLogger

    logger = CometLogger(offline=True, project_name="old-names", prefix="fold1")
    assert "CometLogger(offline=...) is deprecated; use online=..." in caplog.text
    logger.log_metrics({"loss": 0.5}, step=3)
    found = _ended(logger, comet_offline)
    assert found.experiment["project_name"] == "old-names"
    assert ("fold1_loss", 0.5, 3, None) in found.metrics  # Comet joins the prefix with "_"


def test_other_ranks_get_a_stand_in_and_write_no_archive(comet_offline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.loggers.comet import CometLogger

    monkeypatch.setenv("RANK", "1")
    logger = CometLogger(online=False, log_model="all")
    assert isinstance(logger.experiment, DummyExperiment)
    logger.log_metrics({"loss": 1.0}, step=1)
    logger.finalize("failed")
    assert comet_archives(comet_offline) == []


def test_a_mode_typo_is_refused(comet_offline: Path) -> None:
    from accelplug.loggers.comet import CometLogger

    with pytest.raises(MisconfigurationException, match=r"mode='create_new'.*'get', 'create' or None. Did you mean"):
        CometLogger(online=False, mode="create_new")  # type: ignore[arg-type]


def test_an_option_comet_does_not_take_is_named_with_a_close_match(comet_offline: Path) -> None:
    from accelplug.loggers.comet import CometLogger

    with pytest.raises(MisconfigurationException, match=r"offline_dir=\.\.\., which.*Did you mean 'offline_directory'"):
        CometLogger(online=False, offline_dir=str(comet_offline))


def test_missing_comet_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.loggers.comet import CometLogger

    monkeypatch.setitem(sys.modules, "comet_ml", None)
    with pytest.raises(MisconfigurationException, match=r'comet-ml.*pip install "accelplug\[comet\]"'):
        CometLogger()
