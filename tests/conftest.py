"""Fixtures shared by the whole suite.

Every in-process test gets a fresh registry that holds the built-ins only, whatever happens to be
installed in the environment; tests that need plugins install real distributions with pip into a
temporary folder and use them from a subprocess (``plugin_site`` + ``run_python``).
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from accelplug.registry import reset_registry

if TYPE_CHECKING:
    from tests.warm_python import WarmPython

try:  # hypothesis keeps its example database and constants cache in a temporary folder, not the checkout
    from hypothesis import settings
    from hypothesis.configuration import set_hypothesis_home_dir

    _hypothesis_home = tempfile.mkdtemp(prefix="accelplug-hypothesis-")
    atexit.register(shutil.rmtree, _hypothesis_home, True)
    set_hypothesis_home_dir(_hypothesis_home)
    settings.register_profile("accelplug", database=None)
    settings.load_profile("accelplug")
except ImportError:  # pragma: no cover - hypothesis comes with the test extra
    pass

REPO = Path(__file__).resolve().parents[1]
PLUGIN_DISTS = Path(__file__).resolve().parent / "plugin_dists"

#: Variables a developer's shell might set that would change what a test observes.
_ISOLATED_ENV = (
    "ACCELPLUG_ACCELERATOR",
    "ACCELPLUG_PLUGINS",
    "ACCELPLUG_CONFIG_FILE",
    "ACCELPLUG_DEVICES",
    "ACCELPLUG_STRATEGY",
    "ACCELPLUG_PRECISION",
    "ACCELPLUG_MPS_FALLBACK",
    "ACCELPLUG_NUM_NODES",
    "PYTORCH_ENABLE_MPS_FALLBACK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "RANK",
    "LOCAL_RANK",
)


@pytest.fixture(autouse=True)
def restored_environment() -> Iterator[None]:
    """Each test ends with the environment it started with. Code under test may write variables for the processes
    it starts (Lightning's LSF environment writes ``MASTER_PORT``, a launcher its ranks'), and under xdist a leak
    reaches whatever test that worker runs next, down to an ``srun`` that hands it to its tasks."""
    before = dict(os.environ)
    yield
    if dict(os.environ) != before:
        os.environ.clear()
        os.environ.update(before)


@pytest.fixture(autouse=True)
def no_process_group_left() -> Iterator[None]:
    """Each test ends without a default process group. A one-device ``ddp`` fit keeps its group of one after the
    fit, as Lightning's does, and the next test of that worker would read its ranks from it (``dist.get_rank()``)
    instead of from the launcher variables it sets."""
    yield
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture(autouse=True)
def isolated_registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in _ISOLATED_ENV:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", "1")
    # An empty config file: no saved defaults. (A file named by ACCELPLUG_CONFIG_FILE must exist.)
    empty_config = tmp_path / "empty-config.toml"
    empty_config.touch()
    monkeypatch.setenv("ACCELPLUG_CONFIG_FILE", str(empty_config))
    reset_registry()
    yield
    reset_registry()


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the test plugin distributions, installed for real by pip.

    It is meant for a subprocess's ``PYTHONPATH``: the distributions are found through their
    ``accelplug`` entry points exactly as after ``pip install``, never imported by path. Built once per
    session and shared by the xdist workers (``tests/plugin_kit/sites.py``); nothing may write into it.
    """
    from tests.plugin_kit.sites import shared_site

    dists = sorted(p for p in PLUGIN_DISTS.iterdir() if (p / "pyproject.toml").exists())
    return shared_site(tmp_path_factory.getbasetemp(), "plugin_site", dists)


def subprocess_env(extra: dict[str, str] | None = None, *, pythonpath: Path | None = None) -> dict[str, str]:
    """The test process's environment with plugin autoloading switched back on, plus ``extra``."""
    env = dict(os.environ)
    env.pop("ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env


@pytest.fixture
def run_python() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -c code`` in a child process with ``subprocess_env(env, pythonpath=...)``."""

    def run(
        code: str, *, env: dict[str, str] | None = None, pythonpath: Path | None = None, timeout: float = 120
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", code],
            env=subprocess_env(env, pythonpath=pythonpath),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
        )

    return run


@pytest.fixture(scope="session")
def fit_python() -> Iterator[WarmPython]:
    """Child Pythons forked from a server that imported torch and its compiler front end (``tests/warm_python.py``),
    for a test whose child fits a model, which imports both (torch imports ``torch._dynamo`` at a first
    optimizer), and whose point is the fit, not the start-up. One server per worker, shared by its tests."""
    from tests.warm_python import WarmPython

    python = WarmPython(preload=("torch._dynamo",))
    yield python
    python.close()


@pytest.fixture(autouse=True)
def single_thread() -> Iterator[None]:
    """One intra-op thread: the models here are tiny, and on a busy 2-core machine OpenMP threads that spin
    waiting for a core turn a 0.2 ms step into 90 ms. Each test gets the previous setting back."""
    import torch  # here, not at import: collecting the suite must not need torch before a test does

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)
