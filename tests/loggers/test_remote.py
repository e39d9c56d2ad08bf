"""Logs and checkpoints on fsspec file systems: ``memory://`` and ``s3://`` on a real S3 server.

The S3 server is moto's (``moto_server``), started once per session in its own process on a free port and
stopped with it; the tests reach it through s3fs, as a user's run reaches a bucket.
"""

from __future__ import annotations

import io
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


def test_a_fit_logs_to_the_bucket(s3: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    url = f"s3://{BUCKET}/runs"
    data = regression_data(n=64)
    trainer = Trainer(**quiet(max_epochs=2, log_every_n_steps=1, logger=CSVLogger(url), enable_checkpointing=False))
    trainer.fit(LinearRegression(), data)
    rows = s3.cat_file(f"{BUCKET}/runs/lightning_logs/version_0/metrics.csv").decode().splitlines()
    assert rows[0] == "epoch,step,train_loss" and len(rows) == 1 + 4
    assert [p.name for p in tmp_path.iterdir() if p.is_dir()] == [], "nothing was written locally"


def _resumed_weights(tmp_path: Path, checkpoint: str) -> dict[str, torch.Tensor]:
    """Fit 4 steps, save to ``checkpoint``, resume from it in a new Trainer to step 8: the final weights."""
    options = {"logger": False, "enable_checkpointing": False, "default_root_dir": tmp_path, "seed": 0}
    first = Trainer(**quiet(max_steps=4, **options))
    torch.manual_seed(0)  # the same initial weights in every call
    first.fit(LinearRegression(), regression_data(n=64, batch_size=8))
    assert first.save_checkpoint(checkpoint) == (checkpoint if "://" in checkpoint else Path(checkpoint))
    model = LinearRegression()
    Trainer(**quiet(max_steps=8, **options)).fit(model, regression_data(n=64, batch_size=8), ckpt_path=checkpoint)
    return {k: v.clone() for k, v in model.state_dict().items()}


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
@pytest.mark.parametrize("where", ["memory", "s3"])
def test_a_checkpoint_saved_to_a_url_resumes_as_a_local_one(
    tmp_path: Path, where: str, request: pytest.FixtureRequest
) -> None:
    fs = request.getfixturevalue(where)
    url = "memory://ckpts/run/a.ckpt" if where == "memory" else f"s3://{BUCKET}/ckpts/a.ckpt"
    remote = _resumed_weights(tmp_path / "remote", url)
    local = _resumed_weights(tmp_path / "local", str(tmp_path / "a.ckpt"))
    assert remote.keys() == local.keys()
    for name in local:
        assert torch.equal(remote[name], local[name]), name
    assert fs.cat_file(url) == (tmp_path / "a.ckpt").read_bytes(), "the same bytes, uploaded in one piece"


def test_a_damaged_remote_checkpoint_is_refused_by_its_checksum(tmp_path: Path, s3: Any) -> None:
    url = f"s3://{BUCKET}/ckpts/a.ckpt"
    trainer = Trainer(**quiet(max_steps=2, logger=False, enable_checkpointing=False, default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data(n=16))
    trainer.save_checkpoint(url)
    state = torch.load(io.BytesIO(s3.cat_file(url)), weights_only=True)
    state["state_dict"]["linear.bias"] += 1.0  # changed after the digest was taken
    buffer = io.BytesIO()
    torch.save(state, buffer)
    s3.pipe_file(url, buffer.getvalue())
    with pytest.raises(MisconfigurationException, match="is corrupt"):
        trainer.fit(LinearRegression(), regression_data(n=16), ckpt_path=url)
    with pytest.raises(MisconfigurationException, match="no such file"):
        trainer.fit(LinearRegression(), regression_data(n=16), ckpt_path=f"s3://{BUCKET}/ckpts/missing.ckpt")


def test_a_url_turned_into_a_local_path_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    trainer = Trainer(**quiet(max_steps=1, logger=False, enable_checkpointing=False))
    trainer.fit(LinearRegression(), regression_data(n=8))
    with pytest.raises(MisconfigurationException, match=r"is a s3:// URL turned into a local folder by pathlib"):
        trainer.save_checkpoint(Path("s3://bucket/a.ckpt"))
    assert not (tmp_path / "s3:").exists()


def test_a_protocol_without_its_package_is_named(tmp_path: Path) -> None:
    trainer = Trainer(**quiet(max_steps=1, logger=False, enable_checkpointing=False, default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data(n=8))
    with pytest.raises(MisconfigurationException, match=r"'nosuchfs://b/a\.ckpt' is not a path fsspec can open"):
        trainer.save_checkpoint("nosuchfs://b/a.ckpt")


def test_a_file_url_is_a_local_checkpoint(tmp_path: Path) -> None:
    trainer = Trainer(**quiet(max_steps=1, logger=False, enable_checkpointing=False, default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data(n=8))
    trainer.save_checkpoint(f"file://{tmp_path / 'a.ckpt'}")
    saved = torch.load(tmp_path / "a.ckpt", weights_only=True)
    assert saved["loop"]["global_step"] == 1
    validated, model = Trainer(**quiet(logger=False, enable_checkpointing=False)), LinearRegression()
    validated.validate(
        model, regression_data(n=8, shuffle=False), ckpt_path=f"file://{tmp_path / 'a.ckpt'}", verbose=False
    )
    assert torch.equal(model.linear.weight, saved["state_dict"]["linear.weight"])


def test_a_default_root_dir_url_takes_the_default_logger_there(memory: Any, tmp_path: Path) -> None:
    trainer = Trainer(**quiet(max_epochs=1, log_every_n_steps=1, default_root_dir="memory://root", logger="csv"))
    assert trainer.logger.log_dir == "memory://root/lightning_logs/version_0"
    trainer = Trainer(**quiet(max_epochs=1, log_every_n_steps=1, default_root_dir="memory://root", logger="csv",
                              enable_checkpointing=False))  # fmt: skip
    trainer.fit(LinearRegression(), regression_data(n=16))
    assert memory.cat_file("/root/lightning_logs/version_0/metrics.csv").startswith(b"epoch,step,train_loss")
