"""The checkpoint file shared by the Trainer and Fabric: written so it survives crashes, full disks and bit rot,
read back only when it verifies.

Kept below ``trainer/`` and ``fabric/`` so both write the one format: what goes *into* the file differs (the
Trainer's loop position and RNG states, Fabric's user-chosen keys), the container does not. A checkpoint is
first written to a temporary file in the destination's own folder, flushed with
``fsync`` and renamed over the destination with ``os.replace``; a rename within one file system is
atomic, so a process killed at any moment leaves either the old file or the new one, never a torn
one. Temporary files a killed writer left behind (named with its process id) are removed by the next
save in that folder. The file carries a SHA-256 digest of its contents (every tensor's bytes, every
value), which :func:`load_verified` recomputes on load; a file carries ``FORMAT_KEY`` with its format version.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import pickle
import re
import tempfile
from pathlib import Path
from typing import Any

import torch

from ..errors import MisconfigurationException

__all__ = [
    "CHECKPOINT_FORMAT",
    "DIGEST_KEY",
    "FORMAT_KEY",
    "READABLE_FORMATS",
    "atomic_save",
    "check_format",
    "content_digest",
    "filesystem",
    "is_url",
    "load_verified",
    "refuse_urls",
    "remove_stale_temporaries",
    "resolve_weights_only",
]

DIGEST_KEY = "sha256"
#: Key holding the format version of a file accelplug wrote (the Trainer's and Fabric's alike).
FORMAT_KEY = "accelplug_checkpoint"
#: Format written by this version; format 1 still loads.
CHECKPOINT_FORMAT = 2
READABLE_FORMATS = (1, 2)
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
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
    else:  # a default repr names the object's address, which a reloaded copy does not share
        text = _ADDRESS.sub(" at 0x?", repr(value))
        digest.update(f"V{type(value).__name__}:{text}".encode())


def content_digest(state: dict[str, Any]) -> str:
    """SHA-256 over everything in ``state`` except the digest itself."""
    digest = hashlib.sha256()
    _feed(digest, {k: v for k, v in state.items() if k != DIGEST_KEY})
    return digest.hexdigest()


# ---- writing ---------------------------------------------------------------------------------------
def is_url(path: object) -> bool:
    """Whether ``path`` names a file on another fsspec file system (``s3://``, ``memory://``; not ``file://``)."""
    if not isinstance(path, (str, os.PathLike)):
        return False
    text = os.fspath(path)
    if not isinstance(text, str) or "://" not in text:
        return False
    return text.split("://", 1)[0].lower() not in ("file", "local")


def filesystem(url: str) -> Any:
    """The fsspec file system of ``url``; a protocol whose package is missing is an error naming it."""
    import fsspec  # type: ignore[import-untyped]

    try:
        fs, _ = fsspec.core.url_to_fs(url)
    except ImportError as exc:
        protocol = url.split("://", 1)[0]
        raise MisconfigurationException(
            f"{url!r} is on the {protocol!r} file system, whose fsspec package is not installed: {exc}. "
            "Install it (for s3://, pip install s3fs) or use a local folder."
        ) from None
    except ValueError as exc:  # a protocol fsspec does not know
        raise MisconfigurationException(f"{url!r} is not a path fsspec can open: {exc}") from None
    return fs


def refuse_urls(path: str | os.PathLike[str], label: str = "checkpoint path") -> None:
    """A URL that went through ``Path`` (``Path("s3://b/x")`` is the local ``s3:/b/x``) is refused by name.

    Without this a run would "save to the bucket" and fill a local folder named ``s3:`` instead. Only
    fsspec's protocol names count, so a local folder ``run:`` stays usable.
    """
    suspects = [part[:-1] for part in Path(os.fspath(path)).parts if part.endswith(":") and len(part) > 2]
    if not suspects or "://" in os.fspath(path):
        return
    import fsspec

    protocol = next((name for name in suspects if name in fsspec.available_protocols()), None)
    if protocol is None:
        return
    raise MisconfigurationException(
        f"{label} {os.fspath(path)!r} is a {protocol}:// URL turned into a local folder by pathlib; pass the URL "
        f"as a string (e.g. '{protocol}://bucket/ckpts') so it is written there, or give a local folder."
    )


def _local(path: str | os.PathLike[str]) -> str:
    """``file:///x`` is the local ``/x``."""
    text = os.fspath(path)
    for scheme in ("file://", "local://"):
        if text.startswith(scheme):
            return text[len(scheme) :]
    return text


def _save_to_url(obj: Any, url: str) -> str:
    """One ``put`` of the whole file: object stores (S3, GCS) and ``memory://`` show either the previous
    object or the new one, never part of it, so the atomic-replace promise holds there. (On fsspec file
    systems without atomic writes, e.g. FTP or SMB, a crash mid-upload can leave a partial file: the checksum
    makes loading it fail rather than load garbage.)"""
    fs = filesystem(url)
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    parent = url.rsplit("/", 1)[0]
    try:
        fs.makedirs(parent, exist_ok=True)
        fs.pipe_file(url, buffer.getvalue())
    except OSError as exc:
        raise OSError(exc.errno or errno.EIO, f"could not write checkpoint {url}: {exc}") from exc
    return url


def atomic_save(obj: Any, path: str | os.PathLike[str], *, with_digest: bool = True) -> Path | str:
    """``torch.save(obj)`` to ``path`` so that a crash mid-write leaves the previous file intact.

    ``path`` may be an fsspec URL (``s3://bucket/last.ckpt``): the file is then uploaded in one piece.
    """
    if with_digest and isinstance(obj, dict):
        obj = {**obj, DIGEST_KEY: content_digest(obj)}
    if is_url(path):
        return _save_to_url(obj, os.fspath(path))
    refuse_urls(path)
    target = Path(os.path.expanduser(_local(path))).resolve()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _write_error(exc, target) from None
    remove_stale_temporaries(target.parent)
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


# ---- reading ---------------------------------------------------------------------------------------
def load_verified(
    target: Path | str, map_location: Any, *, weights_only: bool, label: str, require_format: bool = True
) -> Any:
    """``torch.load(target)`` refused with ``label`` named when it cannot be trusted.

    A file accelplug wrote must carry a readable format version and its SHA-256 must match; a file from
    elsewhere (Lightning Fabric's ``fabric.save``, a plain ``torch.save``) is returned as it is when
    ``require_format`` is False, since it has no digest to check.
    """
    shown = str(target)
    source: Any = io.BytesIO(filesystem(shown).cat_file(shown)) if is_url(shown) else target
    try:
        state = torch.load(source, map_location=map_location, weights_only=weights_only)
    except pickle.UnpicklingError as exc:
        if weights_only and "weights only" in str(exc).lower().replace("_", " "):
            raise MisconfigurationException(
                f"{label}={shown!r} holds Python objects that weights-only loading refuses to run. If you created "
                "the file yourself and trust it, pass weights_only=False."
            ) from None
        raise _unreadable(label, shown, exc) from None
    except Exception as exc:  # a damaged file fails deep in the unpickler (IndexError, struct.error...)
        raise _unreadable(label, shown, exc) from None
    if require_format or (isinstance(state, dict) and FORMAT_KEY in state):
        check_format(state, label, shown)
    if not isinstance(state, dict):
        return state
    stored = state.get(DIGEST_KEY)  # also in a file TorchCheckpointIO wrote from a dict of the user's own
    if stored is not None and stored != content_digest(state):
        raise MisconfigurationException(
            f"{label}={shown!r} is corrupt: its contents do not match the SHA-256 checksum stored when it was "
            "saved (damaged on disk or in a copy). Use an earlier checkpoint (the Trainer's ckpt_path='last' "
            "picks the newest one that verifies)."
        )
    return state


def check_format(state: Any, label: str, shown: str) -> None:
    """Refuse ``state`` (what a file held) unless accelplug wrote it in a format this version reads."""
    if not isinstance(state, dict) or FORMAT_KEY not in state:
        raise MisconfigurationException(
            f"{label}={shown!r} is not an accelplug checkpoint (it holds "
            f"{_describe(state)}; accelplug checkpoints are written by trainer.save_checkpoint, ModelCheckpoint "
            "or fabric.save)."
        )
    version = state[FORMAT_KEY]
    if version not in READABLE_FORMATS:
        raise MisconfigurationException(
            f"{label}={shown!r} has checkpoint format {version!r}; this accelplug reads formats "
            f"{READABLE_FORMATS}. Upgrade accelplug to load it."
        )


def _unreadable(label: str, shown: str, exc: BaseException) -> MisconfigurationException:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return MisconfigurationException(
        f"{label}={shown!r} cannot be read as a checkpoint (truncated, corrupt, or another kind of file): "
        f"{type(exc).__name__}: {first[:200]}"
    )


def _describe(value: object) -> str:
    if isinstance(value, dict):
        keys = sorted(map(str, value))[:6]
        return f"a dict with keys {keys}"
    return f"a {type(value).__name__}"


def resolve_weights_only(given: bool | None) -> bool:
    """``weights_only=None`` is torch's own default, as Lightning passes it on to ``torch.load``: weights only,
    unless the user set ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` (torch's switch for old checkpoints that hold Python
    objects). The one place the Trainer, Fabric and the checkpoint writers decide it."""
    if given is not None:
        return bool(given)
    return os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() not in ("1", "y", "yes", "true")
