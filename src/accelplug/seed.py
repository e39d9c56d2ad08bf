"""``seed_everything``: one seed for every random-number generator a training run draws from.

Kept below ``trainer/`` and ``fabric/``, which both export it (Lightning's ``L.seed_everything`` and
``lightning.fabric.seed_everything`` are one function too).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import random
import sys
from typing import Any

import torch

from .errors import MisconfigurationException

__all__ = ["SEED_ENV", "seed_everything"]

SEED_ENV = "PL_GLOBAL_SEED"

#: Modules a run imports on first use that draw from Python's ``random`` when imported (rich gives each style
#: a random id base): imported before seeding, so that the first run after a seed draws the numbers every
#: later identical run draws (Lightning imports them with ``import lightning``, before any seed).
_DRAW_WHEN_IMPORTED = ("rich.style",)


def _import_before_seeding() -> Any:
    """numpy (Lightning seeds it always: one imported after the seed would start unseeded) and the modules of
    ``_DRAW_WHEN_IMPORTED``, each where installed; returns numpy or None."""
    for name in _DRAW_WHEN_IMPORTED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def seed_everything(seed: int | None = None, workers: bool = False, verbose: bool = True) -> int:
    """Seed Python's ``random``, numpy (when installed) and torch on every device; returns the seed.

    Lightning's signature: ``seed=None`` takes ``PL_GLOBAL_SEED`` from the environment, else 0. The
    seed is exported in ``PL_GLOBAL_SEED`` so processes started later (launch workers) see it.
    """
    if seed is None:
        raw = os.environ.get(SEED_ENV, "0").strip() or "0"
        if not (raw.lstrip("-").isascii() and raw.lstrip("-").isdigit()):
            raise MisconfigurationException(f"environment variable {SEED_ENV}={raw!r} is not an integer seed.")
        seed = int(raw)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= 2**32 - 1:
        raise MisconfigurationException(f"seed_everything(seed={seed!r}): expected an int in [0, 2**32 - 1].")
    os.environ[SEED_ENV] = str(seed)
    os.environ["PL_SEED_WORKERS"] = "1" if workers else "0"
    numpy = _import_before_seeding()
    random.seed(seed)
    torch.manual_seed(seed)
    if numpy is not None:
        numpy.random.seed(seed)
    if verbose:
        print(f"Seed set to {seed}", file=sys.stderr)
    return seed
