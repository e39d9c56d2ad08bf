"""Where a stage's data comes from, and checking that it can be trained on.

Data comes, first hit wins, from the loaders passed to the Trainer method, from the datamodule's
``*_dataloader()`` method, or from the module's own. Each loader is checked: a Dataset or a number
is refused with what to pass instead (a generator is taken, as Lightning takes it). Getting a loader ready
for this process (pinning, sharding) is :func:`accelplug.data.loaders.prepare_loader`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from types import GeneratorType
from typing import Any

from torch.utils.data import DataLoader, Dataset

from ..errors import MisconfigurationException
from ..overrides import overrides
from ._made_with import recording_arguments

__all__ = [
    "check_loader",
    "has_loader_source",
    "is_datamodule",
    "refuse_sequential_fit",
    "resolve_loaders",
    "split_datamodule",
]

_METHOD = {"fit": "train_dataloader", "validate": "val_dataloader", "test": "test_dataloader",
           "predict": "predict_dataloader"}  # fmt: skip
#: The stages that go over their data once a call (validation runs again every epoch of a fit).
_ARGUMENT = {"fit": "train_dataloaders", "validate": "val_dataloaders / dataloaders", "test": "dataloaders",
             "predict": "dataloaders"}  # fmt: skip


def is_datamodule(obj: object) -> bool:
    """A LightningDataModule, or any object with its protocol (``*_dataloader`` methods, not itself iterable)."""
    if obj is None or isinstance(obj, DataLoader) or hasattr(obj, "__iter__"):
        return False
    # the class's methods count too: a datamodule whose instance hides them (``dm.train_dataloader = None``) is
    # still one, its missing loader refused as such later (Lightning's reading)
    return any(callable(getattr(obj, n, None)) or callable(getattr(type(obj), n, None)) for n in _METHOD.values())


def split_datamodule(loaders: Any, datamodule: Any, method: str) -> tuple[Any, Any]:
    """Lightning lets a datamodule be passed where the loaders go; also refuse passing both."""
    if datamodule is None and is_datamodule(loaders):
        return None, loaders
    if datamodule is not None:
        if not is_datamodule(datamodule):
            raise MisconfigurationException(
                f"{method}(datamodule={type(datamodule).__name__} object) is not a datamodule: expected a "
                "LightningDataModule (or an object with train_dataloader()/val_dataloader()/... methods)."
            )
        if loaders is not None:
            raise MisconfigurationException(
                f"{method}() got both data loaders and datamodule=; pass one of them (the datamodule provides "
                "the loaders through its *_dataloader() methods)."
            )
    return loaders, datamodule


def _source(stage: str, module: Any, datamodule: Any) -> tuple[Callable[[], Any] | None, str]:
    name = _METHOD[stage]
    if datamodule is not None and overrides(datamodule, name):
        return getattr(datamodule, name), f"{type(datamodule).__name__}.{name}()"
    if overrides(module, name):
        return getattr(module, name), f"{type(module).__name__}.{name}()"
    return None, ""


def has_loader_source(stage: str, module: Any, datamodule: Any) -> bool:
    """Whether the datamodule or the module defines the ``*_dataloader()`` method for ``stage``."""
    return _source(stage, module, datamodule)[0] is not None


def resolve_loaders(
    stage: str, given: Any, module: Any, datamodule: Any, *, required: bool
) -> tuple[list[Any], Callable[[], Any] | None, str]:
    """The loaders for ``stage``, the method that made them (to reload them) and a name for messages."""
    if given is not None:
        return _as_list(given, _passed(stage), stage), None, _ARGUMENT[stage]
    method, label = _source(stage, module, datamodule)
    if method is None:
        if required:
            raise InvalidLoader(
                f"{_passed(stage)}. Found None: {stage}() needs data: pass {_ARGUMENT[stage].split(' / ')[-1]}=..., "
                f"a datamodule, or define {_METHOD[stage]}() on {type(module).__name__} (or its datamodule)."
            )
        return [], None, ""
    with recording_arguments():  # a loader subclass can be made again with what it got (sharding sampler)
        made = method()
    return _as_list(made, f"An invalid dataloader was returned from `{label}`", stage), method, label


def _as_list(value: Any, what: str, stage: str) -> list[Any]:
    """One or several loaders; a list of batches (not of loaders) is itself one loader.

    As Lightning: ``fit`` trains on a list or dict of loaders (or a ``CombinedLoader``) as one
    ``CombinedLoader`` (``max_size_cycle`` unless given), each step a batch of every loader in the same
    nesting (a ``sequential`` one is refused once its batches are counted: :func:`refuse_sequential_fit`);
    evaluation runs several loaders one after the other, each step given its ``dataloader_idx``, and a
    ``CombinedLoader`` in another mode as one source of combined batches; prediction takes only
    ``sequential``.
    """
    from .combined_loader import CombinedLoader

    # A dict is never itself a loader (iterating it gives its keys): every value is one, a DataLoader or any
    # re-iterable (``{"a": [0, 1], "b": [2, 3]}``, as Lightning's CombinedLoader takes it).
    # Nor is a list of iterators, or of lists of numbers (``[[0, 1], [2, 3]]``: two loaders, as Lightning reads it).
    several = (isinstance(value, (list, tuple)) and value and all(_loader_in_list(v) for v in value)) or (
        isinstance(value, dict) and value and all(_iterable_loader(v) for v in value.values())
    )
    if stage == "fit" and several:
        value = CombinedLoader(value, "max_size_cycle")
    if isinstance(value, CombinedLoader):
        value.flattened = [check_loader(loader, what) for loader in value.flattened]
        if stage == "predict" and value.mode != "sequential":
            raise _SequentialOnly(
                f"{what} is a CombinedLoader(mode={value.mode!r}): `trainer.predict()` only supports the "
                '`CombinedLoader(mode="sequential")` mode (one prediction per batch of each loader in turn).'
            )
        if stage == "fit" or value.mode != "sequential":
            return [value]
        return list(value.flattened)
    if stage == "fit" or not several:
        return [check_loader(value, what)]
    loaders = list(value.values()) if isinstance(value, dict) else list(value)
    return [check_loader(loader, what) for loader in loaders]


def _iterable_loader(value: Any) -> bool:
    """A DataLoader, or another iterable that is not a string, a mapping or a Dataset (which yields samples)."""
    if isinstance(value, DataLoader):
        return True
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, Mapping, Dataset))


def _loader_in_list(value: Any) -> bool:
    """An item that makes a list a list of loaders rather than of batches."""
    from .combined_loader import holds_only_primitives

    numbers = isinstance(value, (list, tuple)) and bool(value) and holds_only_primitives(value)
    return isinstance(value, DataLoader) or _one_shot(value) or numbers


def refuse_sequential_fit(loader: Any) -> None:
    """``fit`` trains on one batch of every loader per step, so a ``sequential`` ``CombinedLoader`` is refused (after
    its batches were counted, as Lightning does: ``num_training_batches`` is set when the error comes)."""
    combined = getattr(loader, "combined", None)
    if getattr(combined, "mode", None) == "sequential":
        raise _SequentialOnly(
            "train_dataloaders is a CombinedLoader(mode='sequential'): `FitLoop` does not support the "
            '`CombinedLoader(mode="sequential")` mode (it trains on one batch of every loader per step); use '
            "mode 'max_size_cycle', 'min_size' or 'max_size'."
        )


def _passed(stage: str) -> str:
    """How a loader given to the Trainer method is named in a refusal (Lightning's words for the call)."""
    if stage == "validate":
        return (
            "An invalid dataloader was passed to `Trainer.validate(dataloaders=...)` "
            "(or `Trainer.fit(val_dataloaders=...)`)"
        )
    return f"An invalid dataloader was passed to `Trainer.{stage}({_ARGUMENT[stage]}=...)`"


class InvalidLoader(MisconfigurationException, TypeError):
    """What was given (or returned by a ``*_dataloader()`` method) as a loader cannot be iterated: Lightning raises a
    ``TypeError`` a user's code may catch; this is also accelplug's configuration error."""


class _SequentialOnly(MisconfigurationException, ValueError):
    """Lightning raises a ``ValueError`` for a ``CombinedLoader`` mode a stage cannot run; this is also accelplug's
    configuration error."""


def check_loader(loader: Any, what: str) -> Any:
    """``loader`` if it is an iterable of batches; a clear error for what is not.

    A ``Dataset`` would yield unbatched samples, and a number or None is a mistake in the call: each is refused
    with what to pass instead, rather than training on the wrong data without a word. A generator or one-shot
    iterator is taken, as Lightning takes it, in every stage (an endless one with ``max_steps``, as a stream): once
    used up it yields nothing, so a later epoch over it is empty.
    """
    if isinstance(loader, DataLoader):
        return loader
    if isinstance(loader, Dataset):
        raise MisconfigurationException(
            f"{what}: got a {type(loader).__name__} (a Dataset), which yields single samples; wrap it in a "
            f"DataLoader with a batch size: DataLoader({type(loader).__name__.lower()}, batch_size=32, shuffle=True)."
        )
    if isinstance(loader, (str, bytes, Mapping)) or not isinstance(loader, Iterable):
        raise InvalidLoader(
            f"{what}. Found {_short(loader)}, which is not a data loader: expected a torch DataLoader (or another "
            "re-iterable of batches, such as a list)."
        )
    return loader


def _one_shot(loader: Any) -> bool:
    """A generator or a built-in iterator (``iter(list)``, ``map``...): empty once used. An iterator class of the
    user's own is accepted, as Lightning accepts it: its ``__iter__`` may start over each epoch."""
    return isinstance(loader, GeneratorType) or (
        isinstance(loader, Iterator) and type(loader).__module__ in ("builtins", "itertools")
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
