"""CSVLogger and TensorBoardLogger next to Lightning 2.6's: the same calls give the same folders and files.

Each parity test makes Lightning's logger and ours with the same arguments in two folders, sends both the
same calls and compares what lands on disk (``metrics.csv`` and ``hparams.yaml`` byte for byte, TensorBoard's
scalars, hyper-parameters and graph read back through tensorboard's own reader).
"""

from __future__ import annotations

import csv
import logging
from argparse import Namespace
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import LightningModule, Trainer
from accelplug.errors import MisconfigurationException
from accelplug.loggers import CSVLogger, TensorBoardLogger
from tests.callbacks.parity import quiet_lightning
from tests.modules import LinearRegression, quiet, regression_data

lightning_loggers = pytest.importorskip("lightning.pytorch.loggers", reason="the parity tests compare with Lightning")
logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)

CALLS: list[tuple[int | None, dict[str, Any]]] = [
    (0, {"train_loss": 1.5, "epoch": 0}),
    (1, {"train_loss": torch.tensor(1.25), "epoch": 0}),
    (2, {"train_loss": 1.0, "val_loss": 1.1, "epoch": 0}),  # a new column: the file is rewritten wider
    (None, {"extra": 3.0}),  # no step: the row's index in the pending rows
    (5, {"train_loss": 0.5, "epoch": 1}),
]
HPARAMS: dict[str, Any] = {"lr": 0.01, "layers": [8, 4], "optimizer": {"name": "adam", "beta": 0.9}, "name": "net"}


def _play(logger: Any) -> None:
    logger.log_hyperparams(HPARAMS)
    for step, metrics in CALLS:
        logger.log_metrics(metrics, step=step)
        if step == 2:
            logger.save()
    logger.finalize("success")


def _relative(path: str, root: Path) -> str:
    return str(Path(path).relative_to(root))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"name": "exp", "version": 3},
        {"name": None, "version": "run-a", "prefix": "train", "flush_logs_every_n_steps": 2},
        {"name": "", "flush_logs_every_n_steps": 1},
    ],
)
def test_csv_logger_writes_the_files_lightnings_writes(tmp_path: Path, options: dict[str, Any]) -> None:
    (tmp_path / "lightning").mkdir()
    (tmp_path / "ours").mkdir()
    with quiet_lightning():  # only Lightning's own warnings
        theirs = lightning_loggers.CSVLogger(tmp_path / "lightning", **options)
        _play(theirs)
    ours = CSVLogger(tmp_path / "ours", **options)
    _play(ours)
    for attribute in ("name", "version"):
        assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    for attribute in ("root_dir", "log_dir", "save_dir"):
        assert _relative(getattr(ours, attribute), tmp_path / "ours") == _relative(
            getattr(theirs, attribute), tmp_path / "lightning"
        ), attribute
    for name in ("metrics.csv", "hparams.yaml"):
        mine = (Path(ours.log_dir) / name).read_text()
        assert mine == (Path(theirs.log_dir) / name).read_text(), name
    assert Path(ours.log_dir, "metrics.csv").read_text().count("\n") == len(CALLS) + 1


def test_versions_count_up_in_the_save_dir_as_in_lightning(tmp_path: Path) -> None:
    (tmp_path / "lightning_logs" / "version_4").mkdir(parents=True)
    (tmp_path / "lightning_logs" / "version_x").mkdir()
    (tmp_path / "lightning_logs" / "version_9.txt").write_text("a file, not a version")
    assert CSVLogger(tmp_path).version == lightning_loggers.CSVLogger(tmp_path).version == 5
    assert TensorBoardLogger(tmp_path).version == lightning_loggers.TensorBoardLogger(tmp_path).version == 5
    assert CSVLogger(tmp_path / "empty").version == 0


def _events(folder: str) -> Any:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    accumulator = EventAccumulator(folder, size_guidance={"scalars": 0, "tensors": 0})
    accumulator.Reload()
    return accumulator


