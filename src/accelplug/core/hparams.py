"""Hyper-parameters: the ``hparams`` dict a module and a datamodule keep, and what can be saved in it.

``self.hparams.lr`` reads a key as an attribute (:class:`AttributeDict`, Lightning's class); what goes in must
survive ``pickle`` to be written into a checkpoint or handed to a spawned process (:func:`is_picklable`).
"""

from __future__ import annotations

import pickle
from typing import Any

__all__ = ["AttributeDict", "is_picklable"]


class AttributeDict(dict[str, Any]):
    """A dict whose keys read as attributes: ``self.hparams.lr`` (Lightning's ``AttributeDict``)."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(f"hparams has no {key!r}; it has {sorted(self)}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        self[key] = value

    def __delattr__(self, key: str) -> None:
        del self[key]


def is_picklable(obj: object) -> bool:
    """Whether ``pickle`` can write ``obj`` (what hparams and spawned processes need)."""
    try:
        pickle.dumps(obj)
    except (pickle.PickleError, AttributeError, RuntimeError, TypeError):
        return False
    return True
