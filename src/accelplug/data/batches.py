"""The one batch mover: moving a batch to a device, casting its floating tensors, telling its size.

Shared by the Trainer's loops, the module's ``transfer_batch_to_device``, Fabric (``to_device``, its
dataloaders, its module's input cast), the precisions' ``convert_input`` and the collectives. It walks what
Lightning's ``apply_to_collection`` walks, in Lightning's order:

- a tensor is moved (and, when a dtype is asked, cast if it is floating: ``64-true``, ``bf16-true``,
  ``16-true``; integer and boolean tensors keep their dtype);
- any other object whose class has a ``to`` method (a Hugging Face ``BatchEncoding``, a module, a user's
  data class) is moved whole with ``obj.to(device)``, which may return a new object or ``self`` (``None``, a
  ``to`` that moves in place, keeps the object); a cast then walks into it when it is a collection;
- every ``Mapping`` (``dict``, ``OrderedDict``, ``defaultdict``, ``UserDict``...), dataclass (frozen too),
  named tuple, list, tuple and other sequence is rebuilt as its own type around its moved items;
- anything else (numbers, strings, arrays) is returned as it is.

Two differences from Lightning, on purpose (``docs/migrating-from-lightning.md``): a frozen dataclass is
rebuilt where Lightning's walk raises, and on the CPU without a cast the Trainer's per-batch function
returns the batch untouched, since a no-op ``Tensor.to`` still costs a dispatch per tensor per step.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections import defaultdict
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from functools import cached_property
from typing import Any

import torch

from ..errors import MisconfigurationException
from ..hardware.runtime import copies_may_overlap

__all__ = [
    "CONVERSION_DTYPES",
    "apply_to_tensors",
    "batch_size_of",
    "cast_floating",
    "convert_tensors_to_scalars",
    "convert_to_tensors",
    "make_transfer",
    "move_data_to_device",
    "recursive_detach",
]

_Leaf = Callable[[torch.Tensor], Any]
_Whole = Callable[[Any], Any]


def _has_to(obj: object) -> bool:
    """Lightning's test of a transferable object: its class has a callable ``to`` (so a class itself is not)."""
    return callable(getattr(type(obj), "to", None))


def _walk(obj: Any, leaf: _Leaf, whole: _Whole | None, other: _Whole | None = None) -> Any:
    """``obj`` with ``leaf`` applied to each tensor, ``whole`` to each other object with ``to`` (None: such
    objects are walked into as collections, as Lightning's ``convert_input`` does) and ``other`` to anything
    that is neither nor a collection (None: kept as it is)."""
    if isinstance(obj, torch.Tensor):
        return leaf(obj)
    if whole is not None and _has_to(obj):
        return whole(obj)
    if obj is None or isinstance(obj, (str, bytes, int, float)):
        return obj if other is None else other(obj)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _rebuild_dataclass(obj, leaf, whole, other)
    if isinstance(obj, Mapping):
        return _rebuild_mapping(obj, {key: _walk(value, leaf, whole, other) for key, value in obj.items()})
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a named tuple
        return type(obj)(*(_walk(item, leaf, whole, other) for item in obj))
    if type(obj) is list or type(obj) is tuple:
        return type(obj)(_walk(item, leaf, whole, other) for item in obj)
    if isinstance(obj, Sequence):
        return _rebuild_sequence(obj, [_walk(item, leaf, whole, other) for item in obj])
    return obj if other is None else other(obj)


def _rebuild_mapping(obj: Mapping[Any, Any], items: dict[Any, Any]) -> Any:
    """A mapping of ``obj``'s type around ``items``: built by its constructor as Lightning does, else (a mutable
    mapping whose constructor takes something else) a copy of ``obj`` with the items set."""
    cls = type(obj)
    if cls is dict:
        return items
    try:
        if isinstance(obj, defaultdict):
            return cls(obj.default_factory, items)  # type: ignore[call-arg]
        return cls(items)  # type: ignore[call-arg]
    except TypeError:
        if not isinstance(obj, MutableMapping):
            raise _UnbuildableCollection(obj) from None
    rebuilt = copy.copy(obj)
    for key, value in items.items():
        rebuilt[key] = value
    return rebuilt


