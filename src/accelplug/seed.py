"""``seed_everything``: one seed for every random-number generator a training run draws from.

Kept below ``trainer/`` and ``fabric/``, which both export it (Lightning's ``L.seed_everything`` and
``lightning.fabric.seed_everything`` are one function too).
"""

from __future__ import annotations

import contextlib
import importlib
import operator
import os
import random
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import torch

from .errors import MisconfigurationException

__all__ = ["SEED_ENV", "isolate_rng", "max_seed_value", "min_seed_value", "reset_seed", "seed_everything"]

SEED_ENV = "PL_GLOBAL_SEED"
#: The seeds ``seed_everything`` accepts: numpy's range, [0, 2**32 - 1].
min_seed_value = 0
max_seed_value = 2**32 - 1

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


def seed_everything(seed: Any = None, workers: bool = False, verbose: bool = True) -> int:
    """Seed Python's ``random``, numpy (when installed) and torch on every device; returns the seed.

    Lightning's signature and readings: ``seed=None`` takes ``PL_GLOBAL_SEED`` from the environment, else 0 (with
    Lightning's warning); a value that is an integer in another type (a numpy integer, ``"42"``, ``42.0``) is that
    integer. The seed is exported in ``PL_GLOBAL_SEED`` so processes started later (launch workers) see it. The
    line saying so is prefixed with the process's rank where a launcher set one (Lightning's ``[rank: 1]``).
    """
    number: int
    if seed is None:
        raw = os.environ.get(SEED_ENV)
        if raw is None:
            number = 0
            if verbose:
                warnings.warn(f"No seed found, seed set to {number}", stacklevel=2)
        else:
            number = _integer(raw.strip(), f"Invalid seed specified via {SEED_ENV}: {raw!r} (expected an integer)")
    else:
        number = _integer(seed, f"seed_everything(seed={seed!r}): expected an integer seed")
    seed = number
    if not min_seed_value <= seed <= max_seed_value:
        raise MisconfigurationException(
            f"{seed} is not in bounds, numpy accepts from {min_seed_value} to {max_seed_value}: "
            f"seed_everything(seed={seed}) needs an int in [0, 2**32 - 1]."
        )
    os.environ[SEED_ENV] = str(seed)
    os.environ["PL_SEED_WORKERS"] = "1" if workers else "0"
    numpy = _import_before_seeding()
    random.seed(seed)
    torch.manual_seed(seed)
    if numpy is not None:
        numpy.random.seed(seed)
    if verbose:
        rank = _launcher_rank()
        print(f"{'' if rank is None else f'[rank: {rank}] '}Seed set to {seed}", file=sys.stderr)
    return number


def _integer(value: object, problem: str) -> int:
    """``value`` as an int where it is one in another type; a bool, a fraction or a word is refused (``problem``)."""
    if isinstance(value, bool):
        raise MisconfigurationException(f"{problem}; got a bool.")
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.lstrip("-").isascii() and text.lstrip("-").isdigit():
            return int(text)
    elif hasattr(value, "__index__"):  # numpy and torch integers
        return operator.index(value)  # type: ignore[arg-type]
    elif isinstance(value, float) and value.is_integer():
        return int(value)
    raise MisconfigurationException(f"{problem}; got {value!r}.")


def _launcher_rank() -> int | None:
    """The rank a launcher gave this process (torchrun's ``RANK``, a local launcher's ``LOCAL_RANK``, Slurm's, LSF's),
    None where none did: Lightning's order of the variables."""
    for key in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK"):
        raw = os.environ.get(key, "").strip()
        if raw.isascii() and raw.isdigit():
            return int(raw)
    return None


def reset_seed() -> None:
    """Seed again with the seed ``seed_everything`` last exported (``PL_GLOBAL_SEED``), in this process or the one
    that started it, with the same worker choice; nothing when no seed was set (Lightning's ``reset_seed``)."""
    seed = os.environ.get(SEED_ENV)
    if seed is None:
        return
    seed_everything(int(seed), workers=os.environ.get("PL_SEED_WORKERS", "0") == "1", verbose=False)


def _rng_states(include_cuda: bool) -> dict[str, Any]:
    states: dict[str, Any] = {"torch": torch.get_rng_state(), "python": random.getstate()}
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        states["numpy"] = numpy.random.get_state()
    if include_cuda and torch.cuda.is_available():
        states["torch.cuda"] = torch.cuda.get_rng_state_all()
    return states


def _restore(states: dict[str, Any]) -> None:
    torch.set_rng_state(states["torch"])
    random.setstate(states["python"])
    if "numpy" in states:
        sys.modules["numpy"].random.set_state(states["numpy"])
    if "torch.cuda" in states:
        torch.cuda.set_rng_state_all(states["torch.cuda"])


@contextlib.contextmanager
def isolate_rng(include_cuda: bool = True) -> Iterator[None]:
    """Draws inside the block leave torch's, Python's and numpy's generators (and CUDA's, unless
    ``include_cuda=False``, for a forked process that must not touch CUDA) as they were before it. As in
    Lightning, a block that raises leaves them as the exception found them."""
    states = _rng_states(include_cuda)
    yield
    _restore(states)
