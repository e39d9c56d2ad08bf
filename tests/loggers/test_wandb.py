"""WandbLogger against W&B itself in offline mode: the run folder is read back after each test."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug.errors import MisconfigurationException
from accelplug.loggers.logger import DummyExperiment

from .readers import WandbRun, read_wandb_run, wandb_run_dir
from .sequence import METRICS, play

pytestmark = pytest.mark.usefixtures("wandb_offline")


def _finished_run(logger: Any, wandb_dir: Path) -> WandbRun:
    run_id = logger.version
    if logger._experiment is not None:
        logger.experiment.finish()
    return read_wandb_run(wandb_run_dir(wandb_dir, run_id))


def _uploads(run: WandbRun) -> list[tuple[str, list[str], float]]:
    return [(a.metadata["original_filename"], a.aliases, round(a.metadata["score"], 6)) for a in run.artifacts]


def test_metrics_carry_the_trainer_step_and_config_is_recorded(wandb_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline, name="first")
    play(logger, tmp_path / "ckpt")
    run = _finished_run(logger, wandb_offline)

    assert run.project == "demo"
    assert logger.name == "demo"
    assert run.config["lr"] == 0.01
    assert run.config["optimizer"] == {"name": "adam", "betas": [0.9, 0.99]}
    assert run.config["activation"] == "ReLU"  # a class is recorded by its name
    assert run.config["dropout"] is None
    assert run.config["long_text"] == "x" * 300
    assert [(row["trainer/global_step"], row["train_loss"]) for row in run.history] == [
        (step, metrics["train_loss"]) for step, metrics in METRICS
    ]
    assert run.metric_axes == {"*": "trainer/global_step"}
    assert run.artifacts == []  # log_model=False
    assert run.exit_code == 0


def test_log_model_all_uploads_each_checkpoint_as_written_with_aliases(wandb_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline, log_model="all")
    play(logger, tmp_path / "ckpt")
    run = _finished_run(logger, wandb_offline)

    assert _uploads(run) == [
        ("epoch=0-step=10.ckpt", ["best", "latest"], 0.8),
        ("last.ckpt", ["latest"], 0.8),
        ("epoch=1-step=20.ckpt", ["best", "latest"], 0.6),
        ("last.ckpt", ["latest"], 0.6),
        ("epoch=2-step=30.ckpt", ["latest"], 0.7),
        ("last.ckpt", ["latest"], 0.7),
    ]
    first = run.artifacts[0]
    assert first.name == f"model-{run.run_id}" and first.type == "model"
    assert first.metadata["ModelCheckpoint"] == {
        "monitor": "val_loss",
        "mode": "min",
        "save_last": True,
        "save_top_k": 2,
        "save_weights_only": False,
        "_every_n_train_steps": 0,
    }
    # The staged copy is the checkpoint as it was when uploaded (the first one was deleted since).
    staged = torch.load(first.files["model.ckpt"], weights_only=True)
    assert staged["global_step"] == 10


def test_log_model_true_uploads_the_survivors_when_training_succeeds(wandb_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline, log_model=True)
    play(logger, tmp_path / "ckpt")
    run = _finished_run(logger, wandb_offline)

    assert _uploads(run) == [
        ("epoch=1-step=20.ckpt", ["best", "latest"], 0.6),
        ("epoch=2-step=30.ckpt", ["latest"], 0.7),
        ("last.ckpt", ["latest"], 0.7),
    ]


def test_log_model_true_with_save_top_k_minus_one_uploads_as_written(wandb_offline: Path, tmp_path: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline, log_model=True)
    play(logger, tmp_path / "ckpt", save_top_k=-1)
    run = _finished_run(logger, wandb_offline)

    assert [name for name, _, _ in _uploads(run)] == [
        "epoch=0-step=10.ckpt",
        "last.ckpt",
        "epoch=1-step=20.ckpt",
        "last.ckpt",
        "epoch=2-step=30.ckpt",
        "last.ckpt",
    ]


def test_a_failed_run_uploads_nothing_and_ends_with_a_failure_exit_code(wandb_offline: Path, tmp_path: Path) -> None:
    import wandb

    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline, log_model=True)
    play(logger, tmp_path / "ckpt", status="failed")
    assert wandb.run is None  # ended: the next logger in this process starts its own run
    run = read_wandb_run(wandb_run_dir(wandb_offline, str(logger.version)))

    assert run.artifacts == []
    assert run.exit_code == 1
    assert len(run.history) == len(METRICS)


def test_prefix_is_joined_with_a_dash(wandb_offline: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline, prefix="fold1")
    logger.log_metrics({"loss": 0.5}, step=3)
    run = _finished_run(logger, wandb_offline)
    assert run.history == [{"fold1-loss": 0.5, "trainer/global_step": 3}]


def test_version_and_name_do_not_start_a_run(wandb_offline: Path) -> None:
    import wandb

    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline, version="abc123")
    assert (logger.name, logger.version, logger.save_dir) == ("demo", "abc123", str(wandb_offline))
    assert wandb.run is None
    assert not (wandb_offline / "wandb").exists()


def test_other_ranks_get_a_stand_in_and_open_no_run(wandb_offline: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.loggers.wandb import WandbLogger

    monkeypatch.setenv("RANK", "1")
    logger = WandbLogger(project="demo", save_dir=wandb_offline, log_model="all")
    assert isinstance(logger.experiment, DummyExperiment)
    logger.log_metrics({"loss": 1.0}, step=1)
    logger.log_hyperparams({"lr": 1})
    logger.finalize("success")
    assert not (wandb_offline / "wandb").exists()


def test_offline_with_log_model_is_refused(wandb_offline: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    with pytest.raises(MisconfigurationException, match=r"offline=True, log_model=True.*log_model=False"):
        WandbLogger(offline=True, log_model=True, save_dir=wandb_offline)


def test_a_log_model_typo_is_refused(wandb_offline: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    with pytest.raises(MisconfigurationException, match=r"log_model='al'.*False, True or 'all'. Did you mean 'all'"):
        WandbLogger(log_model="al", save_dir=wandb_offline)  # type: ignore[arg-type]


def test_missing_wandb_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.loggers._requirements import TrackerNotInstalledError
    from accelplug.loggers.wandb import WandbLogger

    monkeypatch.setitem(sys.modules, "wandb", None)  # what an environment without wandb looks like to import
    with pytest.raises(TrackerNotInstalledError, match=r'pip install "accelplug\[wandb\]"') as caught:
        WandbLogger()
    assert isinstance(caught.value, MisconfigurationException)


def test_images_are_logged_with_one_caption_each(wandb_offline: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline)
    with pytest.raises(
        MisconfigurationException,
        match=r"Expected 2 items but only found 1 for caption: caption= must be a list with one entry per item",
    ):
        logger.log_image("samples", [torch.rand(3, 8, 8), torch.rand(3, 8, 8)], caption=["only one"])
    logger.log_image("samples", [torch.rand(3, 8, 8), torch.rand(3, 8, 8)], step=4, caption=["a", "b"])
    run = _finished_run(logger, wandb_offline)
    (row,) = run.history  # W&B records the media object as nested keys
    assert row["trainer/global_step"] == 4
    assert (row["samples/_type"], row["samples/count"], row["samples/captions"]) == ("images/separated", 2, ["a", "b"])


def test_a_pickled_logger_continues_the_same_run(wandb_offline: Path) -> None:
    import pickle

    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline)
    logger.log_metrics({"loss": 1.0}, step=1)
    copy = pickle.loads(pickle.dumps(logger))
    assert copy._experiment is None
    assert copy.version == logger.version
    assert copy._wandb_init["id"] == logger.version


def test_a_wandb_init_option_typo_is_named_with_a_close_match(wandb_offline: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline, entitty="me")
    with pytest.raises(MisconfigurationException, match=r"entitty=\.\.\., which wandb.init\(\) does not.*'entity'"):
        _ = logger.experiment


def test_lightnings_availability_flag_replaced_at_its_path_is_obeyed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scripts and Lightning's own tests set ``lightning.pytorch.loggers.wandb._WANDB_AVAILABLE``; unset, the flag
    reads the installed package each time."""
    import accelplug.pytorch.loggers.wandb as lightnings_path
    from accelplug.loggers.wandb import WandbLogger

    assert bool(lightnings_path._WANDB_AVAILABLE)
    monkeypatch.setattr(lightnings_path, "_WANDB_AVAILABLE", False)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "accelplug\[wandb\]"'):
        WandbLogger()


def test_media_that_is_not_a_list_is_lightnings_type_error(wandb_offline: Path) -> None:
    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline)
    with pytest.raises(TypeError, match="Expected a list as \"images\", found <class 'str'>") as caught:
        logger.log_image(key="samples", images="1.jpg")
    assert isinstance(caught.value, MisconfigurationException)


def test_pickling_starts_the_run_first_so_a_spawned_worker_logs_into_it(wandb_offline: Path) -> None:
    import pickle

    from accelplug.loggers.wandb import WandbLogger

    logger = WandbLogger(project="demo", save_dir=wandb_offline)
    assert logger._experiment is None
    copy = pickle.loads(pickle.dumps(logger))
    assert logger._experiment is not None
    assert copy._id == logger.experiment.id
