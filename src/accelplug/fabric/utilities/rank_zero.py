"""``rank_zero_only`` and friends: run or print something on the global-zero process only.

``rank_zero_only.rank`` starts from the launcher's variables (``RANK``, then ``LOCAL_RANK``) and is set again
by ``fabric.launch()`` once the process group says which rank this is, as in Lightning.
"""

from __future__ import annotations

import functools
import os
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["rank_zero_deprecation", "rank_zero_info", "rank_zero_only", "rank_zero_warn"]

T = TypeVar("T")


def _rank_from_environment() -> int:
    for name in ("RANK", "LOCAL_RANK"):
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return 0


class _RankZeroOnly:
    """A decorator: the function runs on rank 0 and returns None elsewhere (``default=`` for another value)."""

    def __init__(self) -> None:
        self.rank = _rank_from_environment()

    def __call__(self, fn: Callable[..., T], default: Any = None) -> Callable[..., T | Any]:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> T | Any:
            return fn(*args, **kwargs) if self.rank == 0 else default

        return wrapped


rank_zero_only = _RankZeroOnly()


def rank_zero_info(*args: Any, **kwargs: Any) -> None:
    if rank_zero_only.rank == 0:
        print(*args, **kwargs)


def rank_zero_warn(message: str | Warning, category: type[Warning] = UserWarning, stacklevel: int = 2) -> None:
    if rank_zero_only.rank == 0:
        warnings.warn(message, category, stacklevel=stacklevel + 1)


def rank_zero_deprecation(message: str, stacklevel: int = 2) -> None:
    rank_zero_warn(message, DeprecationWarning, stacklevel=stacklevel + 1)