def _tensorboard_record(logger: Any) -> dict[str, Any]:
    events = _events(logger.log_dir)
    scalars = {tag: [(e.step, round(e.value, 6)) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}
    try:
        hparams = sorted(events.PluginTagToContent("hparams").items())  # tag -> the HParams plugin's protobuf
    except KeyError:
        hparams = []
    return {"scalars": scalars, "hparams": hparams, "graph": events.Tags()["graph"]}


#: torch's deprecation of the tracer that SummaryWriter.add_graph uses (under Lightning's log_graph as under ours):
#: expected wherever a test draws the graph, and nothing either logger could change
TRACER_DEPRECATED = (
    "ignore:`torch.jit.trace` is deprecated:DeprecationWarning",
    "ignore:`torch.jit.trace_method` is deprecated:DeprecationWarning",
)


class _Traceable(torch.nn.Sequential):
    """The two batch-transfer hooks Lightning's ``log_graph`` calls on a LightningModule, doing nothing."""

    def _on_before_batch_transfer(self, batch: Any) -> Any:
        return batch

    def _apply_batch_transfer_handler(self, batch: Any) -> Any:
        return batch


@pytest.mark.filterwarnings(*TRACER_DEPRECATED)
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"name": "exp", "version": "v", "prefix": "p", "default_hp_metric": False},
        {"sub_dir": "sub", "version": 2, "log_graph": True},
    ],
)
def test_tensorboard_logger_records_what_lightnings_records(tmp_path: Path, options: dict[str, Any]) -> None:
    model = _Traceable(torch.nn.Linear(3, 2))
    records, loggers = [], []
    for side, cls in (("lightning", lightning_loggers.TensorBoardLogger), ("ours", TensorBoardLogger)):
        logger = cls(tmp_path / side, **options)
        logger.log_hyperparams(Namespace(**HPARAMS))
        logger.log_graph(model, torch.zeros(1, 3))
        for step, metrics in CALLS:
            logger.log_metrics(metrics, step=step if step is not None else 4)
        logger.finalize("success")
        records.append(_tensorboard_record(logger))
        loggers.append(logger)
    theirs, ours = loggers
    assert records[1] == records[0]
    assert records[0]["scalars"]["p-train_loss" if options.get("prefix") else "train_loss"]
    for attribute in ("root_dir", "log_dir", "save_dir"):
        assert _relative(getattr(ours, attribute), tmp_path / "ours") == _relative(
            getattr(theirs, attribute), tmp_path / "lightning"
        ), attribute
    assert (ours.name, ours.version, ours.sub_dir) == (theirs.name, theirs.version, theirs.sub_dir)
    assert Path(ours.log_dir, "hparams.yaml").read_text() == Path(theirs.log_dir, "hparams.yaml").read_text()
    assert ours.hparams == theirs.hparams


def _fit(tmp_path: Path, **options: Any) -> Trainer:
    trainer = Trainer(**quiet(**{"max_epochs": 2, "log_every_n_steps": 2, "default_root_dir": tmp_path, **options}))
    trainer.fit(LinearRegression(), regression_data(n=128), regression_data(n=128, shuffle=False))
    return trainer


def test_the_default_logger_is_lightnings_made_in_the_trainers_constructor(tmp_path: Path) -> None:
    from lightning.pytorch import Trainer as LightningTrainer

    with quiet_lightning():  # only Lightning's own warnings
        theirs = LightningTrainer(default_root_dir=tmp_path / "lightning", enable_progress_bar=False)
    ours = Trainer(**quiet(default_root_dir=tmp_path / "ours"))
    assert type(ours.logger).__name__ == type(theirs.logger).__name__ == "TensorBoardLogger"
    assert [type(lg).__name__ for lg in ours.loggers] == [type(lg).__name__ for lg in theirs.loggers]
    assert _relative(ours.logger.log_dir, tmp_path / "ours") == _relative(theirs.logger.log_dir, tmp_path / "lightning")
    assert _relative(ours.logger.log_dir, tmp_path / "ours") == "lightning_logs/version_0"
    assert Trainer(**quiet(logger=False)).loggers == []


