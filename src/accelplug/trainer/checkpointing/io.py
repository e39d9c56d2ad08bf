"""Writing checkpoint files that survive crashes, full disks and bit rot.

A checkpoint is first written to a temporary file in the destination's own folder, flushed with
``fsync`` and renamed over the destination with ``os.replace``; a rename within one file system is
atomic, so a process killed at any moment leaves either the old file or the new one, never a torn
one. Temporary files a killed writer left behind (named with its process id) are removed by the next
save in that folder. The file carries a SHA-256 digest of its contents (every tensor's bytes, every
value), which :func:`accelplug.trainer.checkpointing.format.read_checkpoint` recomputes on load.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any

import torch

__all__ = ["DIGEST_KEY", "atomic_save", "content_digest", "remove_stale_temporaries"]

DIGEST_KEY = "sha256"
_NO_SPACE = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


# ---- the digest ------------------------------------------------------------------------------------
def _feed(digest: Any, value: Any) -> None:
    """Hash ``value`` in a canonical order (dict keys sorted), tensors by dtype, shape and bytes."""
    if isinstance(value, torch.Tensor):
        flat = value.detach().reshape(-1).contiguous().cpu()
        digest.update(f"T{flat.dtype}{tuple(value.shape)}".encode())
        data = flat.view(torch.uint8) if flat.numel() else flat
        try:
            digest.update(memoryview(data.numpy()))  # type: ignore[arg-type]
        except (RuntimeError, TypeError):  # numpy missing, or a dtype numpy cannot view
            digest.update(bytes(data.clone().untyped_storage()))
    elif isinstance(value, dict):
        digest.update(b"D")
        for key in sorted(value, key=repr):
            digest.update(repr(key).encode())
            _feed(digest, value[key])
        digest.update(b"d")
    elif isinstance(value, (list, tuple)):
        digest.update(b"L" if isinstance(value, list) else b"U")
        for item in value:
            _feed(digest, item)
        digest.update(b"l")
    else:
        digest.update(f"V{type(value).__name__}:{value!r}".encode())


def content_digest(state: dict[str, Any]) -> str:
    """SHA-256 over everything in ``state`` except the digest itself."""
    digest = hashlib.sha256()
    _feed(digest, {k: v for k, v in state.items() if k != DIGEST_KEY})
    return digest.hexdigest()


# ---- writing ---------------------------------------------------------------------------------------
def atomic_save(obj: Any, path: str | os.PathLike[str], *, with_digest: bool = True) -> Path:
    """``torch.save(obj)`` to ``path`` so that a crash mid-write leaves the previous file intact."""
    target = Path(path).expanduser().resolve()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(exc, target) from None
    remove_stale_temporaries(target.parent)
    if with_digest and isinstance(obj, dict):
        obj = {**obj, DIGEST_KEY: content_digest(obj)}
    try:
        fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise _write_error(exc, target) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            torch.save(obj, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        if isinstance(exc, OSError) or _is_no_space(exc):
            raise _write_error(exc, target) from None
        raise
    _fsync_directory(target.parent)
    return target


def _is_no_space(exc: BaseException) -> bool:
    """torch reports a full disk as a RuntimeError ("unexpected pos ...", "file write failed")."""
    if isinstance(exc, OSError):
        return exc.errno in _NO_SPACE
    text = str(exc)
    return isinstance(exc, RuntimeError) and ("unexpected pos" in text or "write failed" in text)


def _write_error(exc: BaseException, target: Path) -> OSError:
    previous = "the previous checkpoint is intact" if target.exists() else "no earlier checkpoint was there"
    if _is_no_space(exc):
        return OSError(
            errno.ENOSPC,
            f"no space left on the device holding {target.parent} while saving {target.name}; {previous}. "
            "Free space (or point default_root_dir / ModelCheckpoint(dirpath=...) elsewhere) and save again.",
        )
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return OSError(
        getattr(exc, "errno", None) or errno.EIO,
        f"could not write checkpoint {target}: {reason}; {previous}.",
    )


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete ``.NAME.PID.*.tmp`` files whose writing process no longer runs (a killed save)."""
    removed: list[Path] = []
    try:
        candidates = list(folder.glob(".*.tmp"))
    except OSError:
        return removed
    for temp in candidates:
        parts = temp.name.split(".")
        pid = next((int(p) for p in parts[2:-1] if p.isdigit()), None)
        if pid is None or pid == os.getpid() or _process_alive(pid):
            continue
        with contextlib.suppress(OSError):
            temp.unlink()
            removed.append(temp)
    return removed


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def _fsync_directory(folder: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
