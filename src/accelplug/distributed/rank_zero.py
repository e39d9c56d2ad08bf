"""``rank_zero_only`` and friends: run or print something on the global-zero process only.

``rank_zero_only`` is ``lightning_utilities``' own object, as Lightning's is: scripts (the Hydra template among
them) import it from ``lightning_utilities.core.rank_zero`` directly and expect the framework to have set its
``rank``. It starts from the launcher's variables (``RANK``, then ``LOCAL_RANK``) and is set again by
``fabric.launch()`` and the Trainer once the run says which rank this is, as in Lightning.
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any, TypeVar

from lightning_utilities.core.rank_zero import rank_zero_only

from ..errors import LightningDeprecationWarning

__all__ = [
    "is_rank_zero",
    "rank_zero_debug",
    "rank_zero_deprecation",
    "rank_zero_info",
    "rank_zero_only",
    "rank_zero_warn",
    "set_rank",
]

T = TypeVar("T")


def _rank_from_environment() -> int:
    for name in ("RANK", "LOCAL_RANK"):
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return 0


def set_rank(rank: int) -> None:
    """Tell ``rank_zero_only`` (and everything reading it, in any framework) which rank this process is."""
    setattr(rank_zero_only, "rank", rank)  # noqa: B010 - lightning_utilities types it as a plain function


def is_rank_zero() -> bool:
    return int(getattr(rank_zero_only, "rank", 0)) == 0


if getattr(rank_zero_only, "rank", None) is None:  # set once; a framework imported earlier may have set it
    set_rank(_rank_from_environment())


def rank_zero_info(*args: Any, **kwargs: Any) -> None:
    if is_rank_zero():
        print(*args, **kwargs)


def rank_zero_warn(message: str | Warning, category: type[Warning] = UserWarning, stacklevel: int = 2) -> None:
    if is_rank_zero():
        warnings.warn(message, category, stacklevel=stacklevel + 1)


def rank_zero_deprecation(message: str, stacklevel: int = 2) -> None:
    rank_zero_warn(message, LightningDeprecationWarning, stacklevel=stacklevel + 1)


_log = logging.getLogger(__name__)


def rank_zero_debug(*args: Any, stacklevel: int = 4, **kwargs: Any) -> None:
    """Log at DEBUG level on the global-zero process only (Lightning's ``rank_zero_debug``)."""
    if is_rank_zero():
        _log.debug(*args, stacklevel=stacklevel, **kwargs)