def _rebuild_sequence(obj: Sequence[Any], items: list[Any]) -> Any:
    try:
        return type(obj)(items)  # type: ignore[call-arg]
    except TypeError:
        raise _UnbuildableCollection(obj) from None


def _rebuild_dataclass(obj: Any, leaf: _Leaf, whole: _Whole | None, other: _Whole | None) -> Any:
    """A copy of ``obj`` with its ``init`` fields walked (the other fields and attributes as they were, cached
    properties dropped), as Lightning rebuilds one; a frozen dataclass too, whose fields are set underneath."""
    fields = dataclasses.fields(obj)
    values = {field.name: getattr(obj, field.name) for field in fields}
    rebuilt = copy.deepcopy(obj, memo={id(value): value for value in values.values()})
    for field in fields:
        if field.init:
            object.__setattr__(rebuilt, field.name, _walk(values[field.name], leaf, whole, other))
    state = getattr(rebuilt, "__dict__", None)
    if state is not None:
        for name, attribute in vars(type(obj)).items():
            if isinstance(attribute, cached_property):
                state.pop(name, None)
    return rebuilt


class _UnbuildableCollection(MisconfigurationException, TypeError):
    """A collection in a batch whose type cannot be rebuilt around its moved items (Lightning: a TypeError)."""

    def __init__(self, obj: object) -> None:
        name = type(obj).__name__
        super().__init__(
            f"cannot move a {name} of tensors: {name}(items) does not rebuild it. Give {name} a constructor that "
            "takes its items, a `to(device)` method, or turn it into a dict/list/dataclass in the collate_fn."
        )


def apply_to_tensors(data: Any, fn: Callable[[torch.Tensor], Any]) -> Any:
    """``data`` with ``fn`` applied to every tensor in it, collections rebuilt (the collectives use it)."""
    return _walk(data, fn, None)


def cast_floating(data: Any, dtype: torch.dtype) -> Any:
    """Floating tensors in ``data`` cast to ``dtype``, the others untouched: Lightning's precision plugins'
    ``convert_input`` (``64-true``, ``bf16-true``, ``16-true``) and ``convert_output``."""

    def cast(tensor: torch.Tensor) -> torch.Tensor:
        return tensor.to(dtype) if tensor.is_floating_point() else tensor

    return _walk(data, cast, None)


class _Mover:
    """The leaf functions of a move to ``device`` (with floating tensors cast to ``float_dtype`` when given)."""

    def __init__(self, device: torch.device, float_dtype: torch.dtype | None) -> None:
        self.device = device
        self.float_dtype = float_dtype
        self.non_blocking = copies_may_overlap(device)

    def tensor(self, value: torch.Tensor) -> torch.Tensor:
        if self.float_dtype is not None and value.is_floating_point():
            return value.to(device=self.device, dtype=self.float_dtype, non_blocking=self.non_blocking)
        return value.to(self.device, non_blocking=self.non_blocking)

    def whole(self, obj: Any) -> Any:
        moved = obj.to(self.device)
        moved = obj if moved is None else moved  # a ``to`` that moves in place and returns nothing
        return cast_floating(moved, self.float_dtype) if self.float_dtype is not None else moved

    def __call__(self, batch: Any) -> Any:
        return _walk(batch, self.tensor, self.whole)


def make_transfer(device: torch.device, float_dtype: torch.dtype | None) -> Callable[[Any], Any]:
    """The per-batch function: ``batch`` on ``device``, its floating tensors in ``float_dtype`` when given.

    Copies are ``non_blocking`` on accelerators with their own memory (CUDA, XPU, a PrivateUse1 backend),
    where pinned host memory lets them overlap compute; not on MPS, whose unified memory gains nothing and
    where asynchronous copies have given wrong values. On the CPU with no cast it is the identity.
    """
    if device.type == "cpu" and float_dtype is None:
        return _identity
    return _Mover(device, float_dtype)


