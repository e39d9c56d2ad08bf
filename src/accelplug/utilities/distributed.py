"""The path of ``is_shared_filesystem`` beside Lightning's other utilities.

It lives in :mod:`accelplug.distributed.shared_filesystem`.
"""

from __future__ import annotations

from ..distributed.shared_filesystem import (
    is_shared_filesystem,
)

__all__ = [
    "is_shared_filesystem",
]
