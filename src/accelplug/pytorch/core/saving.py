"""``lightning.pytorch.core.saving``'s path: hyper-parameter files and loading from checkpoints."""

from __future__ import annotations

from ...core.saving import (
    CHECKPOINT_PAST_HPARAMS_KEYS,
    convert,
    load_hparams_from_tags_csv,
    load_hparams_from_yaml,
    save_hparams_to_tags_csv,
    save_hparams_to_yaml,
    update_hparams,
)

__all__ = [
    "CHECKPOINT_PAST_HPARAMS_KEYS",
    "convert",
    "load_hparams_from_tags_csv",
    "load_hparams_from_yaml",
    "save_hparams_to_tags_csv",
    "save_hparams_to_yaml",
    "update_hparams",
]