def _identity(obj: Any) -> Any:
    return obj


def _as_device(device: torch.device | str | int) -> torch.device:
    if isinstance(device, torch.device):
        return device
    if isinstance(device, bool) or not isinstance(device, (str, int)):
        raise MisconfigurationException(
            f"move_data_to_device(device={device!r}): expected a torch.device, a device string such as 'cpu' "
            "or 'cuda:0', or a device index."
        )
    try:
        return torch.device(device)
    except RuntimeError as error:
        raise MisconfigurationException(f"move_data_to_device(device={device!r}): {error}") from None


def move_data_to_device(batch: Any, device: torch.device | str | int) -> Any:
    """Lightning's ``move_data_to_device``: ``batch`` with every tensor and every object that has a ``to``
    method moved to ``device`` (see the module docstring); on CUDA the copies do not block."""
    return _Mover(_as_device(device), None)(batch)


#: Lightning's conversions for the collectives: a bool becomes uint8 (NCCL has no bool), an int int32, a
#: float float32, a NumPy array the tensor sharing its memory.
_NUMBER_DTYPES = ((bool, torch.uint8), (int, torch.int32), (float, torch.float32))

#: Lightning's public table of the same conversions: each Python number type with the function making it a tensor.
CONVERSION_DTYPES: list[tuple[Any, Callable[..., torch.Tensor]]] = [
    (kind, functools.partial(torch.tensor, dtype=dtype)) for kind, dtype in _NUMBER_DTYPES
]


def convert_to_tensors(data: Any, device: torch.device) -> Any:
    """Numbers and NumPy arrays in ``data`` made tensors (Lightning's dtypes) on ``device``, and everything else
    moved there: Lightning's ``convert_to_tensors``, what ``all_gather``/``all_reduce`` accept."""

    def convert(obj: Any) -> Any:
        for kind, dtype in _NUMBER_DTYPES:
            if isinstance(obj, kind):
                return torch.tensor(obj, dtype=dtype, device=device)
        if type(obj).__name__ == "ndarray" and type(obj).__module__ == "numpy":
            return torch.from_numpy(obj).to(device)
        return obj

    mover = _Mover(device, None)
    return _walk(data, mover.tensor, mover.whole, convert)


def convert_tensors_to_scalars(data: Any) -> Any:
    """Each one-element tensor in ``data`` as a Python number, collections rebuilt (Lightning's function of this
    name: what ``fabric.log_dict`` hands the loggers). A tensor of several elements is not one metric."""

    def item(tensor: torch.Tensor) -> Any:
        if tensor.numel() != 1:
            raise _NotAScalar(
                f"The metric `{tensor}` does not contain a single element, thus it cannot be converted to a scalar: "
                "log one number (e.g. value.mean())."
            )
        return tensor.item()

    return _walk(data, item, None)


class _NotAScalar(MisconfigurationException, ValueError):
    """A metric tensor with other than one element (Lightning: a ``ValueError``)."""


def batch_size_of(batch: Any) -> int:
    """The leading dimension of the first tensor in ``batch`` (1 when there is none)."""
    if isinstance(batch, torch.Tensor):
        return int(batch.shape[0]) if batch.dim() else 1
    if isinstance(batch, (tuple, list)):
        for item in batch:
            return batch_size_of(item)
    if isinstance(batch, Mapping):
        for item in batch.values():
            return batch_size_of(item)
    return 1


def recursive_detach(in_dict: Any, to_cpu: bool = False) -> Any:
    """``in_dict`` (any nesting of collections) with every tensor detached from its graph, and moved to the CPU
    when ``to_cpu`` (Lightning's ``utilities.memory.recursive_detach``: outputs kept past a step hold no graph)."""

    def detach(tensor: torch.Tensor) -> torch.Tensor:
        detached = tensor.detach()
        return detached.cpu() if to_cpu else detached

    return _walk(in_dict, detach, None)
