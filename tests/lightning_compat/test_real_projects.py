"""Real public Lightning projects, run twice: as published (``import lightning``) and with only the import swapped.

Each file under ``projects/`` is a public Lightning 2.x script (its header names the source, the commit, the
licence and exactly what was changed: downloads replaced by synthetic data of the same shape, sizes made small,
one added line that writes ``results.json``). The runner copies it with ``projects/_synthetic.py`` into a fresh
folder and runs it in a process of its own (forked from a server that imported torch once:
``tests/warm_python.py``), once unchanged and once with every ``lightning``/``pytorch_lightning`` import
rewritten to accelplug's (``lightning.pytorch`` and ``pytorch_lightning`` -> ``accelplug.pytorch``,
``lightning.fabric`` -> ``accelplug.fabric``, ``lightning`` -> ``accelplug``). The accelplug run must finish,
leave every file the Lightning run left (same relative paths), and, where the project is deterministic, report
the same values as Lightning within float rounding.

The accelplug runs that do not get through today are ``xfail(strict=True)`` with the exact first failure as
the reason; when a change makes one pass, strict xfail fails the suite until its entry in ``ACCELPLUG_TODAY`` is
deleted. Runs go two at a time (the selected projects are queued at the first test); each run gets one
intra-op thread, so the float results do not depend on the machine's load.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.warm_python import WarmPython

pytest.importorskip("lightning", reason="the real projects are compared against lightning, not installed here")

PROJECTS_DIR = Path(__file__).resolve().parent / "projects"
SUPPORT = "_synthetic.py"
RUN_TIMEOUT_S = 300
FRAMEWORKS = ("lightning", "accelplug")


@dataclass(frozen=True)
class Project:
    """One project run: its script, its command line, and what is compared between the two runs."""

    name: str
    script: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    #: keys of results.json (dotted for nested values) whose values must match Lightning's run
    same_values: tuple[str, ...] = ()
    #: keys of results.json that must be present (for projects that set no seed, the values differ run to run)
    same_keys: tuple[str, ...] = ()

    def __str__(self) -> str:
        return self.name


PROJECTS = (
    Project(
        "hydra_mnist",
        "hydra_mnist.py",
        args=("seed=12345", "trainer.max_epochs=3", "data.train_val_test_split=[512,128,128]", "logger=csv"),
        # the template pickles its network and optimizer partials into the hyper-parameters; torch>=2.6 loads
        # checkpoints weights-only by default, so Lightning itself needs torch's documented switch to test
        env={"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"},
        same_values=("metrics", "best_model", "epochs", "weights"),
    ),
    Project("uva_cnn_cifar", "uva_cnn_cifar.py", same_values=("results", "weights")),
    Project("uva_transformer_reverse", "uva_transformer_reverse.py", same_values=("results", "weights")),
    Project("uva_autoencoder", "uva_autoencoder.py", same_values=("val_loss", "test_loss", "weights")),
    Project("pl_gan", "pl_gan.py", same_values=("world_size", "global_step"), same_keys=("metrics", "weights")),
    Project(
        "pl_gan_ddp_find_unused",
        "pl_gan.py",
        args=("--devices", "2", "--strategy", "ddp_find_unused_parameters_true"),
        same_values=("world_size", "global_step"),
        same_keys=("metrics", "weights"),
    ),
    Project(
        "pl_cli_backbone",
        "pl_cli_backbone.py",
        args=("--trainer.max_epochs=2",),
        same_values=("test", "epochs", "predictions", "prediction_sum", "weights"),
    ),
    Project(
        "pl_finetuning_cli",
        "pl_finetuning_cli.py",
        args=("fit", "--trainer.max_epochs=3", "--finetuning.milestones=[1,2]", "--data.batch_size=16"),
        same_values=("param_groups", "lrs", "trainable", "metrics", "weights"),
    ),
    Project("pl_bug_report", "pl_bug_report.py", same_values=("global_step", "epoch", "metrics")),
    Project("pl_transformer", "pl_transformer.py", same_values=("test", "global_step", "weights")),
    Project(
        "fabric_image_classifier",
        "fabric_image_classifier.py",
        args=("--epochs", "1", "--save-model"),
        same_values=("test_loss", "accuracy", "weights", "device"),
    ),
    Project(
        "pl_dqn",
        "pl_dqn.py",
        same_values=("global_step", "epoch", "total_reward", "buffer", "weights", "target_weights", "logged"),
    ),
    Project(
        "pl_ppo",
        "pl_ppo.py",
        same_values=("global_step", "epoch", "metrics", "logged", "progress_bar", "hparams", "actor", "critic"),
    ),
    Project(
        "pl_autoencoder_cli",
        "pl_autoencoder_cli.py",
        args=("--trainer.max_epochs=2",),
        same_values=(
            "test",
            "epochs",
            "global_step",
            "best",
            "predictions",
            "prediction_sum",
            "weights",
            "hparams",
            "torchvision_available",
        ),
        same_keys=("instantiator",),  # "lightning.pytorch.cli.instantiate_module" under Lightning, None here
    ),
    Project(
        "pl_imagenet_cli",
        "pl_imagenet_cli.py",
        args=("fit", "--model.data_path=.", "--model.batch_size=16", "--model.workers=0", "--trainer.max_epochs=2"),
        # progress_bar last: the values before it match today
        same_values=(
            "metrics",
            "best_path",
            "best_score",
            "global_step",
            "lr",
            "weights",
            "batch_size",
            "progress_bar",
        ),
    ),
    Project(
        "tut_mnist_hello_world",
        "tut_mnist_hello_world.py",
        same_values=(
            "simple_steps",
            "steps_after_first_fit",
            "steps_after_second_fit",
            "epoch",
            "test_keys",
            "columns",
            "epochs_logged",
            "rows",
            "log_dir",
            "best",
        ),
        same_keys=("test",),  # the notebook seeds nothing: its split and values differ run to run
    ),
    Project(
        "docs_tuner",
        "docs_tuner.py",
        same_values=("batch_size", "suggested_lr", "lr_points", "train_loss", "weights"),
    ),
)

#: The first failure of each project under accelplug today (measured; the reason strict xfail reports).
#: Delete an entry when the project runs through: strict xfail turns a forgotten entry into a failure.
ACCELPLUG_TODAY: dict[str, str] = {}


# ---- the import swap ---------------------------------------------------------------------------------
_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)(?P<kw>from|import)[ \t]+(?P<root>pytorch_lightning|lightning)(?P<rest>(?:\.\w+)*)(?=[\s,])",
    re.M,
)


def _swapped_module(root: str, rest: str) -> str:
    # lightning.pytorch.x -> accelplug.pytorch.x, lightning.fabric.x -> accelplug.fabric.x, lightning -> accelplug
    return ("accelplug.pytorch" if root == "pytorch_lightning" else "accelplug") + rest


def to_accelplug(source: str) -> str:
    """``source`` with every ``import``/``from`` of lightning or pytorch_lightning pointing at accelplug."""
    return _IMPORT.sub(lambda m: f"{m['indent']}{m['kw']} {_swapped_module(m['root'], m['rest'])}", source)


def imported_roots(source: str) -> set[str]:
    """The top-level packages that ``source``'s import statements name (for checking the swap)."""
    return {m["root"] for m in _IMPORT.finditer(source)}


