"""A classmethod that refuses to be called on an instance: ``load_from_checkpoint`` builds a new object, so
``model.load_from_checkpoint(path)`` would load nothing into ``model`` and throw the loaded one away. Lightning
refuses that call with a ``TypeError``; accelplug refuses it the same way, naming the fix."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ..errors import MisconfigurationException

__all__ = ["class_only_method"]


class CalledOnInstanceError(MisconfigurationException, TypeError):
    """A class-only method called on an instance: Lightning's ``TypeError``, and accelplug's configuration error."""


class _ClassOnlyMethod(classmethod):  # type: ignore[type-arg]
    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        bound = super().__get__(instance, owner if owner is not None else type(instance))
        if instance is None:
            return bound
        name = f"{type(instance).__name__}.{self.__func__.__name__}"

        @functools.wraps(self.__func__)
        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise CalledOnInstanceError(
                f"The classmethod `{name}` cannot be called on an instance. Please call it on the class type and "
                f"make sure the return value is used: it returns a new object and changes none "
                f"(obj = {name}(...))."
            )

        return refuse


if TYPE_CHECKING:  # type checkers know classmethod; at run time the instance check is added
    class_only_method = classmethod
else:
    class_only_method = _ClassOnlyMethod
