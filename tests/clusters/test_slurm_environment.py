"""accelplug's Slurm environment on a real cluster: what srun and sbatch really set, and a real requeue."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accelplug.cli.reports import EnvReport
from accelplug.environments.hostlist import expand_hostlist

from .slurm_cluster import SlurmCluster

pytestmark = pytest.mark.slow

PYTHON = shlex.quote(sys.executable)
_FINISHED = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY")

#: What a process learns about itself: the detected environment and, if any, all its answers.
REPORT = """
import dataclasses, json, os
from accelplug.registry import get_registry
found = get_registry().detect_environment()
facts = dataclasses.asdict(found().facts()) if found else None
print(json.dumps({"name": found.name if found else None, "facts": facts, "job_name": os.environ.get("SLURM_JOB_NAME")}))
"""


def _reports(stdout: str) -> list[dict]:  # type: ignore[type-arg]
    return sorted(
        (json.loads(line) for line in stdout.splitlines()), key=lambda r: (r["facts"] or {}).get("global_rank", 0)
    )


# ---- host lists against scontrol ------------------------------------------------------------------
_name = st.text("abcxyz", min_size=1, max_size=3)
_infix = st.text("abcxyz0123456789-._", min_size=0, max_size=3)


@st.composite
def _range(draw: st.DrawFn) -> str:
    low = draw(st.integers(0, 120))
    width = draw(st.integers(0, 4))
    low_text = str(low).zfill(width)
    if draw(st.booleans()):
        return low_text
    return f"{low_text}-{low + draw(st.integers(0, 12))}"


@st.composite
def _item(draw: st.DrawFn) -> str:
    text = draw(_name)
    for _ in range(draw(st.integers(0, 2))):
        if not text.endswith("]") or draw(st.booleans()):
            text += draw(_infix)
        text += "[" + ",".join(draw(st.lists(_range(), min_size=1, max_size=3))) + "]"
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(items=st.lists(_item(), min_size=1, max_size=4))
def test_host_lists_expand_as_scontrol_show_hostnames_does(slurm_cluster: SlurmCluster, items: list[str]) -> None:
    text = ",".join(items)
    truth = slurm_cluster.run(["scontrol", "show", "hostnames", text]).stdout.split()
    assert expand_hostlist(text, "SLURM_NODELIST") == truth


# ---- srun and sbatch ------------------------------------------------------------------------------
def test_two_srun_tasks_detect_slurm_and_agree_on_the_rendezvous(slurm_cluster: SlurmCluster) -> None:
    result = slurm_cluster.run(["srun", "--ntasks=2", sys.executable, "-c", REPORT])
    reports = _reports(result.stdout)
    assert [r["name"] for r in reports] == ["slurm", "slurm"]
    assert reports[0]["job_name"] == Path(sys.executable).name  # srun names the job after its program
    facts = [r["facts"] for r in reports]
    assert [(f["global_rank"], f["local_rank"], f["node_rank"], f["world_size"]) for f in facts] == [
        (0, 0, 0, 2),
        (1, 1, 0, 2),
    ]
    assert {(f["main_address"], f["main_port"]) for f in facts} == {(slurm_cluster.node, facts[0]["main_port"])}
    assert 15000 <= facts[0]["main_port"] < 25000


def test_accelplug_env_in_each_srun_task_shows_slurm_and_its_rank(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    # one report per task, each in the file named after its rank (srun --output=%t)
    command = [sys.executable, "-m", "accelplug", "env", "--json"]
    slurm_cluster.run(["srun", "--ntasks=2", f"--output={tmp_path}/%t.json", *command], cwd=tmp_path)
    reports = [EnvReport.model_validate_json((tmp_path / f"{rank}.json").read_text()) for rank in (0, 1)]
    clusters = [report.cluster_environment for report in reports]
    assert [(c.detected, c.global_rank, c.world_size) for c in clusters] == [("slurm", 0, 2), ("slurm", 1, 2)]
    assert {(c.main_address, c.main_port) for c in clusters} == {(slurm_cluster.node, clusters[0].main_port)}
    assert reports[1].environment["SLURM_PROCID"] == "1"


def test_an_interactive_srun_is_not_a_training_job(slurm_cluster: SlurmCluster) -> None:
    result = slurm_cluster.run(["srun", "--ntasks=1", "--job-name=interactive", sys.executable, "-c", REPORT])
    assert _reports(result.stdout)[0]["name"] is None


def test_in_a_batch_script_only_srun_tasks_are_slurm_tasks(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    (tmp_path / "report.py").write_text(REPORT)
    script = f"""#!/bin/bash
