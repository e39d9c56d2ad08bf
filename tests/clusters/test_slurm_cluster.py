"""The one-node Slurm cluster does what a real one does: srun, sbatch, requeue, signals, and a clean stop.

These prove the test infrastructure before anything of accelplug's runs on it: if one fails, the
cluster (not accelplug) is wrong.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from . import slurm_cluster as slurm
from .slurm_cluster import SlurmCluster, SlurmUnavailable

pytestmark = pytest.mark.slow

PYTHON = shlex.quote(sys.executable)
_FINISHED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")

#: A task that says it is ready, then waits (at most 60 s) for SIGUSR1 and reports it.
WAIT_FOR_USR1 = """
import os, signal, sys, time
from pathlib import Path
rank = os.environ["SLURM_PROCID"]
received = []
signal.signal(signal.SIGUSR1, lambda signum, frame: received.append(time.monotonic()))
start = time.monotonic()
Path(sys.argv[1], f"ready-{rank}").touch()
while not received and time.monotonic() - start < 60:
    time.sleep(0.05)
print(f"rank {rank}: " + (f"SIGUSR1 after {received[0] - start:.1f} s" if received else "no signal"), flush=True)
"""


def test_srun_starts_two_tasks_each_told_its_rank(slurm_cluster: SlurmCluster) -> None:
    code = (
        "import json, os; print(json.dumps({k: os.environ[k] for k in "
        "('SLURM_PROCID', 'SLURM_NTASKS', 'SLURM_LOCALID', 'SLURM_NODEID', 'SLURM_NODELIST', 'SLURM_STEP_ID')}))"
    )
    result = slurm_cluster.run(["srun", "--ntasks=2", sys.executable, "-c", code])
    tasks = sorted((json.loads(line) for line in result.stdout.splitlines()), key=lambda t: t["SLURM_PROCID"])
    assert [t["SLURM_PROCID"] for t in tasks] == ["0", "1"]
    assert [t["SLURM_LOCALID"] for t in tasks] == ["0", "1"]
    assert {(t["SLURM_NTASKS"], t["SLURM_NODEID"], t["SLURM_NODELIST"]) for t in tasks} == {
        ("2", "0", slurm_cluster.node)
    }


def test_an_sbatch_job_runs_and_its_output_is_read_back(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    script = f"""#!/bin/bash
#SBATCH --output={tmp_path}/job-%j.out
#SBATCH --ntasks=2
echo "batch script of job $SLURM_JOB_ID"
srun {PYTHON} -c 'import os; print("task", os.environ["SLURM_PROCID"])'
"""
    job = slurm_cluster.sbatch(script, tmp_path)
    info = slurm_cluster.wait_for(job, _FINISHED)
    assert (info["JobState"], info["ExitCode"]) == ("COMPLETED", "0:0")
    lines = (tmp_path / f"job-{job}.out").read_text().splitlines()
    assert lines[0] == f"batch script of job {job}"
    assert sorted(lines[1:]) == ["task 0", "task 1"]


def test_scontrol_requeue_starts_a_running_job_again(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    script = f"""#!/bin/bash
#SBATCH --output={tmp_path}/job-%j.out
#SBATCH --open-mode=append
echo "run ${{SLURM_RESTART_COUNT:-0}}"
if [ "${{SLURM_RESTART_COUNT:-0}}" = 0 ]; then sleep 120; fi
"""
    job = slurm_cluster.sbatch(script, tmp_path)
    output = tmp_path / f"job-{job}.out"
    slurm_cluster.wait_until(lambda: output.exists() and "run 0" in output.read_text(), "the first run")
    slurm_cluster.run(["scontrol", "requeue", str(job)])
    info = slurm_cluster.wait_for(job, ["PENDING"])
    # Slurm holds a requeued job back for a while (BeginTime; it ran again 160 s later here); a test
    # need not wait that out, so the hold is lifted.
    assert (info["Restarts"], info["Reason"]) == ("1", "BeginTime")
    slurm_cluster.run(["scontrol", "update", f"JobId={job}", "StartTime=now"])
    info = slurm_cluster.wait_for(job, _FINISHED)
    assert (info["JobState"], info["Restarts"]) == ("COMPLETED", "1")
    lines = output.read_text().splitlines()
    assert lines[0] == "run 0" and lines[-1] == "run 1"
    assert any("DUE TO JOB REQUEUE" in line for line in lines), lines


def test_scancel_signal_reaches_every_task_of_the_step(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    (tmp_path / "wait.py").write_text(WAIT_FOR_USR1)
    script = f"""#!/bin/bash
