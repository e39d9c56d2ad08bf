"""Eight kinds of misbehaving plugin, each a real distribution installed by pip, run three ways.

Each kind is asked by ``accelplug list --json``, ``Trainer(accelerator="auto")`` and
``get_registry().available()`` in a process of its own (24 runs, a few in parallel), forked from a server
that imported torch once (``tests/warm_python.py``): accelplug, its registry and the plugin are imported
fresh in every run, and the runs do not each pay torch's import. A run is *good* when
it ends on its own, well inside the time the plugin would have cost (no hang), exits 0 (no crash),
names the plugin and the cause where the plugin broke its contract (not unreported) and ``auto``
picks a working accelerator. Used by ``test_misbehaving_plugins.py``; run it as a script to print the
matrix::

    .venv/bin/python tests/foundation/misbehaving_plugins.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.warm_python import WarmPython

REPO = Path(__file__).resolve().parents[2]
DISTS = REPO / "tests" / "plugin_dists" / "misbehaving"

#: A run that takes longer than this has waited for the plugin instead of bounding it.
RUN_LIMIT_S = 60.0
#: The slow-probe plugin sleeps 600 s; the bound tests give it.
SMALL_BOUND_S = "1"


@dataclass(frozen=True)
class Kind:
    """One misbehaviour: its entry point and distribution, what it must be reported with, what auto picks."""

    entry_point: str
    distribution: str
    #: Text every report of it must contain (empty for a plugin that breaks no contract).
    causes: tuple[str, ...]
    #: What accelerator="auto" must pick.
    picks: str
    env: dict[str, str] = field(default_factory=dict)

    @property
    def misbehaves(self) -> bool:
        return bool(self.causes)


KINDS: dict[str, Kind] = {
    "slow is_available": Kind(
        "slow_probe",
        "accelplug-testplugin-slowprobe",
        ("slowprobe.is_available() did not return within", "ACCELPLUG_PLUGIN_TIMEOUT_S=1"),
        "cpu",
        {"ACCELPLUG_PLUGIN_TIMEOUT_S": SMALL_BOUND_S},
    ),
    "raising is_available": Kind(
        "raising_probe",
        "accelplug-testplugin-raisingprobe",
        ("raisingprobe.is_available() raised RuntimeError: the NPU driver is not loaded",),
        "cpu",
    ),
    "junk device_count": Kind(
        "junk_count",
        "accelplug-testplugin-junkcount",
        ("device_count() returned '3' (str)", "device_count() returned None", "device_count() returned -1"),
        "cpu",
    ),
    "sys.exit(3) at import": Kind(
        "exits_at_import", "accelplug-testplugin-exits", ("called sys.exit(3) while being imported",), "cpu"
    ),
    "20 MB printed at import": Kind("noisy_import", "accelplug-testplugin-noisy", (), "cpu"),
    "2 s import": Kind("slow_import", "accelplug-testplugin-slowimport", (), "slowimport"),
    "misspelt hook name": Kind(
        "misspelt_hook",
        "accelplug-testplugin-misspelt",
        ("'register_accelerator'", "Did you mean 'register_accelerators'?"),
        "cpu",
    ),
    "single-device-only, 2 devices": Kind("single_device_only", "accelplug-testplugin-singledevice", (), "toyaccel"),
}

TRAINER = """
from accelplug import Trainer
t = Trainer(accelerator="auto")
print()  # a plugin may have written to stdout without a final newline
print("PICKED", t.accelerator.name, t.num_devices, t.strategy.name)
print("WHY", t.selection.reason)
"""

AVAILABLE = """
import json, time
from accelplug import get_registry
r = get_registry()
begin = time.perf_counter(); first = r.available(); first_s = time.perf_counter() - begin
begin = time.perf_counter(); again = r.available(); again_s = time.perf_counter() - begin
print()  # a plugin may have written to stdout without a final newline
print(json.dumps({"available": first, "again": again, "first_s": first_s, "again_s": again_s,
                  "failures": [str(f) for f in r.failures()]}))
