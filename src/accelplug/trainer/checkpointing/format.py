"""Reading a Trainer checkpoint back: the path checks, the keys a resume needs, the random-number states.

The file itself (written atomically, carrying a SHA-256 digest of its contents that is recomputed on load,
so a file damaged on disk or in transfer is refused with its path) is :mod:`accelplug.checkpoint.file`,
shared with Fabric.

Reading: everything stored is a tensor or a plain Python value, so it loads with
``torch.load(weights_only=True)``: loading a checkpoint cannot run code. Every way a path can be wrong
(missing, a folder, empty, truncated, not a checkpoint) is reported with the path and what was found.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from ...checkpoint.file import (
    CHECKPOINT_FORMAT,
    FORMAT_KEY,
    atomic_save,
    check_format,
    content_digest,
    filesystem,
    is_url,
    load_verified,
    refuse_urls,
)
from ...checkpoint.migration import VERSION_KEY, CheckpointKeyError, CheckpointVersionError
from ...core.migration import pl_legacy_patch, upgrade_loaded
from ...errors import CheckpointNotFoundError, MisconfigurationException
from .lightning_loops import loop_from_lightning

if TYPE_CHECKING:
    from ...accelerator import Accelerator
    from ...checkpoint import CheckpointIO

__all__ = [
    "CHECKPOINT_FORMAT",
    "atomic_save",
    "capture_rng_state",
    "content_digest",
    "find_last_checkpoint",
    "read_checkpoint",
    "restore_rng_state",
]


# ---- reading ---------------------------------------------------------------------------------------
def checked_path(path: object) -> Path | str:
    if not isinstance(path, (str, os.PathLike)) or isinstance(path, bytes):
        raise MisconfigurationException(
            f"ckpt_path={path!r} is invalid: expected the path of a checkpoint file (str or Path), 'last', 'auto', "
            "'best' or None."
        )
    text = os.fspath(path)
    if not isinstance(text, str) or not text.strip() or "\x00" in text:
        raise MisconfigurationException(f"ckpt_path={path!r} is not a usable file path.")
    if is_url(text):
        return _checked_url(text)
    refuse_urls(text, "ckpt_path")
    target = Path(os.path.expanduser(text.removeprefix("file://")))
    if not target.exists():
        raise CheckpointNotFoundError(
            f"Checkpoint file not found: {text} (ckpt_path={text!r}; no such file at {target.resolve()})."
        )
    if target.is_dir():
        raise MisconfigurationException(
            f"ckpt_path={text!r} is a folder; give a checkpoint file in it (e.g. {target / 'last.ckpt'}) or 'last'."
        )
    if target.stat().st_size == 0:
        raise MisconfigurationException(
            f"ckpt_path={text!r} is empty (0 bytes): not a checkpoint (a save that never completed?)."
        )
    return target


def _checked_url(url: str) -> str:
    """The checks of a local ``ckpt_path``, asked of the file system the URL names."""
    fs = filesystem(url)
    if not fs.exists(url):
        raise CheckpointNotFoundError(f"Checkpoint file not found: {url} (ckpt_path={url!r}; no such file).")
    if fs.isdir(url):
        raise MisconfigurationException(f"ckpt_path={url!r} is a folder; give a checkpoint file in it or 'last'.")
    if fs.size(url) == 0:
        raise MisconfigurationException(f"ckpt_path={url!r} is empty (0 bytes): not a checkpoint.")
    return url


def read_checkpoint(
    path: object,
    device: torch.device,
    *,
    weights_only: bool | None = True,
    io: CheckpointIO | None = None,
    given: object = None,
) -> dict[str, Any]:
    """Load and verify an accelplug checkpoint onto ``device`` (a CUDA checkpoint loads on a CPU machine); a file
    Lightning wrote is upgraded to Lightning 2.6's layout (older releases') and given the ``loop`` record accelplug
    resumes from, read from Lightning's loop counters.

    With ``io`` (the strategy's writer) the file is read by its ``load_checkpoint(path, weights_only=...)``. A
    writer of the user's is called as Lightning calls it: with ``given`` (the path as the user wrote it; ``path``
    without one) and ``weights_only`` as given (None included), and the path is not checked here (the writer may
    read from elsewhere); the format and keys are checked either way.
    """
    from ...checkpoint.file import resolve_weights_only
    from ...checkpoint.wrapping import is_own_io

    state: dict[str, Any]
    if io is not None and not is_own_io(io):
        with pl_legacy_patch():
            state = io.load_checkpoint(path if given is None else given, weights_only=weights_only)  # type: ignore[arg-type]
        target: Path | str = os.fspath(path) if isinstance(path, (str, os.PathLike)) else str(path)
    else:
        target = checked_path(path)
        resolved = resolve_weights_only(weights_only)
        with pl_legacy_patch():  # a file an older Lightning pickled classes into names them at their old paths
            if io is None:
                state = load_verified(target, device, weights_only=resolved, label="ckpt_path", require_format=False)
            else:
                given = target if isinstance(path, os.PathLike) else str(target)
                # Lightning's call: no map_location, which a CheckpointIO written for Lightning need not take (its
                # Trainer never passes one); the writer places the tensors (accelplug's on the CPU) and restoring
                # copies them onto the module's device
                state = io.load_checkpoint(given, weights_only=resolved)
    if isinstance(state, dict) and VERSION_KEY not in state and FORMAT_KEY not in state:
        raise CheckpointVersionError(  # Lightning's KeyError, naming the key
            f"{VERSION_KEY!r}: ckpt_path={str(target)!r} is not an accelplug checkpoint, nor Lightning's (it holds "
            f"a dict with keys {sorted(map(str, state))[:6]}; checkpoints are written by trainer.save_checkpoint or "
            "ModelCheckpoint, in Lightning or accelplug)."
        )
    if _written_by_lightning(state):
        state = upgrade_loaded(state, target)
        if "state_dict" not in state:  # Lightning's KeyError names the key
            raise CheckpointKeyError(f"'state_dict': ckpt_path={str(target)!r} is incomplete: it has no state_dict.")
        state["loop"] = loop_from_lightning(state)
    else:
        check_format(state, "ckpt_path", str(target))
    missing = [k for k in ("state_dict", "loop") if k not in state]
    if missing:
        raise CheckpointKeyError(f"ckpt_path={str(target)!r} is incomplete: it has no {', '.join(missing)}.")
    return state


def _written_by_lightning(state: object) -> bool:
    """Whether a file is Lightning's own (its release recorded, and none of accelplug's format)."""
    return isinstance(state, dict) and VERSION_KEY in state and FORMAT_KEY not in state


def find_last_checkpoint(folders: Iterable[Path], device: torch.device, files: Iterable[Path] = ()) -> Path | None:
    """The newest checkpoint (``*.ckpt`` in ``folders``, and ``files``) that reads and verifies (a damaged newer
    one is skipped with a warning)."""
    import warnings

    candidates = [(p.stat().st_mtime, p) for p in files if p.is_file()]
    for folder in folders:
        with contextlib.suppress(OSError):
            candidates += [(p.stat().st_mtime, p) for p in folder.glob("*.ckpt") if p.is_file()]
    for _mtime, path in sorted(candidates, key=lambda item: (item[0], item[1].name == "last.ckpt"), reverse=True):
        try:
            read_checkpoint(path, device)
        except MisconfigurationException as exc:
            warnings.warn(f"skipping {path}: {exc}", UserWarning, stacklevel=3)
            continue
        return path
    return None


# ---- random-number state -----------------------------------------------------------------------------
def capture_rng_state(accelerator: Accelerator | None = None) -> dict[str, Any]:
    """Every random-number generator a training step may draw from, as weights-only-safe values
    (with ``accelerator``, also the state of its device's own generator, if it has one)."""
    state: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():  # type: ignore[no-untyped-call]
        state["cuda"] = torch.cuda.get_rng_state_all()
    device_state = accelerator.get_rng_state() if accelerator is not None else None
    if device_state is not None:
        assert accelerator is not None
        state["device"] = {"accelerator": accelerator.name, "state": device_state}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        kind, keys, pos, has_gauss, cached = numpy.random.get_state()
        state["numpy"] = {
            "kind": str(kind),
            "keys": torch.from_numpy(keys.astype("int64")),
            "pos": int(pos),
            "has_gauss": int(has_gauss),
            "cached_gaussian": float(cached),
        }
    return state


def restore_rng_state(state: dict[str, Any], accelerator: Accelerator | None = None) -> None:
    """Put back what :func:`capture_rng_state` recorded (generators absent here are skipped; a device
    generator's state only on the accelerator that saved it)."""
    torch.set_rng_state(state["torch"].cpu())
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    if "cuda" in state and torch.cuda.is_available() and len(state["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([s.cpu() for s in state["cuda"]])
    device_state = state.get("device")
    if accelerator is not None and device_state is not None and device_state["accelerator"] == accelerator.name:
        accelerator.set_rng_state(device_state["state"])
    if "numpy" in state:
        try:
            import numpy
        except ImportError:  # numpy is optional: nothing here drew from it
            return
        saved = state["numpy"]
        keys = saved["keys"].cpu().numpy().astype(numpy.uint32)
        numpy.random.set_state((saved["kind"], keys, saved["pos"], saved["has_gauss"], saved["cached_gaussian"]))