#SBATCH --output={tmp_path}/job-%j.out
#SBATCH --ntasks=2
srun {PYTHON} {tmp_path}/wait.py {tmp_path}
echo "batch script went on"
"""
    job = slurm_cluster.sbatch(script, tmp_path)
    ready = [tmp_path / "ready-0", tmp_path / "ready-1"]
    slurm_cluster.wait_until(lambda: all(p.exists() for p in ready), "both tasks ready")
    slurm_cluster.run(["scancel", "--signal=USR1", str(job)])
    info = slurm_cluster.wait_for(job, _FINISHED)
    lines = (tmp_path / f"job-{job}.out").read_text().splitlines()
    assert info["JobState"] == "COMPLETED", lines
    assert sorted(line.split(":")[0] for line in lines if "SIGUSR1 after" in line) == ["rank 0", "rank 1"], lines
    assert lines[-1] == "batch script went on"  # the batch shell itself was not signalled


def test_signal_option_sends_usr1_to_the_tasks_before_the_time_limit(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    # --time=1 (minute) and USR1@50: the signal is due 50 s before the limit, i.e. ~10 s in; Slurm
    # checks limits periodically, so it arrives some seconds later (16 s measured), still in time.
    (tmp_path / "wait.py").write_text(WAIT_FOR_USR1)
    script = f"""#!/bin/bash
#SBATCH --output={tmp_path}/job-%j.out
#SBATCH --ntasks=2
#SBATCH --time=1
#SBATCH --signal=USR1@50
srun {PYTHON} {tmp_path}/wait.py {tmp_path}
"""
    job = slurm_cluster.sbatch(script, tmp_path)
    info = slurm_cluster.wait_for(job, _FINISHED, timeout=120)
    lines = (tmp_path / f"job-{job}.out").read_text().splitlines()
    assert info["JobState"] == "COMPLETED", lines  # not TIMEOUT: the tasks ended before the limit
    delays = [float(line.split("after ")[1].split(" s")[0]) for line in lines if "SIGUSR1 after" in line]
    assert len(delays) == 2, lines
    assert all(5 <= delay < 60 for delay in delays), delays


def test_stopping_a_cluster_ends_its_jobs_and_daemons_and_removes_its_folder(
    fresh_slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    cluster = fresh_slurm_cluster
    job = cluster.sbatch(f"#!/bin/bash\n#SBATCH --output={tmp_path}/job-%j.out\nsrun sleep 300\n", tmp_path)
    cluster.wait_for(job, ["RUNNING"])
    cluster.wait_until(lambda: len(cluster.leftover_processes()) > 3, "the job's processes")  # daemons + job
    cluster.stop()
    assert all(process.returncode is not None for process in cluster.daemons.values())
    assert not cluster.root.exists()
    assert cluster.leftover_processes() == []


def test_a_missing_slurm_is_reported_with_what_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(slurm, "_SBIN", ())
    with pytest.raises(SlurmUnavailable, match=r"not installed here \(missing munged, mungekey, slurmctld"):
        slurm.start_cluster()


@pytest.mark.parametrize(
    ("setting", "euid", "reason"),
    [
        ("off", 0, "TESTS_SLURM=off"),
        ("auto", 1000, "installing it needs root: run `sudo scripts/slurm/install.sh` once"),
    ],
)
def test_an_uninstallable_slurm_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, setting: str, euid: int, reason: str
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(slurm, "_SBIN", ())
    monkeypatch.setenv(slurm.MODE_ENV, setting)
    monkeypatch.setattr(slurm.os, "geteuid", lambda: euid)
    with pytest.raises(SlurmUnavailable, match=re.escape(reason)):
        slurm.ensure_installed()


def test_the_install_script_does_nothing_when_slurm_is_installed(slurm_installation: slurm.Installation) -> None:
    result = slurm.subprocess.run(
        ["bash", str(slurm.INSTALL_SCRIPT)], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("slurm: already installed (slurm-wlm ")
