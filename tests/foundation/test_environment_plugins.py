"""Cluster environments from real, separately pip-installed distributions, found through entry points.

``accelplug-testplugin-environment`` (installed with the other test plugins by ``plugin_site``)
adds a scheduler's environment; ``accelplug-testplugin-baddetect`` (under ``misbehaving/``, installed
here) adds two whose ``detect()`` raises or never returns. Each test runs a child Python, so
discovery goes through ``importlib.metadata`` as in the field.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

PLUGIN_DISTS = Path(__file__).resolve().parents[1] / "plugin_dists"

pytestmark = pytest.mark.slow

#: What srun gives task 1 of 2 (see tests/environments/captured.py).
SLURM_TASK = {
    "SLURM_NTASKS": "2",
    "SLURM_PROCID": "1",
    "SLURM_LOCALID": "1",
    "SLURM_NODEID": "0",
    "SLURM_STEP_ID": "0",
    "SLURM_JOB_ID": "77",
    "SLURM_JOB_NAME": "python",
    "SLURM_NODELIST": "vm",
}

REPORT = """
import dataclasses, json, time, warnings
warnings.simplefilter("always")
from accelplug import get_registry
r = get_registry()
begin = time.perf_counter(); first = r.detect_environment(); first_s = time.perf_counter() - begin
begin = time.perf_counter(); again = r.detect_environment(); again_s = time.perf_counter() - begin
print(json.dumps({
    "order": r.environment_names(),
    "detected": [c.name if c else None for c in (first, again)],
    "seconds": [first_s, again_s],
    "facts": dataclasses.asdict(first().facts()) if first else None,
    "sources": {n: [r.environment_source(n).plugin, r.environment_source(n).distribution]
                for n in r.environment_names()},
    "failures": [str(f) for f in r.failures()],
}))
"""


def _report(run_python, site: Path, env: dict[str, str]) -> tuple[dict, str]:  # type: ignore[no-untyped-def, type-arg]
    result = run_python(REPORT, pythonpath=site, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def test_a_pip_installed_environment_is_registered_in_priority_order(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    report, _ = _report(run_python, plugin_site, {"ACCELPLUG_PLUGINS": "environment"})
    assert report["order"] == ["torchrun", "fakesched", "slurm", "lsf", "mpi", "kubeflow"]
    assert report["sources"]["fakesched"] == ["environment", "accelplug-testplugin-environment"]
    assert report["detected"] == [None, None]


def test_the_plugins_environment_is_detected_where_its_scheduler_started_the_process(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    env = {"ACCELPLUG_PLUGINS": "environment", **SLURM_TASK, "FAKESCHED_SIZE": "4", "FAKESCHED_RANK": "3"}
    report, _ = _report(run_python, plugin_site, env)
    assert report["detected"] == ["fakesched", "fakesched"]  # above Slurm, whose variables are set too
    assert (report["facts"]["world_size"], report["facts"]["global_rank"]) == (4, 3)


def test_without_the_plugin_selected_slurm_is_detected(run_python, plugin_site) -> None:  # type: ignore[no-untyped-def]
    env = {"ACCELPLUG_PLUGINS": "fakegpu", **SLURM_TASK, "FAKESCHED_SIZE": "4", "FAKESCHED_RANK": "3"}
    report, _ = _report(run_python, plugin_site, env)
    assert "fakesched" not in report["order"]
    assert report["detected"] == ["slurm", "slurm"]


@pytest.fixture(scope="module")
def baddetect_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("baddetect_site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--target", str(target),
         str(PLUGIN_DISTS / "misbehaving" / "accelplug-testplugin-baddetect")],
        check=True, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    return target


def test_a_detect_that_raises_or_hangs_is_reported_and_skipped(run_python, baddetect_site) -> None:  # type: ignore[no-untyped-def]
    begin = time.perf_counter()
    report, stderr = _report(run_python, baddetect_site, {**SLURM_TASK, "ACCELPLUG_PLUGIN_TIMEOUT_S": "1"})
    assert time.perf_counter() - begin < 60
    assert report["order"][:2] == ["raisingdetect", "hangingdetect"]
    assert report["detected"] == ["slurm", "slurm"]
    first_s, again_s = report["seconds"]
    assert 1 <= first_s < 5  # the hung detect() was waited for once, for the bound
    assert again_s < 0.5  # and never again
    failures = "\n".join(report["failures"])
    assert (
        "plugin 'bad_detect' (distribution accelplug-testplugin-baddetect 1.0.0): cluster environment "
        "'raisingdetect' is skipped: raisingdetect.detect() raised RuntimeError: cannot reach the scheduler daemon"
    ) in failures
    assert "'hangingdetect' is skipped: hangingdetect.detect() did not return within 1." in failures
    assert "ACCELPLUG_PLUGIN_TIMEOUT_S=1 s" in failures
    assert "raisingdetect" in stderr and "hangingdetect" in stderr  # warned as well


def test_accelplug_env_lists_the_broken_detects_among_the_failed_plugins(run_python, baddetect_site) -> None:  # type: ignore[no-untyped-def]
    code = "from accelplug.cli import main; main(['env', '--json'])"
    env = {**SLURM_TASK, "ACCELPLUG_PLUGIN_TIMEOUT_S": "1"}
    result = run_python(code, pythonpath=baddetect_site, env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["cluster_environment"]["detected"] == "slurm"
    failed = {f["error"].split(":")[0] for f in report["failed_plugins"]}
    assert failed == {
        "cluster environment 'raisingdetect' is skipped",
        "cluster environment 'hangingdetect' is skipped",
    }
