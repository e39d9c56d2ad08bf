"""The plugin author's tools on the real device: the conformance kit, and ``accelplug bench --quick``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.warm_python import WarmPython

from .vulkan import REPO, Device

KIT = Path(__file__).parent / "vulkan_kit.py"


def test_the_conformance_kit_passes_on_the_bridge_to_the_real_device(vulkan: Device) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rsx", str(KIT)],
        env=vulkan.env(),
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    summary = result.stdout.strip().splitlines()[-1]
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert re.fullmatch(r"24 passed, 2 skipped, 1 xfailed in [\d.]+s", summary), result.stdout[-3000:]
    assert "does not claim 'bf16-mixed'" in result.stdout and "does not claim '64-true'" in result.stdout


def test_bench_quick_measures_the_device_against_the_cpu(
    vulkan: Device, device_python: WarmPython, tmp_path: Path
) -> None:
    code = (
        "import torchvulkan\n"
        "from accelplug.cli import main\n"
        "main(['bench', '--quick', '--models', 'tinymlp', '--accelerators', 'torch_accelerator', '--steps', '3',"
        " '--warmup', '1', '--repeats', '1', '--out', 'out', '--json', 'bench.json'])\n"
    )
    result = device_python.run(["-c", code], env=vulkan.env(), timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    rows = json.loads((tmp_path / "bench.json").read_text())["results"]
    measured = {(r["accelerator"], r["phase"]) for r in rows}
    assert measured == {(a, p) for a in ("torch_accelerator", "cpu") for p in ("train", "eval")}
    device = [r for r in rows if r["accelerator"] == "torch_accelerator"]
    assert all(r["throughput"] > 0 and r["speedup_vs_cpu"] > 0 for r in device)
    assert all(r["steps_seen"] == [4] for r in device)  # 1 warm-up + 3 timed steps, all inside Trainer.fit
