"""``CombinedLoader``: several loaders iterated together, as Lightning's (``lightning.pytorch.utilities``).

The loaders may sit in any nesting of dicts, lists and tuples (torch's pytree flattens them; each loader is
a leaf). Iterating yields ``(batch, batch_idx, dataloader_idx)``, the batch having the loaders' nesting:

- ``min_size``: one batch of every loader per step, until the shortest ends;
- ``max_size_cycle``: until the longest ends, shorter loaders starting over (what ``fit`` does with a dict
  or list of training loaders);
- ``max_size``: until the longest ends, an ended loader giving ``None``;
- ``sequential``: every loader in turn to its end, one batch per step (``dataloader_idx`` says whose);
  what evaluation with several loaders is.

The Trainer trains (and evaluates, in the other modes than ``sequential``) through :class:`TrainingBatches`: the
batch alone, with a length, and ``set_epoch`` reaching every inner sampler.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Literal, Self, get_args

from torch.utils._pytree import tree_flatten, tree_unflatten
from torch.utils.data import DataLoader
from torch.utils.data.dataloader import _MultiProcessingDataLoaderIter

from ..errors import MisconfigurationException, did_you_mean
from .lengths import sized_len

__all__ = [
    "MODES",
    "CombinedLoader",
    "Mode",
    "TrainingBatches",
    "holds_only_primitives",
    "load_loader_states",
    "loader_states",
    "resumable",
]

#: The modes, as a type (Lightning's ``_LITERAL_SUPPORTED_MODES``) and as the values it allows.
Mode = Literal["min_size", "max_size_cycle", "max_size", "sequential"]
MODES: tuple[str, ...] = get_args(Mode)


class CombinedLoader(Iterator[tuple[Any, int, int]]):
    """Several iterables (usually DataLoaders) iterated together in one of :data:`MODES`.

    As Lightning's, the combined loader is its own iterator: ``iter()`` starts a pass (and the loaders' workers:
    every loader's at once, or only the first in ``sequential`` mode, which starts each in turn), ``next()`` gives
    the next ``(batch, batch_idx, dataloader_idx)``, and ``len()`` is known once a pass has started.
    """

    def __init__(self, iterables: Any, mode: str = "min_size") -> None:
        if mode not in MODES:
            raise MisconfigurationException(
                f"Unsupported mode {mode!r}, please select one of: {list(MODES)}.{did_you_mean(mode, MODES)}"
            )
        self._iterables = iterables
        self._mode = mode
        self._flattened, self._spec = tree_flatten(iterables, is_leaf=holds_only_primitives)
        self._limits: list[int | float] | None = None
        self._iterator: _Steps | None = None

    @property
    def iterables(self) -> Any:
        """The loaders as given (their nesting)."""
        return self._iterables

    @property
    def mode(self) -> str:
        return self._mode

    @property
    def flattened(self) -> list[Any]:
        """The loaders in order, without their nesting."""
        return self._flattened

    @flattened.setter
    def flattened(self, flattened: list[Any]) -> None:
        """Replace the loaders (the Trainer puts each process's sharded ones here), keeping the nesting."""
        if len(flattened) != len(self._flattened):
            raise MisconfigurationException(
                f"CombinedLoader.flattened: Mismatch in flattened length ({len(flattened)}) and existing length "
                f"({len(self._flattened)}): {len(flattened)} iterables given where it holds {len(self._flattened)}."
            )
        self._flattened = list(flattened)
        self._iterables = tree_unflatten(self._flattened, self._spec)

    @property
    def sampler(self) -> Any:
        """Every loader's sampler, in the loaders' nesting."""
        return tree_unflatten([getattr(x, "sampler", None) for x in self._flattened], self._spec)

    @property
    def batch_sampler(self) -> Any:
        """Every loader's batch sampler, in the loaders' nesting."""
        return tree_unflatten([getattr(x, "batch_sampler", None) for x in self._flattened], self._spec)

    @property
    def limits(self) -> list[int | float] | None:
        """How many batches each loader may give at most (None: all)."""
        return self._limits

    @limits.setter
    def limits(self, limits: int | float | list[int | float] | None) -> None:
        if isinstance(limits, (int, float)):
            limits = [limits] * len(self._flattened)
        elif isinstance(limits, list) and len(limits) != len(self._flattened):
            raise MisconfigurationException(
                f"CombinedLoader.limits: Mismatch in number of limits ({len(limits)}) and number of iterables "
                f"({len(self._flattened)}): {len(limits)} limits for {len(self._flattened)} iterables."
            )
        self._limits = limits

    def __iter__(self) -> Self:
        self._iterator = _Steps(self._flattened, self._mode, self._limits)
        return self

    def __next__(self) -> tuple[Any, int, int]:
        if self._iterator is None:
            iter(self)
        assert self._iterator is not None
        batches, batch_idx, dataloader_idx = next(self._iterator)
        batch = batches if self._mode == "sequential" else tree_unflatten(batches, self._spec)
        return batch, batch_idx, dataloader_idx

    def __len__(self) -> int:
        """Batches in one pass (after ``iter()``, as Lightning's); a ``TypeError`` when a loader has no length."""
        if self._iterator is None:
            raise RuntimeError(
                "CombinedLoader has no length before a pass starts: Please call `iter(combined_loader)` first."
            )
        length = combined_length(self._flattened, self._mode, self._limits)
        if math.isinf(length):
            raise TypeError("CombinedLoader has no length: an iterable without one decides how long a pass is.")
        return int(length)

    def reset(self) -> None:
        """Forget the running pass and shut down the workers of the loaders' running iterators."""
        self._iterator = None
        for loader in self._flattened:
            _shut_down(loader)

    def __getstate__(self) -> dict[str, Any]:
        """Picklable mid-pass (a ``DataLoader``'s running iterator is not, so the pass is not kept)."""
        return {**self.__dict__, "_iterator": None}


def holds_only_primitives(node: Any) -> bool:
    """A list, tuple or dict of numbers and strings (``[1, 2, 3]``) is one iterable, not a nesting of them (as in
    Lightning, where such a list is a loader of its own)."""
    if isinstance(node, Mapping):
        children: Iterable[Any] = node.values()
    elif isinstance(node, (list, tuple)):
        children = node
    else:
        return False
    return all(isinstance(child, (int, float, str)) for child in children)


def _shut_down(loader: Any) -> None:
    """A ``DataLoader`` kept its iterator (``persistent_workers``): stop its worker processes and drop it."""
    if not isinstance(loader, DataLoader):
        return
    running = getattr(loader, "_iterator", None)
    if isinstance(running, _MultiProcessingDataLoaderIter):
        running._shutdown_workers()
    loader._iterator = None


def _capped(lengths: list[float], limits: list[int | float] | None) -> list[float]:
    return list(lengths) if limits is None else [min(n, limit) for n, limit in zip(lengths, limits, strict=True)]


def combined_length(iterables: list[Any], mode: str, limits: list[int | float] | None = None) -> float:
    """Steps of one pass over ``iterables`` in ``mode``; ``inf`` when an iterable without a length decides it."""
    lengths = _capped([math.inf if (n := sized_len(x)) is None else n for x in iterables], limits)
    if not lengths:
        return 0
    if mode == "sequential":
        return sum(lengths)
    return min(lengths) if mode == "min_size" else max(lengths)


class _Steps(Iterator[tuple[Any, int, int]]):
    """One pass: the flat list of batches (or one batch, sequential), its index, and whose it is.

    The iterators start when the pass is made (a DataLoader's workers with them): every iterable's, or in
    ``sequential`` mode the first one's, each next one when its turn comes.
    """

    def __init__(self, iterables: list[Any], mode: str, limits: list[int | float] | None) -> None:
        self.iterables, self.mode = iterables, mode
        self.limits = limits if limits is not None else [float("inf")] * len(iterables)
        sequential = mode == "sequential"
        self.iterators = [iter(x) for x in (iterables[:1] if sequential else iterables)]
        self.ended = [False] * len(iterables)
        self.step = 0
        self.current = 0  # sequential: which iterable

    def __next__(self) -> tuple[Any, int, int]:
        if self.mode == "sequential":
            return self._next_sequential()
        if not self.iterables:
            raise StopIteration
        # As Lightning's: limits cut a sequential pass; in the other modes they only shorten len().
        batches: list[Any] = []
        for position, iterator in enumerate(self.iterators):
            done = self.ended[position] and self.mode == "max_size"
            batches.append(None if done else self._draw(position, iterator))
        if self.mode != "min_size" and all(self.ended):
            raise StopIteration
        index, self.step = self.step, self.step + 1
        return batches, index, 0

    def _draw(self, position: int, iterator: Iterator[Any]) -> Any:
        try:
            return next(iterator)
        except StopIteration:
            if self.mode == "min_size":
                raise
            self.ended[position] = True
            if self.mode == "max_size":
                return None
            if all(self.ended):
                raise
            self.iterators[position] = iter(self.iterables[position])  # max_size_cycle: start over
            return next(self.iterators[position])

    def _next_sequential(self) -> tuple[Any, int, int]:
        while self.current < len(self.iterables):
            if not self.iterators:
                self.iterators = [iter(self.iterables[self.current])]
            if self.step < self.limits[self.current]:
                try:
                    batch = next(self.iterators[0])
                except StopIteration:
                    pass
                else:
                    index, self.step = self.step, self.step + 1
                    return batch, index, self.current
            self.current, self.step, self.iterators = self.current + 1, 0, []
        raise StopIteration


class _EpochFanout:
    """What ``Strategy.set_epoch`` finds as the training view's ``sampler``: tells every inner sampler."""

    def __init__(self, combined: CombinedLoader) -> None:
        self.combined = combined

    def set_epoch(self, epoch: int) -> None:
        for loader in self.combined.flattened:
            sampler = getattr(loader, "sampler", None)
            if sampler is not None and hasattr(sampler, "set_epoch"):
                sampler.set_epoch(epoch)


class TrainingBatches(Iterable[Any]):
    """A ``CombinedLoader`` as the fit loop iterates it: the combined batch alone, a length, ``set_epoch``."""

    def __init__(self, combined: CombinedLoader) -> None:
        self.combined = combined
        self.sampler = _EpochFanout(combined)

    def __iter__(self) -> Iterator[Any]:
        # the pass (and the loaders' workers) starts here, when the loop asks for an iterator, not at the first batch;
        # once: a ``for`` over the combined loader would call its ``iter()`` again and start a second pass (each
        # loader's iterator made twice: its workers started twice and, as Lightning does not, one more draw of the
        # global RNG for each DataLoader's base seed)
        return _batches_of(iter(self.combined))

    def __len__(self) -> int:
        length = combined_length(self.combined.flattened, self.combined.mode, self.combined.limits)
        if math.isinf(length):
            raise TypeError("these combined loaders have no length: an iterable without one decides it")
        return int(length)


def _batches_of(combined: CombinedLoader) -> Iterator[Any]:
    """The combined batches of a pass already started, drawn with ``next`` (never ``iter()``, which restarts it)."""
    while True:
        try:
            batch, _batch_idx, _dataloader_idx = next(combined)
        except StopIteration:
            return
        yield batch


def _parts(loader: Any) -> list[Any]:
    if isinstance(loader, TrainingBatches):
        loader = loader.combined
    return list(loader.flattened) if isinstance(loader, CombinedLoader) else [loader]


def _keeps_position(part: Any) -> bool:
    """Lightning's rule for an iterable that keeps its own position: both ``state_dict`` and ``load_state_dict``
    callable (torchdata's ``StatefulDataLoader``, a user's own iterable)."""
    return callable(getattr(part, "state_dict", None)) and callable(getattr(part, "load_state_dict", None))


def _stateful_parts(loader: Any) -> list[Any]:
    """The iterables of a training loader that keep their own position, in the combined loader's flattened order."""
    return [part for part in _parts(loader) if _keeps_position(part)]


def resumable(loader: Any) -> bool:
    """Whether every iterable of a training loader keeps its own position (a mid-epoch resume is then exact)."""
    return all(_keeps_position(part) for part in _parts(loader))


def loader_states(loader: Any) -> list[dict[str, Any]]:
    """Each stateful iterable's ``state_dict()`` (empty when none is): what a checkpoint keeps of the data's
    position, as Lightning keeps it (``loops.fit_loop.state_dict.combined_loader``)."""
    return [part.state_dict() for part in _stateful_parts(loader)]


def load_loader_states(loader: Any, states: list[dict[str, Any]]) -> None:
    """Give each stateful iterable of ``loader`` its saved state back, in order, before its iterator is made."""
    parts = _stateful_parts(loader)
    if len(parts) != len(states):  # Lightning's type and key phrase
        raise RuntimeError(
            f"The training data holds {len(parts)} stateful loaders, but found {len(states)} states in the checkpoint:"
            " give the fit the same dataloaders it had when the checkpoint was saved."
        )
    for part, state in zip(parts, states, strict=True):
        part.load_state_dict(state)
