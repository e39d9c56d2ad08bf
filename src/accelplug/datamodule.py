"""``LightningDataModule``: the data half of a Lightning script, as Lightning 2.x defines it.

The Trainer calls ``prepare_data()`` once per node (on local rank 0: downloads, tokenising to disk),
``setup(stage)`` in every process, then asks for ``train_dataloader()``, ``val_dataloader()``,
``test_dataloader()`` or ``predict_dataloader()`` as the stage needs, and ``teardown(stage)`` at the
end. ``state_dict()`` goes into checkpoints. Subclassing is optional: any object with those methods
works the same way.
"""

from __future__ import annotations

from typing import Any

from .errors import MisconfigurationException
from .module import AttributeDict
from .overrides import default_hook

__all__ = ["LightningDataModule"]


class LightningDataModule:
    """Subclass and define the ``*_dataloader()`` methods your stages need (and ``setup`` to build them)."""

    def __init__(self) -> None:
        self.trainer: Any = None
        self._hparams: AttributeDict = AttributeDict()

    def save_hyperparameters(self, *args: Any, ignore: Any = None, frame: Any = None, logger: bool = True) -> None:
        import inspect

        from .module import _init_arguments

        ignored = {ignore} if isinstance(ignore, str) else set(ignore or ())
        caller = inspect.currentframe()
        values = _init_arguments(frame if frame is not None else (caller.f_back if caller else None), type(self))
        if args:
            values = {a: values[a] for a in args if a in values}
        self._hparams.update({k: v for k, v in values.items() if k not in ignored})

    @property
    def hparams(self) -> AttributeDict:
        return self._hparams

    @default_hook
    def prepare_data(self) -> None:
        """Download or write data once per node (local rank 0 only); do not set state here."""

    @default_hook
    def setup(self, stage: str) -> None:
        """Build datasets for ``stage`` ('fit', 'validate', 'test' or 'predict'), in every process."""

    @default_hook
    def teardown(self, stage: str) -> None:
        """Release what ``setup`` built."""

    @default_hook
    def train_dataloader(self) -> Any:
        raise MisconfigurationException(f"{type(self).__name__} does not define train_dataloader(), which fit() needs.")

    @default_hook
    def val_dataloader(self) -> Any:
        raise MisconfigurationException(f"{type(self).__name__} does not define val_dataloader().")

    @default_hook
    def test_dataloader(self) -> Any:
        raise MisconfigurationException(f"{type(self).__name__} does not define test_dataloader(), which test() needs.")

    @default_hook
    def predict_dataloader(self) -> Any:
        raise MisconfigurationException(
            f"{type(self).__name__} does not define predict_dataloader(), which predict() needs."
        )

    @default_hook
    def transfer_batch_to_device(self, batch: Any, device: Any, dataloader_idx: int) -> Any:
        from .data.batches import make_transfer

        return make_transfer(device, None)(batch)

    @default_hook
    def on_before_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        return batch

    @default_hook
    def on_after_batch_transfer(self, batch: Any, dataloader_idx: int) -> Any:
        return batch

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of this datamodule (e.g. a position in a stream)."""
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""