"""

COMMANDS: dict[str, list[str]] = {
    "list --json": ["-m", "accelplug", "list", "--json"],
    "Trainer(auto)": ["-c", TRAINER],
    "available()": ["-c", AVAILABLE],
}


@dataclass(frozen=True)
class Run:
    returncode: int | None  # None: still running at RUN_LIMIT_S + 30, killed
    stdout: str
    stderr: str
    seconds: float


def sources() -> list[Path]:
    """The source tree of every misbehaving distribution."""
    return sorted(p for p in DISTS.iterdir() if (p / "pyproject.toml").exists())


def install(target: Path) -> Path:
    """pip-install every misbehaving distribution into ``target`` (for a child's PYTHONPATH)."""
    from tests.plugin_kit.sites import install_site

    return install_site(target, sources())


def child_env(site: Path, extra: dict[str, str]) -> dict[str, str]:
    """This environment without any ACCELPLUG_* setting, GPUs hidden, ``site`` importable, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCELPLUG_")}
    for name in ("WORLD_SIZE", "LOCAL_WORLD_SIZE", "RANK", "LOCAL_RANK"):
        env.pop(name, None)
    env["CUDA_VISIBLE_DEVICES"] = ""  # the same expectations on a GPU machine as on the CPU-only CI
    config = site / "empty-config.toml"  # no saved defaults (a file named by ACCELPLUG_CONFIG_FILE must exist)
    config.touch()
    env["ACCELPLUG_CONFIG_FILE"] = str(config)
    env["COLUMNS"] = "200"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    env.update(extra)
    return env


def run(python: WarmPython, args: list[str], env: dict[str, str], cwd: Path = REPO) -> Run:
    """``python ARGS`` with stdin empty (a command that prompts reads end-of-file), timed, killed if it hangs."""
    begin = time.perf_counter()
    try:
        done = python.run(args, env=env, timeout=RUN_LIMIT_S + 30, cwd=cwd)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return Run(None, out, err, time.perf_counter() - begin)
    return Run(done.returncode, done.stdout, done.stderr, time.perf_counter() - begin)


def run_all(jobs: Iterable[tuple[str, list[str], dict[str, str]]], workers: int = 4) -> dict[str, Run]:
    """Run ``(key, args, env)`` jobs, ``workers`` at a time (most of a run is a plugin's sleep); results by key."""
    from tests.warm_python import WarmPython

    jobs = list(jobs)
    python = WarmPython()
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {key: pool.submit(run, python, args, env) for key, args, env in jobs}
            return {key: future.result() for key, future in futures.items()}
    finally:
        python.close()


def matrix_jobs(site: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    return [
        (f"{kind_name} | {command}", args, child_env(site, {"ACCELPLUG_PLUGINS": kind.entry_point, **kind.env}))
        for kind_name, kind in KINDS.items()
        for command, args in COMMANDS.items()
    ]


def _last_json(stdout: str) -> dict:  # type: ignore[type-arg]
    """The JSON object a ``-c`` command printed last (a noisy plugin may have printed before it)."""
    return json.loads(stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def verdict(kind: Kind, command: str, result: Run) -> str:
    """'ok', or what is wrong with the run: 'hang', 'crash', 'unreported: ...', 'wrong pick: ...'."""
    if result.returncode is None or result.seconds > RUN_LIMIT_S:
        return f"hang ({result.seconds:.0f} s)"
    if result.returncode != 0:
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return f"crash (exit {result.returncode}: {tail})"
    try:
        if command == "list --json":
            report = json.loads(result.stdout)
            picked = report["available"][0]
            reported = json.dumps(report["failed_plugins"])
            named = any(
                f["plugin"] == kind.entry_point and f["distribution"] == kind.distribution
                for f in report["failed_plugins"]
            )
        elif command == "Trainer(auto)":
            lines = result.stdout.strip().splitlines()
            picked = next(line for line in lines if line.startswith("PICKED")).split()[1]
            reported = result.stderr + "\n".join(lines[-2:])
            named = kind.entry_point in reported and kind.distribution in reported
        else:
            report = _last_json(result.stdout)
            picked = report["available"][0]
            reported = "\n".join(report["failures"])
            named = kind.entry_point in reported and kind.distribution in reported
    except (ValueError, KeyError, IndexError, StopIteration) as exc:
        return f"unreadable output ({type(exc).__name__}: {exc})"
    if kind.misbehaves:
        missing = [c for c in kind.causes if c not in reported]
        if not named or missing:
            return f"unreported: plugin named={named}, causes missing={missing}"
    if picked != kind.picks:
        return f"wrong pick: {picked!r}, expected {kind.picks!r}"
    return "ok"


def main() -> int:
    sys.path.insert(0, str(REPO))  # run as a script: ``tests`` importable from the checkout
    with tempfile.TemporaryDirectory() as tmp:
        site = install(Path(tmp))
        begin = time.perf_counter()
        results = run_all(matrix_jobs(site))
        wall = time.perf_counter() - begin
    bad = 0
    print(f"{'kind':32} {'command':15} {'exit':>4} {'seconds':>7}  verdict")
    for key, result in results.items():
        kind_name, command = key.split(" | ")
        outcome = verdict(KINDS[kind_name], command, result)
        bad += outcome != "ok"
        print(f"{kind_name:32} {command:15} {result.returncode!s:>4} {result.seconds:7.1f}  {outcome}")
    print(f"{len(results)} runs in {wall:.0f} s (4 at a time); hung, crashed, unreported or wrong pick: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
