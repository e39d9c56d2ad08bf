"""Small models for examples and tests, as ``lightning.pytorch.demos`` has them (``accelplug.pytorch.demos``).

Only ``Transformer`` so far: the model Lightning's own language-model example builds.
"""

from __future__ import annotations

from .transformer import PositionalEncoding, Transformer

__all__ = ["PositionalEncoding", "Transformer"]