# ---- running ---------------------------------------------------------------------------------------------
@dataclass
class Run:
    framework: str
    folder: Path
    returncode: int
    output: str
    results: dict[str, Any] | None

    @property
    def first_failure(self) -> str:
        """The exception line that ended the run (the last ``Name: message`` line of its traceback)."""
        lines = [line.strip() for line in self.output.splitlines()]
        ends = [
            line
            for line in lines
            if re.match(r"^(\[rank\d+\]: )?[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b", line) and ":" in line
        ]
        if ends:
            return ends[-1]
        if self.returncode != 0:
            return f"exit status {self.returncode}: " + " | ".join(lines[-3:])
        return ""

    def produced(self) -> set[str]:
        """Files the run left, relative to its folder; TensorBoard event files by their common prefix."""
        names = set()
        for path in self.folder.rglob("*"):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            relative = path.relative_to(self.folder).as_posix()
            if relative in ("results.json", "output.txt", SUPPORT) or path.suffix == ".py":
                continue
            names.add(re.sub(r"events\.out\.tfevents\..*$", "events.out.tfevents.*", relative))
        return names


#: Variables that would change what a run does: accelplug's own settings and a surrounding distributed job's.
_LEFT_OUT = ("WORLD_SIZE", "LOCAL_WORLD_SIZE", "RANK", "LOCAL_RANK", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT")


def _environment(base: dict[str, str], project: Project) -> dict[str, str]:
    env = {k: v for k, v in base.items() if not k.startswith("ACCELPLUG_") and k not in _LEFT_OUT}
    env.update(
        {
            "ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1",  # as in the rest of the suite: installed plugins stay out
            "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONHASHSEED": "0",
            "PYTHONUNBUFFERED": "1",
            "COLUMNS": "120",
        }
    )
    env.update(project.env)
    return env


def _text(output: str | bytes | None) -> str:
    return output.decode(errors="replace") if isinstance(output, bytes) else output or ""


#: What Python reads once, at its start-up, of the runs' environment: the server they are forked from starts with it.
SERVER_ENV = {"PYTHONHASHSEED": "0", "PYTHONUNBUFFERED": "1"}


def project_python() -> WarmPython:
    """The server the runs are forked from (``tests/warm_python.py``): torch imported once, with the compiler
    front end every run imports anyway (``import lightning`` does, and so does accelplug's first optimizer);
    Lightning or accelplug and the project's own imports are imported fresh in each run, ``python SCRIPT``'s
    ``__main__`` being the script. What a DDP run starts for its other ranks are fresh Pythons."""
    return WarmPython(server_env=SERVER_ENV, preload=("torch._dynamo",))


def run_project(
    project: Project, framework: str, folder: Path, python: WarmPython, base_env: dict[str, str] | None = None
) -> Run:
    """One run in a fresh ``folder``, a process of its own leading its own process group, forked from ``python``;
    on a timeout the whole process group goes (DDP starts more processes)."""
    folder.mkdir(parents=True)
    for name in (project.script, SUPPORT):
        source = (PROJECTS_DIR / name).read_text()
        (folder / name).write_text(to_accelplug(source) if framework == "accelplug" else source)
    env = _environment(dict(os.environ) if base_env is None else base_env, project)
    try:
        done = python.run(
            [project.script, *project.args],
            env=env,
            cwd=folder,
            timeout=RUN_TIMEOUT_S,
            stderr_to_stdout=True,
            new_session=True,
        )
        output, returncode = done.stdout, done.returncode
    except subprocess.TimeoutExpired as timeout:  # its process group was killed
        output = _text(timeout.stdout) + f"\nTimeoutError: no end after {RUN_TIMEOUT_S} s"
        returncode = -1
    (folder / "output.txt").write_text(output)
    results_file = folder / "results.json"
    results = json.loads(results_file.read_text()) if results_file.exists() else None
    return Run(framework, folder, returncode, output, results)


@pytest.fixture(scope="session")
def warm_python() -> Iterator[WarmPython]:
    python = project_python()
    yield python
    python.close()


@pytest.fixture(scope="session")
def project_runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, warm_python: WarmPython
) -> Iterator[Callable[[Project], dict[str, Run]]]:
    """The two runs of a project. At the first request every selected project's runs are queued on two workers,
    in the order the tests ask for them, so both cores stay busy while the tests wait in turn."""
    selected = {
        item.callspec.params["project"].name
        for item in request.session.items
        if hasattr(item, "callspec") and isinstance(item.callspec.params.get("project"), Project)
    }
    base_env = dict(os.environ)  # now, before any test's monkeypatching: the runs start from this one
    pool = ThreadPoolExecutor(max_workers=2)
    futures: dict[str, dict[str, Future[Run]]] = {}
    lock = threading.Lock()

    def submit(project: Project) -> None:
        base = tmp_path_factory.mktemp(project.name)
        futures[project.name] = {
            fw: pool.submit(run_project, project, fw, base / fw, warm_python, base_env) for fw in FRAMEWORKS
        }

    def runs(project: Project) -> dict[str, Run]:
        with lock:
            if not futures:
                for queued in PROJECTS:
                    if queued.name in selected:
                        submit(queued)
            if project.name not in futures:
                submit(project)
        return {fw: future.result() for fw, future in futures[project.name].items()}

    yield runs
    pool.shutdown(cancel_futures=True)


