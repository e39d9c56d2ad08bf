"""Run Lightning's own test suite on Lightning and on accelplug (through ``accelplug.interop``), file by file.

    python scripts/lightning_tests/run.py materialize                 # Lightning's tests at 2.6.5 into the cache
    python scripts/lightning_tests/run.py run lightning slice         # "before": the slice on Lightning itself
    python scripts/lightning_tests/run.py run accelplug slice         # "after": the same files on accelplug
    python scripts/lightning_tests/run.py run accelplug rest          # the rest of the CPU suite
    python scripts/lightning_tests/run.py report                      # docs/lightning-test-suite.md + .json
    python scripts/lightning_tests/run.py triage                      # failures sorted into behaviours
    python scripts/lightning_tests/run.py show accelplug tests_pytorch/models/test_hooks.py::test_x  # one test

A developer tool, not a CI step: CI cannot fetch Lightning's repository. ``materialize`` reads a local clone or
mirror of ``Lightning-AI/pytorch-lightning`` (``--git-dir``) and writes ``tests/tests_pytorch`` and
``tests/tests_fabric`` of the tag into the cache folder (``$LIGHTNING_TESTS_CACHE``, default
``/work/cache/lightning-2.6.5``), outside this repository.

``run FRAMEWORK SET`` starts one pytest process per test file (a file that hangs or crashes its interpreter
costs only itself; ``--chunk folder``: one per folder, which saves the 10-20 s each start costs), with
Lightning's pytest settings (``pytest.ini`` here), ``-p no:cacheprovider``, a per-test timeout and a per-file
``timeout``; each test's outcome goes to ``<out>/<framework>-<mode>/results.jsonl``.
Files already run are not run again (``--again`` to redo them). On accelplug the run is started by
``python -m accelplug.interop -m pytest``, so ``import lightning`` is accelplug in the test process and in every
Python process it starts; ``--mode placeholders`` (the default) adds the placeholder import (``ltshim.py``),
``--mode plain`` runs the test files under the bare redirect (the harness keeps its stand-ins).

Sets: ``slice`` (issue 29's slice), ``rest`` (the rest of the CPU suite), or test files/folders relative to the
tests folder (``tests_pytorch/loops``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))

from common import DEFAULT_CACHE, LIGHTNING_TAG  # noqa: E402

DEFAULT_OUT = DEFAULT_CACHE / "results"

#: Issue 29's slice: the files whose Lightning-passing tests are the measure (legacy checkpoints need downloads).
SLICE = [
    "tests_pytorch/trainer/flags",
    "tests_pytorch/trainer/logging_",
    "tests_pytorch/trainer/optimization",
    "tests_pytorch/trainer/test_dataloaders.py",
    "tests_pytorch/models/test_hooks.py",
    "tests_pytorch/callbacks/test_early_stopping.py",
    "tests_pytorch/callbacks/test_lr_monitor.py",
    "tests_pytorch/callbacks/progress/test_tqdm_progress_bar.py",
    "tests_pytorch/checkpointing",
    "tests_pytorch/loggers/test_csv.py",
    "tests_pytorch/loggers/test_tensorboard.py",
    "tests_pytorch/core/test_lightning_module.py",
    "tests_pytorch/core/test_datamodules.py",
    "tests_pytorch/tuner",
    "tests_fabric/test_fabric.py",
]
SLICE_EXCLUDED = ["tests_pytorch/checkpointing/test_legacy_checkpoints.py"]

#: The rest of the suite that runs on a CPU (issue 29), minus the slice's files.
REST = [
    "tests_pytorch/trainer/test_trainer.py",
    "tests_pytorch/loops",
    "tests_pytorch/models",
    "tests_pytorch/callbacks",
    "tests_pytorch/loggers",
    "tests_pytorch/core/test_saving.py",
    "tests_pytorch/strategies",
    "tests_pytorch/profilers",
    "tests_pytorch/plugins",
    "tests_pytorch/utilities",
    "tests_pytorch/test_cli.py",
]


def collect_files(tests_dir: Path, entries: list[str], exclude: tuple[str, ...] = ()) -> list[str]:
    """The ``test_*.py`` files under ``entries`` (relative to ``tests_dir``), sorted, minus ``exclude``."""
    files: set[str] = set()
    for entry in entries:
        path = tests_dir / entry
        if path.is_dir():
            files.update(str(f.relative_to(tests_dir)) for f in path.rglob("test_*.py"))
        elif path.is_file():
            files.add(entry)
        else:
            raise SystemExit(f"no such test file or folder: {path}")
    return sorted(files - set(exclude))


def named_set(tests_dir: Path, name: list[str]) -> list[str]:
    if name == ["slice"]:
        return collect_files(tests_dir, SLICE, tuple(SLICE_EXCLUDED))
    if name == ["rest"]:
        slice_files = set(collect_files(tests_dir, SLICE))
        return [f for f in collect_files(tests_dir, REST) if f not in slice_files]
    return collect_files(tests_dir, name)


def materialize(args: argparse.Namespace) -> int:
    target = args.cache
    target.mkdir(parents=True, exist_ok=True)
    # the list of released versions is read by tests_pytorch/utilities/migration (the checkpoints are not needed)
    paths = ["tests/tests_pytorch", "tests/tests_fabric", "tests/legacy/back-compatible-versions.txt"]
    archive = subprocess.Popen(
        ["git", f"--git-dir={args.git_dir}", "archive", args.tag, *paths],
        stdout=subprocess.PIPE,
    )
    subprocess.run(["tar", "x", "-C", str(target)], stdin=archive.stdout, check=True)
    if archive.wait() != 0:
        return archive.returncode
    (target / "TAG").write_text(args.tag + "\n")
    print(f"Lightning {args.tag}'s tests are in {target / 'tests'}")
    return 0


def _memory_cap(gigabytes: float) -> Callable[[], None]:
    """A ``preexec_fn`` capping the test process's address space: a test gone wrong fails with MemoryError
    instead of pushing a shared machine into its OOM killer (one did: 23 GB while collecting test_cli)."""

    def cap() -> None:
        limit = int(gigabytes * 1024**3)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return cap


def _environment(framework: str, mode: str, tests_dir: Path, results: Path, substitutions: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        LT_FRAMEWORK=framework,
        LT_PLACEHOLDERS={"placeholders": "1", "plain": "harness"}.get(mode, "0") if framework == "accelplug" else "0",
        LT_TESTS_DIR=str(tests_dir),
        LT_RESULTS=str(results),
        LT_SUBSTITUTIONS=str(substitutions),
    )
    paths = [str(HERE)]
    if framework == "accelplug":
        paths.append(str(HERE / "child"))  # after accelplug.interop's own start-up hook, which runs this one
    paths += [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def run(args: argparse.Namespace) -> int:
    tests_dir = args.cache / "tests"
    files = named_set(tests_dir, args.set)
    mode = args.mode if args.framework == "accelplug" else "lightning"
    out = args.out / f"{args.framework}-{mode}"
    out.mkdir(parents=True, exist_ok=True)
    results, substitutions, done_log = out / "results.jsonl", out / "substitutions.jsonl", out / "files.jsonl"
    done = {}
    if done_log.exists():
        done = {row["file"]: row for row in map(json.loads, done_log.read_text().splitlines())}
    if args.again:
        _forget(results, files)
        done = {name: row for name, row in done.items() if name not in files}
        done_log.write_text("".join(json.dumps(row) + "\n" for row in done.values()))
    launcher = [sys.executable]
    if args.framework == "accelplug":
        launcher += ["-m", "accelplug.interop"]
    start_all = time.monotonic()
    pending = [f for f in files if f not in done]
    groups = _groups(pending, args.chunk)
    for index, group in enumerate(groups, 1):
        command = [
            "timeout", "--kill-after=30", str(args.file_timeout * len(group)),
            *launcher, "-m", "pytest", *group,
            "-c", str(HERE / "pytest.ini"), f"--rootdir={tests_dir}",
            "-p", "ltplugin", "-p", "no:cacheprovider", "--continue-on-collection-errors",
            "-q", "--no-header", "-rN", f"--timeout={args.test_timeout}", "-o", "timeout_method=signal",
            *args.pytest_args,
        ]  # fmt: skip
        start = time.monotonic()
        env = _environment(args.framework, mode, tests_dir, results, substitutions)
        completed = subprocess.run(
            command, cwd=tests_dir, env=env, capture_output=True, text=True, preexec_fn=_memory_cap(args.memory_gb)
        )
        seconds = round(time.monotonic() - start, 1)
        tail = "\n".join((completed.stdout + completed.stderr).strip().splitlines()[-3:])
        with done_log.open("a") as log:
            for file in group:
                row = {"file": file, "rc": completed.returncode, "seconds": seconds, "tail": tail[-2000:]}
                log.write(json.dumps(row) + "\n")
        last = tail.splitlines()[-1] if tail else ""
        shown = group[0] if len(group) == 1 else f"{Path(group[0]).parent}/ ({len(group)} files)"
        print(f"[{index}/{len(groups)}] {shown}: rc={completed.returncode} {seconds}s  {last}", flush=True)
    print(f"{args.framework}/{mode}: {len(files)} files, {round(time.monotonic() - start_all)} s this time")
    return 0


def _groups(files: list[str], chunk: str) -> list[list[str]]:
    """One pytest process per file (``chunk="file"``) or per folder (``"folder"``: less start-up time per test)."""
    if chunk == "file":
        return [[f] for f in files]
    folders: dict[str, list[str]] = {}
    for file in files:
        folders.setdefault(str(Path(file).parent), []).append(file)
    return list(folders.values())


def show(args: argparse.Namespace) -> int:
    """Run some tests in the terminal, with their full tracebacks (nothing recorded): to look at a failure."""
    tests_dir = args.cache / "tests"
    launcher = [sys.executable] + (["-m", "accelplug.interop"] if args.framework == "accelplug" else [])
    mode = "placeholders" if args.framework == "accelplug" and not args.plain else "plain"
    env = _environment(args.framework, mode, tests_dir, Path(os.devnull), Path(os.devnull))
    command = [
        *launcher, "-m", "pytest", *args.tests, "-c", str(HERE / "pytest.ini"), f"--rootdir={tests_dir}",
        "-p", "ltplugin", "-p", "no:cacheprovider", "-q", "--no-header", f"--tb={args.tb}", *args.pytest_args,
    ]  # fmt: skip
    return subprocess.run(command, cwd=tests_dir, env=env, preexec_fn=_memory_cap(args.memory_gb)).returncode


def _forget(results: Path, files: list[str]) -> None:
    if not results.exists():
        return
    kept = [line for line in results.read_text().splitlines() if json.loads(line)["nodeid"].split("::")[0] not in files]
    results.write_text("".join(line + "\n" for line in kept))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="holds tests/ (default %(default)s)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results folder (default %(default)s)")
    parser.add_argument(
        "--memory-gb", type=float, default=10.0, help="address-space cap of each test process (default %(default)s)"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    fetch = commands.add_parser("materialize", help="write Lightning's tests of a tag into the cache folder")
    fetch.add_argument("--git-dir", default="/work/.mirror/Lightning-AI+pytorch-lightning/repo")
    fetch.add_argument("--tag", default=LIGHTNING_TAG)

    runner = commands.add_parser("run", help="run a set of test files on one framework")
    runner.add_argument("framework", choices=["lightning", "accelplug"])
    runner.add_argument("set", nargs="+", help="slice, rest, or test files/folders relative to the tests folder")
    runner.add_argument("--mode", choices=["placeholders", "plain"], default="placeholders")
    runner.add_argument("--again", action="store_true", help="run files already run again")
    runner.add_argument("--test-timeout", type=int, default=180, help="seconds per test (pytest-timeout)")
    runner.add_argument("--file-timeout", type=int, default=1800, help="seconds per file")
    runner.add_argument(
        "--chunk", choices=["file", "folder"], default="file", help="one pytest process per file or per folder"
    )
    runner.add_argument("--pytest-args", nargs=argparse.REMAINDER, default=[], help="passed on to pytest")

    shower = commands.add_parser("show", help="run some tests in the terminal with full tracebacks")
    shower.add_argument("framework", choices=["lightning", "accelplug"])
    shower.add_argument("tests", nargs="+", help="node ids relative to the tests folder")
    shower.add_argument("--plain", action="store_true", help="accelplug without placeholders")
    shower.add_argument("--tb", default="short", help="pytest's --tb (default %(default)s)")
    shower.add_argument("--pytest-args", nargs=argparse.REMAINDER, default=[], help="passed on to pytest")

    reporter = commands.add_parser("report", help="write the per-file table and the failures' JSON")
    reporter.add_argument("--markdown", type=Path, default=REPO / "docs" / "lightning-test-suite.md")
    reporter.add_argument("--json", type=Path, default=REPO / "docs" / "lightning-test-suite-failures.json")

    sorter = commands.add_parser("triage", help="sort the failures into behaviour items (triage_items.py)")
    sorter.add_argument("--markdown", type=Path, default=None, help="default: <cache>/lightning-triage.md")

    args = parser.parse_args()
    if args.command == "materialize":
        return materialize(args)
    if args.command == "run":
        return run(args)
    if args.command == "show":
        return show(args)
    if args.command == "triage":
        from triage import write_triage

        if args.markdown is None:
            args.markdown = args.cache / "lightning-triage.md"
        return write_triage(args)
    from report import write_report

    return write_report(args)


if __name__ == "__main__":
    sys.exit(main())