#SBATCH --output={tmp_path}/job-%j.out
#SBATCH --ntasks=2
{PYTHON} {tmp_path}/report.py
srun {PYTHON} {tmp_path}/report.py
"""
    job = slurm_cluster.sbatch(script, tmp_path)
    assert slurm_cluster.wait_for(job, _FINISHED)["JobState"] == "COMPLETED"
    alone, *tasks = (json.loads(line) for line in (tmp_path / f"job-{job}.out").read_text().splitlines())
    assert alone["name"] is None  # the batch script's own python: one process in a job of two tasks
    assert sorted(task["facts"]["global_rank"] for task in tasks if task["name"] == "slurm") == [0, 1]


# ---- requeue --------------------------------------------------------------------------------------
#: A task that, on SIGUSR1, writes a "checkpoint" and requeues its job through SLURMEnvironment (rank 0
#: only, as Lightning does); on the run after the requeue it reads the checkpoint back and ends.
REQUEUE_ON_USR1 = """
import os, signal, sys, time
from pathlib import Path
from accelplug.environments import SLURMEnvironment
env, folder = SLURMEnvironment(), Path(sys.argv[1])
rank, restarts = env.global_rank(), int(os.environ.get("SLURM_RESTART_COUNT", "0"))
checkpoint = folder / "checkpoint.txt"
if restarts:
    print(f"rank {rank} run {restarts}: resumed from {checkpoint.read_text()!r}", flush=True)
    sys.exit(0)
def save_and_requeue(signum, frame):
    if rank == 0:
        checkpoint.write_text("step 42")
        env.requeue()
    print(f"rank {rank} run 0: got {signal.Signals(signum).name}", flush=True)
signal.signal(env.requeue_signal, save_and_requeue)
(folder / f"ready-{rank}").touch()
time.sleep(120)
"""


def test_sigusr1_saves_and_requeues_the_job_which_then_resumes(slurm_cluster: SlurmCluster, tmp_path: Path) -> None:
    (tmp_path / "task.py").write_text(REQUEUE_ON_USR1)
    script = f"""#!/bin/bash
#SBATCH --output={tmp_path}/job-%j.out
#SBATCH --open-mode=append
#SBATCH --ntasks=2
srun {PYTHON} {tmp_path}/task.py {tmp_path}
"""
    job = slurm_cluster.sbatch(script, tmp_path)
    slurm_cluster.wait_until(lambda: all((tmp_path / f"ready-{r}").exists() for r in (0, 1)), "both tasks ready")
    slurm_cluster.run(["scancel", "--signal=USR1", str(job)])
    info = slurm_cluster.wait_for(job, ["PENDING"])
    # requeued: held until its begin time, then pending with no reason until scheduled (a busy poll sees either)
    assert info["Restarts"] == "1" and info["Reason"] in {"BeginTime", "None"}, info
    slurm_cluster.run(["scontrol", "update", f"JobId={job}", "StartTime=now"])  # Slurm's hold, lifted
    info = slurm_cluster.wait_for(job, _FINISHED)
    lines = (tmp_path / f"job-{job}.out").read_text().splitlines()
    assert info["JobState"] == "COMPLETED", lines
    resumed = sorted(line for line in lines if "run 1" in line)
    assert resumed == ["rank 0 run 1: resumed from 'step 42'", "rank 1 run 1: resumed from 'step 42'"], lines