@pytest.mark.parametrize(("job_name", "version"), [("train.sh", 4242), ("bash", 0)])
def test_in_a_slurm_job_the_default_logger_is_named_by_the_job_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, job_name: str, version: int
) -> None:
    from lightning.pytorch import Trainer as LightningTrainer

    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_JOB_NAME", job_name)  # an interactive allocation ("bash") has no batch job id
    with quiet_lightning():  # only Lightning's own warnings
        theirs = LightningTrainer(default_root_dir=tmp_path, enable_progress_bar=False, accelerator="cpu", devices=1)
    ours = Trainer(**quiet(default_root_dir=tmp_path))
    assert ours.logger.version == theirs.logger.version == version


@pytest.mark.filterwarnings(*TRACER_DEPRECATED)
def test_a_fit_with_the_default_logger_writes_tensorboard_events_and_the_graph_when_asked(tmp_path: Path) -> None:
    class Imaging(LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(3, 1)
            self.example_input_array = torch.zeros(2, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.linear(x)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            self.logger.experiment.add_image("input", batch[0][:1].unsqueeze(0), self.global_step)
            loss = torch.nn.functional.mse_loss(self(batch[0]), batch[1])
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = Trainer(**quiet(max_epochs=1, log_every_n_steps=1, default_root_dir=tmp_path))
    trainer.logger._log_graph = True  # the habit of Lightning scripts, before fit
    trainer.fit(Imaging(), regression_data(n=64))
    assert Path(trainer.log_dir) == tmp_path / "lightning_logs" / "version_0"
    events = _events(trainer.logger.log_dir)
    assert [e.step for e in events.Scalars("train_loss")] == [0, 1]  # Lightning's steps: batches stepped before
    assert events.Tags()["graph"] is True
    assert len(events.Images("input")) == 2
    assert list(
        (tmp_path / "lightning_logs" / "version_0" / "checkpoints").glob("epoch=*-step=*.ckpt")
    )  # Lightning's names


def test_a_fit_with_a_csv_logger_writes_its_rows(tmp_path: Path) -> None:
    trainer = _fit(tmp_path, logger=CSVLogger(tmp_path, name="runs"))
    assert trainer.metrics_path == tmp_path / "runs" / "version_0" / "metrics.csv"
    with trainer.metrics_path.open() as file:
        rows = list(csv.DictReader(file))
    train_losses = [float(r["train_loss"]) for r in rows if r["train_loss"]]
    assert len(train_losses) == 4  # 8 steps, every 2nd logged
    assert [r for r in rows if r["val_loss"]], "validation metrics are logged at each epoch end"
    assert train_losses[-1] < train_losses[0]
    assert list((tmp_path / "runs" / "version_0" / "checkpoints").glob("epoch=*-step=*.ckpt"))


def test_two_trainers_in_one_folder_get_consecutive_versions(tmp_path: Path) -> None:
    first = _fit(tmp_path, logger="csv", max_epochs=1)
    second = _fit(tmp_path, logger="csv", max_epochs=1)
    assert (first.logger.version, second.logger.version) == (0, 1)
    assert second.metrics_path == tmp_path / "lightning_logs" / "version_1" / "metrics.csv"


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_a_bad_flush_interval_is_refused(tmp_path: Path, bad: Any) -> None:
    with pytest.raises(MisconfigurationException, match="flush_logs_every_n_steps"):
        CSVLogger(tmp_path, flush_logs_every_n_steps=bad)


def test_a_path_on_an_unknown_file_system_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MisconfigurationException, match="nosuchfs://bucket/logs"):
        CSVLogger("nosuchfs://bucket/logs")
