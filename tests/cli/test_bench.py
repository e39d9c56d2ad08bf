"""``accelplug bench`` as a user runs it: processes of their own on the tiny CNN.

The runs are children forked from a server that imported torch once (``tests/warm_python.py``), with
accelplug imported fresh in each; the progress-bar test is a real ``python -m accelplug bench`` under a
pseudo-terminal.

Each run is a few steps (seconds); the child gets ``OMP_NUM_THREADS=1`` so that it does not fight
the other tests for the cores. The refusals, which never reach a run, are ``accelplug.cli.main`` in the
test process (``conftest.cli``). What is checked is what a person relies on: the files appear by
default and decode, the spread is there, a CPU-only machine says so instead of printing a 1.00×
speed-up, the progress advances per step, every bad input is one line and exit code 2 before
anything runs, and ``--baseline`` reports the ratio to a hand-written loop.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from accelplug.bench.report import BenchReport
from tests.warm_python import WarmPython

RunBench = Callable[..., subprocess.CompletedProcess[str]]
RunCli = Callable[..., subprocess.CompletedProcess[str]]
#: 2 rounds of 1 warm-up + 2 timed steps per phase: enough for a spread, seconds on any machine.
FAST = ("--quick", "--steps", "2", "--warmup", "1", "--repeats", "2")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _env(home: Path) -> dict[str, str]:
    """What ``tests/cli/conftest.py``'s ``cli_env`` gives, for fixtures that outlive one test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCELPLUG_")}
    (home / "home").mkdir(exist_ok=True)
    env.update(HOME=str(home / "home"), XDG_CONFIG_HOME=str(home), ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD="1")
    env.update(COLUMNS="200", OMP_NUM_THREADS="1")  # one thread: no fight with other tests for the cores
    return env


def _runner(python: WarmPython, env: dict[str, str], cwd: Path) -> RunBench:
    """``run("--quick", ...)`` runs ``accelplug bench ...`` in ``cwd`` (where the default folder goes).

    The process is a child of ``python``, which imported torch once (``tests/warm_python.py``); accelplug and
    the bench are imported fresh in it, as in ``python -m accelplug``. ``hide`` names packages made
    unimportable in the child (``sys.modules[name] = None``, Python's own marker for "no such module"), to see
    what a machine without them gets.
    """

    def run(
        *args: str, extra: dict[str, str] | None = None, hide: tuple[str, ...] = (), timeout: float = 240
    ) -> subprocess.CompletedProcess[str]:
        prelude = "".join(f"sys.modules[{name!r}] = None; " for name in hide)
        code = f"import sys; {prelude}from accelplug.cli import main; main()"
        return python.run(["-c", code, "bench", *args], env={**env, **(extra or {})}, cwd=cwd, timeout=timeout)

    return run


@pytest.fixture(scope="module")
def warm_python() -> Iterator[WarmPython]:
    python = WarmPython()
    yield python
    python.close()


@pytest.fixture
def bench(warm_python: WarmPython, tmp_path: Path) -> RunBench:
    return _runner(warm_python, _env(tmp_path), tmp_path)


@dataclass(frozen=True)
class Run:
    """One finished ``accelplug bench`` process: its output, folder, and the files it said it wrote."""

    result: subprocess.CompletedProcess[str]
    cwd: Path

    @property
    def files(self) -> dict[str, Path]:
        lines = self.result.stdout.splitlines()
        paths = [self.cwd / line.removeprefix("wrote ") for line in lines if line.startswith("wrote ")]
        return {p.suffix: p for p in paths}

    @property
    def report(self) -> BenchReport:
        return BenchReport.model_validate_json(self.files[".json"].read_text(encoding="utf-8"))


def _finished(result: subprocess.CompletedProcess[str], cwd: Path) -> Run:
    assert result.returncode == 0, result.stderr
    return Run(result, cwd)