# ---- checks ------------------------------------------------------------------------------------------------
def _lookup(results: dict[str, Any], dotted: str) -> Any:
    value: Any = results
    for part in dotted.split("."):
        value = value[part]
    return value


def _close(actual: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(_close(actual[k], expected[k]) for k in expected)
        )
    if isinstance(expected, list):
        return isinstance(actual, list) and len(actual) == len(expected) and all(map(_close, actual, expected))
    if isinstance(expected, float) and isinstance(actual, (int, float)):
        return math.isclose(actual, expected, rel_tol=1e-4, abs_tol=1e-6)
    return bool(actual == expected)


def _assert_completed(run: Run, project: Project) -> dict[str, Any]:
    tail = "\n".join(run.output.splitlines()[-25:])
    assert run.returncode == 0, f"{project} under {run.framework}: {run.first_failure}\n--- output tail ---\n{tail}"
    assert run.results is not None, f"{project} under {run.framework} finished without writing results.json\n{tail}"
    missing = [key for key in (*project.same_values, *project.same_keys) if key.split(".")[0] not in run.results]
    assert not missing, f"{project} under {run.framework}: results.json lacks {missing}"
    return run.results


def _accelplug_param(project: Project) -> Any:
    reason = ACCELPLUG_TODAY.get(project.name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(project, marks=marks, id=project.name)


@pytest.mark.parametrize("project", PROJECTS, ids=str)
def test_project_runs_under_lightning(project: Project, project_runs: Callable[[Project], dict[str, Run]]) -> None:
    run = project_runs(project)["lightning"]
    _assert_completed(run, project)
    assert run.produced(), f"{project} left no files under Lightning"


@pytest.mark.parametrize("project", [_accelplug_param(p) for p in PROJECTS])
def test_project_runs_unchanged_under_accelplug(
    project: Project, project_runs: Callable[[Project], dict[str, Run]]
) -> None:
    runs = project_runs(project)
    expected = _assert_completed(runs["lightning"], project)
    actual = _assert_completed(runs["accelplug"], project)
    missing_files = runs["lightning"].produced() - runs["accelplug"].produced()
    assert not missing_files, f"{project}: Lightning wrote {sorted(missing_files)}, accelplug did not"
    for key in project.same_values:
        assert _close(_lookup(actual, key), _lookup(expected, key)), (
            f"{project}: {key} is {_lookup(actual, key)!r} under accelplug, {_lookup(expected, key)!r} under Lightning"
        )


# ---- the runner's own parts ------------------------------------------------------------------------------
def test_import_swap_rewrites_every_lightning_import() -> None:
    source = (
        "import lightning as L\n"
        "import pytorch_lightning as pl\n"
        "from lightning import Callback, Trainer\n"
        "from lightning.pytorch.callbacks import EarlyStopping\n"
        "from pytorch_lightning.callbacks import ModelCheckpoint\n"
        "from lightning.fabric import Fabric\n"
        "    from lightning.pytorch.cli import LightningCLI\n"
        "from lightning_utilities.core.rank_zero import rank_zero_only\n"
    )
    assert to_accelplug(source) == (
        "import accelplug as L\n"
        "import accelplug.pytorch as pl\n"
        "from accelplug import Callback, Trainer\n"
        "from accelplug.pytorch.callbacks import EarlyStopping\n"
        "from accelplug.pytorch.callbacks import ModelCheckpoint\n"
        "from accelplug.fabric import Fabric\n"
        "    from accelplug.pytorch.cli import LightningCLI\n"
        "from lightning_utilities.core.rank_zero import rank_zero_only\n"
    )


@pytest.mark.parametrize("script", sorted(p.name for p in PROJECTS_DIR.glob("*.py") if p.name != SUPPORT))
def test_every_project_file_is_run_and_left_with_no_lightning_import_after_the_swap(script: str) -> None:
    source = (PROJECTS_DIR / script).read_text()
    assert any(p.script == script for p in PROJECTS), f"{script} is in projects/ but no Project runs it"
    assert imported_roots(source), f"{script} imports no Lightning package: nothing would be compared"
    assert imported_roots(to_accelplug(source)) == set()
    assert "Source:" in source and "Licence:" in source and "Changes:" in source, f"{script} lacks its header"


def test_support_file_imports_neither_framework() -> None:
    source = (PROJECTS_DIR / SUPPORT).read_text()
    assert imported_roots(source) == set()
    assert not re.search(r"^\s*(from|import)\s+accelplug", source, re.M)


def test_produced_files_are_compared_by_relative_path(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    (folder / "logs" / "version_0").mkdir(parents=True)
    (folder / "logs" / "version_0" / "events.out.tfevents.123.host.1.0").write_text("")
    (folder / "logs" / "version_0" / "epoch=0-step=4.ckpt").write_text("")
    (folder / "results.json").write_text("{}")
    run = Run("lightning", folder, 0, "", {})
    assert run.produced() == {"logs/version_0/events.out.tfevents.*", "logs/version_0/epoch=0-step=4.ckpt"}


def test_first_failure_is_the_last_exception_line() -> None:
    output = "Traceback (most recent call last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'x'\n"
    assert Run("accelplug", Path(), 1, output, None).first_failure == "ModuleNotFoundError: No module named 'x'"
    assert _close({"a": [1.0, 2]}, {"a": [1.00001, 2]}) and not _close({"a": 1.0}, {"a": 1.1})


def test_a_run_past_its_time_is_ended_with_the_processes_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, warm_python: WarmPython
) -> None:
    projects = tmp_path / "projects"
    projects.mkdir()
    (projects / SUPPORT).write_text("")
    (projects / "sleeper.py").write_text(
        "import pathlib, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "pathlib.Path('child.pid').write_text(str(child.pid))\n"
        "time.sleep(120)\n"
    )
    monkeypatch.setattr(sys.modules[__name__], "PROJECTS_DIR", projects)
    monkeypatch.setattr(sys.modules[__name__], "RUN_TIMEOUT_S", 3)
    run = run_project(Project("sleeper", "sleeper.py"), "lightning", tmp_path / "run", warm_python)
    assert run.returncode == -1
    assert run.first_failure == "TimeoutError: no end after 3 s"
    child = int((tmp_path / "run" / "child.pid").read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    pytest.fail(f"the run's child process {child} outlived the timeout")
