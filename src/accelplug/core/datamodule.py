"""``LightningDataModule``: the data half of a Lightning script, as Lightning 2.x defines it.

The Trainer calls ``prepare_data()`` once per node (on local rank 0: downloads, tokenising to disk),
``setup(stage)`` in every process, then asks for ``train_dataloader()``, ``val_dataloader()``,
``test_dataloader()`` or ``predict_dataloader()`` as the stage needs, and ``teardown(stage)`` at the
end. ``state_dict()`` goes into checkpoints. Subclassing is optional: any object with those methods
works the same way.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ..errors import MisconfigurationException
from ..overrides import default_hook
from .class_only import class_only_method
from .hparams import HyperparametersMixin

__all__ = ["LightningDataModule"]


_D = TypeVar("_D", bound="LightningDataModule")


class LightningDataModule(HyperparametersMixin):
    """Subclass and define the ``*_dataloader()`` methods your stages need (and ``setup`` to build them)."""

    #: Where checkpoints keep a datamodule's hyper-parameters (Lightning's keys).
    CHECKPOINT_HYPER_PARAMS_KEY = "datamodule_hyper_parameters"
    CHECKPOINT_HYPER_PARAMS_NAME = "datamodule_hparams_name"
    CHECKPOINT_HYPER_PARAMS_TYPE = "datamodule_hparams_type"
    #: A name for the datamodule (Lightning's attribute; None unless a subclass sets one).
    name: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()  # extra arguments are accepted and unused, as accelplug always did
        self.trainer: Any = None

    @classmethod
    def from_datasets(
        cls: type[_D],
        train_dataset: Any = None,
        val_dataset: Any = None,
        test_dataset: Any = None,
        predict_dataset: Any = None,
        batch_size: int = 1,
        num_workers: int = 0,
        **datamodule_kwargs: Any,
    ) -> _D:
        """A datamodule whose loaders are plain ``DataLoader``s over the given datasets (or lists/dicts of them);
        the training ones shuffle (unless iterable). ``batch_size``/``num_workers`` reach ``__init__`` when it
        takes them, and ``datamodule_kwargs`` always."""
        from .from_datasets import loader_methods, special_arguments

        datamodule = cls(**datamodule_kwargs, **special_arguments(cls, batch_size, num_workers))
        datasets = {"train": train_dataset, "val": val_dataset, "test": test_dataset, "predict": predict_dataset}
        for stage, method in loader_methods(datasets, batch_size, num_workers).items():
            setattr(datamodule, f"{stage}_dataloader", method)
        return datamodule

    @class_only_method
    def load_from_checkpoint(
        cls: type[_D],
        checkpoint_path: Any,
        map_location: Any = None,
        hparams_file: Any = None,
        weights_only: bool | None = None,
        **kwargs: Any,
    ) -> _D:
        """The datamodule rebuilt from a checkpoint's datamodule hyper-parameters (``kwargs`` override them),
        its ``state_dict`` restored."""
        from .saving import load_from_checkpoint

        loaded: _D = load_from_checkpoint(
            cls, checkpoint_path, map_location, hparams_file, None, weights_only, **kwargs
        )
        return loaded

    @default_hook
    def on_exception(self, exception: BaseException) -> None:
        """Called when a Trainer call this datamodule takes part in fails."""

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
        from ..data.batches import make_transfer

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

    def __str__(self) -> str:
        """One line per stage's loader, as Lightning prints a datamodule: ``{Train dataloader: size=32}``, the
        sizes of several loaders numbered, ``None`` for a stage whose method raises or is not defined (each
        ``*_dataloader()`` method is called)."""
        import os

        lines = []
        for label, method in _LOADER_METHODS:
            try:
                loaders = getattr(self, method)()
            except Exception:  # an unset-up or undefined stage shows as None, as in Lightning
                lines.append(f"{{{label}: None}}")
                continue
            if isinstance(loaders, (list, tuple)):
                shown = " ; ".join(f"{i}. size={_dataset_size(one)}" for i, one in enumerate(loaders, start=1))
            elif isinstance(loaders, dict):
                shown = " ; ".join(f"{i}. size={_dataset_size(one)}" for i, one in enumerate(loaders.values(), 1))
            else:
                shown = f"size={_dataset_size(loaders)}"
            lines.append(f"{{{label}: {shown}}}")
        return os.linesep.join(lines)


#: The loader methods ``str(datamodule)`` lists, with Lightning's labels.
_LOADER_METHODS = (
    ("Train dataloader", "train_dataloader"),
    ("Validation dataloader", "val_dataloader"),
    ("Test dataloader", "test_dataloader"),
    ("Predict dataloader", "predict_dataloader"),
)


def _dataset_size(loader: Any) -> str:
    """The length of a loader's dataset, or ``NA`` when it has none (an iterable dataset)."""
    dataset = getattr(loader, "dataset", None)
    try:
        return str(len(dataset))  # type: ignore[arg-type]
    except TypeError:
        return "NA"