@pytest.fixture(scope="module")
def quick(warm_python: WarmPython, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """One CPU-only run with the hand-written baseline, shared by the tests that read its output."""
    cwd = tmp_path_factory.mktemp("quick")
    args = ("--quick", "--steps", "2", "--warmup", "2", "--repeats", "2", "--baseline", "--accelerators", "cpu")
    return _finished(_runner(warm_python, _env(cwd), cwd)(*args), cwd)


@pytest.fixture(scope="module")
def without_matplotlib(warm_python: WarmPython, tmp_path_factory: pytest.TempPathFactory) -> Run:
    """A run on a machine without matplotlib, files sent elsewhere with --out and --json."""
    cwd = tmp_path_factory.mktemp("nompl")
    args = (*FAST, "--repeats", "1", "--out", "results", "--json", "elsewhere/r.json")
    return _finished(_runner(warm_python, _env(cwd), cwd)(*args, hide=("matplotlib",)), cwd)


def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("accelplug: error: ")
    return lines[0]


# ---- files ----------------------------------------------------------------------------------------
def test_a_run_writes_json_png_and_markdown_into_a_new_folder_by_default(quick: Run) -> None:
    assert set(quick.files) == {".json", ".png", ".md"}
    (folder,) = (quick.cwd / "accelplug_bench").iterdir()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d", folder.name)
    assert {path.parent for path in quick.files.values()} == {folder}


def test_the_json_is_a_bench_report_of_trainer_measurements(quick: Run) -> None:
    report = quick.report
    assert report.schema_version == 2
    assert report.command.startswith("accelplug bench --quick")
    assert {(m.model, m.accelerator, m.phase, m.measured_with) for m in report.results} == {
        ("tinycnn", "cpu", "train", "Trainer.fit"),
        ("tinycnn", "cpu", "eval", "Trainer.validate"),
    }
    for m in report.results:
        assert m.throughput == pytest.approx(m.batch_size * m.steps / m.seconds)


def test_the_chart_is_a_png_that_decodes(quick: Run) -> None:
    from PIL import Image

    with quick.files[".png"].open("rb") as png:
        assert png.read(8) == PNG_SIGNATURE
    with Image.open(quick.files[".png"]) as image:
        image.load()
        assert image.size[0] >= 800 and image.size[1] >= 500


def test_the_markdown_holds_the_tables_and_the_command(quick: Run) -> None:
    text = quick.files[".md"].read_text(encoding="utf-8")
    assert text.startswith("`accelplug bench --quick")
    assert "| tiny CNN (bs 64) | cpu | train |" in text
    assert "## accelplug Trainer against a hand-written loop" in text


def test_out_and_json_choose_where_the_files_go(without_matplotlib: Run) -> None:
    files, cwd = without_matplotlib.files, without_matplotlib.cwd
    assert files[".json"] == cwd / "elsewhere" / "r.json"
    assert files[".md"] == cwd / "results" / "bench.md"
    assert not (cwd / "accelplug_bench").exists()


# ---- what the figures say -------------------------------------------------------------------------
def test_every_figure_has_its_spread_over_the_rounds(quick: Run) -> None:
    for m in quick.report.results:
        assert len(m.rounds) == 2
        assert m.throughput_min <= m.throughput <= m.throughput_max
        assert m.throughput_min == pytest.approx(m.batch_size * m.steps / max(m.rounds))
        assert m.throughput_max == pytest.approx(m.batch_size * m.steps / min(m.rounds))
    assert "slowest–fastest round" in quick.result.stdout
    assert re.search(r"\d–\d", quick.result.stdout), "the spread line under each median"


def test_a_cpu_only_run_reports_throughput_without_a_speedup(quick: Run) -> None:
    report, stdout = quick.report, quick.result.stdout
    assert report.note is not None and report.note.endswith("CPU throughput only")
    assert all(m.speedup_vs_cpu is None for m in report.results)
    assert "CPU throughput only" in stdout
    assert "speed-up" not in stdout
    assert "1.00×" not in stdout


def test_baseline_reports_the_ratio_to_a_hand_written_loop(quick: Run) -> None:
    assert quick.report.settings.baseline
    for m in quick.report.results:
        assert m.baseline is not None and len(m.baseline.rounds) == len(m.rounds) == 2
        assert m.ratio_to_baseline == pytest.approx(m.throughput / m.baseline.throughput)
        assert m.ratio_min is not None and m.ratio_max is not None
        assert m.ratio_min <= m.ratio_max
    assert "accelplug Trainer against a hand-written loop" in quick.result.stdout
    assert "accelplug /" in quick.result.stdout


# ---- progress ------------------------------------------------------------------------------------
def test_the_timing_callback_sees_every_step_and_the_progress_counts_them(quick: Run) -> None:
    report = quick.report
    assert all(m.steps_seen == [4, 4] and m.baseline and m.baseline.steps_seen == [4, 4] for m in report.results)
    # Not a terminal: one line per round; the count moves by exactly the steps of the round before.
    counts = [int(n) for n in re.findall(r"step (\d+)/32:", quick.result.stderr)]
    assert counts == list(range(0, 33, 4)), quick.result.stderr
    assert quick.result.stderr.rstrip().endswith("step 32/32: done")


def test_the_progress_bar_advances_during_the_timed_steps_on_a_terminal(tmp_path: Path) -> None:
    """Under a real pseudo-terminal, rich's bar shows counts between 0 and the total while steps run."""
    controller, terminal = os.openpty()
    args = ["--quick", "--steps", "4", "--warmup", "1", "--repeats", "2", "--baseline", "--out", str(tmp_path)]
    process = subprocess.Popen(
        [sys.executable, "-m", "accelplug", "bench", *args],
        env={**_env(tmp_path), "TERM": "xterm"},
        stdout=subprocess.PIPE,
        stderr=terminal,
        cwd=tmp_path,
    )
    os.close(terminal)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(controller, 4096)
            except OSError:  # the child closed the terminal
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    assert process.wait(timeout=240) == 0
    reader.join(timeout=10)
    os.close(controller)
    shown = b"".join(chunks).decode("utf-8", "replace")
    total = 2 * 2 * 2 * 5  # phases x rounds x loops x steps
    counts = {int(n) for n in re.findall(rf"(\d+)/{total}\b", shown)}
    assert len(counts - {0, total}) >= 3, f"the bar did not move step by step: {sorted(counts)}"


# ---- bad input: one line, exit 2, nothing measured or written ---------------------------------------
@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--precision", "8"), "--precision: precision='8' is not a supported precision. Accepted: '32-true'"),
        (("--cpu-precision", "fp16"), "--cpu-precision: precision='fp16' is not a supported precision"),
        (("--models", "resnet5"), "Did you mean 'resnet50'?"),
        (("--repeats", "0"), "--repeats"),
        (("--json", "a_folder"), "--json 'a_folder' is a directory; give a file name such as 'a_folder/bench.json'"),
        (("--out", "a_file"), "--out 'a_file' is a file, not a folder"),
    ],
    ids=["precision-8", "precision-fp16", "model", "repeats-0", "json-dir", "out-file"],
)
def test_bad_input_is_one_line_and_exit_2_before_anything_runs(
    cli: RunCli, tmp_path: Path, args: tuple[str, ...], expected: str
) -> None:
    (tmp_path / "a_folder").mkdir()
    (tmp_path / "a_file").write_text("not a folder")
    line = _one_line_error(cli("bench", "--quick", *args))
    assert expected in line
    assert not (tmp_path / "accelplug_bench").exists()
    assert list((tmp_path / "a_folder").iterdir()) == []


