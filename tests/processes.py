"""Environments for the child processes the launch and demo tests start."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child_env(extra: dict[str, str] | None = None, *, pythonpath: Path | None = None) -> dict[str, str]:
    """This process's environment (already isolated by the autouse fixture) plus ``extra``.

    The fixture's variables live in ``os.environ`` only for this process, so a child must be given
    them explicitly; ``pythonpath`` is put first on the child's ``PYTHONPATH``.
    """
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")  # tiny models; idle-spinning threads only slow a busy machine
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env
