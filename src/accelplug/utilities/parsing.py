"""``lightning.pytorch.utilities.parsing``'s path: recording hyper-parameters, and finding one wherever a project
keeps it.

The first live in :mod:`accelplug.core.hparams` (the mixin's rules), the second in :mod:`accelplug.tuner.attributes`.
"""

from __future__ import annotations

from ..core.hparams import (
    AttributeDict,
    clean_namespace,
    collect_init_args,
    get_init_args,
    is_picklable,
    parse_class_init_keys,
    save_hyperparameters,
)
from ..tuner.attributes import (
    AttributeNotFound,
    lightning_getattr,
    lightning_hasattr,
    lightning_setattr,
)

__all__ = [
    "AttributeDict",
    "AttributeNotFound",
    "clean_namespace",
    "collect_init_args",
    "get_init_args",
    "is_picklable",
    "lightning_getattr",
    "lightning_hasattr",
    "lightning_setattr",
    "parse_class_init_keys",
    "save_hyperparameters",
]
