"""Slurm's auto-requeue: on the requeue signal save ``hpc_ckpt_N.ckpt``, requeue the job, resume from it.

A Slurm job submitted with ``#SBATCH --signal=SIGUSR1@90`` gets ``SIGUSR1`` 90 s before its time
limit (``scancel --signal=USR1 JOB`` sends it at once). When the run's environment is a
:class:`~accelplug.environments.SLURMEnvironment` with ``auto_requeue=True`` (Lightning's default),
the Trainer treats that signal as :mod:`.interrupts` treats SIGTERM, a stop at the next step
boundary every rank agrees on, and then, as Lightning does:

- every rank takes part in writing ``hpc_ckpt_N.ckpt`` in ``default_root_dir`` (N one above the
  highest there, so earlier ones stay);
- rank 0 runs ``scontrol requeue JOB`` (``JOB_TASK`` in a job array); Slurm ends the job's
  processes and queues it again;
- the requeued job's ``fit(ckpt_path=None)`` in a Slurm task starts from the newest ``hpc_ckpt_N.ckpt``
  (``ckpt_path="hpc"`` asks for it explicitly, as in Lightning): the choice is
  :mod:`..checkpointing.auto_resume`'s, the files are found here.

Lightning saves inside the signal handler, wherever the loop is; here the save waits for the
optimizer step's end, so the checkpoint resumes exactly (the stop costs at most
``log_every_n_steps`` steps, see :mod:`.interrupts`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ...environments.slurm import SLURMEnvironment

__all__ = ["HPC_PREFIX", "hpc_checkpoints", "hpc_resume_path", "hpc_save_path", "requeue_signal"]

HPC_PREFIX = "hpc_ckpt_"
_NUMBERED = re.compile(rf"^{HPC_PREFIX}(\d+)\.ckpt$")


def requeue_signal(environment: Any) -> int | None:
    """The signal that saves and requeues, when ``environment`` asks for auto-requeue; else None."""
    if isinstance(environment, SLURMEnvironment) and environment.auto_requeue and environment.requeue_signal:
        return int(environment.requeue_signal)
    return None


def hpc_checkpoints(folder: Path) -> list[tuple[int, Path]]:
    """``(N, path)`` of every ``hpc_ckpt_N.ckpt`` directly in ``folder``, lowest N first."""
    if not folder.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in folder.iterdir() if (m := _NUMBERED.match(p.name)) and p.is_file()]
    return sorted(found)


def hpc_save_path(folder: Path) -> Path:
    """``folder/hpc_ckpt_N.ckpt`` with N one above the highest already there (1 when none is)."""
    existing = hpc_checkpoints(folder)
    return folder / f"{HPC_PREFIX}{existing[-1][0] + 1 if existing else 1}.ckpt"


def hpc_resume_path(folder: Path) -> Path | None:
    """The newest ``hpc_ckpt_N.ckpt`` in ``folder``, None when there is none."""
    existing = hpc_checkpoints(folder)
    return existing[-1][1] if existing else None
