"""The file system a path lives on: the local disk, or a remote one named by a URL (``s3://``, ``gs://``...).

Checkpoints, logs and profiler reports may be written to any file system fsspec knows; Lightning's public
``get_filesystem`` answers which one holds a path, so code can list, open or delete there.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["get_filesystem"]


def get_filesystem(path: str | os.PathLike[str], **kwargs: Any) -> Any:
    """The fsspec file system of ``path`` (``kwargs``: its storage options, such as credentials)."""
    from fsspec.core import url_to_fs  # type: ignore[import-untyped]  # loaded when first asked

    filesystem, _ = url_to_fs(str(path), **kwargs)
    return filesystem
