"""The Trainer: fits Lightning-style modules on the selected accelerator."""

from .trainer import Trainer

__all__ = ["Trainer"]
