"""Logs on fsspec file systems (``memory://`` and ``s3://`` on a real S3 server), checkpoints refused there by name.

The S3 server is moto's (``moto_server``), started once per session in its own process on a free port and
stopped with it; the tests reach it through s3fs, as a user's run reaches a bucket.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Trainer
from accelplug.errors import MisconfigurationException
from accelplug.loggers import CSVLogger, TensorBoardLogger
from tests.modules import LinearRegression, quiet, regression_data

fsspec = pytest.importorskip("fsspec")
pytest.importorskip("s3fs", reason="the S3 tests need s3fs and moto (the test extra installs both)")

BUCKET = "accelplug-results"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def s3_server() -> Iterator[str]:
    """A moto S3 server process on 127.0.0.1 with one empty bucket; its endpoint URL."""
    executable = shutil.which("moto_server") or str(Path(os.sys.executable).with_name("moto_server"))
    port = _free_port()
    process = subprocess.Popen(
        [executable, "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto_server did not start (exit code {process.poll()})") from None
                time.sleep(0.2)
        yield endpoint
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.fixture
def s3(s3_server: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """s3fs pointed at the moto server (through fsspec's own configuration), the bucket emptied."""
    options = {"endpoint_url": s3_server, "key": "testing", "secret": "testing", "skip_instance_cache": True}
    monkeypatch.setitem(fsspec.config.conf, "s3", options)
    fs = fsspec.filesystem("s3")
    if fs.exists(BUCKET):
        fs.rm(BUCKET, recursive=True)
    fs.mkdir(BUCKET)
    return fs


@pytest.fixture
def memory() -> Iterator[Any]:
    fs = fsspec.filesystem("memory")
    yield fs
    fs.rm("/", recursive=True) if fs.find("/") else None


def _play(logger: Any) -> None:
    logger.log_hyperparams({"lr": 0.01, "width": 8})
    for step in range(5):
        logger.log_metrics({"loss": 1.0 / (step + 1), "epoch": step // 2}, step=step)
        if step == 2:
            logger.log_metrics({"val_loss": 0.5, "epoch": 1}, step=step)
    logger.finalize("success")


@pytest.mark.parametrize("where", ["memory", "s3"])
def test_csv_logs_on_a_remote_file_system_match_the_local_ones(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    fs = request.getfixturevalue(where)
    url = "memory://runs" if where == "memory" else f"s3://{BUCKET}/runs"
    fs.makedirs(f"{url}/lightning_logs/version_0", exist_ok=True)
    fs.pipe_file(f"{url}/lightning_logs/version_0/marker", b"taken")  # version_0 is taken: the next is 1
    remote, local = CSVLogger(url), CSVLogger(tmp_path)
    assert remote.version == 1
    local._version = 1
    _play(remote)
    _play(local)
    assert remote.log_dir == f"{url}/lightning_logs/version_1"
    for name in ("metrics.csv", "hparams.yaml"):
        assert fs.cat_file(f"{remote.log_dir}/{name}") == Path(local.log_dir, name).read_bytes()


def test_tensorboard_events_go_to_memory(memory: Any) -> None:
    logger = TensorBoardLogger("memory://tb", name="exp")
    _play(logger)
    names = sorted(Path(p).name for p in memory.find("/tb/exp/version_0"))
    assert names[0].startswith("events.out.tfevents.") and names[1] == "hparams.yaml"
    assert memory.cat_file("/tb/exp/version_0/hparams.yaml") == b"lr: 0.01\nwidth: 8\n"


def test_a_fit_logs_to_the_bucket_and_refuses_checkpoints_there(
    s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    url = f"s3://{BUCKET}/runs"
    data = regression_data(n=64)
    trainer = Trainer(**quiet(max_epochs=2, log_every_n_steps=1, logger=CSVLogger(url), enable_checkpointing=False))
    trainer.fit(LinearRegression(), data)
    rows = s3.cat_file(f"{BUCKET}/runs/lightning_logs/version_0/metrics.csv").decode().splitlines()
    assert rows[0] == "epoch,step,train_loss" and len(rows) == 1 + 4
    checkpointing = Trainer(**quiet(max_epochs=1, logger=CSVLogger(url)))
    with pytest.raises(MisconfigurationException, match=r"'s3' file system .* local or mounted folders only"):
        checkpointing.fit(LinearRegression(), data)
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == [], "no local folder (s3:) was made"


@pytest.mark.parametrize("url", ["memory://ckpts/a.ckpt", f"s3://{BUCKET}/a.ckpt", "gs://bucket/a.ckpt"])
def test_checkpoint_urls_are_refused_by_name(tmp_path: Path, url: str) -> None:
    trainer = Trainer(**quiet(max_steps=1, logger=False, enable_checkpointing=False, default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data(n=8))
    with pytest.raises(MisconfigurationException, match=f"checkpoint path {url!r} is on the"):
        trainer.save_checkpoint(url)
    with pytest.raises(MisconfigurationException, match=f"ckpt_path {url!r} is on the"):
        trainer.fit(LinearRegression(), regression_data(n=8), ckpt_path=url)


def test_a_file_url_is_a_local_checkpoint(tmp_path: Path) -> None:
    trainer = Trainer(**quiet(max_steps=1, logger=False, enable_checkpointing=False, default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data(n=8))
    trainer.save_checkpoint(f"file://{tmp_path / 'a.ckpt'}")
    saved = torch.load(tmp_path / "a.ckpt", weights_only=True)
    assert saved["loop"]["global_step"] == 1
    validated, model = Trainer(**quiet(logger=False, enable_checkpointing=False)), LinearRegression()
    validated.validate(model, regression_data(n=8), ckpt_path=f"file://{tmp_path / 'a.ckpt'}", verbose=False)
    assert torch.equal(model.linear.weight, saved["state_dict"]["linear.weight"])
