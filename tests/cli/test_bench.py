"""``accelplug bench``: table, JSON, chart, and refusals of bad input before anything runs."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from accelplug.bench.report import BenchReport, Measurement, with_speedups

RunCli = Callable[..., subprocess.CompletedProcess[str]]
FAST = ("--steps", "3", "--warmup", "1", "--cpu-warmup", "1")


def test_quick_writes_table_json_and_a_png_that_decodes(cli: RunCli, tmp_path: Path) -> None:
    from PIL import Image

    json_path, png = tmp_path / "out" / "bench.json", tmp_path / "out" / "bench.png"
    result = cli("bench", "--quick", *FAST, "--json", str(json_path), "--chart", str(png))
    assert result.returncode == 0, result.stderr
    assert "accelplug bench" in result.stdout
    assert "tiny CNN" in result.stdout
    report = BenchReport.model_validate_json(json_path.read_text(encoding="utf-8"))
    assert {(m.model, m.accelerator, m.phase) for m in report.results} == {
        ("tinycnn", "cpu", "train"),
        ("tinycnn", "cpu", "eval"),
    }
    for m in report.results:
        assert m.steps == 3
        assert m.throughput == pytest.approx(m.batch_size * m.steps / m.seconds)
        assert m.speedup_vs_cpu == pytest.approx(1.0)
    assert png.stat().st_size > 10_000
    with Image.open(png) as image:
        image.load()
        assert image.format == "PNG"
        assert image.size[0] >= 600 and image.size[1] >= 300


def test_a_plugin_accelerator_is_benchmarked_against_the_cpu(cli: RunCli, plugin_site: Path, tmp_path: Path) -> None:
    env = {"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "", "ACCELPLUG_PLUGINS": "fakegpu", "PYTHONPATH": str(plugin_site)}
    json_path = tmp_path / "bench.json"
    result = cli("bench", "--quick", *FAST, "--accelerators", "fakegpu", "--json", str(json_path), env=env)
    assert result.returncode == 0, result.stderr
    report = BenchReport.model_validate_json(json_path.read_text(encoding="utf-8"))
    assert [m.accelerator for m in report.results] == ["fakegpu", "fakegpu", "cpu", "cpu"]
    fake = next(m for m in report.results if m.accelerator == "fakegpu" and m.phase == "train")
    cpu = next(m for m in report.results if m.accelerator == "cpu" and m.phase == "train")
    assert fake.speedup_vs_cpu == pytest.approx(fake.throughput / cpu.throughput)


def test_unknown_accelerator_exits_2_with_a_close_match(cli: RunCli, tmp_path: Path) -> None:
    result = cli("bench", "--quick", "--accelerators", "cpu,mpss", "--json", str(tmp_path / "x.json"))
    assert result.returncode == 2
    assert "'mpss' is not a registered accelerator" in result.stderr
    assert "Did you mean 'mps'?" in result.stderr
    assert not (tmp_path / "x.json").exists()


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="torch missing")
def test_unavailable_accelerator_exits_2_with_its_reason(cli: RunCli) -> None:
    from accelplug.accelerators import MPSAccelerator

    if MPSAccelerator.is_available():
        pytest.skip("MPS is available here")
    result = cli("bench", "--quick", "--accelerators", "mps")
    assert result.returncode == 2
    assert "accelerator='mps' cannot be used on this machine" in result.stderr


def test_unknown_model_exits_2_with_a_close_match(cli: RunCli) -> None:
    result = cli("bench", "--models", "resnet5")
    assert result.returncode == 2
    assert "Did you mean 'resnet50'?" in result.stderr


def test_precision_the_accelerator_cannot_bench_exits_2(cli: RunCli) -> None:
    result = cli("bench", "--quick", "--cpu-precision", "64-true")
    assert result.returncode == 2
    assert "precision='64-true' cannot be benchmarked on 'cpu'" in result.stderr


@pytest.mark.skipif(importlib.util.find_spec("torchvision") is not None, reason="torchvision is installed")
def test_missing_bench_extra_says_how_to_install_it(cli: RunCli) -> None:
    result = cli("bench", "--models", "resnet50", "--cpu-steps", "1")
    assert result.returncode == 2
    assert "pip install 'accelplug[bench]'" in result.stderr


def _m(accelerator: str, phase: str, throughput: float) -> Measurement:
    return Measurement(
        model="resnet50",
        accelerator=accelerator,
        device_name="x",
        phase="train" if phase == "train" else "eval",
        precision="32-true",
        batch_size=128,
        steps=10,
        seconds=1280 / throughput,
        throughput=throughput,
        unit="images",
    )


def test_speedup_is_throughput_over_the_cpus_for_the_same_model_and_phase() -> None:
    results = with_speedups([_m("cuda", "train", 3600.0), _m("cuda", "eval", 900.0), _m("cpu", "train", 18.0)])
    assert [r.speedup_vs_cpu for r in results] == [pytest.approx(200.0), None, pytest.approx(1.0)]


def test_report_json_round_trips() -> None:
    measurement = _m("cpu", "eval", 50.0)
    assert Measurement.model_validate(json.loads(measurement.model_dump_json())) == measurement


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("--precision", "8"), "precision='8' is not a supported precision"),
        (("--json", "{folder}"), "is a folder; give a file path"),
        (("--json", "/dev/null/x.json"), "/dev/null is not a folder"),
        (("--chart", "/dev/null/x.png"), "/dev/null is not a folder"),
    ],
    ids=["--precision 8 on a CPU-only run", "--json a folder", "--json under a file", "--chart under a file"],
)
def test_bad_outputs_and_precisions_exit_2_before_anything_is_measured(
    cli: RunCli, tmp_path: Path, args: tuple[str, ...], says: str
) -> None:
    result = cli("bench", "--quick", "--accelerators", "cpu", *(a.replace("{folder}", str(tmp_path)) for a in args))
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert says in result.stderr
    assert result.stdout == "", "refused before the measurement printed anything"