def test_a_precision_the_accelerator_cannot_do_names_the_ones_it_can(
    bench: RunBench, plugin_site: Path, tmp_path: Path
) -> None:
    env = {"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "", "ACCELPLUG_PLUGINS": "fakegpu", "PYTHONPATH": str(plugin_site)}
    line = _one_line_error(bench("--quick", "--accelerators", "fakegpu", "--precision", "bf16", extra=env))
    # fakegpu lists only 32-true; the true half precisions declare that they run on its CPU device type.
    assert (
        "--precision: precision='bf16' cannot run on 'fakegpu'. It supports: '32-true', 'bf16-true', '16-true'." in line
    )


@pytest.mark.skipif(importlib.util.find_spec("torchvision") is not None, reason="torchvision is installed")
def test_a_model_whose_package_is_missing_is_refused_with_the_pip_command(cli: RunCli) -> None:
    line = _one_line_error(cli("bench", "--models", "resnet50,vgg16", "--cpu-steps", "1"))
    assert "resnet50 and vgg16 need torchvision, not installed here" in line
    assert "pip install 'accelplug[bench]'" in line


def test_without_matplotlib_the_run_says_so_first_and_skips_the_chart(without_matplotlib: Run) -> None:
    result = without_matplotlib.result
    note = "no chart: matplotlib is not installed here (pip install 'accelplug[bench]')"
    assert result.stderr.splitlines()[0] == f"accelplug bench: {note}."
    assert set(without_matplotlib.files) == {".json", ".md"}
    assert result.stdout.rstrip().endswith(note)


def test_without_matplotlib_asking_for_the_chart_is_an_error_before_the_run(
    cli: RunCli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # Python's own marker for "no such module"
    line = _one_line_error(cli("bench", *FAST, "--chart", "c.png"))
    assert "--chart needs matplotlib" in line and "pip install 'accelplug[bench]'" in line
    assert not (tmp_path / "accelplug_bench").exists()


# ---- a plugin's accelerator -------------------------------------------------------------------------
def test_a_plugin_accelerator_is_measured_against_the_cpu(bench: RunBench, plugin_site: Path, tmp_path: Path) -> None:
    env = {"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "", "ACCELPLUG_PLUGINS": "fakegpu", "PYTHONPATH": str(plugin_site)}
    run = _finished(bench(*FAST, "--accelerators", "fakegpu", extra=env), tmp_path)
    report = run.report
    assert [m.accelerator for m in report.results] == ["fakegpu", "fakegpu", "cpu", "cpu"]
    assert report.note is None
    fake = next(m for m in report.results if m.accelerator == "fakegpu" and m.phase == "train")
    cpu = next(m for m in report.results if m.accelerator == "cpu" and m.phase == "train")
    assert fake.speedup_vs_cpu == pytest.approx(fake.throughput / cpu.throughput)
    assert fake.speedup_vs_cpu is not None and fake.speedup_min is not None and fake.speedup_max is not None
    assert fake.speedup_min <= fake.speedup_vs_cpu <= fake.speedup_max
    assert cpu.speedup_vs_cpu is None
    assert "speed-up" in run.result.stdout and "(ref.)" in run.result.stdout
