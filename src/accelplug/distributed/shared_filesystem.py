"""Whether a folder is the same folder on every process of a run (one file system shared by all nodes)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

__all__ = ["is_shared_filesystem"]

_MARKER = ".accelplug_shared_fs_check"


def is_shared_filesystem(strategy: Any, path: str | Path | None = None, timeout: int = 3) -> bool:
    """True when every process sees the file rank 0 writes under ``path`` (default: the working directory).

    A remote URL (``s3://...``) counts as shared; so does any one-process run. Otherwise rank 0 writes a marker
    file and the others look for it for up to ``timeout`` seconds; the answer is agreed by all processes (any
    one not seeing it makes it False). Needs the process group up (call it from a hook, not before ``fit``).
    """
    if path is not None and "://" in str(path) and not str(path).startswith("file://"):
        return True
    folder = Path(Path.cwd() if path is None else str(path).removeprefix("file://")).resolve()
    if getattr(strategy, "world_size", 1) == 1:
        return True
    if strategy.reduce_any(strategy.broadcast_object(folder) != folder):  # not even the same name everywhere
        return False
    if strategy.reduce_any(not folder.exists()):
        raise FileNotFoundError(f"is_shared_filesystem: {folder} does not exist on every process.")
    folder = folder.parent if folder.is_file() else folder
    marker = folder / _MARKER
    strategy.barrier()
    if strategy.is_global_zero:
        marker.touch()
        seen = True
    else:
        deadline = time.monotonic() + timeout
        seen = marker.exists()
        while not seen and time.monotonic() < deadline:
            time.sleep(0.01)
            seen = marker.exists()
    strategy.barrier()
    if strategy.is_global_zero:
        marker.unlink(missing_ok=True)
    return not strategy.reduce_any(not seen)
