"""The run folders the file loggers write to, on any file system fsspec reaches (local, ``memory://``, ``s3://``...).

Both file loggers (CSV and TensorBoard) lay runs out as Lightning does, ``save_dir/name/version_N``, and pick
the first ``N`` above every ``version_N`` folder already there. The folder may be a URL, so everything here
goes through fsspec (installed with torch) instead of ``pathlib``: ``Path("s3://b/logs")`` would quietly
become the local folder ``s3:/b/logs``. A protocol whose fsspec package is missing (``s3fs`` for ``s3://``)
is a clear error naming the package. A Trainer without a logger writes to the local ``version_N`` folder
:func:`next_version_dir` picks.
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Any

from ..checkpoint.file import filesystem, is_url

__all__ = [
    "SaveDirFolders",
    "VersionedFolders",
    "filesystem",
    "is_directory",
    "next_version",
    "next_version_dir",
    "version_folder",
    "write_hparams_yaml",
]


def is_directory(fs: Any, path: str) -> bool:
    """Whether ``path`` is a folder; object stores without folders answer from the keys under it."""
    try:
        return bool(fs.isdir(path))
    except OSError:
        return False


def next_version(fs: Any, versions_root: str) -> int:
    """One above the highest ``version_N`` folder in ``versions_root`` (0 when there is none)."""
    try:
        entries = fs.listdir(versions_root) if is_directory(fs, versions_root) else []
    except (OSError, FileNotFoundError):
        entries = []
    taken: list[int] = []
    for entry in entries:
        name = os.path.basename(str(entry["name"]).rstrip("/"))
        number = name.partition("version_")[2]
        if name.startswith("version_") and number.isdigit() and is_directory(fs, entry["name"]):
            taken.append(int(number))
    return max(taken, default=-1) + 1


def version_folder(version: int | str) -> str:
    """A string version is the folder's own name; a number ``N`` is ``version_N``."""
    return version if isinstance(version, str) else f"version_{version}"


def write_hparams_yaml(fs: Any, path: str, params: Any) -> None:
    """``hparams.yaml`` as Lightning writes it (:func:`accelplug.core.saving.hparams_yaml_text`: a value YAML
    cannot hold is left out with a warning). Without PyYAML (not a dependency of accelplug) the file is
    written as JSON, which every YAML 1.2 reader accepts."""
    try:
        from ..core.saving import hparams_yaml_text

        text = hparams_yaml_text(params)
    except ImportError:
        import json

        text = json.dumps(dict(params), indent=2, default=repr, sort_keys=True) + "\n"
    parent = os.path.dirname(path)
    if parent:
        fs.makedirs(parent, exist_ok=True)
    with fs.open(path, "w") as handle:
        handle.write(text)


class VersionedFolders:
    """``root/name/version_N``: the folder layout the CSV and TensorBoard loggers share (Lightning's), for a
    class that sets ``_root_dir`` (the folder it was given), ``_name`` and ``_version`` (None: the next free
    number), then calls :meth:`_check_filesystem`.

    Lightning Fabric's loggers call the given folder ``root_dir``; the Trainer's call it ``save_dir`` and
    answer ``root_dir`` with ``save_dir/name`` (:class:`SaveDirFolders`). The run folder is the same for both.
    """

    _root_dir: str
    _name: str
    _version: int | str | None

    @cached_property
    def _fs(self) -> Any:
        """``root``'s fsspec file system, made when first used: importing fsspec costs every ``Trainer()``
        about 15 ms, and a Trainer that never logs never needs it."""
        return filesystem(self._root_dir)

    def _check_filesystem(self) -> None:
        """A URL whose fsspec package is missing is refused by the logger's constructor, not at its first write
        (a local folder's file system cannot be missing)."""
        if is_url(self._root_dir):
            self._fs = filesystem(self._root_dir)

    @property
    def name(self) -> str:
        return self._name

    @property
    def version(self) -> int | str:
        """The version given, else the next free ``version_N`` number (fixed on first use)."""
        if self._version is None:
            self._version = next_version(self._fs, os.path.join(self._root_dir, self.name))
        return self._version

    @property
    def root_dir(self) -> str:
        """The folder the logger was given (Lightning Fabric's meaning)."""
        return self._root_dir

    def _run_folder(self) -> str:
        """``root/name/version_N`` (or ``root/name/<version>`` for a version given as text), through the ``name``
        and ``version`` properties, so a subclass that overrides them names its folder (as in Lightning)."""
        return os.path.join(self._root_dir, self.name, version_folder(self.version))


class SaveDirFolders(VersionedFolders):
    """The Trainer's loggers' names for the same layout: ``save_dir`` is the folder given, ``root_dir`` is
    ``save_dir/name`` (the folder holding every version)."""

    @property
    def save_dir(self) -> str:
        return self._root_dir

    @property
    def root_dir(self) -> str:
        return os.path.join(self._root_dir, self.name)


def next_version_dir(root: Path, name: str = "lightning_logs") -> Path:
    """``root/name/version_N`` with the first N not taken yet (the run folder of a Trainer without a logger)."""
    base = root / name
    taken = {int(p.name.split("_", 1)[1]) for p in base.glob("version_*") if p.name.split("_", 1)[1].isdigit()}
    version = max(taken, default=-1) + 1
    return base / f"version_{version}"
