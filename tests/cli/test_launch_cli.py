"""``accelplug launch`` on the command line: torchrun's and accelerate's spellings, for real.

The tests that start workers run a tiny script under torchrun's agent (real processes, gloo not
even needed: the script only prints what its environment says).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import typer

from accelplug.cli.app import app
from accelplug.launcher import plan_launch

RunCli = Callable[..., subprocess.CompletedProcess[str]]

# One write per line (not print's separate pieces), so two workers sharing the pipe cannot interleave.
REPORT = (
    "import os, sys\n"
    "values = ['WORKER', os.environ['RANK'], os.environ['WORLD_SIZE'], os.environ.get('ACCELPLUG_PRECISION'),"
    " os.environ['ACCELPLUG_ACCELERATOR'], sys.argv[1:]]\n"
    "os.write(1, (' '.join(map(str, values)) + '\\n').encode())\n"
)


@pytest.fixture
def report_script(tmp_path: Path) -> Path:
    path = tmp_path / "report.py"
    path.write_text(REPORT)
    return path


def _workers(stdout: str) -> list[str]:
    return sorted(line for line in stdout.splitlines() if line.startswith("WORKER"))


def test_help_reads_like_torchruns_usage(cli: RunCli) -> None:
    result = cli("launch", "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage: accelplug launch [OPTIONS] (SCRIPT | -m MODULE) [SCRIPT_ARGS]..." in result.stdout
    assert "--devices, --nproc-per-node N" in result.stdout
    assert "{" not in result.stdout
    assert "<bool>" not in result.stdout
    for option in ("--max-restarts N", "--precision P", "--rdzv-backend NAME", "-m, --module", "--standalone"):
        assert option in result.stdout


@pytest.mark.parametrize("spelling", [["--nproc-per-node", "2"], ["--nproc_per_node=2"], ["--devices", "2"]])
def test_nproc_per_node_spellings_plan_that_many_workers(report_script: Path, spelling: list[str]) -> None:
    """The spelling is the parser's business: each one gives the plan torchrun runs, two workers (no start)."""
    launch = typer.main.get_command(app).commands["launch"]  # type: ignore[attr-defined]
    parsed = launch.make_context("launch", ["--cpu", *spelling, str(report_script), "--lr", "1"])
    assert parsed.params["devices"] == "2"
    plan = plan_launch(parsed.args[0], parsed.args[1:], cpu=parsed.params["cpu"], devices=parsed.params["devices"])
    assert plan.nproc_per_node == 2
    assert "--nproc-per-node=2" in plan.torchrun_args()
    assert plan.torchrun_args()[-3:] == [str(report_script), "--lr", "1"]


@pytest.mark.slow
def test_nproc_per_node_starts_that_many_workers(cli_process: RunCli, report_script: Path) -> None:
    result = cli_process("launch", "--cpu", "--nproc-per-node", "2", str(report_script), "--lr", "1")
    assert result.returncode == 0, result.stderr
    assert _workers(result.stdout) == [
        "WORKER 0 2 None cpu ['--lr', '1']",
        "WORKER 1 2 None cpu ['--lr', '1']",
    ]


@pytest.mark.slow
def test_precision_reaches_every_worker(cli_process: RunCli, report_script: Path) -> None:
    result = cli_process("launch", "--cpu", "--devices", "2", "--precision", "bf16", str(report_script))
    assert result.returncode == 0, result.stderr
    assert [line.split()[3] for line in _workers(result.stdout)] == ["bf16-mixed", "bf16-mixed"]


@pytest.mark.slow
def test_accelerate_spellings_are_mapped(cli_process: RunCli, report_script: Path) -> None:
    result = cli_process("launch", "--cpu", "--num_processes", "2", "--mixed_precision", "fp16", str(report_script))
    assert result.returncode == 0, result.stderr
    assert [line.split()[1:4] for line in _workers(result.stdout)] == [["0", "2", "16-mixed"], ["1", "2", "16-mixed"]]


@pytest.mark.slow
def test_dash_m_runs_a_module_with_its_arguments(cli_process: RunCli, tmp_path: Path) -> None:
    (tmp_path / "report_mod.py").write_text(REPORT)
    result = cli_process(
        "launch", "--cpu", "-m", "report_mod", "-x", "--devices", "3", env={"PYTHONPATH": str(tmp_path)}
    )
    assert result.returncode == 0, result.stderr
    assert _workers(result.stdout) == ["WORKER 0 1 None cpu ['-x', '--devices', '3']"]


@pytest.mark.slow
def test_max_restarts_starts_failed_workers_again(cli_process: RunCli, tmp_path: Path) -> None:
    script = tmp_path / "flaky.py"
    script.write_text(
        "import os, sys\n"
        "attempt = int(os.environ['TORCHELASTIC_RESTART_COUNT'])\n"
        "print('ATTEMPT', attempt, flush=True)\n"
        "sys.exit(3 if attempt == 0 else 0)\n"
    )
    once = cli_process("launch", "--cpu", str(script))
    again = cli_process("launch", "--cpu", "--max-restarts", "1", str(script))
    assert once.returncode == 3
    assert "rank 0 failed (exit code 3)" in once.stderr
    assert again.returncode == 0, again.stderr
    assert "ATTEMPT 0" in again.stdout and "ATTEMPT 1" in again.stdout
    assert "up to 1 restart(s)" in again.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nproc-per-nod", "2"], "No such option: --nproc-per-nod. Did you mean --nproc-per-node?"),
        (["--devics", "2"], "Did you mean --devices"),
        (["--use_fsdp"], "Trainer(strategy='fsdp')"),
        (["--config_file", "x.yaml"], "ACCELPLUG_CONFIG_FILE"),
        (["--tee", "3"], "start the script with torchrun directly"),
        (["--mixed_precision", "fp8"], "fp8 is not supported"),
        (["--num_processes", "3", "--nnodes", "2", "--master-addr", "h", "--master-port", "1"], "multiple of"),
        (["--precision", "fp16"], "accelplug's name for it is '16-mixed'"),
    ],
)
def test_launch_option_mistakes_are_one_line(cli: RunCli, report_script: Path, args: list[str], message: str) -> None:
    result = cli("launch", "--cpu", *args, str(report_script))
    assert result.returncode == 2
    assert result.stderr.startswith("accelplug: error: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert message in result.stderr
