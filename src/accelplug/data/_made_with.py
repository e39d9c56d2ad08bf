"""The arguments a ``DataLoader`` subclass was made with, recorded while a ``*_dataloader()`` method runs.

Putting a sharding sampler into a user's loader means making the loader again through its own constructor. A
parameter the constructor does not keep as an attribute of its name (``CustomLoader(num_features, dataset)``
that only hands ``dataset`` on) cannot be read back from the instance; Lightning takes it from what the call
got, recorded while its loader hooks run. Here too: while :func:`recording_arguments` is active, every
``DataLoader`` class that defines its own ``__init__`` notes on the new instance the arguments of the outermost
constructor call, by parameter name; :func:`made_with` reads them back (None for a loader made elsewhere).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from torch.utils.data import DataLoader

__all__ = ["made_with", "recording_arguments"]

_ATTRIBUTE = "_accelplug_made_with"


def _loader_classes() -> list[type[DataLoader[Any]]]:
    found: list[type[DataLoader[Any]]] = [DataLoader]
    for cls in found:  # grows while walked: every subclass, at any depth
        found.extend(sub for sub in cls.__subclasses__() if sub not in found)
    return found


def _recording(cls: type[DataLoader[Any]], original: Callable[..., None]) -> Callable[..., None]:
    signature = inspect.signature(original)

    @functools.wraps(original)
    def init(self: DataLoader[Any], *args: Any, **kwargs: Any) -> None:
        # only the call that makes the instance's own class records (its super().__init__ calls do not)
        if type(self) is cls and _ATTRIBUTE not in vars(self):
            try:
                bound = signature.bind(self, *args, **kwargs)
            except TypeError:
                pass  # the constructor itself will say what is wrong with the call
            else:
                arguments = dict(list(bound.arguments.items())[1:])
                for parameter in signature.parameters.values():
                    if parameter.kind is parameter.VAR_KEYWORD:
                        arguments.update(arguments.pop(parameter.name, {}))
                vars(self)[_ATTRIBUTE] = arguments
        original(self, *args, **kwargs)

    return init


@contextlib.contextmanager
def recording_arguments() -> Iterator[None]:
    """While active, each ``DataLoader`` (subclass) made records its constructor's arguments (see the module)."""
    patched = [(cls, vars(cls)["__init__"]) for cls in _loader_classes() if "__init__" in vars(cls)]
    for cls, original in patched:
        cls.__init__ = _recording(cls, original)  # type: ignore[method-assign]
    try:
        yield
    finally:
        for cls, original in patched:
            cls.__init__ = original  # type: ignore[method-assign]


def made_with(loader: Any) -> dict[str, Any] | None:
    """The arguments ``loader``'s constructor got, by parameter name, when made under :func:`recording_arguments`."""
    found = vars(loader).get(_ATTRIBUTE) if hasattr(loader, "__dict__") else None
    return found if isinstance(found, dict) else None
