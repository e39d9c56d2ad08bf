"""Faults under ``accelplug launch --cpu --devices 2``: a hung rank, a crash (with a restart, or with a peer
that ignores SIGTERM the way a rank blocked inside NCCL does), SIGTERM.

Real worker processes on gloo, started by torchrun's agent; the script is ``scripts/survivor.py``.
Every run that finishes prints a digest of its final weights, so a run that was interrupted (or
crashed and restarted) and then resumed is compared with one that ran straight through.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from accelplug.strategies.watchdog import HUNG_EXIT_CODE, PEER_FAILED_EXIT_CODE
from tests.processes import REPO, child_env

pytestmark = pytest.mark.slow

SURVIVOR = Path(__file__).resolve().parents[1] / "scripts" / "survivor.py"
#: The run every test compares with: 20 steps, a checkpoint every 4, metrics (and stop flags) every 5.
RUN = ("--max-steps", "20", "--every-n-steps", "4", "--log-every", "5")


def _script_line(stream: IO[str], marker: str) -> str:
    """The first line of the workers' output that holds ``marker`` ("" if they end without one).

    Lines before it are torch's own notices: gloo in torch 2.9 prints "[Gloo] Rank N is connected to
    M peer ranks..." on stdout when a process group forms, and two ranks' notices may interleave.
    """
    line = stream.readline()
    while line and marker not in line:
        line = stream.readline()
    return line


def _launch(root: Path, *args: str, restarts: int = 0, env: dict[str, str] | None = None) -> list[str]:
    launch = [sys.executable, "-m", "accelplug", "launch", "--cpu", "--devices", "2", "--max-restarts", str(restarts)]
    return [*launch, str(SURVIVOR), "--root-dir", str(root), *RUN, *args]


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    return child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1", **(extra or {})})


def _run(command: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, env=_env(env), capture_output=True, text=True, timeout=240, cwd=REPO)


def _digests(stdout: str) -> set[str]:
    done = [line for line in stdout.splitlines() if line.startswith("DONE")]
    assert len(done) == 2 and all("step=20" in line for line in done), stdout
    return {line.split("weights=")[1] for line in done}


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> str:
    result = _run(_launch(tmp_path_factory.mktemp("straight")))
    assert result.returncode == 0, result.stderr
    (digest,) = _digests(result.stdout)  # both ranks end with the same weights
    return digest


def test_a_hung_rank_is_named_and_the_job_ends_within_the_bound(tmp_path: Path) -> None:
    bound = 4.0
    child = subprocess.Popen(
        _launch(tmp_path, "--hang-rank", "1", "--hang-step", "3"),
        env=_env({"ACCELPLUG_HANG_TIMEOUT_S": str(bound)}),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert child.stdout is not None
    hanging = _script_line(child.stdout, "HANGING rank=1")
    hung_at = time.monotonic()
    assert hanging, "rank 1 never reported that it hangs"
    _out, err = child.communicate(timeout=120)
    took = time.monotonic() - hung_at
    print(f"hang detected and the job ended {took:.1f} s after rank 1 hung (ACCELPLUG_HANG_TIMEOUT_S={bound})")
    assert child.returncode == HUNG_EXIT_CODE, err
    # The bound: the timeout, two watchdog periods (a tenth of it each), and the agent stopping the job.
    assert took < bound + 2 * bound / 10 + 10, f"took {took:.1f} s"
    final = err.strip().splitlines()[-1]
    assert final.startswith("accelplug launch: rank 1 is hung: rank(s) 0 waited"), final
    assert "training_step (survivor.py:" in final
    assert "rank 0 failed" not in err and "rank 0 is hung" not in err
    assert 'survivor.py", line' in err and "time.sleep(10**6)" in err, "the hung rank printed its stack"


def test_max_restarts_resumes_a_crashed_job_from_its_checkpoint_and_finishes_as_if_uninterrupted(
    tmp_path: Path, uninterrupted: str
) -> None:
    result = _run(_launch(tmp_path, "--crash-rank", "1", "--crash-step", "10", restarts=1))
    assert result.returncode == 0, result.stderr
    assert "rank 1 crashes on purpose at step 10" in result.stderr
    resumed = [line for line in result.stderr.splitlines() if "restart 1 of this job" in line]
    assert len(resumed) == 1, result.stderr  # one line, from rank 0
    assert re.search(r"resuming from .*version_0/checkpoints/last\.ckpt \(step 8\)\.$", resumed[0]), resumed[0]
    assert _digests(result.stdout) == {uninterrupted}


def _crash_beside_a_rank_deaf_to_sigterm(root: Path, env: dict[str, str]) -> tuple[float, int, str]:
    """Rank 1 raises at step 3 while rank 0 sleeps in that step; seconds from the raise to the job's end.

    Rank 0 stands for a rank blocked inside an NCCL collective: the agent's SIGTERM only sets the flag of
    its Python handler (the sleep goes on), so only something else can end it before SIGKILL.
    """
    faults = ("--crash-rank", "1", "--crash-step", "3", "--hang-rank", "0", "--hang-step", "3")
    child = subprocess.Popen(
        _launch(root, *faults), env=_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO
    )
    assert child.stdout is not None
    crashing = _script_line(child.stdout, "CRASHING rank=1")
    crashed_at = time.monotonic()
    assert crashing, "rank 1 never reported that it crashes"
    _out, err = child.communicate(timeout=120)
    return time.monotonic() - crashed_at, child.returncode, err


def test_a_crashed_rank_tells_the_others_through_the_store_and_the_job_ends_in_seconds(tmp_path: Path) -> None:
    # torchrun's grace set to a minute: only the published failure can end rank 0 sooner
    took, code, err = _crash_beside_a_rank_deaf_to_sigterm(tmp_path, {"ACCELPLUG_LAUNCH_FAILURE_GRACE_S": "60"})
    print(f"the job ended {took:.1f} s after rank 1 raised")
    assert took < 8, f"took {took:.1f} s"
    assert code in (1, PEER_FAILED_EXIT_CODE), err
    final = err.strip().splitlines()[-1]
    assert final.startswith("accelplug launch: rank 1 failed"), final
    assert "rank 0 failed" not in err
    assert "rank 1 failed (RuntimeError: rank 1 crashes on purpose at step 3); rank 0 stopped at" in err


def test_without_the_watchdog_the_launcher_still_kills_a_failed_jobs_survivors_after_a_short_grace(
    tmp_path: Path,
) -> None:
    env = {"ACCELPLUG_HANG_TIMEOUT_S": "0", "ACCELPLUG_LAUNCH_FAILURE_GRACE_S": "1"}
    took, code, err = _crash_beside_a_rank_deaf_to_sigterm(tmp_path, env)
    print(f"the job ended {took:.1f} s after rank 1 raised (torchrun alone: 30 s grace)")
    assert took < 8, f"took {took:.1f} s"
    assert code == 1, err
    assert err.strip().splitlines()[-1].startswith("accelplug launch: rank 1 failed (exit code 1)"), err[-2000:]


def test_a_preempted_job_keeps_torchruns_grace_for_its_checkpoint_despite_a_short_failure_grace(
    tmp_path: Path,
) -> None:
    command = _launch(tmp_path, "--ready-step", "4", "--step-sleep", "0.1")
    env = {"ACCELPLUG_LAUNCH_FAILURE_GRACE_S": "1", "SURVIVOR_SAVE_SLEEP_S": "4"}
    child = subprocess.Popen(
        [*command, "--slow-interrupt-save"], env=_env(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=REPO,
    )  # fmt: skip
    assert child.stdout is not None
    assert _script_line(child.stdout, "READY"), "the workers ended without reporting READY"
    child.send_signal(signal.SIGTERM)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 143, err
    assert "SAVING" in out, "the save that outlasts the failure grace was not reached"
    line = next(ln for ln in err.splitlines() if ln.startswith("accelplug: SIGTERM"))
    assert "checkpoint saved to " in line, line
    import torch

    saved = torch.load(
        tmp_path / "lightning_logs" / "version_0" / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False
    )
    assert saved["global_step"] >= 4


def _interrupted(root: Path, target: str) -> tuple[subprocess.Popen[str], str, str]:
    child = subprocess.Popen(
        _launch(root, "--ready-step", "4", "--step-sleep", "0.1"),
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    assert child.stdout is not None
    ready = _script_line(child.stdout, "READY")
    assert ready, "the workers ended without reporting READY"
    if target == "launcher":
        child.send_signal(signal.SIGTERM)  # what a scheduler does: the agent forwards it to every worker
    else:
        workers = subprocess.run(["pgrep", "-P", str(child.pid)], capture_output=True, text=True).stdout.split()
        assert len(workers) == 2, workers
        subprocess.run(["kill", "-TERM", max(workers, key=int)], check=True)  # one worker only
    out, err = child.communicate(timeout=120)
    return child, ready + out, err


def _stopped_steps(stdout: str) -> set[int]:
    stopped = re.findall(r"^STOPPED rank=(\d) step=(\d+) by=FitInterrupted$", stdout, re.M)
    assert sorted(rank for rank, _ in stopped) == ["0", "1"], stdout
    return {int(step) for _, step in stopped}


def test_sigterm_to_the_launcher_stops_every_rank_at_one_step_and_the_resume_matches(
    tmp_path: Path, uninterrupted: str
) -> None:
    child, out, err = _interrupted(tmp_path, "launcher")
    assert child.returncode == 143, err
    (step,) = _stopped_steps(out)
    lines = [line for line in err.splitlines() if line.startswith("accelplug: SIGTERM")]
    assert len(lines) == 1, err  # rank 0 says it, once
    assert f"stopped after step {step}; checkpoint saved to " in lines[0]
    assert "Traceback" not in err
    resumed = _run(_launch(tmp_path, "--ckpt-path", "auto"))
    assert resumed.returncode == 0, resumed.stderr
    assert _digests(resumed.stdout) == {uninterrupted}


def test_sigterm_to_one_worker_reaches_every_rank_at_the_next_logging_step(tmp_path: Path) -> None:
    child, out, err = _interrupted(tmp_path, "worker")
    assert child.returncode == 143, err
    (step,) = _stopped_steps(out)  # both ranks stopped at the same step...
    assert step % 5 == 0, "...the logging step whose all-reduce carried the flag"
    assert "accelplug launch: the workers stopped on SIGTERM" in err
    assert (tmp_path / "lightning_logs" / "version_0" / "checkpoints" / "last.ckpt").is_file()
