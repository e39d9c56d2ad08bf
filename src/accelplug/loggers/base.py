"""The logger protocol as the Trainer sees it: which objects count as loggers, and the fallback run folder.

A logger is anything with ``log_metrics(metrics, step)``: a subclass of :class:`~accelplug.loggers.Logger`,
a Lightning logger, or a hand-written object. The Trainer calls the rest of Lightning's protocol
(``log_hyperparams``, ``log_graph``, ``after_save_checkpoint``, ``save``, ``finalize``) where present
(:mod:`.protocol`).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["is_logger", "next_version_dir"]


def next_version_dir(root: Path, name: str = "lightning_logs") -> Path:
    """``root/name/version_N`` with the first N not taken yet (the run folder of a Trainer without a logger)."""
    base = root / name
    taken = {int(p.name.split("_", 1)[1]) for p in base.glob("version_*") if p.name.split("_", 1)[1].isdigit()}
    version = max(taken, default=-1) + 1
    return base / f"version_{version}"


def is_logger(obj: object) -> bool:
    """Whether ``obj`` follows the logger protocol (at least ``log_metrics``)."""
    return callable(getattr(obj, "log_metrics", None))
