"""The step and loader methods Lightning's ``LightningModule`` has as defaults, and that only a subclass fills in.

A module can call ``super().validation_step(...)`` or ``super().train_dataloader()`` under Lightning, and
tools introspect ``LightningModule.training_step``; so the base has them, with Lightning's behaviour (a warning
for a missing ``training_step``, an error for a loader that was never written). Yet the Trainer decides
which stages run and where loaders come from by whether a module *wrote* these methods: each default
carries :func:`~accelplug.overrides.default_method`'s mark, so ``overrides(module, "validation_step")`` stays
False for a module without one, validation is still skipped, and a plain ``torch.nn.Module`` is judged
by what it defines. They are not hooks (``MODULE_HOOKS`` leaves them out): the loops call them directly.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import MisconfigurationException
from ..overrides import default_method

__all__ = ["StepDefaults"]


def _not_written(name: str) -> MisconfigurationException:
    return MisconfigurationException(f"`{name}` must be implemented to be used with the Lightning Trainer")


class StepDefaults:
    """Lightning's defaults: a warning for ``training_step``, None for the evaluation steps, errors for loaders."""

    @default_method
    def training_step(self, *args: Any, **kwargs: Any) -> Any:
        warnings.warn("`training_step` must be implemented to be used with the Lightning Trainer", stacklevel=2)

    @default_method
    def validation_step(self, *args: Any, **kwargs: Any) -> Any:
        """Nothing: a module without its own ``validation_step`` has no validation (the Trainer skips it)."""

    @default_method
    def test_step(self, *args: Any, **kwargs: Any) -> Any:
        """Nothing: ``trainer.test`` refuses a module without its own ``test_step`` before it runs."""

    @default_method
    def train_dataloader(self) -> Any:
        raise _not_written("train_dataloader")

    @default_method
    def val_dataloader(self) -> Any:
        raise _not_written("val_dataloader")

    @default_method
    def test_dataloader(self) -> Any:
        raise _not_written("test_dataloader")

    @default_method
    def predict_dataloader(self) -> Any:
        raise _not_written("predict_dataloader")

    @default_method
    def configure_sharded_model(self) -> None:
        """Deprecated since Lightning 2.1: write ``configure_model``, which the Trainer calls in its place.

        A module that still writes this one has it called (with a deprecation warning) right before
        ``configure_model``; writing both is refused, as Lightning refuses it.
        """
