"""``python -m accelplug.pytorch.utilities.upgrade_checkpoint PATH``: upgrade checkpoint files in place.

Lightning's ``upgrade_checkpoint`` program, with its options (``PATH``, a file or a folder searched recursively;
``--extension``/``-e``, the suffix searched for, ``.ckpt`` by default; ``--map-to-cpu``). Every file found is first
copied to a backup beside it (``model.ckpt`` -> ``model.bak``, never overwriting a backup already there: that one
is the untouched original), then loaded, upgraded (:func:`accelplug.core.migration.migrate_checkpoint`) and
written back in place, atomically (a crash mid-write leaves the file as it was). Files load as ``torch.load``
loads them by default (weights only, unless ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` says otherwise), with
:class:`~accelplug.checkpoint.migration.pl_legacy_patch` active.

Progress goes to stdout; an error is one line on stderr. A path that does not exist, or a folder with no file
of the extension, exits with 1, as Lightning's program does; a file that is not a checkpoint (unreadable, or not
a dictionary recording a Lightning release) exits with 2, naming the file, where Lightning's program stops with a
traceback. The files before it are upgraded, the ones after it untouched, and every backup stays.
"""

from __future__ import annotations

import logging
import shutil
import sys
import zipfile
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from ..checkpoint.file import DIGEST_KEY, atomic_save, load_verified, resolve_weights_only
from ..checkpoint.migration import VERSION_KEY
from ..core.migration import migrate_checkpoint, pl_legacy_patch
from ..errors import MisconfigurationException

__all__ = ["main", "upgrade_files"]


class _Refused(Exception):
    """A reason to stop, with the exit status to stop with."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="python -m accelplug.pytorch.utilities.upgrade_checkpoint",
        description="Upgrade checkpoints to the layout of the Lightning release accelplug follows, in place, "
        "keeping a backup (.bak) of each original.",
    )
    parser.add_argument("path", help="a checkpoint file, or a folder searched recursively for checkpoints")
    parser.add_argument(
        "--extension", "-e", default=".ckpt", help="the suffix of the files to upgrade in a folder (default .ckpt)"
    )
    parser.add_argument(
        "--map-to-cpu", action="store_true", help="load every tensor onto the CPU (a GPU checkpoint on a CPU machine)"
    )
    return parser


def _files(path: Path, extension: str) -> list[Path]:
    if not path.exists():
        raise _Refused(
            f"The path {path} does not exist. Give a checkpoint file, or a folder holding checkpoints ending in "
            f"{extension}.",
            1,
        )
    files = [path] if path.is_file() else sorted(p for p in path.rglob(f"*{extension}") if p.is_file())
    if not files:
        raise _Refused(
            f"No checkpoint files with extension {extension} were found in {path}. HINT: set --extension to the "
            "suffix your checkpoints have.",
            1,
        )
    return files


def _saved_by_torch(file: Path) -> bool:
    """Whether ``file`` starts as ``torch.save`` files do: a zip archive, or (before torch 1.6) a pickle."""
    with file.open("rb") as handle:
        start = handle.read(2)
    return zipfile.is_zipfile(file) or start[:1] == b"\x80"


def _upgrade_one(file: Path, map_to_cpu: bool) -> dict[str, list[str]]:
    """Load ``file``, upgrade it, write it back; the steps applied by release."""
    if not _saved_by_torch(file):  # else a text file reads as "objects weights-only loading refuses"
        raise _Refused(f"{file} cannot be read as a checkpoint: torch.save did not write it.", 2)
    try:
        with pl_legacy_patch():
            checkpoint: Any = load_verified(
                file,
                "cpu" if map_to_cpu else None,
                weights_only=resolve_weights_only(None),
                label="path",
                require_format=False,
            )
    except MisconfigurationException as exc:
        raise _Refused(str(exc), 2) from None
    if not isinstance(checkpoint, dict) or VERSION_KEY not in checkpoint:
        held = f"a dict without {VERSION_KEY!r}" if isinstance(checkpoint, dict) else f"a {type(checkpoint).__name__}"
        raise _Refused(f"{file} is not a Lightning checkpoint: it holds {held}.", 2)
    checkpoint, applied = migrate_checkpoint(checkpoint)
    if applied:
        atomic_save(checkpoint, file, with_digest=DIGEST_KEY in checkpoint)  # a digest, where it had one, made anew
    return applied


def upgrade_files(path: str, extension: str = ".ckpt", map_to_cpu: bool = False) -> list[Path]:
    """Back up, then upgrade in place, the checkpoint at ``path`` or those under it; returns the files."""
    suffix = extension if extension.startswith(".") else f".{extension}"
    files = _files(Path(path).absolute(), suffix)
    print("Creating a backup of the checkpoint files before upgrading them.")
    for file in files:
        backup = file.with_suffix(".bak")
        if not backup.exists():  # an existing backup is the untouched original: never overwritten
            shutil.copyfile(file, backup)
    for file in files:
        applied = _upgrade_one(file, map_to_cpu)
        done = f"upgraded with the steps of releases {', '.join(applied)}" if applied else "already current"
        print(f"{file}: {done}")
    return files


def _report(message: str) -> None:
    """``message`` as one line on stderr, logged (as Lightning's program logs it) so a caller's handlers see it
    too; the stderr handler lives for this one record, so nothing is left configured."""
    log = logging.getLogger(__name__)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("upgrade_checkpoint: error: %(message)s"))
    log.addHandler(handler)
    try:
        log.error(message)
    finally:
        log.removeHandler(handler)


def main(argv: list[str] | None = None) -> None:
    """The program: exits 0 once every file is upgraded, else with one line on stderr (see the module's doc)."""
    args = _parser().parse_args(argv)
    try:
        upgrade_files(args.path, args.extension, args.map_to_cpu)
    except _Refused as exc:
        _report(str(exc))
        raise SystemExit(exc.status) from None
    print("Done.")
