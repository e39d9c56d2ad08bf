"""``rank_zero_only`` and friends: run or print something on the global-zero process only.

``rank_zero_only`` is ``lightning_utilities``' own object, as Lightning's is: scripts (the Hydra template among
them) import it from ``lightning_utilities.core.rank_zero`` directly and expect the framework to have set its
``rank``. It starts from the launcher's variables (``RANK``, ``LOCAL_RANK``, ``SLURM_PROCID``, then
``JSM_NAMESPACE_RANK``, Lightning's list, read when ``rank_zero_only`` loads) and is set again by
``fabric.launch()`` and the Trainer once the run says which rank this is, as in Lightning.

Importing ``lightning_utilities`` costs about 70 ms (it loads ``packaging``), so this module does not: it keeps
the rank itself until that module loads, hands it over then (``when_imported``, whoever imports it), and from
then on reads and sets the rank on ``rank_zero_only``, as before. ``rank_zero_only`` itself is imported when
first read from here.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from .._import_paths import when_imported

if TYPE_CHECKING:
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
    for name in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK"):
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return 0


_SHARED = "lightning_utilities.core.rank_zero"
#: The rank while ``lightning_utilities`` is not loaded (then ``rank_zero_only.rank`` holds it).
_rank: list[int] = [_rank_from_environment()]
#: Whether a run has said which rank this is (``set_rank``); until then the launcher's variables decide.
_told: list[bool] = [False]


def _shared() -> Any:
    """``lightning_utilities``' ``rank_zero_only`` if something loaded it, else None."""
    module = sys.modules.get(_SHARED)
    return None if module is None else getattr(module, "rank_zero_only", None)


def set_rank(rank: int) -> None:
    """Tell ``rank_zero_only`` (and everything reading it, in any framework) which rank this process is."""
    _rank[0] = rank
    _told[0] = True
    shared = _shared()
    if shared is not None:
        setattr(shared, "rank", rank)  # noqa: B010 - lightning_utilities types it as a plain function


def is_rank_zero() -> bool:
    shared = _shared()
    rank = _rank[0] if shared is None else getattr(shared, "rank", None)
    return int(rank or 0) == 0


def _hand_over(module: ModuleType) -> None:
    """``rank_zero_only`` has loaded: give it this process's rank unless a framework set one already (before a
    run said it, the rank the launcher's variables give now, as Lightning reads them when its module loads)."""
    if getattr(module.rank_zero_only, "rank", None) is None:
        module.rank_zero_only.rank = _rank[0] if _told[0] else _rank_from_environment()


when_imported(_SHARED, _hand_over)


def __getattr__(name: str) -> Any:
    if name == "rank_zero_only":
        from lightning_utilities.core.rank_zero import rank_zero_only

        return rank_zero_only
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rank_zero_info(*args: Any, stacklevel: int = 2, **kwargs: Any) -> None:
    """An INFO record on rank zero, as Lightning's (shown on the console unless the program configured logging)."""
    if is_rank_zero():
        _log.info(*args, stacklevel=stacklevel, **kwargs)


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
