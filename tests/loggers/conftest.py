"""Real tracker services for the logger tests, started by the tests themselves.

- W&B runs in offline mode with every W&B folder (runs, config, cache, staged artifacts) in the test's
  temporary folder; the ``wandb-core`` service process W&B starts is shared by the session.
- MLflow: one ``mlflow server`` process per session (SQLite backend store, local artifact folder, a free
  port on 127.0.0.1), waited for through its ``/health`` endpoint and stopped with its process group.
- Comet: ``OfflineExperiment`` archives written to the test's temporary folder.

The time each takes to start is printed at the end of the session.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Seconds each service took to become usable, for the terminal summary.
SERVICE_TIMES: dict[str, float] = {}

_MLFLOW_START_LIMIT_S = 180.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class MlflowServer:
    uri: str
    artifacts: Path
    process: subprocess.Popen[bytes]


@pytest.fixture(scope="session")
def mlflow_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MlflowServer]:
    pytest.importorskip(
        "mlflow", reason="mlflow is not installed (it comes with the test extra: pip install -e '.[test]')"
    )
    root = tmp_path_factory.mktemp("mlflow")
    port = _free_port()
    uri = f"http://127.0.0.1:{port}"
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}  # no background job workers
    command = [
        sys.executable, "-m", "mlflow", "server",
        "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}",
        "--artifacts-destination", str(root / "artifacts"),
        "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
    ]  # fmt: skip
    log = (root / "server.log").open("wb")
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        while True:
            if process.poll() is not None:
                pytest.fail(f"mlflow server exited with {process.returncode}:\n{(root / 'server.log').read_text()}")
            try:
                with urllib.request.urlopen(f"{uri}/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            if time.perf_counter() - started > _MLFLOW_START_LIMIT_S:
                log_text = (root / "server.log").read_text()
                pytest.fail(f"mlflow server not healthy after {_MLFLOW_START_LIMIT_S:.0f} s:\n{log_text}")
            time.sleep(0.2)
        SERVICE_TIMES["mlflow server (start to /health)"] = time.perf_counter() - started
        yield MlflowServer(uri=uri, artifacts=root / "artifacts", process=process)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


@pytest.fixture
def wandb_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """W&B in offline mode with all its folders under the test's tmp folder; the run is finished after."""
    wandb = pytest.importorskip(
        "wandb", reason="wandb is not installed (it comes with the test extra: pip install -e '.[test]')"
    )
    folder = tmp_path / "wandb-home"
    for name in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR", "WANDB_ARTIFACT_DIR"):
        monkeypatch.setenv(name, str(folder / name.lower()))
    monkeypatch.setenv("WANDB_DIR", str(folder))
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.setenv("WANDB_CONSOLE", "off")
    monkeypatch.setenv("WANDB_ERROR_REPORTING", "false")  # no crash reports to W&B's servers
    monkeypatch.delenv("WANDB_PROJECT", raising=False)
    folder.mkdir()
    yield folder
    if wandb.run is not None:
        wandb.finish()


@pytest.fixture
def comet_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """Comet offline archives go to the test's tmp folder; no user config file or API key is read."""
    comet_ml = pytest.importorskip(
        "comet_ml", reason="comet-ml is not installed (it comes with the test extra: pip install -e '.[test]')"
    )
    folder = tmp_path / "comet"
    monkeypatch.setenv("COMET_CONFIG", str(tmp_path / "no-comet-config"))
    monkeypatch.setenv("COMET_OFFLINE_DIRECTORY", str(folder))
    monkeypatch.setenv("COMET_DISABLE_AUTO_LOGGING", "1")
    monkeypatch.setenv("COMET_ERROR_TRACKING_ENABLE", "false")  # no error reports to Comet's Sentry (unreachable)
    monkeypatch.delenv("COMET_API_KEY", raising=False)
    folder.mkdir()
    yield folder
    running = comet_ml.get_running_experiment()
    if running is not None:
        running.end()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for name, seconds in SERVICE_TIMES.items():
        terminalreporter.write_line(f"logger services: {name} {seconds:.1f} s")
