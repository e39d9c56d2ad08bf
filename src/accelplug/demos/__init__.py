"""Small models for examples and tests, as ``lightning.pytorch.demos`` has them (``accelplug.pytorch.demos``).

:mod:`.boring_classes` holds the models and datasets of Lightning's bug reports and tests (``BoringModel``...),
:mod:`.transformer` and :mod:`.lstm` the language models of Lightning's examples with their WikiText-2 data;
:mod:`.classifier` is ``accelplug demo``'s own run.
"""

from __future__ import annotations

from .boring_classes import BoringDataModule, BoringModel, DemoModel
from .lstm import LightningLSTM, SequenceSampler, SimpleLSTM
from .transformer import LightningTransformer, PositionalEncoding, Transformer, WikiText2

__all__ = [
    "BoringDataModule",
    "BoringModel",
    "DemoModel",
    "LightningLSTM",
    "LightningTransformer",
    "PositionalEncoding",
    "SequenceSampler",
    "SimpleLSTM",
    "Transformer",
    "WikiText2",
]
