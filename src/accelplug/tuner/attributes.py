"""``lightning.pytorch.utilities.parsing``'s attribute helpers: a hyper-parameter found wherever a project keeps it.

The tuner reads and writes ``lr``/``batch_size`` without knowing where a project put it: on the module, in
``module.hparams``, on the datamodule of the running call or in its ``hparams``. Reading takes the last place
that has it (Lightning's order, kept for compatibility); writing sets every place, so a ``train_dataloader``
that reads any of them sees the new value.
"""

from __future__ import annotations

from typing import Any

from ..errors import MisconfigurationException

__all__ = ["AttributeNotFound", "lightning_getattr", "lightning_hasattr", "lightning_setattr"]


class AttributeNotFound(MisconfigurationException, AttributeError):
    """No holder has the attribute: a configuration mistake, and the ``AttributeError`` Lightning raises."""


def _has(holder: Any, attribute: str) -> bool:
    try:
        return attribute in holder
    except TypeError:
        return False


def _holders(model: Any, attribute: str) -> list[Any]:
    """Every object or dict holding ``attribute``: the module, its hparams, the datamodule, the datamodule's hparams."""
    found: list[Any] = []
    if hasattr(model, attribute):
        found.append(model)
    hparams = getattr(model, "hparams", None)
    if hparams is not None and _has(hparams, attribute):
        found.append(hparams)
    trainer = getattr(model, "_trainer", None)
    datamodule = getattr(trainer, "datamodule", None) if trainer is not None else None
    if datamodule is not None:
        if hasattr(datamodule, attribute):
            found.append(datamodule)
        dm_hparams = getattr(datamodule, "hparams", None)
        if dm_hparams is not None and _has(dm_hparams, attribute):
            found.append(dm_hparams)
    return found


def _missing(attribute: str) -> AttributeNotFound:
    return AttributeNotFound(
        f"{attribute} is neither stored in the model namespace nor the `hparams` namespace/dict, nor the datamodule."
    )


def lightning_hasattr(model: Any, attribute: str) -> bool:
    """Whether the module, its hparams or the running call's datamodule (or its hparams) has ``attribute``."""
    return bool(_holders(model, attribute))


def lightning_getattr(model: Any, attribute: str) -> Any:
    """``attribute`` from the last of its holders (module, hparams, datamodule, datamodule hparams)."""
    holders = _holders(model, attribute)
    if not holders:
        raise _missing(attribute)
    holder = holders[-1]
    return holder[attribute] if isinstance(holder, dict) else getattr(holder, attribute)


def lightning_setattr(model: Any, attribute: str, value: Any) -> None:
    """Set ``attribute`` to ``value`` in every holder, so whichever one the project reads agrees."""
    holders = _holders(model, attribute)
    if not holders:
        raise _missing(attribute)
    for holder in holders:
        if isinstance(holder, dict):
            holder[attribute] = value
        else:
            setattr(holder, attribute, value)
