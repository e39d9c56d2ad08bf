"""Processes started for real: ``launch(function)`` from a notebook-like interpreter and from a script, the
examples as their docstrings run them, and a plugin's precision and strategy under Fabric."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug.fabric import Fabric
from tests.processes import REPO, child_env

pytestmark = pytest.mark.slow

_WORK = """
import json, torch
from accelplug.fabric import Fabric

def work(fabric, factor):
    model = fabric.setup(torch.nn.Linear(2, 1))
    total = fabric.all_reduce(torch.tensor(float(fabric.global_rank + 1)), reduce_op="sum").item()
    return {"rank": fabric.global_rank, "world": fabric.world_size, "total": total * factor,
            "wrapped": type(model).__name__}
"""


def _run(args: list[str], cwd: Path, timeout: int = 240) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, env=child_env(), capture_output=True, text=True, timeout=timeout, cwd=cwd)
    assert result.returncode == 0, result.stderr[-4000:]
    return result


def test_launch_forks_processes_for_a_function_where_there_is_no_script(tmp_path: Path) -> None:
    code = _WORK + (
        "fabric = Fabric(accelerator='cpu', devices=2, strategy='ddp_notebook')\n"
        "print(json.dumps(fabric.launch(work, 10)))\n"
    )
    result = _run([sys.executable, "-c", code], tmp_path)
    assert json.loads(result.stdout.strip().splitlines()[-1]) == {
        "rank": 0,
        "world": 2,
        "total": 30.0,
        "wrapped": "FabricModule",
    }


def test_launch_spawns_processes_for_a_function_of_a_script(tmp_path: Path) -> None:
    script = tmp_path / "spawned.py"
    script.write_text(
        _WORK
        + textwrap.dedent(
            """
            if __name__ == "__main__":
                fabric = Fabric(accelerator="cpu", devices=2, strategy="ddp_spawn")
                print(json.dumps(fabric.launch(work, 2)))
            """
        )
    )
    result = _run([sys.executable, str(script)], tmp_path)
    assert json.loads(result.stdout.strip().splitlines()[-1])["total"] == 6.0


def test_the_fsdp_example_runs_under_accelplug_launch_on_two_cpu_processes(tmp_path: Path) -> None:
    example = REPO / "examples" / "fabric_fsdp.py"
    checkpoint = tmp_path / "sharded.ckpt"
    result = _run(
        [sys.executable, "-m", "accelplug", "launch", "--cpu", "--devices", "2", str(example), "--steps", "10",
         "--checkpoint", str(checkpoint)],
        tmp_path,
    )  # fmt: skip
    losses = [float(v) for v in re.findall(r"step \d+: loss ([0-9.]+)", result.stdout)]
    assert len(losses) == 2 and losses[1] < losses[0]
    assert "each of 2 processes holds about" in result.stdout
    assert f"saved and loaded {checkpoint} at step 10" in result.stdout
    assert list(tmp_path.glob("sharded.ckpt.shards-*")), "the shards lie beside the file"

    # The two processes' shards load into one process's whole model (resharded by torch.distributed.checkpoint).
    spec = importlib.util.spec_from_file_location("fabric_fsdp_example", example)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fabric = Fabric(accelerator="cpu", devices=1)
    torch.manual_seed(0)
    model = fabric.setup(module.Model())
    before = [p.detach().clone() for p in model.parameters()]
    remainder = fabric.load(checkpoint, {"model": model})
    assert remainder == {"step": 10}
    assert all(not torch.equal(b, p) for b, p in zip(before, model.parameters(), strict=True))


def test_the_basic_example_learns_on_one_process(tmp_path: Path) -> None:
    result = _run([sys.executable, str(REPO / "examples" / "fabric_basic.py"), "--accelerator", "cpu"], tmp_path)
    accuracies = [float(v) for v in re.findall(r"train accuracy ([0-9.]+)", result.stdout)]
    assert len(accuracies) == 5 and accuracies[-1] > 0.95
    assert "done on 1 process(es), cpu" in result.stdout


def test_the_accumulate_and_clip_example_resumes_a_two_process_checkpoint_on_one(tmp_path: Path) -> None:
    example = str(REPO / "examples" / "fabric_accumulate_clip.py")
    checkpoint = str(tmp_path / "run.ckpt")
    first = _run(
        [sys.executable, example, "--accelerator", "cpu", "--devices", "2", "--precision", "bf16-mixed", "--epochs",
         "2", "--out", checkpoint],
        tmp_path,
    )  # fmt: skip
    assert len(re.findall(r"epoch \d: loss", first.stdout)) == 2
    second = _run([sys.executable, example, "--accelerator", "cpu", "--epochs", "3", "--resume", checkpoint], tmp_path)
    assert f"resumed from {checkpoint} at epoch 2" in second.stdout
    assert re.findall(r"epoch (\d): loss", second.stdout) == ["2"]


_PLUGIN = """
import json, sys, warnings
warnings.filterwarnings("ignore")
sys.path.insert(0, ".")
from accelplug.fabric import Fabric
from tests.fabric import loops
from ap_test_extension.static_scale import StaticScalePrecision
from ap_test_extension.traced_strategy import TracedStrategy

plain = loops.train(Fabric, epochs=1)
scaled = loops.train(Fabric, epochs=1, precision="static-scale", strategy="traced", clip="norm")
reference = loops.train(Fabric, epochs=1, clip="norm")
print(json.dumps({"plain": plain["weights"], "scaled": scaled["weights"], "reference": reference["weights"],
                  "norms": [scaled["norms"], reference["norms"]], "backward_calls": StaticScalePrecision.backward_calls,
                  "strategy_calls": TracedStrategy.calls}))
"""


def test_a_plugin_precision_and_strategy_work_under_fabric_unchanged(plugin_site: Path, run_python: Any) -> None:
    result = run_python(_PLUGIN, pythonpath=plugin_site, env={"ACCELPLUG_PLUGINS": "extension"}, timeout=240)
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["backward_calls"] == 8, "one epoch of 8 batches through the plugin precision's backward"
    assert report["strategy_calls"] == ["setup_environment", "wrap_module(on cpu)", "setup_optimizers"]
    assert report["norms"][0] == report["norms"][1], "clipping sees the unscaled gradients"
    assert report["scaled"] == report["reference"], "a power-of-two loss scale is exact"
    assert report["plain"] != report["reference"]
